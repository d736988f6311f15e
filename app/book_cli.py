"""``voxdesk book``: speak a TXT, Markdown or EPUB book into per-chapter MP3s and one M4B.

The output folder is also the book's project (app/longform/project.py): the same command run
again after a kill, a Ctrl+C or a crash continues where the last run stopped — finished chapters
and segments are kept, nothing is generated twice. Registered by app/cli.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.engine_args import add_engine_options, engine_config
from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.longform.runner import BookProgress

DEFAULT_WINDOW = 16  # segments in flight at once: the engine batches them


def _project(args: argparse.Namespace, out: Path):
    """The project in ``out``: opened (the same book, the same seed and voice) or created."""
    from app.longform.book import import_book
    from app.longform.project import BOOK_FILE, BookProject, BookSettings, new_seed

    book = import_book(args.book)
    if (out / BOOK_FILE).exists():
        project = BookProject.open(out)
        if not project.is_same_book(book):
            raise VoxDeskError(
                f"{out} holds another book ({project.title}): choose another --out for "
                f"{Path(args.book).name}."
            )
        s = project.settings
        if args.seed is not None and args.seed != s.seed:
            raise VoxDeskError(
                f"This book was started with seed {s.seed}: leave --seed out (or give {s.seed}) to "
                "continue it, or choose another --out to start again."
            )
        if args.voice is not None and args.voice != s.voice:
            raise VoxDeskError(
                f"This book was started with the voice {s.voice or 'default'}: leave --voice out to continue "
                "it, or choose another --out to start again."
            )
        done = sum(project.state(i)[0].value == "done" for i in range(len(project.chapters)))
        print(f"Resuming: {done} of {len(project.chapters)} chapters done")
        return project
    settings = BookSettings(seed=new_seed() if args.seed is None else args.seed, voice=args.voice,
                            cfg=args.cfg, timesteps=args.timesteps, normalize=args.normalize)  # fmt: skip
    project = BookProject.create(out, book, settings, source=Path(args.book).name)
    by = f" by {book.author}" if book.author else ""
    print(f"{book.title}{by}: {len(book.chapters)} chapters, {book.chars:,} characters, seed {settings.seed}")
    return project


class _Bar:
    """One line of progress on a terminal (redrawn at most 4 times a second), else a line per chapter."""

    def __init__(self, stream=sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last = 0.0
        self._chapters = -1

    def __call__(self, p: BookProgress) -> None:
        from app.longform.runner import format_eta

        now = time.monotonic()
        if self.tty and now - self._last < 0.25 and p.running:
            return
        self._last = now
        eta = format_eta(p.eta_s) if p.eta_s is not None else "--:--"
        speed = f"{p.chars_per_s:.1f} chars/s" if p.chars_per_s else "measuring"
        filled = int(30 * p.fraction)
        line = (f"[{'#' * filled}{'-' * (30 - filled)}] {100 * p.fraction:5.1f}%  chapters "
                f"{p.chapters_done}/{len(p.chapters)}  {speed}  ETA {eta}")  # fmt: skip
        if self.tty:
            self.stream.write("\r" + line + ("\n" if not p.running else ""))
            self.stream.flush()
        elif p.chapters_done != self._chapters or not p.running:
            self._chapters = p.chapters_done
            print(line, file=self.stream, flush=True)


def _voice(project, args: argparse.Namespace, encode_rate: int, architecture: str):
    if project.settings.voice is None:
        return None
    from app.voices.lookup import library_prompt

    return library_prompt(project.settings.voice, args.voices, encode_rate, architecture)


def cmd_book(args: argparse.Namespace) -> int:
    from app.longform.project import BOOK_FILE

    if not args.out.strip():
        raise VoxDeskError("--out is empty: give the folder for the book.")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise VoxDeskError(f"--out must be a folder; {out} is a file.")
    if args.window < 1:
        raise VoxDeskError("--window must be at least 1.")
    formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
    if not formats or set(formats) - {"mp3", "m4b"}:
        raise VoxDeskError(f"--formats takes mp3, m4b or both (got {args.formats}).")
    if not args.model and not (out / BOOK_FILE).exists():
        raise VoxDeskError("Give --model DIR (a model on this computer).")
    project = _project(args, out)  # the folder is made only for a book that reads and settings that hold
    if not project.is_done():
        _generate(project, args)
    failed = [
        (i, project.state(i)[1])
        for i in range(len(project.chapters))
        if project.state(i)[0].value == "failed"
    ]
    if failed:
        for i, message in failed:
            print(f"Chapter {i + 1} ({project.chapters[i].title}) failed: {message}", file=sys.stderr)
        raise VoxDeskError(f"{len(failed)} chapter(s) failed: run the same command again to retry them.")
    if args.no_export:
        print(f"Every chapter is spoken; the segments are in {out / 'chapters'}.")
        return 0
    from app.longform.book_export import export_book

    print(f"Exporting to {', '.join(formats)} at {args.target_lufs:g} LUFS…", file=sys.stderr)
    result = export_book(project, out, target_lufs=args.target_lufs, formats=formats)
    for path in [*result.chapter_files, *([result.m4b] if result.m4b else [])]:
        print(path)
    return 0


def _generate(project, args: argparse.Namespace) -> None:
    from app.engine import Engine
    from app.engine.config import resolve_device
    from app.engine.host import EngineHost
    from app.longform.runner import BookRunner
    from app.models.voxcpm.config import load_config

    if not args.model:
        raise VoxDeskError("Give --model DIR (a model on this computer).")
    cfg = load_config(args.model)
    if resolve_device(args.device) == "cpu":
        import torch

        from app.engine.config import cpu_threads

        if args.threads is not None and args.threads < 1:
            raise VoxDeskError("--threads must be at least 1.")
        torch.set_num_threads(args.threads or cpu_threads())
    voice = _voice(project, args, int(cfg.audio_vae.get("sample_rate", 16000)), cfg.architecture)
    engine = Engine(engine_config(args, max_num_seqs=args.window))
    host = EngineHost(engine).start()
    try:
        BookRunner(project, host, voice, int(engine.sample_rate), window=args.window).run(progress=_Bar())
    finally:
        host.close()


def add_book(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "book", help="speak a book (EPUB, TXT, Markdown) into chapter MP3s and an M4B; resumable"
    )
    p.add_argument("book", help="the book: .epub, .txt or .md")
    p.add_argument("--model", help="model folder (config.json, weights, tokenizer)")
    p.add_argument(
        "--voice", metavar="NAME", help="a voice from the voice library (default: the model's own)"
    )
    p.add_argument("--voices", metavar="DIR", help="voice library folder (default: the app's own)")
    p.add_argument(
        "--seed", type=int, default=None, help="the book's seed (default: a new one, kept in the project)"
    )
    p.add_argument("--cfg", type=float, default=2.0, help="guidance strength (default 2.0)")
    p.add_argument("--timesteps", type=int, default=10, help="diffusion steps per patch (default 10)")
    p.add_argument("--normalize", action="store_true", help="speak numbers, dates and symbols as words")
    p.add_argument("--target-lufs", type=float, default=-18.0, help="loudness of the export (default -18)")
    p.add_argument("--formats", default="mp3,m4b", help="what to export: mp3, m4b or mp3,m4b (default)")
    p.add_argument("--no-export", action="store_true", help="only speak the segments; export later")
    p.add_argument(
        "--window", type=int, default=DEFAULT_WINDOW, help="segments generated together (default 16)"
    )
    add_engine_options(p)
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per usable core)")
    p.add_argument("--out", required=True, help="the book's folder: its project, chapter MP3s and the M4B")
    p.set_defaults(func=cmd_book)
