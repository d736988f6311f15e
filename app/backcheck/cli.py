"""``voxdesk synth --check``: every line is heard after it is made, drawn again while it scores
badly, and ``scores.json`` is written next to the files."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.backcheck.takes import DEFAULT_MAX_TAKES, DEFAULT_THRESHOLD, MAX_TAKES_LIMIT, CheckPolicy
from app.errors import VoxDeskError


def add_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("back-check (needs a speech recognizer)")
    g.add_argument(
        "--check",
        action="store_true",
        help="hear each file, redo bad ones, write scores.json beside them",
    )
    g.add_argument(
        "--check-threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help=f"error rate above which a take is redone (default {DEFAULT_THRESHOLD})",
    )
    g.add_argument(
        "--check-takes",
        type=int,
        default=DEFAULT_MAX_TAKES,
        help=f"most takes per line, the first included (1-{MAX_TAKES_LIMIT}, default {DEFAULT_MAX_TAKES})",
    )
    g.add_argument("--asr-model", help="speech recognizer model folder (default: the one installed)")


def policy(args: argparse.Namespace) -> CheckPolicy:
    try:
        return CheckPolicy(args.check_threshold, args.check_takes)
    except ValueError as exc:
        raise VoxDeskError(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None


def render_checked(
    jobs: list, voice: Any, args: argparse.Namespace, requests: list, engine: Any = None
) -> Iterator[tuple]:
    """(job, Checked) for each job as it is decided; scores.json is written after the last one.
    ``engine``: one already loaded (default: one loaded here from ``args``)."""
    from app.asr import load_recognizer
    from app.backcheck.report import entry, write_scores
    from app.backcheck.run import synth_checked
    from app.backcheck.worker import CheckWorker
    from app.engine import Engine
    from app.engine_args import engine_config
    from app.synth_cli import _Rendered

    rules = policy(args)
    recognizer = load_recognizer(args.asr_model)
    engine = engine or Engine(engine_config(args, max_num_seqs=min(len(jobs), 64)))
    worker = CheckWorker(recognizer)
    entries: dict[Path, dict[str, dict]] = {}
    try:
        for checked in synth_checked(engine, requests, worker, rules):
            job = jobs[checked.index]
            entries.setdefault(job.out.parent, {})[job.out.name] = entry(checked, job.text, rules)
            score = checked.score
            note = f", {score.label()}" if score else ", not checked"
            note += f", {len(checked.takes)} take{'s' if len(checked.takes) > 1 else ''}"
            yield job, _Rendered(checked.audio, engine.sample_rate, checked.n_patches, checked.seed, note)
    finally:
        worker.close()
    if worker.error:
        print(f"voxdesk: {worker.error}", file=sys.stderr)
    for folder, records in entries.items():
        path = write_scores(folder, records, rules)
        flagged = sum(r["flagged"] for r in records.values())
        print(f"{path}: {len(records)} checked, {flagged} still above {rules.threshold:g}")
