"""IndexTTS-2.5 whole requests, VoxDesk's engine beside the official ``infer`` loop and its accel engine.

    python -m app.models.indextts.bench_vs_official --folder /tmp/ix25 --preset indextts25 \\
        --device cuda --concurrency 1,16,64 --mem-concurrency 1,4 --codes 250 \\
        --official official_indextts --official-path /tmp/ixoff --json ix_vs_official.json
    python -m app.models.indextts.bench_vs_official --folder /tmp/ixtiny --preset indextts25-tiny \\
        --device cpu --threads 2 --concurrency 1 --codes 40 --official /path/to/index-tts \\
        --official-python /tmp/indexvenv/bin/python

One folder (app/models/indextts/bench_folder.py: written once into ``--folder``, cached), one
speaker clip and one text for every side; every request decodes exactly ``--codes`` GPT codes
(the folder's GPT never stops) and then runs S2Mel and BigVGAN on them. One process per side, one
side after another on the same machine:

- ``official`` / ``accel``: app/models/indextts/bench_official.py in its own process, with the
  official code's environment (``--official-python``, ``--official-path`` first on its path):
  ``IndexTTS2.infer`` one request after another (it has no batching), plain loop (3 beams) and,
  on CUDA, its accel engine (one sampled sequence, no beams; flash_attn from
  tools/flash_attn_shim when absent). The official GPT runs in bf16 on CUDA (``use_bf16``; S2Mel
  and BigVGAN stay float32 there, as here) and float32 on the CPU (the official code's rule).
- ``ours``: the folder's own pipeline (:func:`~.pipeline.parts_from` over
  :meth:`~.models.IndexModels.load`: conditioning, the GPT's 3 beams, S2Mel, BigVGAN) behind the
  real :class:`~.runner.IndexRunner` in an :class:`~app.engine.engine.Engine`, ``--dtype`` GPT,
  CUDA graphs on; ``--concurrency`` requests submitted together, then (CUDA) ``--mem-concurrency``
  on an engine with a ``--mem-kv-gb`` cache, for the peak memory a small card needs.

Measured per side and concurrency: GPT ms per step, one code added to every request of the batch
(the median whole decode step: official, the interval between two steps' starts, sampling and
beam work included; ours, an engine step that returns no audio, after the prefill), codes per
second (all requests), wall, audio seconds, RTF (wall over audio, lower is better; also
its inverse, x real time), first audio (submit to the first audio chunk; the official returns the
whole segment at once), peak GPU memory allocated and reserved. The official side at N
concurrent is its per-request wall times N, measured on ``--official-requests`` calls (said in the
JSON: ``"serial": true``; its first audio there is the median request's wait in that queue, (N + 1) / 2
request walls). Each side first runs one warm-up request unless ``--no-warmup`` (then the timed
request also computes the voice's conditions). Prints a markdown table, writes JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app import atomic
from app.models.indextts.bench_folder import TEXT, bench_folder, speaker_clip, write_clip
from app.models.indextts.presets import PRESETS, REAL

ROOT = Path(__file__).resolve().parents[3]
RATE = 22050


# ---- the official side (a process of its own) -----------------------------------------------
def run_official(args: argparse.Namespace, clip: Path, accel: bool, out: Path) -> dict[str, Any]:
    """bench_official in the official environment; its JSON, or ``{"error": ...}``."""
    env = dict(os.environ)
    paths = [p for p in (args.official_path, env.get("PYTHONPATH"), str(ROOT)) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    dtype = "float32" if args.device == "cpu" else args.official_dtype
    cmd = [args.official_python, "-m", "app.models.indextts.bench_official", "--official", args.official,
           "--folder", str(args.folder), "--clip", str(clip), "--text", args.text, "--codes", str(args.codes),
           "--device", args.device, "--dtype", dtype, "--requests", str(args.official_requests),
           "--json", str(out)] + (["--accel"] if accel else []) + ([] if args.warmup else ["--no-warmup"]) + (
           ["--threads", str(args.threads)] if args.threads else [])  # fmt: skip
    log = out.with_suffix(".log")
    with open(log, "w", encoding="utf-8") as handle:
        try:
            code = subprocess.run(cmd, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                  timeout=args.official_timeout, check=False).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"error": f"not done within --official-timeout {args.official_timeout} s"}
    if code != 0 or not out.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        tail = [line for line in lines if line.strip()]
        return {"error": f"exit {code}: " + " | ".join(tail[-3:])}
    return json.loads(out.read_text(encoding="utf-8"))


def official_rows(res: dict[str, Any], concurrency: list[int]) -> list[dict[str, Any]]:
    """The official loop at each concurrency: its requests one after another (per-request figures
    as measured, wall N times the mean)."""
    runs = res["runs"]
    mean = {k: float(np.mean([r[k] for r in runs])) for k in ("wall_s", "gpt_s", "audio_s", "ms_per_step")}
    rows = []
    for n in concurrency:
        wall, audio = n * mean["wall_s"], n * mean["audio_s"]
        rows.append({"concurrency": n, "serial": n > 1, "ms_per_step": mean["ms_per_step"], "wall_s": wall,
                     "audio_s": audio, "rtf": wall / audio, "x_realtime": audio / wall,
                     "codes_per_s": n * runs[0]["codes"] / wall,
                     # the k-th request of N waits for the k-1 before it: the median waits N/2
                     "first_audio_s": mean["wall_s"] * (n + 1) / 2,
                     "peak_allocated_gb": res.get("peak_allocated_gb"),
                     "peak_reserved_gb": res.get("peak_reserved_gb")})  # fmt: skip
    return rows


# ---- our side ---------------------------------------------------------------------------------
def _engine(args: argparse.Namespace, parts: Any, max_seqs: int, kv_gb: float | None, graphs: bool):
    from app.engine.config import EngineConfig
    from app.engine.engine import Engine

    config = EngineConfig(model_dir=str(args.folder), device=args.device, dtype=args.dtype,
                          max_num_seqs=max_seqs, max_model_len=512 + args.codes, cuda_graphs=graphs,
                          kv_cache_gb=kv_gb, threads=args.threads,
                          cpu_precision=args.cpu_precision)  # fmt: skip
    return Engine(config, model=parts)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run_batch(engine: Any, n: int, voice: Any, text: str) -> dict[str, Any]:
    """``n`` requests submitted together, run to the end. GPT ms per step: the median wall of the
    engine steps that return no audio (each adds a code to every request) after the first (the
    prefill, with the requests' conditioning)."""
    from app.engine.events import AudioChunk, RequestFailed, RequestFinished
    from app.engine.request import SynthRequest

    device = torch.device(engine.device)
    if device.type == "cuda":
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    _sync(device)
    start = time.perf_counter()
    ids = [engine.submit(SynthRequest(text=text, voice=voice, seed=100 + i)) for i in range(n)]
    first: dict[int, float] = {}
    samples = dict.fromkeys(ids, 0)
    gpt_steps: list[float] = []  # the walls of the steps that returned no audio
    finished = 0
    while engine.has_work():
        t = time.perf_counter()
        events = engine.step()
        dt = time.perf_counter() - t
        audio = [e for e in events if isinstance(e, AudioChunk)]
        if not audio:
            gpt_steps.append(dt)
        for e in audio:
            first.setdefault(e.request_id, time.perf_counter() - start)
            samples[e.request_id] += len(e.samples)
        for e in events:
            if isinstance(e, RequestFailed):
                raise RuntimeError(e.message)
            finished += isinstance(e, RequestFinished)
    _sync(device)
    wall = time.perf_counter() - start
    audio_s = sum(samples.values()) / engine.sample_rate
    codes = len(gpt_steps) + 1  # the step that returns the audio decodes the last code
    cuda = device.type == "cuda"
    return {"concurrency": n, "finished": finished, "codes": codes,
            "ms_per_step": 1e3 * float(np.median(gpt_steps[1:] or gpt_steps)), "gpt_s": sum(gpt_steps),
            "wall_s": wall, "audio_s": audio_s, "rtf": wall / audio_s,
            "x_realtime": audio_s / wall, "codes_per_s": n * codes / wall,
            "first_audio_s": float(np.median(list(first.values()))),
            "peak_allocated_gb": torch.cuda.max_memory_allocated(device) / 2**30 if cuda else None,
            "peak_reserved_gb": torch.cuda.max_memory_reserved(device) / 2**30 if cuda else None}  # fmt: skip


def run_ours(args: argparse.Namespace, graphs: bool) -> dict[str, Any]:
    from app.engine.voice import VoicePrompt
    from app.models.indextts.beam import BeamParams
    from app.models.indextts.models import IndexModels
    from app.models.indextts.pipeline import parts_from

    start = time.perf_counter()
    models = IndexModels.load(args.folder, torch.device(args.device))
    parts = parts_from(models, BeamParams(max_mel_tokens=args.codes))
    voice = VoicePrompt(reference_audio=speaker_clip(args.clip_seconds), sample_rate=RATE)
    engine = _engine(args, parts, max(args.concurrency), None, graphs)
    precision = engine.precision.describe() if engine.precision else args.dtype
    res: dict[str, Any] = {"side": "ours", "dtype": args.dtype, "precision": precision,
                           "cuda_graphs": graphs and args.device.startswith("cuda"),
                           "load_s": time.perf_counter() - start}  # fmt: skip
    if args.warmup:
        run_batch(engine, 1, voice, args.text)  # the voice's conditions are cached from here on
    res["runs"] = [run_batch(engine, n, voice, args.text) for n in args.concurrency]
    engine.shutdown()
    del engine
    if args.device.startswith("cuda") and args.mem_concurrency:
        engine = _engine(args, parts, max(args.mem_concurrency), args.mem_kv_gb, graphs)
        run_batch(engine, 1, voice, args.text)
        runs = [run_batch(engine, n, voice, args.text) for n in args.mem_concurrency]
        res["memory"] = {"kv_cache_gb": args.mem_kv_gb, "runs": runs}
        engine.shutdown()
    return res


# ---- the report -------------------------------------------------------------------------------
def _fmt(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _row(label: str, r: dict[str, Any]) -> str:
    return (
        f"| {label} | {r['concurrency']} | {r['ms_per_step']:.1f} | {r['codes_per_s']:.0f} "
        f"| {r['rtf']:.3f} | {r['x_realtime']:.1f} | {r['first_audio_s']:.2f} s "
        f"| {_fmt(r.get('peak_allocated_gb'), '.2f')} | {_fmt(r.get('peak_reserved_gb'), '.2f')} |"
    )


def table(res: dict[str, Any]) -> str:
    """A markdown table in docs/benchmarks.md's style: one row per side and concurrency, with the
    speed-ups of ours over the official loop and its accel engine (GPT ms per step, and wall)."""
    base = {side: {r["concurrency"]: r for r in res[side]["rows"]}
            for side in ("official", "accel") if "rows" in res.get(side, {})}  # fmt: skip
    head = (
        "| side | concurrent | GPT ms/step | codes/s | RTF | x real time | first audio | peak alloc GB "
        "| peak reserved GB | ms/step: official ÷ ours | wall: official ÷ ours | ms/step: accel ÷ ours "
        "| wall: accel ÷ ours |"
    )
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for side in ("official", "accel", "ours"):
        part = res.get(side, {})
        if "error" in part:
            lines.append(f"| {side} | {part['error'][:160]} |")
            continue
        rows = part.get("rows", part.get("runs", []))
        for r in rows:
            n = r["concurrency"]
            ratios = [""] * 4
            if side == "ours":
                ratios = [
                    f"{theirs[key] / r[key]:.2f}×" if theirs else "–"
                    for theirs in (base.get("official", {}).get(n), base.get("accel", {}).get(n))
                    for key in ("ms_per_step", "wall_s")
                ]
            label = side + (" (serial)" if r.get("serial") else "")
            lines.append(_row(label, r) + f" {' | '.join(ratios)} |")
    memory = res.get("ours", {}).get("memory", {})
    for r in memory.get("runs", []):
        lines.append(_row(f"ours, {memory['kv_cache_gb']} GB KV cache", r) + " | | | |")
    return "\n".join(lines)


def save(path: Path | None, res: dict[str, Any]) -> None:
    if path:
        atomic.write_json(path, res)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", required=True, type=Path, help="the benchmark folder (written once)")
    ap.add_argument("--preset", default=REAL, choices=sorted(PRESETS))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="bfloat16", help="our GPT's dtype on CUDA (ignored on the CPU)")
    ap.add_argument("--cpu-precision", default="auto", help="our engine's CPU precision")
    ap.add_argument("--official-dtype", default="bfloat16", choices=("bfloat16", "float32"),
                    help="the official GPT on CUDA (use_bf16); float32 on the CPU always")  # fmt: skip
    ap.add_argument("--threads", type=int, help="CPU threads of every side")
    ap.add_argument("--concurrency", default="1", type=lambda s: [int(n) for n in s.split(",")])
    ap.add_argument("--mem-concurrency", default="1,4", type=lambda s: [int(n) for n in s.split(",") if n])
    ap.add_argument("--mem-kv-gb", type=float, default=1.0, help="the KV cache of the memory runs")
    ap.add_argument("--codes", type=int, default=250, help="GPT codes per request (25 a second of audio)")
    ap.add_argument("--text", default=TEXT)
    ap.add_argument("--clip-seconds", type=float, default=4.0, help="the speaker clip's length")
    ap.add_argument("--official", help="an index-tts checkout, or a copy of its indextts/")
    ap.add_argument("--official-python", default=sys.executable)
    ap.add_argument("--official-path", help="first on the official side's PYTHONPATH (its pinned packages)")
    ap.add_argument("--official-requests", type=int, default=3, help="official calls timed after a warm-up")
    ap.add_argument("--official-timeout", type=int, default=900)
    ap.add_argument(
        "--no-warmup",
        dest="warmup",
        action="store_false",
        help="no warm-up request: the first is timed, its voice's conditions computed in it",
    )
    ap.add_argument("--sides", default="official,accel,ours")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cpu":
        args.dtype = None
    sides = set(args.sides.split(","))
    written = bench_folder(args.folder, args.preset)
    print(f"folder {args.folder}: {written}", flush=True)
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    res: dict[str, Any] = {"preset": args.preset, "folder": written, "codes": args.codes,
                           "clip_s": args.clip_seconds,
                           "warmup": args.warmup, "text": args.text, "device": device,
                           "threads": args.threads, "torch": torch.__version__}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ixbench-") as tmp:
        clip = write_clip(Path(tmp) / "speaker.wav", speaker_clip(args.clip_seconds))
        for side, accel in (("official", False), ("accel", True)):
            if side not in sides or not args.official:
                continue
            if accel and not args.device.startswith("cuda"):
                res[side] = {"error": "skipped: the official accel engine needs CUDA (model_v2.py:435)"}
                continue
            t = time.perf_counter()
            got = run_official(args, clip, accel, Path(tmp) / f"{side}.json")
            if "runs" in got:
                got["rows"] = official_rows(got, args.concurrency)
            res[side] = got
            save(args.json, res)  # what is done survives a later time limit
            print(f"{side}: {time.perf_counter() - t:.0f} s\n{table(res)}", flush=True)
    if "ours" in sides:
        t = time.perf_counter()
        try:
            res["ours"] = run_ours(args, graphs=True)
        except Exception as exc:  # noqa: BLE001 - one device call: say what failed, time eager instead
            print(f"ours with CUDA graphs failed ({type(exc).__name__}: {exc}); eager", flush=True)
            res["ours"] = run_ours(args, graphs=False)
            res["ours"]["graphs_error"] = f"{type(exc).__name__}: {exc}"
        print(f"ours: {time.perf_counter() - t:.0f} s", flush=True)
    text = table(res)
    res["table"] = text
    print(text)
    save(args.json, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
