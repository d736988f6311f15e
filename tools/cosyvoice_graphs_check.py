"""CosyVoice's captured graphs against the eager engine: on CUDA the same requests (same seeds) run
once with ``cuda_graphs=False`` and once with graphs (the LM step's, and CosyVoice3's DiT's per
shape), and their speech tokens must be equal; with the step times, RTF and first audio of each
run beside them, and how far the graphed run's audio is from the eager one's (relative L2, worst
request). ``--audio-tol`` also requires that distance: 1e-3 holds for the tiny preset (the graphed
DiT runs padded shapes, whose sums round differently), not for a real-shape folder of random
weights, whose 22-layer DiT turns a 1e-7 change of its input into a 5.6% change of its output
(docs/benchmarks.md, "The first streamed chunk").
(The side-by-side benchmark with the official loop is app/models/cosyvoice/bench.py.)

    PYTHONPATH=$PWD python tools/cosyvoice_graphs_check.py --preset cosyvoice3-tiny --device cpu \\
        --concurrency 1,4 --json out.json
    PYTHONPATH=$PWD python tools/cosyvoice_graphs_check.py --device cuda --concurrency 1,16,64 \\
        --json $OUT/cv_graphs.json

Every request speaks the same text cross-lingually with the goldens' prompt.wav (one cached
voice), streaming, each with its own seed. A step's wall time counts the LM step of the whole
batch plus the flow and vocoder of the rows whose chunk is due in that step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.engine.voice import VoicePrompt
from app.models.cosyvoice.checkpoint import write_checkpoint

PROMPT = Path(__file__).resolve().parents[1] / "tests" / "data" / "cosyvoice" / "prompt.wav"
TEXT = "收到好友从远方寄来的生日礼物，那份意外的惊喜与深深的祝福让我心中充满了甜蜜的快乐。"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run_batch(engine: Engine, n: int, seed0: int = 1, text: str = TEXT) -> dict:
    """``n`` requests at once; per-step wall times, first-audio times and each one's tokens."""
    audio, rate = sf.read(PROMPT, dtype="float32")
    voice = VoicePrompt(reference_audio=audio, sample_rate=rate)
    runner, tokens = engine.runner, {}

    def release(seq) -> None:  # noqa: ANN001 - read the tokens as the request leaves
        tokens[seq.id] = runner.spoken(seq)
        type(runner).release(runner, seq)

    runner.release = release
    t0 = time.perf_counter()
    ids = [engine.submit(SynthRequest(text, voice=voice, seed=seed0 + i, stream=True)) for i in range(n)]
    first, ends, steps, chunks = {}, {}, [], {i: [] for i in ids}
    try:
        while len(ends) < n:
            t = time.perf_counter()
            events = engine.step()
            _sync(engine.device)
            steps.append(time.perf_counter() - t)
            for ev in events:
                if isinstance(ev, AudioChunk):
                    first.setdefault(ev.request_id, time.perf_counter() - t0)
                    chunks[ev.request_id].append(ev.samples)
                elif isinstance(ev, (RequestFinished, RequestFailed)):
                    ends[ev.request_id] = ev
    finally:
        del runner.release
    wall = time.perf_counter() - t0
    failed = [e.message for e in ends.values() if isinstance(e, RequestFailed)]
    lm_steps = sum(len(t) for t in tokens.values())
    audio = [np.concatenate(chunks[i]) if chunks[i] else np.zeros(0, np.float32) for i in ids]
    audio_s = sum(len(a) for a in audio) / engine.info.sample_rate
    return {
        "requests": n,
        "failed": failed,
        "tokens": [tokens.get(i, []) for i in ids],
        "audio": audio,
        "lm_tokens": lm_steps,
        "engine_steps": len(steps),
        "ms_per_step_p50": 1000 * statistics.median(steps),
        "wall_s": wall,
        "audio_s": audio_s,
        "rtf": wall / audio_s if audio_s else float("nan"),
        "tokens_per_s": lm_steps / wall,
        "first_audio_ms_p50": 1000 * float(np.percentile(list(first.values()), 50)) if first else None,
        "first_audio_ms_p90": 1000 * float(np.percentile(list(first.values()), 90)) if first else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="a CosyVoice2/3 folder (default: a fresh --preset folder)")
    ap.add_argument("--preset", default="cosyvoice3-tiny")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", default="1,4")
    ap.add_argument("--json", required=True)
    ap.add_argument("--text", default=TEXT, help="what every request speaks (random real-shape weights "
                    "rarely stop: a request runs to its maximum length, 20 speech tokens per text id)")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--audio-tol", type=float, help="fail when the audio differs more (relative L2)")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(write_checkpoint(Path(tmp) / "model", args.preset))
        sizes = [int(x) for x in args.concurrency.split(",")]
        result: dict = {"model": model if args.model else args.preset, "device": args.device, "runs": {}}
        graph_modes = [False, True] if args.device.startswith("cuda") else [False]
        for graphs in graph_modes:
            config = EngineConfig(model, device=args.device, dtype=args.dtype, threads=args.threads,
                                  max_num_seqs=max(sizes), cuda_graphs=graphs)  # fmt: skip
            t = time.perf_counter()
            engine = Engine(config)
            key = "graphs" if graphs else "eager"
            result["runs"][key] = {"ready_s": time.perf_counter() - t, "ready_engine_s": engine.ready_s}
            run_batch(engine, 1, seed0=10_000, text=args.text)  # warm-up: one-time costs (tables, kernels)
            for n in sizes:
                figures = result["runs"][key][str(n)] = run_batch(engine, n, text=args.text)
                print(key, n, {k: v for k, v in figures.items() if k not in ("tokens", "audio")}, flush=True)
            if engine.device.type == "cuda":
                result["runs"][key]["peak_gib"] = torch.cuda.max_memory_allocated(engine.device) / 2**30
            engine.shutdown()
        if len(graph_modes) == 2:
            runs = result["runs"]
            result["graphs_equal_eager"] = {
                str(n): runs["graphs"][str(n)]["tokens"] == runs["eager"][str(n)]["tokens"] for n in sizes
            }
            result["audio_rel_l2"] = {
                str(n): max(map(rel_l2, runs["graphs"][str(n)]["audio"], runs["eager"][str(n)]["audio"]))
                for n in sizes
            }
            print("graph tokens equal eager:", result["graphs_equal_eager"], flush=True)
            print("graph audio against eager, worst relative L2:", result["audio_rel_l2"], flush=True)
        for run in result["runs"].values():
            for n in sizes:
                run[str(n)].pop("audio")
    Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    tol = float("inf") if args.audio_tol is None else args.audio_tol
    audio_ok = all(d <= tol for d in result.get("audio_rel_l2", {}).values())
    return 0 if all(result.get("graphs_equal_eager", {}).values()) and audio_ok else 1


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    """``|a - b| / |b|``; infinite when the lengths differ."""
    if a.shape != b.shape:
        return float("inf")
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-12))


if __name__ == "__main__":
    raise SystemExit(main())
