"""``voxdesk models list`` and ``voxdesk models download NAME``: the model manager's catalog and
downloader (app/models/download.py, app/asr/catalog.py) on the command line.

A download shows a progress bar on the terminal, the model's licence first (one that is not
permissive must be accepted, with ``--accept-license`` or at the prompt, and is recorded as the
window records it: app/models/licenses.py). Ctrl+C stops it at the next block and keeps the partial
files; the same command resumes them.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.errors import VoxDeskError
from app.models import download as dl
from app.models.licenses import License, LicenseText, accepted, for_language, record_acceptance

SOURCES = ("huggingface", "mirror", "modelscope")


@dataclass(frozen=True)
class Entry:
    """One downloadable model: a speech model or a speech recognizer."""

    key: str
    title: str
    kind: str  # "speech", "recognizer", "speaker" or "extra" (an optional part of a speech model)
    size_mb: int
    license: License
    folder: Path
    fetch: Callable[..., Path]  # (source, dest, progress, cancel) -> folder
    problems: Callable[[Path], list[str]]  # what keeps a folder from being usable
    texts: Callable[[dl.Source], list[LicenseText]] = lambda _source: []  # the agreement's files
    license_key: str = ""  # whose acceptance counts (an extra's: its model's); "": this key

    @property
    def terms_key(self) -> str:
        return self.license_key or self.key

    def state(self) -> str:
        if not self.folder.is_dir():
            return "not downloaded"
        if any(self.folder.rglob("*.part")):
            return "partly downloaded (download again to resume)"
        return "installed" if not self.problems(self.folder) else "incomplete (download again)"


def catalog() -> list[Entry]:
    from app.asr import catalog as asr
    from app.paths import models_dir
    from app.train import speaker as spk

    def speech(m: dl.KnownModel) -> Entry:
        def fetch(source, dest, progress, cancel):
            return dl.download_model(m, source, dest, progress, cancel)

        return Entry(m.key, m.title, "speech", m.approx_mb, m.license, models_dir() / m.key, fetch,
                     dl.validate_model_dir, lambda source: dl.license_texts(m, source))  # fmt: skip

    def extra(m: dl.KnownModel, e: dl.Extra) -> Entry:
        def fetch(source, dest, progress, cancel):
            if dl.validate_model_dir(dest):
                raise VoxDeskError(f"{e.key} goes into {m.key}'s folder: download {m.key} first "
                                   f"(voxdesk models download {m.key}).")  # fmt: skip
            return dl.download_model(m, source, dest, progress, cancel, extras=(e.key,), base=False)

        def problems(folder: Path) -> list[str]:
            return [] if e.installed_in(folder) else [f"{e.folder} is missing"]

        return Entry(e.key, f"{m.key}: {e.title}, optional", "extra", e.approx_mb, m.license,
                     models_dir() / m.key, fetch, problems, lambda source: dl.license_texts(m, source),
                     license_key=m.key)  # fmt: skip

    def recognizer(r: asr.KnownRecognizer) -> Entry:
        def fetch(source, dest, progress, cancel):
            return asr.download_recognizer(r, source, dest, progress, cancel)

        return Entry(r.key, r.title, "recognizer", r.size_mb, r.license, asr.default_folder(r), fetch,
                     asr.validate_recognizer_dir)  # fmt: skip

    def speaker(m: spk.KnownSpeakerModel) -> Entry:
        def fetch(source, dest, progress, cancel):
            return spk.download_speaker_model(m, source, dest, progress, cancel)

        return Entry(m.key, m.title, "speaker", m.size_mb, m.license, spk.default_folder(m), fetch,
                     spk.check_folder)  # fmt: skip

    extras = [extra(m, e) for m in dl.KNOWN_MODELS for e in m.extras]
    return [*map(speech, dl.KNOWN_MODELS), *extras, *map(recognizer, asr.KNOWN_RECOGNIZERS),
            *map(speaker, spk.KNOWN_SPEAKER_MODELS)]  # fmt: skip


def find(name: str) -> Entry:
    """The entry named ``name`` (case-insensitive; a unique start such as ``sensevoice`` will do)."""
    entries = catalog()
    key = name.strip().casefold()
    exact = [e for e in entries if e.key.casefold() == key]
    matches = exact or [e for e in entries if key and e.key.casefold().startswith(key)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(e.key for e in matches)
        raise VoxDeskError(f"{name!r} could be {names}: give the whole name.")
    names = ", ".join(e.key for e in entries)
    raise VoxDeskError(f"There is no model called {name!r}: use one of {names} (voxdesk models list).")


def _source(args: argparse.Namespace) -> dl.Source:
    if args.mirror or args.source == "mirror":
        return dl.hf_mirror(args.mirror or dl.HF_MIRROR_DEFAULT)
    return dl.MODELSCOPE if args.source == "modelscope" else dl.HUGGING_FACE


# ---- list -----------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    for e in catalog():
        kind = {"recognizer": "speech recognition", "speaker": "speaker similarity (training)",
                "extra": "optional part, into the model's folder"}.get(e.kind, "speech model")  # fmt: skip
        print(f"{e.key:<26}{e.title}")
        print(f"{'':<26}{kind}, about {e.size_mb:,} MB, licence {e.license.name}; {e.state()}")
        print(f"{'':<26}{e.folder}")
    return 0


# ---- download -------------------------------------------------------------------------------
class ProgressBar:
    """A bar redrawn in place on a terminal; on a pipe or log, one line per tenth done."""

    WIDTH = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last_draw = 0.0
        self.last_tenth = -1
        self.done = 0
        self.total = 0

    def __call__(self, p: dl.Progress) -> None:
        self.done, self.total = p.done, p.total
        share = p.done / p.total if p.total else 0.0
        line = (f"[{'#' * int(share * self.WIDTH):<{self.WIDTH}}] {share:4.0%}  {p.done / 1e6:,.1f} of "
                f"{p.total / 1e6:,.1f} MB  {p.bytes_per_second / 1e6:.1f} MB/s  {p.file}")  # fmt: skip
        if self.tty:
            now = time.monotonic()
            if now - self.last_draw >= 0.1 or p.done == p.total:
                self.last_draw = now
                self.stream.write("\r" + line[:119].ljust(119))
                self.stream.flush()
        elif int(share * 10) > self.last_tenth:
            self.last_tenth = int(share * 10)
            print(line, file=self.stream, flush=True)

    def end(self) -> None:
        if self.tty and self.last_draw:
            self.stream.write("\n")
            self.stream.flush()


def _accept(entry: Entry, args: argparse.Namespace, source: dl.Source) -> None:
    """Show the licence; one that is not permissive must be accepted (and is recorded). An
    agreement with its own files is fetched (nothing else is) and printed in full first."""
    terms = entry.license
    print(f"{entry.title}: licence {terms.name} ({terms.url})")
    texts = entry.texts(source) if terms.texts else []
    if accepted(entry.terms_key, terms, texts):
        return
    shown = for_language(texts, os.environ.get("LANG", "")) if texts else None  # zh_CN.UTF-8: the Chinese
    if shown is not None:
        again = " It changed since you accepted it." if accepted(entry.terms_key, terms) else ""
        print(f"\n{shown.text.strip()}\n\n{terms.summary}{again}\n", flush=True)
    if not args.accept_license:
        if not sys.stdin.isatty():
            raise VoxDeskError(
                f"{entry.key}'s licence ({terms.name}) is not a permissive one: read it at {terms.url}, "
                "then run the command again with --accept-license."
            )
        answer = input("Do you accept this licence? [y/N] ").strip().casefold()
        if answer not in ("y", "yes"):
            raise VoxDeskError("Licence not accepted: nothing was downloaded.")
    record_acceptance(entry.terms_key, terms, texts, shown)


def cmd_download(args: argparse.Namespace) -> int:
    entry = find(args.name)
    source = _source(args)
    dest = Path(args.to) if args.to else entry.folder
    _accept(entry, args, source)
    print(f"Downloading {entry.key} from {source.title} into {dest} (Ctrl+C stops; the same command "
          "resumes)", flush=True)  # fmt: skip
    cancel = threading.Event()
    bar = ProgressBar(sys.stderr)
    previous = None
    if threading.current_thread() is threading.main_thread():

        def stop(*_):  # the first Ctrl+C stops at the next block; a second one at once
            cancel.set()
            signal.signal(signal.SIGINT, signal.default_int_handler)

        previous = signal.signal(signal.SIGINT, stop)
    try:
        folder = entry.fetch(source, dest, bar, cancel)
    except (dl.DownloadCancelled, KeyboardInterrupt):
        bar.end()
        kept = f"{bar.done / 1e6:,.1f} of {bar.total / 1e6:,.1f} MB" if bar.total else "the partial files"
        print(f"voxdesk: download stopped ({kept} kept in {dest}); run the same command again to resume.",
              file=sys.stderr)  # fmt: skip
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    bar.end()
    print(f"{entry.key} is ready in {folder}.")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the models VoxDesk knows, or download one")
    models = p.add_subparsers(dest="models_command", required=True, parser_class=type(p))
    listing = models.add_parser("list", help="the speech models and recognizers: size, licence, state")
    listing.set_defaults(func=cmd_list)
    get = models.add_parser("download", help="download a model (resumable, checked against its checksums)")
    get.add_argument("name", help="VoxCPM2, VoxCPM1.5, VoxCPM-0.5B, Fun-CosyVoice3-0.5B, CosyVoice2-0.5B, "
                     "IndexTTS-2.5, IndexTTS-2.5-QwenEmotion (its optional emotion-from-a-sentence model, "
                     "added to its folder), SenseVoiceSmall or CAMPlusSpeaker (see models list)")
    get.add_argument("--source", choices=SOURCES, default="huggingface",
                     help="where from (default huggingface; mirror: a Hugging Face mirror)")  # fmt: skip
    get.add_argument("--mirror", metavar="URL", help=f"the mirror's address (default {dl.HF_MIRROR_DEFAULT})")
    get.add_argument("--to", metavar="DIR", help="folder to download into (default: the models folder)")
    get.add_argument(
        "--accept-license",
        action="store_true",
        help="accept the model's licence without asking (SenseVoice Small and IndexTTS-2.5 have one to "
        "accept; IndexTTS-2.5's is printed in full first)",
    )
    get.set_defaults(func=cmd_download)
