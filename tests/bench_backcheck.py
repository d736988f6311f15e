"""Back-check cost: segments per second through the engine with and without recognition.

    .venv/bin/python tests/bench_backcheck.py [--segments 24] [--patches 40] [--model DIR] [--asr DIR]

Without ``--model``/``--asr`` it writes the tiny random checkpoint and the tiny SenseVoice
recognizer (tests/tiny.py, tests/tiny_asr.py) to a temporary folder. Three runs of the same texts
and seeds, side by side: no check; check with one take (recognition only: what it costs to hear
every segment beside synthesis); check with up to three takes (flagged segments are drawn again).
It prints segments/s, the ratio to the unchecked run, and how long the engine waited for the
recognizer at the end (the only time synthesis is not running).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--segments", type=int, default=24)
    p.add_argument("--patches", type=int, default=150)
    p.add_argument("--model")
    p.add_argument("--asr")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()

    import torch

    from app.asr import load_recognizer
    from app.backcheck.run import synth_checked
    from app.backcheck.takes import CheckPolicy
    from app.backcheck.worker import CheckWorker
    from app.engine import Engine, EngineConfig, SynthRequest

    tmp = Path(tempfile.mkdtemp(prefix="bench-backcheck-"))
    if args.model is None:
        from tiny import write_tiny_checkpoint

        args.model = str(write_tiny_checkpoint(tmp / "tts", "voxcpm2"))
    if args.asr is None:
        from tiny_asr import write_tiny_sensevoice

        args.asr = str(write_tiny_sensevoice(tmp / "asr"))
    torch.set_num_threads(max(1, torch.get_num_threads()))
    # long enough that the length cap (6 patches a text token + 10) allows --patches
    words = [
        "hello world, this is voice desk speaking a sentence of ordinary length for the benchmark",
        "the quick brown fox jumps over the lazy dog while the band plays on and on tonight",
        "今天天气很好，我们一起去公园散步，然后在湖边的小店里喝一杯热茶聊聊天",
        "yes, no, maybe: every answer is a segment and every segment is heard once it is made",
    ]
    n = args.patches
    reqs = [SynthRequest(words[i % 4], seed=i, min_len=n, max_len=n) for i in range(args.segments)]
    engine = Engine(EngineConfig(model_dir=args.model, device=args.device, max_num_seqs=8))
    recognizer = load_recognizer(args.asr)
    list(synth_checked(engine, reqs[:2], None, CheckPolicy()))  # warm up
    rows = []
    for label, takes in (("no check", 0), ("check, 1 take", 1), ("check, up to 3 takes", 3)):
        worker = CheckWorker(recognizer) if takes else None
        policy = CheckPolicy(threshold=0.2, max_takes=max(1, takes))
        t0 = time.perf_counter()
        out = list(synth_checked(engine, reqs, worker, policy))
        wall = time.perf_counter() - t0
        made = sum(len(c.takes) for c in out)
        assert all(len(c.audio) == n * engine.runner.model.samples_per_patch for c in out)
        rows.append((label, len(out) / wall, made, wall))
        if worker is not None:
            worker.close()
    base = rows[0][1]
    print(f"model {Path(args.model).name}, recognizer {Path(args.asr).name}, {args.segments} segments "
          f"x {n} patches, {torch.get_num_threads()} torch threads")  # fmt: skip
    print(f"{'run':<24}{'segments/s':>12}{'ratio':>8}{'takes made':>12}{'wall s':>9}")
    for label, rate, made, wall in rows:
        print(f"{label:<24}{rate:>12.2f}{rate / base:>8.2f}{made:>12}{wall:>9.2f}")


if __name__ == "__main__":
    main()
