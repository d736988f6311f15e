"""A book project on disk: what to speak, how, and what has been spoken, so a run can stop at any
moment and the next one continues where it stopped.

Layout of the project folder::

    book.json                 title, author, settings (seed, voice…), the chapters — written once
                              (and when the settings change), never per segment
    cover.jpg|png             the book's cover, if it has one
    chapters/001/segments.json  the chapter's segments and the silence after each (written once)
    chapters/001/state.json   only when the last run of the chapter failed: the message
    chapters/001/0001.flac    one file per finished segment: its existence is the "done" mark
    generation.log            one appended line per segment generated (chapter, segment, seed)

Every file is written atomically (app/atomic.py), so a killed run leaves finished segments whole
and no half-written one; what is done is read back from the folder, so no file grows with the
number of segments except the append-only log. Each segment's seed is derived from the book's seed
and the segment's place (:func:`segment_seed`), so a resumed run makes the same audio an
uninterrupted one would.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from app.atomic import friendly_error, write_bytes, write_json
from app.engine.settings import SEED_LIMIT, check_settings
from app.errors import VoxDeskError
from app.longform.book import Book
from app.text.segmenter import DEFAULT_MAX_CHARS, split_script

FORMAT_VERSION = 1
SEGMENT_SUFFIX = ".flac"
BOOK_FILE = "book.json"
LOG_FILE = "generation.log"


class ChapterState(str, enum.Enum):
    PENDING = "pending"
    GENERATING = "generating"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class BookSettings:
    """How the book is spoken; fixed for the life of the project (a new seed is a new book)."""

    seed: int
    voice: str | None = None  # a voice of the library, by name; None: the model's own voice
    cfg: float = 2.0
    timesteps: int = 10
    max_chars: int = DEFAULT_MAX_CHARS
    sentence_gap: float = 0.3  # seconds of silence after a sentence
    paragraph_gap: float = 0.8  # … after a paragraph's last sentence
    chapter_gap: float = 2.0  # … after a chapter's last sentence
    normalize: bool = False  # numbers, dates, units… spelled out (app/text/normalize.py)

    def __post_init__(self) -> None:
        check_settings(cfg=self.cfg, timesteps=self.timesteps, min_len=0, max_len=1, seed=self.seed)
        if min(self.sentence_gap, self.paragraph_gap, self.chapter_gap) < 0:
            raise VoxDeskError("A pause cannot be negative: use 0 or more seconds.")


@dataclass(frozen=True)
class Piece:
    """One segment of a chapter: the text spoken and the silence after it (seconds)."""

    text: str
    gap: float


@dataclass(frozen=True)
class ChapterInfo:
    title: str
    folder: str  # "001"
    segments: int
    chars: int


def new_seed() -> int:
    return random.SystemRandom().randrange(2**31)


def segment_seed(book_seed: int, chapter: int, segment: int) -> int:
    """The seed of one segment: a hash of the book's seed and the segment's place."""
    digest = hashlib.blake2b(f"{book_seed}/{chapter}/{segment}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SEED_LIMIT


def pieces(text: str, settings: BookSettings) -> list[Piece]:
    """A chapter's text (one paragraph per line) cut by the script segmenter, with its pauses."""
    segs = split_script(text, settings.max_chars)
    out = []
    for i, seg in enumerate(segs):
        if i + 1 == len(segs):
            gap = settings.chapter_gap
        elif segs[i + 1].line != seg.line:
            gap = settings.paragraph_gap
        else:
            gap = settings.sentence_gap
        out.append(Piece(seg.text, gap))
    return out


class BookProject:
    """A project folder, opened or created. Not thread-safe: one runner writes at a time."""

    def __init__(self, root: Path, meta: dict) -> None:
        self.root = root
        self.meta = meta
        self.settings = BookSettings(**meta["settings"])
        self.chapters = [ChapterInfo(**c) for c in meta["chapters"]]
        self._pieces: dict[int, list[Piece]] = {}
        self._done: dict[int, set[int]] = {}

    # ---- create / open -------------------------------------------------------------------
    @classmethod
    def create(cls, root: str | Path, book: Book, settings: BookSettings, source: str = "") -> BookProject:
        root = Path(root)
        if (root / BOOK_FILE).exists():
            raise VoxDeskError(f"{root} already holds a book project: open it, or choose another folder.")
        chapters = []
        cover = ""
        try:
            root.mkdir(parents=True, exist_ok=True)
            for i, chapter in enumerate(book.chapters, 1):
                folder = f"{i:03d}"
                parts = pieces(chapter.text, settings)
                path = root / "chapters" / folder / "segments.json"
                write_json(path, [asdict(p) for p in parts])
                chapters.append(
                    ChapterInfo(chapter.title, folder, len(parts), sum(len(p.text) for p in parts))
                )
            if book.cover:
                cover = "cover.png" if book.cover_mime == "image/png" else "cover.jpg"
                write_bytes(root / cover, book.cover)
        except OSError as exc:
            raise _plain(exc, root) from None
        meta = {
            "version": FORMAT_VERSION,
            "title": book.title,
            "author": book.author,
            "language": book.language,
            "cover": cover,
            "cover_mime": book.cover_mime,
            "source": source,
            "source_sha256": book_digest(book),
            "settings": asdict(settings),
            "chapters": [asdict(c) for c in chapters],
        }
        write_json(root / BOOK_FILE, meta)
        return cls(root, meta)

    @classmethod
    def open(cls, root: str | Path) -> BookProject:
        root = Path(root)
        try:
            meta = json.loads((root / BOOK_FILE).read_text(encoding="utf-8"))
            if meta.get("version") != FORMAT_VERSION:
                raise VoxDeskError(f"{root} holds a book project of another VoxDesk version: update VoxDesk.")
            project = cls(root, meta)
        except FileNotFoundError:
            raise VoxDeskError(f"{root} holds no book project (book.json is missing).") from None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise VoxDeskError(f"The book project in {root} is damaged ({type(exc).__name__}).") from None
        project._sweep()
        return project

    def _sweep(self) -> None:
        """Remove the temporary files a killed run left behind (never a finished file)."""
        for info in self.chapters:
            folder = self.root / "chapters" / info.folder
            if folder.is_dir():
                for p in folder.iterdir():
                    if p.name.startswith(".") and ".tmp-" in p.name:
                        p.unlink(missing_ok=True)

    # ---- reading -------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def author(self) -> str:
        return self.meta.get("author", "")

    @property
    def language(self) -> str:
        return self.meta.get("language", "")

    @property
    def cover(self) -> bytes | None:
        name = self.meta.get("cover")
        try:
            return (self.root / name).read_bytes() if name else None
        except OSError:
            return None

    @property
    def cover_mime(self) -> str:
        return self.meta.get("cover_mime", "image/jpeg")

    @property
    def total_chars(self) -> int:
        return sum(c.chars for c in self.chapters)

    def pieces(self, chapter: int) -> list[Piece]:
        if chapter not in self._pieces:
            path = self._folder(chapter) / "segments.json"
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                self._pieces[chapter] = [Piece(str(p["text"]), float(p["gap"])) for p in raw]
            except (OSError, ValueError, TypeError, KeyError) as exc:
                raise VoxDeskError(
                    f"{path} is damaged ({type(exc).__name__}): start the book again."
                ) from None
            if len(self._pieces[chapter]) != self.chapters[chapter].segments:
                raise VoxDeskError(f"{path} does not match book.json: start the book again.")
        return self._pieces[chapter]

    def done(self, chapter: int) -> set[int]:
        """Indexes of the chapter's finished segments (read from the folder once)."""
        if chapter not in self._done:
            folder = self._folder(chapter)
            names = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
            n = self.chapters[chapter].segments
            self._done[chapter] = {i for i in range(n) if self._name(i) in names}
        return self._done[chapter]

    def done_chars(self, chapter: int) -> int:
        parts = self.pieces(chapter)
        return sum(len(parts[i].text) for i in self.done(chapter))

    def state(self, chapter: int) -> tuple[ChapterState, str]:
        """The chapter's state on disk and, for a failed one, the message."""
        if len(self.done(chapter)) == self.chapters[chapter].segments:
            return ChapterState.DONE, ""
        try:
            saved = json.loads((self._folder(chapter) / "state.json").read_text(encoding="utf-8"))
            if saved.get("state") == ChapterState.FAILED.value:
                return ChapterState.FAILED, str(saved.get("message", ""))
        except (OSError, ValueError, AttributeError):
            pass
        return ChapterState.PENDING, ""

    def segment_path(self, chapter: int, segment: int) -> Path:
        return self._folder(chapter) / self._name(segment)

    def chapter_parts(self, chapter: int) -> list[tuple[Path, float]]:
        """The chapter's audio files in order and the silence after each (all must be done)."""
        return [(self.segment_path(chapter, i), p.gap) for i, p in enumerate(self.pieces(chapter))]

    def is_done(self) -> bool:
        return all(self.state(i)[0] is ChapterState.DONE for i in range(len(self.chapters)))

    def is_same_book(self, book: Book) -> bool:
        return self.meta.get("source_sha256") == book_digest(book)

    # ---- writing -------------------------------------------------------------------------
    def save_segment(
        self, chapter: int, segment: int, audio: np.ndarray, sample_rate: int, seed: int
    ) -> None:
        """Write a finished segment (atomically) and note it in the generation log."""
        from app.audio.io import write_audio

        write_audio(self.segment_path(chapter, segment), audio, sample_rate, fmt="FLAC")
        self.done(chapter).add(segment)
        seconds = len(audio) / sample_rate
        chars = len(self.pieces(chapter)[segment].text)
        self._append_log(f"{chapter + 1}\t{segment + 1}\t{seed}\t{chars}\t{seconds:.3f}\n")

    def set_failed(self, chapter: int, message: str) -> None:
        write_json(
            self._folder(chapter) / "state.json", {"state": ChapterState.FAILED.value, "message": message}
        )

    def clear_failed(self, chapter: int) -> None:
        (self._folder(chapter) / "state.json").unlink(missing_ok=True)

    def _append_log(self, line: str) -> None:
        """One whole line per write (O_APPEND): a crash may lose the last line, never mix two."""
        path = self.root / LOG_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError as exc:
            raise _plain(exc, path) from None

    def _folder(self, chapter: int) -> Path:
        return self.root / "chapters" / self.chapters[chapter].folder

    @staticmethod
    def _name(segment: int) -> str:
        return f"{segment + 1:04d}{SEGMENT_SUFFIX}"


def read_log(root: Path) -> list[tuple[int, int, int]]:
    """(chapter, segment, seed) of every line of the generation log, 1-based; torn lines skipped."""
    out = []
    try:
        text = (Path(root) / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) == 5 and all(f.isdigit() for f in fields[:3]):
            out.append((int(fields[0]), int(fields[1]), int(fields[2])))
    return out


def book_digest(book: Book) -> str:
    h = hashlib.sha256()
    for chapter in book.chapters:
        h.update(chapter.title.encode() + b"\0" + chapter.text.encode() + b"\1")
    return h.hexdigest()


def _plain(exc: OSError, path: Path) -> VoxDeskError:
    friendly = friendly_error(exc, path)
    return friendly or VoxDeskError(f"Cannot write the book project in {path} ({exc.strerror or exc}).")
