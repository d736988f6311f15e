"""Goldens of one whole IndexTTS-2.5 request: the official ``IndexTTS2.infer`` on the tiny folder.

Usage (the official code's venv, from this repository's root)::

    /tmp/indexvenv/bin/python tools/indextts_golden_infer.py CHECKOUT FOLDER OUT_DIR

CHECKOUT is an index-tts checkout (tools/indextts_official.py names the commit), FOLDER a tiny
folder written by ``python -m app.models.indextts.checkpoint FOLDER`` (with its QwenEmotion
folder). Builds ``IndexTTS2(..., use_qwen_emo=True)`` once and runs ``infer`` for each case of
:data:`CASES`, with ``random``, ``numpy`` and ``torch`` seeded before each call and the voice and
emotion caches emptied (each call is a new voice, as a fresh process sees it). Nothing the official
code computes is changed; wrappers only record what passes through:

- ``gpt.inference_speech``: the segment's text ids, the ``emovec`` and CAMPPlus style it is given;
- ``semantic_codec.decode``: the GPT codes after ``infer``'s cut at the stop code;
- ``insert_interval_silence``: the float wav of each segment (``32767·wav`` clamped, before the
  int16 conversion) and the 200 ms silences between them.

Writes ``OUT_DIR/infer.json`` (the cases, their ids and codes) and ``OUT_DIR/infer_<case>.npz``
(the wav and the small tensors), plus ``OUT_DIR/infer_clips.npz`` (the two int16 prompt clips).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

RATE = 24000  # the clips' rate: every resampler of the official path works
SPEAKER = (1.0, 11)  # seconds, seed of prompt_clip (tools/indextts_golden_prompt.py)
EMOTION = (0.6, 12)
MAX_MEL_TOKENS = 24  # bounds the random GPT and the golden files (a case may end at it, unstopped)
# name -> (text, lang, seed, infer keywords besides the clips)
CASES: dict[str, tuple[str, str, int, dict[str, Any]]] = {
    "plain": ("你好，世界。", "zh", 1, {}),
    "emotion_audio": ("你好，世界。", "zh", 2, {"emo_audio_prompt": "EMOTION", "emo_alpha": 0.6}),
    "emotion_vector": ("你好，世界。", "zh", 3, {"emo_vector": [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.2]}),
    "emotion_text": ("你好，世界。", "zh", 4, {"use_emo_text": True, "emo_text": "今天真开心！"}),
    "duration_075": ("你好，世界。", "zh", 5, {"duration_factor": 0.75}),
    "duration_150": ("你好，世界。", "zh", 5, {"duration_factor": 1.5}),
    "two_segments": ("Hello there. Good night!", "en", 6, {"max_text_tokens_per_segment": 10}),
}


def _float(x: Any) -> np.ndarray:
    return np.asarray(x.detach().cpu().float().numpy(), dtype=np.float32)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    checkout, folder, out_dir = argv[0], Path(argv[1]), Path(argv[2])
    sys.path.insert(0, str(Path(__file__).parent))
    from indextts_golden_prompt import prompt_clip
    from indextts_official import COMMIT, official_import, save_npz

    official_import(checkout)
    import soundfile
    import torch
    from indextts.infer_v2_5 import IndexTTS2

    tts = IndexTTS2(cfg_path=str(folder / "config.yaml"), model_dir=str(folder), device="cpu",
                    use_qwen_emo=True)  # fmt: skip
    record: dict[str, list[Any]] = {}
    inference_speech, decode = tts.gpt.inference_speech, tts.semantic_codec.decode
    insert = tts.insert_interval_silence

    def spy_inference_speech(*args: Any, **kwargs: Any) -> Any:
        record["ids"].append(args[1][0].tolist())
        record["emovec"].append(_float(kwargs["emo_vec"]))
        record["style"].append(_float(kwargs["campplus_embedding"]))
        return inference_speech(*args, **kwargs)

    def spy_decode(codes: Any) -> Any:
        record["codes"].append(codes[0].tolist())
        return decode(codes)

    def spy_insert(wavs: list[Any], **kwargs: Any) -> Any:
        joined = insert(wavs, **kwargs)
        record["wavs"] = [_float(w[0]) for w in joined]
        return joined

    tts.gpt.inference_speech, tts.semantic_codec.decode = spy_inference_speech, spy_decode
    tts.insert_interval_silence = spy_insert

    clips = {name: prompt_clip(RATE, seconds, 1, seed)[:, 0]
             for name, (seconds, seed) in (("speaker", SPEAKER), ("emotion", EMOTION))}
    summary: dict[str, Any] = {"commit": COMMIT, "rate": RATE, "max_mel_tokens": MAX_MEL_TOKENS, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, clip in clips.items():
            paths[name] = str(Path(tmp) / f"{name}.wav")
            soundfile.write(paths[name], clip, RATE, subtype="PCM_16")
        for name, (text, lang, seed, options) in CASES.items():
            kwargs = {k: (paths["emotion"] if v == "EMOTION" else v) for k, v in options.items()}
            record.clear()
            record.update(ids=[], emovec=[], style=[], codes=[])
            tts.cache_spk_cond = tts.cache_spk_audio_prompt = tts.cache_emo_cond = None
            tts.cache_emo_audio_prompt = None
            random.seed(seed)
            np.random.seed(seed)
            torch.manual_seed(seed)
            sr, wav16 = tts.infer(spk_audio_prompt=paths["speaker"], text=text, output_path=None, lang=lang,
                                  max_mel_tokens=MAX_MEL_TOKENS, **kwargs)  # fmt: skip
            wavs = record["wavs"]
            silence = [w for i, w in enumerate(wavs) if i % 2]
            segments = [w for i, w in enumerate(wavs) if not i % 2]
            whole = np.concatenate(wavs)
            if not np.array_equal(whole.astype(np.int16), wav16[:, 0]):
                raise SystemExit(f"{name}: the recorded float wav is not what infer returned")
            summary["cases"][name] = {
                "text": text, "lang": lang, "seed": seed, "options": options,
                "segments": record["ids"], "codes": record["codes"],
                "stopped": [len(c) < MAX_MEL_TOKENS for c in record["codes"]],
                "segment_samples": [len(w) for w in segments], "silence_samples": [len(w) for w in silence],
                "next_torch": torch.rand(1).item(), "next_random": random.random(),
            }  # fmt: skip
            path = save_npz(out_dir / f"infer_{name}.npz", wav=whole, emovec=np.concatenate(record["emovec"]),
                            style=record["style"][0])  # fmt: skip
            print(f"{name}: {len(segments)} segment(s), codes {[len(c) for c in record['codes']]}, "
                  f"{len(whole) / sr:.2f} s, {path.stat().st_size / 1e3:.0f} KB")
    save_npz(out_dir / "infer_clips.npz", **clips)
    text = json.dumps(summary, ensure_ascii=False, indent=1)
    (out_dir / "infer.json").write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out_dir / 'infer.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
