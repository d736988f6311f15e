"""Audiobook export: one MP3 per chapter and one M4B with chapter marks, loudness-normalised,
streamed from disk.

Each chapter is read twice from its part files, block by block (soundfile, a channel mean and a
streaming soxr resampler to the book's rate, then the silence after each part): the first pass
measures its integrated loudness (ITU-R BS.1770-4) and true peak, the second applies one gain and
feeds both encoders. The gain brings the chapter to ``target_lufs`` unless that would push its true
peak over ``peak_ceiling_db``: then the peak decides (a quiet chapter with one loud cry stays a
little under the target rather than being clipped or squashed by a limiter). So a 10-hour book is
never in memory: what is held is one block, the meter's energy per 100 ms, and the encoders' own
buffers.

Every output goes to a hidden temporary name in ``out_dir`` and is renamed only when the whole
export has succeeded: a cancel, a full disk or any error leaves none of them behind.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from app import atomic
from app.audio.io import audio_info
from app.errors import VoxDeskError
from app.export import ExportExists
from app.longform.encoder import AudioWriter, Background, Mark
from app.longform.loudness import LoudnessMeter

log = logging.getLogger(__name__)

FORMATS = ("mp3", "m4b")
# Rates both MP3 and AAC carry; the book is encoded at the lowest one that holds its parts' rate.
RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
BLOCK = 65536  # frames read from a part file at once
ENCODE_COST = 3.0  # the encoding pass's share of the progress, against 1 for measuring


@dataclass(frozen=True)
class ChapterAudio:
    title: str
    # audio files in order (WAV/FLAC, any rate) and the silence after each, in seconds
    parts: Sequence[tuple[Path, float]]


@dataclass(frozen=True)
class BookMeta:
    title: str
    author: str = ""
    cover: bytes | None = None
    cover_mime: str = "image/jpeg"  # informative: the picture's own bytes say whether it is JPEG or PNG
    language: str = ""


@dataclass(frozen=True)
class ExportedChapter:
    title: str
    start: float  # seconds from the start of the book (the M4B's chapter mark)
    duration: float  # seconds
    loudness: float  # integrated LUFS before the gain (-inf: silent)
    true_peak_db: float  # dBTP before the gain
    gain_db: float


@dataclass(frozen=True)
class AudiobookExport:
    chapter_files: list[Path]  # the MP3s in chapter order (empty if "mp3" was not asked)
    m4b: Path | None
    chapters: list[ExportedChapter]
    sample_rate: int
    cover: bool  # whether the cover picture went in (a missing or unreadable one is left out)


class ExportCancelled(VoxDeskError):
    """The export stopped because ``cancel()`` returned True; no output file was left behind."""


@dataclass(frozen=True)
class _Part:
    path: Path
    length: int  # samples at the book's rate
    silence: int  # samples of silence after it


def export_audiobook(
    chapters: Sequence[ChapterAudio],
    meta: BookMeta,
    out_dir: Path,
    *,
    target_lufs: float = -18.0,
    formats: Sequence[str] = FORMATS,
    progress: Callable[[float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    peak_ceiling_db: float = -1.0,
    mp3_bit_rate: int = 64_000,
    aac_bit_rate: int = 64_000,
    overwrite: bool = True,
) -> AudiobookExport:
    """Write ``NN Title.mp3`` per chapter and ``<book title>.m4b`` (as ``formats`` asks) into ``out_dir``.

    ``progress`` gets the fraction done (0..1); ``cancel`` is polled every block and True raises
    :class:`ExportCancelled`. With ``overwrite=False``, existing targets raise
    :class:`~app.export.ExportExists` before anything is written (the window's "Replace?" question).
    Bad input, an unreadable part, a full disk or a refused folder raise a one-line VoxDeskError.
    """
    formats = _check_formats(formats)
    if not math.isfinite(target_lufs) or not -70.0 < target_lufs < 0.0:
        raise VoxDeskError(f"A loudness target of {target_lufs} LUFS is out of range. Use, say, -18.")
    rate, plans = _plan(chapters)
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise VoxDeskError(f"{out_dir} is a file, not a folder. Choose a folder for the audiobook.")
    mp3_paths = _chapter_paths(out_dir, [c.title for c in chapters]) if "mp3" in formats else []
    m4b_path = out_dir / f"{_file_stem(meta.title) or 'Audiobook'}.m4b" if "m4b" in formats else None
    targets = mp3_paths + ([m4b_path] if m4b_path else [])
    if not overwrite and (existing := [p for p in targets if p.exists()]):
        raise ExportExists(existing)

    lengths = [sum(p.length + p.silence for p in plan) for plan in plans]
    tick = _Ticker(progress, sum(lengths) * (1.0 + ENCODE_COST))
    measured = [_measure(plan, rate, cancel, tick) for plan in plans]
    gains = [_gain_db(loud, peak, target_lufs, peak_ceiling_db) for loud, peak in measured]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    marks = [Mark(c.title, int(starts[i]), int(starts[i + 1])) for i, c in enumerate(chapters)]

    # The temporary files live until the whole export has succeeded (then all are renamed, once
    # every file is closed: book_files exits first); each encoder and its open file only as long as
    # its own file is written: a finished chapter's writer is dropped, so a book of many chapters
    # does not pile up their encoders' memory (~2 MB a chapter for LAME's state).
    with contextlib.ExitStack() as temporaries, contextlib.ExitStack() as book_files:

        def writer(files: contextlib.ExitStack, path: Path, fmt: str, bit_rate: int, tags: dict[str, str],
                   **kw) -> Background:  # fmt: skip
            tmp = temporaries.enter_context(atomic.atomic_path(path))
            file = files.enter_context(open(tmp, "w+b"))  # noqa: SIM115 (the stack closes it)
            out = AudioWriter(file, fmt, rate, bit_rate, tags, cover=meta.cover, language=meta.language, **kw)
            files.callback(out.abandon)
            background = Background(out)
            files.callback(background.abandon)
            return background

        book_tags = {
            "album": meta.title,
            "artist": meta.author,
            "album_artist": meta.author,
            "genre": "Audiobook",
        }
        book = None
        if m4b_path is not None:
            book_meta = {**book_tags, "title": meta.title}
            book = writer(book_files, m4b_path, "m4b", aac_bit_rate, book_meta, marks=marks)
        covered = book.writer.has_cover if book else False
        for n, (chapter, plan, gain_db) in enumerate(zip(chapters, plans, gains, strict=True), 1):
            with contextlib.ExitStack() as chapter_files:
                mp3 = None
                if mp3_paths:
                    tags = {**book_tags, "title": chapter.title, "track": f"{n}/{len(chapters)}"}
                    mp3 = writer(chapter_files, mp3_paths[n - 1], "mp3", mp3_bit_rate, tags)
                    covered = covered or mp3.writer.has_cover
                gain = np.float32(10.0 ** (gain_db / 20.0))
                for block in _blocks(plan, rate, cancel):
                    block = block * gain
                    for out in (book, mp3):
                        if out is not None:
                            out.write(block)
                    tick(len(block) * ENCODE_COST)
                if mp3 is not None:
                    mp3.close()
        if book is not None:
            book.close()
    tick.done()
    exported = [
        ExportedChapter(c.title, float(starts[i] / rate), lengths[i] / rate, *measured[i], gains[i])
        for i, c in enumerate(chapters)
    ]
    log.info("audiobook exported to %s: %d chapters, %.0f s", out_dir, len(chapters), starts[-1] / rate)
    return AudiobookExport(mp3_paths, m4b_path, exported, rate, covered)


def _check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    asked = tuple(dict.fromkeys(f.lower().lstrip(".") for f in formats))
    unknown = [f for f in asked if f not in FORMATS]
    if unknown or not asked:
        raise VoxDeskError(
            f"Unknown audiobook format {', '.join(unknown) or '(none)'}. Choose MP3 and/or M4B."
        )
    return asked


def _plan(chapters: Sequence[ChapterAudio]) -> tuple[int, list[list[_Part]]]:
    """The book's rate and each chapter's parts with their exact lengths at that rate, from the
    file headers alone (so the chapter marks are known before a sample is encoded)."""
    if not chapters:
        raise VoxDeskError("The book has no chapters to export. Generate it first.")
    infos = []
    for chapter in chapters:
        if not chapter.parts:
            raise VoxDeskError(f"The chapter {chapter.title!r} has no audio yet. Generate it first.")
        infos.append([(Path(path), audio_info(path), silence) for path, silence in chapter.parts])
    top = max(info.sample_rate for parts in infos for _, info, _ in parts)
    rate = next((r for r in RATES if r >= top), RATES[-1])
    plans = []
    for parts in infos:
        plan = []
        for path, info, silence in parts:
            if not math.isfinite(silence) or silence < 0:
                raise VoxDeskError(f"The pause after {path.name} is {silence} s. Use zero or more seconds.")
            length = (
                info.frames if info.sample_rate == rate else math.ceil(info.frames * rate / info.sample_rate)
            )
            plan.append(_Part(path, length, round(silence * rate)))
        plans.append(plan)
    return rate, plans


def _blocks(plan: Sequence[_Part], rate: int, cancel: Callable[[], bool] | None) -> Iterator[np.ndarray]:
    """A chapter's samples at ``rate``, mono float32, one block at a time, each part cut or padded to
    its planned length (librosa's length rule, as app.audio.io reads) and followed by its silence."""
    for part in plan:
        emitted = 0
        for chunk in _decode(part.path, rate, cancel):
            chunk = chunk[: part.length - emitted]
            emitted += len(chunk)
            yield chunk
        for size in _pieces(part.length - emitted + part.silence):
            yield np.zeros(size, np.float32)


def _decode(path: Path, rate: int, cancel: Callable[[], bool] | None) -> Iterator[np.ndarray]:
    try:
        f = sf.SoundFile(str(path))
    except (sf.LibsndfileError, RuntimeError, OSError):
        raise VoxDeskError(f"{path.name} cannot be read any more. Generate its chapter again.") from None
    with f:
        stream = None
        if f.samplerate != rate:
            stream = soxr.ResampleStream(f.samplerate, rate, 1, dtype="float32", quality="HQ")
        while True:
            if cancel is not None and cancel():
                raise ExportCancelled("The audiobook export was cancelled; no file was written.")
            data = f.read(BLOCK, dtype="float32", always_2d=True)
            if not len(data):
                break
            mono = data.mean(axis=1, dtype=np.float32) if f.channels > 1 else data[:, 0]
            if not np.isfinite(mono).all():
                raise VoxDeskError(f"{path.name} contains invalid samples. Generate its chapter again.")
            yield mono if stream is None else stream.resample_chunk(mono, last=False)
        if stream is not None:
            yield stream.resample_chunk(np.zeros(0, np.float32), last=True)


def _pieces(count: int) -> Iterator[int]:
    while count > 0:
        yield min(count, BLOCK)
        count -= BLOCK


def _measure(
    plan: Sequence[_Part], rate: int, cancel: Callable[[], bool] | None, tick: _Ticker
) -> tuple[float, float]:
    """(integrated LUFS, true peak dBTP) of one chapter."""
    meter = LoudnessMeter(rate)
    for block in _blocks(plan, rate, cancel):
        meter.add(block)
        tick(len(block))
    meter.finish()
    return meter.integrated(), meter.true_peak_db


def _gain_db(loudness: float, true_peak_db: float, target: float, ceiling: float) -> float:
    """The gain to the target, lowered so the true peak stays at or under the ceiling; 0 for silence."""
    if not math.isfinite(loudness) or not math.isfinite(true_peak_db):
        return 0.0
    return min(target - loudness, ceiling - true_peak_db)


class _Ticker:
    """Turns units of work into the 0..1 fraction ``progress`` expects."""

    def __init__(self, progress: Callable[[float], None] | None, total: float) -> None:
        self._progress, self._total, self._done = progress, max(total, 1.0), 0.0

    def __call__(self, amount: float) -> None:
        self._done += amount
        if self._progress is not None:
            self._progress(min(1.0, self._done / self._total))

    def done(self) -> None:
        if self._progress is not None:
            self._progress(1.0)


# Characters Windows refuses in a file name, and the control characters
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]+')
_RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}


def _file_stem(title: str, limit: int = 80) -> str:
    """``title`` as a file name on every system: unsafe characters become spaces, no leading or
    trailing dots or spaces, at most ``limit`` characters, never a reserved Windows device name."""
    stem = " ".join(_UNSAFE.sub(" ", title).split())[:limit].strip(" .")
    return f"{stem}_" if stem.upper() in _RESERVED else stem


def _chapter_paths(out_dir: Path, titles: Sequence[str]) -> list[Path]:
    """``01 Title.mp3`` … (zero-padded, so they sort in reading order)."""
    width = max(2, len(str(len(titles))))
    return [out_dir / f"{n:0{width}d} {_file_stem(t) or 'Chapter'}.mp3" for n, t in enumerate(titles, 1)]
