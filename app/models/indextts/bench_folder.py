"""The benchmark's IndexTTS-2.5 folder, speaker clip and text (both sides of bench_vs_official).

:func:`bench_folder` writes once, into the folder given, a random folder in the official layout
(app/models/indextts/checkpoint.py) of the preset asked for, changed in three ways for timing:

- the released preset (``indextts25``) gets the released w2v-BERT 2.0 shapes (580 M values,
  ``semantic.write_tiny_w2v(full=True)``) instead of the tiny one the writer puts in every folder;
- no QwenEmotion folder (plain cloning never runs it; neither side loads it then);
- the GPT never picks the stop code (its ``mel_head`` bias row for it at -1e4), so every request
  of both sides decodes exactly ``max_mel_tokens`` codes: fixed lengths on random weights.

A ``bench.json`` marker, written last, says the folder is complete (preset, seed, seconds taken,
size); a later call with the same preset and seed reuses the folder.
"""

from __future__ import annotations

import json
import shutil
import time
import wave
from pathlib import Path

import numpy as np
import torch

from app import atomic
from app.atomic import atomic_path
from app.models.indextts.checkpoint import write_folder
from app.models.indextts.presets import REAL, preset

MARKER = "bench.json"
NEVER = -1e4  # the stop code's logit bias: never among the top 30 of 8194 sampled
CLIP_RATE = 22050
# Lower-case words and punctuation: nothing for either side's text normaliser to change.
TEXT = ("the quick brown fox jumps over the lazy dog, and then it runs back home again, "
        "past the old mill by the river, where the children play until the sun goes down.")  # fmt: skip


def _size_gb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e9


def bench_folder(folder: str | Path, preset_name: str, seed: int = 0) -> dict:
    """The folder's marker (written now unless a complete folder of this preset and seed is
    there): ``{"preset", "seed", "write_s", "size_gb"}``."""
    root = Path(folder)
    marker = root / MARKER
    if marker.is_file():
        done = json.loads(marker.read_text(encoding="utf-8"))
        if done.get("preset") == preset_name and done.get("seed") == seed:
            return done
    start = time.perf_counter()
    write_folder(root, preset_name, seed)
    tree = preset(preset_name)
    shutil.rmtree(root / tree["qwen_emo_path"], ignore_errors=True)
    if preset_name == REAL:
        from app.models.indextts.semantic import write_tiny_w2v

        write_tiny_w2v(root / "hf_cache" / "w2v-bert-2.0", seed, full=True)
    path = root / tree["gpt_checkpoint"]
    gpt = torch.load(path, weights_only=True)
    gpt["mel_head.bias"][tree["gpt"]["stop_mel_token"]] = NEVER
    with atomic_path(path) as tmp:
        torch.save(gpt, tmp)
    done = {"preset": preset_name, "seed": seed, "write_s": round(time.perf_counter() - start, 1),
            "size_gb": round(_size_gb(root), 3)}  # fmt: skip
    atomic.write_json(marker, done)
    return done


def speaker_clip(seconds: float = 4.0, rate: int = CLIP_RATE) -> np.ndarray:
    """A voiced, gliding harmonic tone (int16 values as float32 in [-1, 1]): the same samples for
    both sides, the official reading them from :func:`write_clip`'s file."""
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(140 + 30 * np.sin(2 * np.pi * 1.3 * t)) / rate
    wav = 0.2 * sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.6 + 0.4 * np.sin(2 * np.pi * 2.1 * t))
    return np.round(wav * 32767).astype(np.int16).astype(np.float32) / 32768.0


def write_clip(path: Path, samples: np.ndarray, rate: int = CLIP_RATE) -> Path:
    """``samples`` as a 16-bit mono wav."""
    with atomic_path(path) as tmp, wave.open(str(tmp), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.round(samples * 32768.0).clip(-32768, 32767).astype("<i2").tobytes())
    return path
