"""The engine bench of two source trees, alternated: is the family refactor free?

Runs VoxCPM's engine bench (``voxdesk bench``) once per round for this tree (A) and for an older
tree (B, e.g. ``git archive abac047`` extracted), in the order A B A B ..., each in its own
process with only its own tree on ``PYTHONPATH``, so A-to-A differences show the run-to-run
noise that B-to-A differences must be read against. Writes each run's JSON, ``family_ab.json``
(the figures side by side) and ``family_ab.md`` (a small table) under ``--out``.

    python tools/bench_family_ab.py --model /tmp/v2 --old /tmp/oldtree --device cuda \\
        --concurrency 1,16,64 --steps 100 --rounds 2 --out $OUT/family
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the bench's module in each layout: after the refactor, then before it
MODULES = (
    ("app/models/voxcpm/bench.py", "app.models.voxcpm.bench"),
    ("app/engine/bench.py", "app.engine.bench"),
)
FIGURES = ("steady_seq_steps_per_s", "ms_per_step", "first_chunk_ms_p50", "first_chunk_ms_p90")


def bench_module(tree: Path) -> str:
    for path, module in MODULES:
        if (tree / path).is_file():
            return module
    raise SystemExit(f"{tree} has no engine bench ({' or '.join(p for p, _ in MODULES)})")


def run_one(tree: Path, extra_path: str, bench_args: list[str], out: Path, timeout: int) -> dict:
    code = f"import sys; from {bench_module(tree)} import run_cli; sys.exit(run_cli(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(tree), extra_path) if p))
    proc = subprocess.run(
        [sys.executable, "-c", code, *bench_args, "--json", str(out)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    print(proc.stdout[-3000:], end="", flush=True)
    if proc.returncode != 0 or not out.is_file():
        print(proc.stderr[-3000:], end="", flush=True)
        return {"error": f"exit {proc.returncode}"}
    return json.loads(out.read_text())


def summarize(runs: list[tuple[str, int, dict]]) -> dict:
    """Per concurrency: every run's figures in run order, each tree's mean, B/A and the spread
    (max-min over mean) within each tree."""
    table: dict[str, dict] = {}
    for label, rnd, res in runs:
        for batch in res.get("batches", []):
            row = table.setdefault(str(batch["concurrency"]), {"runs": []})
            row["runs"].append({"tree": label, "round": rnd, **{k: batch[k] for k in FIGURES}})
    for row in table.values():
        for key in FIGURES:
            per_tree = {t: [r[key] for r in row["runs"] if r["tree"] == t] for t in ("A", "B")}
            means = {t: statistics.fmean(v) for t, v in per_tree.items() if v}
            row[key] = {
                "mean": means,
                "spread": {t: (max(v) - min(v)) / means[t] for t, v in per_tree.items() if v and means[t]},
                "B_over_A": means["B"] / means["A"] if len(means) == 2 and means["A"] else None,
            }
    return table


def markdown(table: dict) -> str:
    lines = [
        "| requests | run order: steady seq-steps/s | A mean | B mean | B/A | spread A / B "
        "| first audio p50/p90 ms |",
        "|---:|---|---:|---:|---:|---|---|",
    ]
    key = "steady_seq_steps_per_s"
    for conc, row in sorted(table.items(), key=lambda kv: int(kv[0])):
        order = " ".join(f"{r['tree']}{r['round']} {r[key]:.1f}" for r in row["runs"])
        f = row[key]
        ratio = f"{f['B_over_A']:.3f}" if f["B_over_A"] is not None else "-"
        spread = " / ".join(f"{100 * f['spread'].get(t, 0):.1f} %" for t in ("A", "B"))
        a, b = f["mean"].get("A", float("nan")), f["mean"].get("B", float("nan"))
        first = ", ".join(
            f"{r['tree']}{r['round']} {r['first_chunk_ms_p50']:.1f}/{r['first_chunk_ms_p90']:.1f}"
            for r in row["runs"]
        )
        lines.append(f"| {conc} | {order} | {a:.1f} | {b:.1f} | {ratio} | {spread} | {first} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--old", required=True, type=Path, help="the older source tree (B)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--concurrency", default="1,16,64")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--voice-patches", type=int, default=32)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=None, help="CPU threads per run")
    p.add_argument("--timeout", type=int, default=300, help="seconds per run")
    p.add_argument("--extra-path", default="", help="more PYTHONPATH entries after the tree (wheels)")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bench_args = [
        "--model",
        args.model,
        "--device",
        args.device,
        "--concurrency",
        args.concurrency,
        "--steps",
        str(args.steps),
        "--voice-patches",
        str(args.voice_patches),
    ]
    if args.threads:
        bench_args += ["--threads", str(args.threads)]
    trees = (("A", ROOT), ("B", args.old.resolve()))
    runs = []
    for rnd in range(1, args.rounds + 1):
        for label, tree in trees:
            print(f"== family {label}{rnd}: {tree}", flush=True)
            out = args.out / f"family_{label}{rnd}.json"
            runs.append((label, rnd, run_one(tree, args.extra_path, bench_args, out, args.timeout)))
    table = summarize(runs)
    summary = {"A": str(ROOT), "B": str(args.old), "bench_args": bench_args, "by_concurrency": table}
    (args.out / "family_ab.json").write_text(json.dumps(summary, indent=1))
    md = markdown(table)
    (args.out / "family_ab.md").write_text(md)
    print(md, end="")
    failed = [f"{label}{rnd}" for label, rnd, res in runs if "error" in res]
    if failed:
        print(f"failed runs: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
