"""The official side of the IndexTTS-2.5 benchmark: the checkout's ``IndexTTS2.infer``, timed.

    python -m app.models.indextts.bench_official --official CHECKOUT --folder FOLDER --clip voice.wav \\
        --text "..." --codes 250 --device cuda --dtype bfloat16 [--accel] --requests 3 --json out.json

Runs in the official code's own environment (its pinned transformers 4.52.1 on the path), in a
process of its own: app/models/indextts/bench_vs_official.py starts it and reads its JSON. It
imports nothing of VoxDesk but the golden tools' ``official_import`` (tools/indextts_official.py),
so the official code runs as its golden scripts run it.

``IndexTTS2(cfg, folder, use_bf16=..., device=..., use_accel=...)`` is built once (the official
``use_cuda_kernel`` default when a device is named: off, BigVGAN in torch) and ``infer`` is called
with the official defaults (3 beams, top-p 0.8, top-k 30, temperature 0.8, repetition penalty 10)
and ``max_mel_tokens=--codes``, the same speaker clip each time (cached by the official code after
the first call, as VoxDesk caches a voice). One warm-up (none with ``--no-warmup``: the first call
is timed, the voice's conditions computed in it), then ``--requests`` calls one after another: the
official code has no batching. Per call: wall; the GPT's time (its ``inference_speech``, prefill
included) and codes; GPT ms per step, the median interval between two decode steps' starts (so
each step's sampling and beam work is in it); the audio's length; the whole segment is its first
audio (``infer`` returns it at once). ``--accel`` turns on the official accel engine (its own
paged KV cache and CUDA graphs): it needs CUDA and ``flash_attn``, which tools/flash_attn_shim/
stands in for when absent (said in the JSON); it samples one sequence, no beams
(indextts/gpt/model_v2.py:803).

Modules the checkout imports but plain cloning never runs get a stand-in when absent (listed in
the JSON): ``modelscope`` (QwenEmotion only), ``fugashi`` (Japanese only) and ``wetext`` (the text
normaliser; the benchmark's text needs no normalising: lower-case words and punctuation).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SHIM = ROOT / "tools" / "flash_attn_shim"


def _stand_ins(accel: bool) -> list[str]:
    """Register stand-ins for the absent modules the official import needs but never runs."""
    made = []
    for name in ("modelscope", "wetext", "fugashi"):
        try:
            __import__(name)
        except ImportError:
            module = types.ModuleType(name)
            if name == "modelscope":
                module.AutoModelForCausalLM = None  # type: ignore[attr-defined]
            elif name == "wetext":
                module.Normalizer = _SameText  # type: ignore[attr-defined]
            else:  # built by infer_v2_5's JapaneseG2PProcessor at start-up, used on Japanese text only
                module.Tagger = _NoJapanese  # type: ignore[attr-defined]
            sys.modules[name] = module
            made.append(name)
    if accel:
        try:
            import flash_attn  # noqa: F401
        except ImportError:
            sys.path.insert(0, str(SHIM))
            made.append("flash_attn (tools/flash_attn_shim: torch SDPA)")
    return made


class _SameText:
    """wetext's ``Normalizer`` when wetext is absent: the text as it is."""

    def __init__(self, **_kwargs: Any) -> None:
        pass

    def normalize(self, text: str) -> str:
        return text


class _NoJapanese:
    """fugashi's ``Tagger`` when fugashi (and its 47 MB dictionary) is absent: the benchmark's
    text is English, so reading Japanese is an error."""

    def __call__(self, text: str) -> Any:
        raise RuntimeError("the benchmark's official side has no Japanese tagger (fugashi)")


def _checkout(path: Path) -> Path:
    """A folder holding ``indextts/``: ``path`` itself, or, when ``path`` is the package (a copy of
    the checkout's ``indextts/``), a temporary folder linking to it."""
    if not (path / "infer_v2_5.py").is_file():
        return path
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="ixofficial-"))
    (parent / "indextts").symlink_to(path.resolve(), target_is_directory=True)
    return parent


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run(args: argparse.Namespace) -> dict[str, Any]:
    stand_ins = _stand_ins(args.accel)
    sys.path.insert(0, str(ROOT / "tools"))
    import torch
    from indextts_official import COMMIT, official_import

    threads = args.threads or torch.get_num_threads()
    official_import(_checkout(Path(args.official)))  # (sets 2 threads, as the goldens ran)
    torch.set_num_threads(threads)
    if args.device == "cpu":
        torch.cuda.is_available = lambda: False  # the official code would take CUDA by itself
    from indextts.infer_v2_5 import IndexTTS2

    folder = Path(args.folder)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        tts = IndexTTS2(cfg_path=str(folder / "config.yaml"), model_dir=str(folder), device=args.device,
                        use_bf16=args.dtype == "bfloat16", use_accel=args.accel)  # fmt: skip
    load_s = time.perf_counter() - start
    gpt_calls: list[tuple[float, int]] = []
    inference_speech = tts.gpt.inference_speech

    def timed_inference_speech(*a: Any, **kw: Any) -> Any:
        _sync(torch, args.device)
        t = time.perf_counter()
        out = inference_speech(*a, **kw)
        _sync(torch, args.device)
        codes = out[0] if isinstance(out[0], torch.Tensor) else out[0].sequences
        gpt_calls.append((time.perf_counter() - t, int(codes.shape[-1])))
        return out

    tts.gpt.inference_speech = timed_inference_speech
    # A GPT step's start: the plain loop's forward (the first of a request is the prefill), or the
    # accel engine's decode call. The interval between two starts is one whole step: forward,
    # sampling and beam bookkeeping (both loops read the codes back every step).
    starts: list[float] = []
    stepper = tts.gpt.accel_engine if tts.gpt.accel_engine is not None else tts.gpt.inference_model
    name = "_run_decode_with_graph" if tts.gpt.accel_engine is not None else "forward"
    step = getattr(stepper, name)

    @functools.wraps(step)  # generate() reads the forward's signature
    def stamped(*a: Any, **kw: Any) -> Any:
        starts.append(time.perf_counter())
        return step(*a, **kw)

    setattr(stepper, name, stamped)

    def one(seed: int) -> dict[str, Any]:
        torch.manual_seed(seed)
        gpt_calls.clear()
        starts.clear()
        _sync(torch, args.device)
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            rate, wav = tts.infer(spk_audio_prompt=args.clip, text=args.text, output_path=None,
                                  lang=args.lang, max_mel_tokens=args.codes)  # fmt: skip
        _sync(torch, args.device)
        wall = time.perf_counter() - t
        gpt_s, codes = sum(c[0] for c in gpt_calls), sum(c[1] for c in gpt_calls)
        audio = len(wav) / rate
        steps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
        steps = steps[1:] if tts.gpt.accel_engine is None else steps  # the plain loop's first: prefill
        return {"wall_s": wall, "gpt_s": gpt_s, "codes": codes, "segments": len(gpt_calls),
                "ms_per_step": 1e3 * statistics.median(steps),
                "ms_per_code_mean": 1e3 * gpt_s / max(codes, 1), "audio_s": audio, "rtf": wall / audio,
                "first_audio_s": wall}  # fmt: skip

    if args.warmup:
        one(0)  # the voice's conditions are cached from here on, as in VoxDesk's voice cache
    if args.device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    runs = [one(1 + i) for i in range(args.requests)]
    cuda = args.device.startswith("cuda")
    return {
        "side": "official accel" if args.accel else "official",
        "commit": COMMIT,
        "accel_active": tts.gpt.accel_engine is not None,
        "beams": 1 if tts.gpt.accel_engine is not None else 3,
        "dtype": args.dtype if args.device != "cpu" else "float32",
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "stand_ins": stand_ins,
        "load_s": load_s,
        "warmup": args.warmup,
        "runs": runs,
        "peak_allocated_gb": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "peak_reserved_gb": torch.cuda.max_memory_reserved() / 2**30 if cuda else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official", required=True, help="an index-tts checkout, or a copy of its indextts/")
    ap.add_argument("--folder", required=True)
    ap.add_argument("--clip", required=True, help="the speaker clip (a wav file)")
    ap.add_argument("--text", required=True)
    ap.add_argument("--lang", default="en")
    ap.add_argument("--codes", type=int, default=250, help="max_mel_tokens")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float32"), help="use_bf16 or not")
    ap.add_argument("--accel", action="store_true", help="the official accel engine (CUDA only)")
    ap.add_argument("--requests", type=int, default=3, help="timed calls after the warm-up")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="time the first call (the voice's conditions computed in it)")  # fmt: skip
    ap.add_argument("--json", required=True, type=Path)
    args = ap.parse_args(argv)
    result = run(args)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
