"""``voxdesk train``: a recording in, a voice with its own LoRA out.

    voxdesk train --voice NAME --data DIR|FILE --model DIR [--steps N] [--out DIR] [--device D]

Everything lives in ``--out`` (default ``<data folder>/training/<voice>``): ``data/`` (the clips,
``app/train/clips.py``) and ``job/`` (the run, ``app/train/job.py``). Running the same command
again after Ctrl+C, a crash or a kill continues where it stopped: sources already sliced and clips
already transcribed are kept, training resumes from the last checkpoint. ``--data`` may also be a
data set folder prepared before (it holds ``dataset.json``), e.g. one checked in the window.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from dataclasses import replace
from pathlib import Path

from app.errors import VoxDeskError

BAR = 24


def _clock(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "--:--"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _bar(progress) -> str:
    done = int(BAR * progress.step / max(1, progress.total_steps))
    loss = "-" if progress.loss is None else f"{progress.loss:.4f}"
    line = f"step {progress.step}/{progress.total_steps} [{'#' * done}{'.' * (BAR - done)}] loss {loss} "
    line += f"ETA {_clock(progress.eta_seconds)}"
    if progress.validation is not None:
        v = progress.validation
        line += f"  val@{v.step}: CER {v.cer:.0%} sim {v.similarity:.2f}"
    return line


def _dataset(args: argparse.Namespace, out: Path):
    from app.train.clips import MIN_SPEECH_SECONDS, DataSet

    data = Path(args.data)
    if (data / "dataset.json").is_file():
        ds = DataSet.open(data)
    else:
        ds = DataSet.create(out / "data")
        for problem in ds.add_sources([data], progress=lambda f, m: _status(m)):
            print(f"voxdesk: {problem}", file=sys.stderr)
        if any(not c.text and c.problem != "silent" for c in ds.clips):
            from app.asr import load_recognizer

            ds.transcribe(load_recognizer(), progress=lambda f, m: _status(f"{m} {f:.0%}"))
        _status("")
    seconds = ds.speech_seconds()
    usable = len(ds.training_clips())
    print(f"data: {usable} clips, {seconds / 60:.1f} min of speech to train on "
          f"({len(ds.clips) - usable} excluded or held out)")  # fmt: skip
    if seconds < MIN_SPEECH_SECONDS and not args.allow_little_data:
        raise VoxDeskError(
            f"There are only {seconds:.0f} s of usable speech; training needs at least "
            f"{MIN_SPEECH_SECONDS // 60} minutes (10 or more is better). Add recordings to --data."
        )
    return ds


def _status(text: str) -> None:
    if sys.stderr.isatty():
        print(f"\r{text[:100]:<100}", end="", file=sys.stderr, flush=True)


def cmd_train(args: argparse.Namespace) -> int:
    from app.paths import data_dir
    from app.train.job import TrainConfig, TrainJob
    from app.train.plan import plan_training, training_device

    if not args.model:
        raise VoxDeskError("Give --model DIR: the VoxCPM model folder to train the voice on.")
    out = Path(args.out) if args.out else data_dir() / "training" / "".join(
        c if c.isalnum() or c in "-_" else "-" for c in args.voice)  # fmt: skip
    job_dir = out / "job"
    if (job_dir / "job.json").exists():
        job = TrainJob.open(job_dir)
        done = job.checkpoints()
        print(f"continuing the training in {job_dir} from step {done[-1].step if done else 0}")
    else:
        if args.device == "cpu":
            device = "cpu"
        else:
            device, why = training_device()
            if device is None:
                raise VoxDeskError(why)
        ds = _dataset(args, out)
        plan = plan_training(Path(args.model), device, None)
        if args.grad_accum:
            plan = replace(plan, grad_accum=args.grad_accum)
        config = TrainConfig(steps=args.steps, save_every=args.save_every, validate_every=args.save_every,
                             validation_text=args.validation_text, seed=args.seed)  # fmt: skip
        job = TrainJob.create(job_dir, Path(args.model), ds, config, plan)
    p = job.plan
    memory = f"{p.estimated_peak_bytes / 2**30:.1f} GB, {p.basis}"
    print(f"training on {p.device}: batch {p.batch_size} x {p.grad_accum} accumulated, "
          f"checkpointing {'on' if p.checkpointing else 'off'} (memory {memory})")  # fmt: skip

    stop: list[str] = []
    previous = signal.signal(signal.SIGINT, lambda *_: stop.append("pause"))
    try:
        end = job.run(lambda pr: _status(_bar(pr)) if pr.phase == "training" else None,
                      lambda: stop[0] if stop else None)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    print(f"\n{_bar(end)}" if sys.stderr.isatty() else _bar(end))
    if end.phase == "paused":
        print(f"paused at step {end.step}: run the same command to continue")
        return 130
    if end.phase != "done":
        raise VoxDeskError(end.message or f"Training ended: {end.phase}.")
    from app.voices.library import VoiceLibrary

    last = job.checkpoints()[-1]
    voice = job.make_voice(last, args.voice, VoiceLibrary())
    print(f"voice “{voice.name}” is in the library with the LoRA of step {last.step} ({last.folder})")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="fine-tune a voice (LoRA) on recordings of its speaker")
    p.add_argument("--voice", required=True, help="name of the new voice")
    p.add_argument(
        "--data", required=True, help="a long recording, a folder of clips, or a prepared data set"
    )
    p.add_argument("--model", help="the VoxCPM model folder to train on")
    p.add_argument("--steps", type=int, default=1000, help="optimizer steps (default 1000, as the recipe)")
    p.add_argument(
        "--out", help="folder for the data set and the run (default: under the VoxDesk data folder)"
    )
    p.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"),
                   help="cpu only if you mean it: training on a processor takes days")  # fmt: skip
    p.add_argument("--save-every", type=int, default=100, help="checkpoint and validate every N steps")
    p.add_argument("--validation-text", default="", help="a sentence spoken and scored at each checkpoint")
    p.add_argument("--grad-accum", type=int, default=0,
                   help="micro-batches per step (default: enough for the recipe's batch of 16)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--allow-little-data", action="store_true", help="train on less than 2 minutes of speech")
    p.set_defaults(func=cmd_train)
