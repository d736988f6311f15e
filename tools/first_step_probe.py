"""Where the first engine step of 64 requests submitted together spends its time, in two trees.

The engine bench (``voxdesk bench``) reports the time to first audio at 64 requests as one
figure; this probe splits that first ``engine.step()`` into its phases for this tree (A) and an
older one (B, e.g. ``git archive abac047`` extracted), alternated A B A B in fresh processes as
``tools/bench_family_ab.py`` does. Each process repeats the bench's run-in (one voice, a warm-up
request, then 1 and 16 requests of ``--steps`` patches), then for each repetition submits 64
requests and times their first step:

- ``host``: wall time per phase as the engine runs it (``make_sequence`` for all requests, the
  scheduler's two passes, the runner's prefill / start / decode, and inside them the graph
  replays and host copies), without any added synchronization;
- ``synced``: the same step again with ``torch.cuda.synchronize()`` after each phase, so each
  phase holds its own device time;
- the device synchronizations of one more first step (``torch.cuda.set_sync_debug_mode``: the
  Python line of every synchronizing call), the garbage collections inside the step, how many
  requests had audio after it, and their time to first audio (p50/p90 as the bench computes it).

    python tools/first_step_probe.py --model /tmp/v2 --old /tmp/oldtree --device cuda --out $OUT/probe

Runs with either tree layout (the runner's ``start`` was ``reset_streams`` before the refactor).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
N = 64


def _bench_module() -> Any:
    layout = (
        "app.models.voxcpm.bench"
        if (Path.cwd() / "app/models/voxcpm/bench.py").is_file()
        else "app.engine.bench"
    )
    return importlib.import_module(layout)


class Phases:
    """Wraps named methods so each call adds its wall time (optionally after a device sync)."""

    def __init__(self, sync: Callable[[], None]) -> None:
        self.sync = sync
        self.synced = False
        self.times: Counter[str] = Counter()

    def wrap(self, obj: Any, name: str, label: str) -> None:
        inner = getattr(obj, name, None)
        if inner is None:
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                if self.synced:
                    self.sync()
                self.times[label] += time.perf_counter() - t

        setattr(obj, name, timed)


def child(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import torch

    from app.engine.config import EngineConfig
    from app.engine.engine import Engine
    from app.engine.request import SynthRequest

    bench = _bench_module()
    config = EngineConfig(
        model_dir=args.model, device=args.device, max_num_seqs=N, max_model_len=2048, lora_slots=8
    )
    engine = Engine(config)
    cuda = engine.device.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(engine.device)

    voice = bench._voice(engine, args.voice_patches)
    bench.run_batch(engine, 1, 8, voice, seed0=10**6)
    for n in (1, 16):
        bench.run_batch(engine, n, args.steps, voice, seed0=1000 * n)
    runner, sched = engine.runner, engine.scheduler
    phases = Phases(sync)
    phases.wrap(engine, "_make_sequence", "make_sequence")
    phases.wrap(sched, "schedule_prefill", "schedule_prefill")
    phases.wrap(runner, "prefill", "prefill")
    phases.wrap(runner, "start", "start")
    phases.wrap(runner, "reset_streams", "start")
    phases.wrap(sched, "schedule_decode", "schedule_decode")
    phases.wrap(runner, "decode", "decode")
    phases.wrap(runner, "_fill", "decode.fill")
    phases.wrap(runner, "_collect", "decode.collect")
    if runner.graphs is not None:
        phases.wrap(runner.graphs, "prefill", "prefill.replay")
        phases.wrap(runner.graphs, "replay", "decode.replay")
    gc_s: list[float] = []
    gc_t: list[float] = []

    def on_gc(phase: str, _info: dict) -> None:
        if phase == "start":
            gc_t.append(time.perf_counter())
        else:
            gc_s.append(time.perf_counter() - gc_t.pop())

    text = bench._text(engine, args.steps)
    reps: list[dict[str, Any]] = []
    syncs: Counter[str] = Counter()
    for rep in range(args.reps + args.synced_reps + 1):
        mode = "host" if rep < args.reps else "synced" if rep < args.reps + args.synced_reps else "syncs"
        reqs = [
            SynthRequest(
                text,
                voice=voice,
                seed=N * 1000 + 100 * rep + i,
                min_len=10**6,
                max_len=args.steps,
                retry_badcase=False,
            )
            for i in range(N)
        ]
        phases.times.clear()
        phases.synced = mode == "synced"
        gc_s.clear()
        sync()
        ids = [engine.submit(r) for r in reqs]
        gc.callbacks.append(on_gc)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if mode == "syncs" and cuda:
                torch.cuda.set_sync_debug_mode("warn")
            t = time.perf_counter()
            events = engine.step()
            step_s = time.perf_counter() - t
            if cuda:
                torch.cuda.set_sync_debug_mode("default")
        gc.callbacks.remove(on_gc)
        if mode == "syncs":
            syncs.update(
                f"{Path(w.filename).name}:{w.lineno}" for w in caught if "synchroniz" in str(w.message)
            )
        mine = set(ids)
        seqs = [s for s in sched.running if s.id in mine]
        first = [1e3 * (s.t_first - s.t_submit) for s in seqs if s.t_first]
        reps.append({
            "mode": mode,
            "step_ms": 1e3 * step_s,
            "with_audio": sum(type(e).__name__ == "AudioChunk" for e in events),
            "first_audio_ms_p50": float(np.percentile(first, 50)) if first else None,
            "first_audio_ms_p90": float(np.percentile(first, 90)) if first else None,
            "gc": [round(1e3 * s, 2) for s in gc_s],
            "phases_ms": {k: round(1e3 * v, 2) for k, v in sorted(phases.times.items())},
        })  # fmt: skip
        for rid in ids:
            engine.cancel(rid)
        while engine.has_work():
            engine.step()
    engine.shutdown()
    return {"tree": str(Path.cwd()), "device": str(engine.device), "reps": reps, "syncs": dict(syncs)}


def summary(label: str, res: dict[str, Any]) -> str:
    if "error" in res:
        return f"{label}: {res['error']}"
    lines = [f"{label} ({res['tree']}, {res['device']}): device syncs in the step {res['syncs']}"]
    for mode in ("host", "synced"):
        reps = [r for r in res["reps"] if r["mode"] == mode]
        if not reps:
            continue
        keys = sorted({k for r in reps for k in r["phases_ms"]})
        med = {k: statistics.median(r["phases_ms"].get(k, 0.0) for r in reps) for k in keys}
        step = statistics.median(r["step_ms"] for r in reps)
        first = [r["first_audio_ms_p50"] for r in reps]
        lines.append(
            f"  {mode}: step {step:.1f} ms, first audio p50 {first} (first rep p90 "
            f"{reps[0]['first_audio_ms_p90']}), with audio {[r['with_audio'] for r in reps]}, "
            f"gc {[r['gc'] for r in reps]}"
        )
        lines.append("    " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--old", type=Path, default=None, help="the older source tree (B); none: this tree only")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--voice-patches", type=int, default=32)
    p.add_argument("--reps", type=int, default=3, help="first steps timed as the engine runs them")
    p.add_argument("--synced-reps", type=int, default=2, help="first steps with a sync after each phase")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--timeout", type=int, default=300, help="seconds per process")
    p.add_argument("--extra-path", default="", help="more PYTHONPATH entries after the tree (wheels)")
    p.add_argument("--out", type=Path, default=None, help="folder for probe_<run>.json")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    trees = [("A", ROOT)] + ([("B", args.old.resolve())] if args.old else [])
    forward = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--child"]
    failed = 0
    for rnd in range(1, args.rounds + 1):
        for label, tree in trees:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(tree), args.extra_path) if p))
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), *forward, "--child"],
                cwd=tree, env=env, capture_output=True, text=True, timeout=args.timeout,
            )  # fmt: skip
            try:
                res = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                res = {"error": f"exit {proc.returncode}: {proc.stderr[-2000:]}"}
                failed += 1
            if args.out is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"probe_{label}{rnd}.json").write_text(json.dumps(res, indent=1))
            print(summary(f"{label}{rnd}", res), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
