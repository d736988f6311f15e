"""What CosyVoice's frontend costs per second of voice clip, step by step (app/models/cosyvoice/frontend.py).

Not a test: figures for docs/DESIGN.md ("CosyVoice's frontend networks"). CPU; with no --model it
writes the tiny folders (their .onnx files are stand-ins of a few hundred KB, so the two network
rows then show onnxruntime's per-call cost, not the released networks'); with --model it measures
a real folder:

    PYTHONPATH=. python tests/bench_cosyvoice_frontend.py --out frontend.json
    PYTHONPATH=. python tests/bench_cosyvoice_frontend.py --model ~/models/CosyVoice2-0.5B --out real.json

For clips of 5, 10 and 30 s of speech-like audio at 44.1 kHz: milliseconds of wall and of process
CPU time per second of clip for each step (resampling to 16 and 24 kHz, whisper log-mel, Kaldi
fbank, the prompt mel, the speech tokenizer session, the CAM++ session), the median of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from speechlike import speech_like  # noqa: E402

from app.models.cosyvoice import features  # noqa: E402
from app.models.cosyvoice.checkpoint import write_checkpoint  # noqa: E402
from app.models.cosyvoice.config import load_config  # noqa: E402
from app.models.cosyvoice.frontend import Frontend  # noqa: E402
from app.models.cosyvoice.weights import check_folder  # noqa: E402

RATE = 44100


def _clip(seconds: float) -> np.ndarray:
    parts, total = [], 0
    seed = 0
    while total < seconds * RATE:
        part = speech_like(RATE, syllables=8, seed=seed)
        parts.append(part)
        total += part.size
        seed += 1
    return np.concatenate(parts)[: int(seconds * RATE)].astype(np.float32)


def _timed(fn, repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return float(np.median(walls)), float(np.median(cpus))


def measure(folder: Path, seconds: list[float], repeat: int) -> dict:
    files = check_folder(folder)
    start = time.perf_counter()
    frontend = Frontend(files, load_config(files.yaml))
    sizes = {p.name: round(p.stat().st_size / 1e6, 2) for p in (files.speech_tokenizer, files.campplus)}
    load_s = round(time.perf_counter() - start, 3)
    out = {"family": files.family, "load_s": load_s, "onnx_mb": sizes, "clips": {}}
    for sec in seconds:
        audio = torch.from_numpy(_clip(sec))[None]
        s16 = features.resample(audio, RATE, 16000)
        s24 = features.resample(audio, RATE, 24000)
        steps = {
            "resample_16k": lambda a=audio: features.resample(a, RATE, 16000),
            "resample_24k": lambda a=audio: features.resample(a, RATE, 24000),
            "whisper_log_mel": lambda s=s16: features.whisper_log_mel(s),
            "kaldi_fbank": lambda s=s16: features.kaldi_fbank(s[0]),
            "prompt_mel": lambda s=s24: features.matcha_mel(s, **frontend.mel),
            "speech_tokenizer_onnx": lambda s=s16: frontend.speech_tokens(s),
            "campplus_onnx": lambda s=s16: frontend.speaker_embedding(s),
            "voice_features_total": lambda a=audio: frontend.voice_features(a[0].numpy(), RATE),
        }
        frontend.voice_features(audio[0].numpy(), RATE)  # warm-up (session first-run allocations)
        row = {}
        for name, fn in steps.items():
            wall, cpu = _timed(fn, repeat)
            row[name] = {"wall_ms_per_s": round(1000 * wall / sec, 2),
                         "cpu_ms_per_s": round(1000 * cpu / sec, 2)}  # fmt: skip
        out["clips"][f"{sec:g}s"] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="a CosyVoice2/3 folder (default: the tiny ones)")
    ap.add_argument("--seconds", type=float, nargs="+", default=[5.0, 10.0, 30.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(m) for m in args.model or []] or [
            write_checkpoint(Path(tmp) / p, f"{p}-tiny") for p in ("cosyvoice2", "cosyvoice3")]  # fmt: skip
        for folder in folders:
            results.append(measure(folder, args.seconds, args.repeat))
            print(json.dumps(results[-1], indent=1))
    Path(args.out).write_text(json.dumps({"threads": args.threads, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
