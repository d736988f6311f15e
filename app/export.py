"""Exporting a script's audio: one merged file, one file per segment, and SRT subtitles.

Segments go in script order with silence between them (not before the first or after the last):
the clip's own ``pause_after`` (a script's ``[pause]`` tags, paragraph and chapter gaps: see
app/project.py), else ``gap_seconds``. Timings are computed in samples, so the SRT cues line up
exactly with the merged file. Every write is atomic. No function overwrites an existing file
unless called with ``overwrite=True``; otherwise it raises :class:`ExportExists` *before writing
anything*, and the UI turns that into a "Replace?" question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app import atomic
from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.project import Project

FORMATS = {"WAV": ".wav", "FLAC": ".flac"}


class ExportExists(VoxDeskError, FileExistsError):
    """Some target files already exist; ``paths`` lists them. Call again with ``overwrite=True``."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = [Path(p) for p in paths]
        first = self.paths[0].name
        if len(self.paths) == 1:
            what = f"{first} already exists"
        else:
            what = f"{first} and {len(self.paths) - 1} more files already exist"
        super().__init__(f"{what}. Replace, or choose another name.")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Clip:
    """One finished segment: its text (for subtitles) and mono float32 samples."""

    text: str
    samples: np.ndarray
    pause_after: float | None = None  # seconds of silence after it (None: the export's gap_seconds)


def project_clips(project: Project, sample_rate: int) -> list[Clip]:
    """The project's finished segments in script order, read at ``sample_rate``, with their script
    text for subtitles; a take made with other settings counts (it is the one the user heard).
    VoxDeskError if any segment is not generated yet."""
    from app.audio.io import load_audio

    jobs = project.jobs()
    takes = [project.take(job) for job in jobs]
    missing = sum(t is None for t in takes)
    if missing:
        raise VoxDeskError(f"{missing} of {len(jobs)} segments are not generated yet. Generate them first.")
    return [
        Clip(
            job.display_text,
            load_audio(str(take.audio_file), sample_rate, reject_silence=False),
            job.pause_after,
        )
        for job, take in zip(jobs, takes, strict=True)
        if take is not None
    ]


def _check(clips: Sequence[Clip], sample_rate: int) -> None:
    if not clips:
        raise VoxDeskError("There is nothing to export yet. Generate the segments first.")
    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be positive, got {sample_rate}")


def _refuse_existing(paths: Sequence[Path], overwrite: bool) -> None:
    existing = [p for p in paths if p.exists()]
    if existing and not overwrite:
        raise ExportExists(existing)


def _fmt(fmt: str) -> str:
    fmt = fmt.upper()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {sorted(FORMATS)}, got {fmt!r}")
    return fmt


def spans(clips: Sequence[Clip], sample_rate: int, gap_seconds: float) -> list[tuple[int, int]]:
    """(start, end) sample index of each clip in the merged audio."""
    out, pos, gap = [], 0, 0
    for clip in clips:
        pos += gap
        out.append((pos, pos + len(clip.samples)))
        pos += len(clip.samples)
        pause = gap_seconds if clip.pause_after is None else clip.pause_after
        gap = max(0, round(pause * sample_rate))
    return out


def merge(clips: Sequence[Clip], sample_rate: int, gap_seconds: float) -> np.ndarray:
    """The clips joined in order with silence between them."""
    _check(clips, sample_rate)
    where = spans(clips, sample_rate, gap_seconds)
    out = np.zeros(where[-1][1], dtype=np.float32)
    for clip, (start, end) in zip(clips, where, strict=True):
        out[start:end] = clip.samples
    return out


def export_merged(
    path: str | Path,
    clips: Sequence[Clip],
    sample_rate: int,
    gap_seconds: float = 0.3,
    fmt: str = "WAV",
    overwrite: bool = False,
) -> Path:
    """Write all clips as one audio file (WAV or FLAC); returns its path."""
    from app.audio.io import write_audio

    path, fmt = Path(path), _fmt(fmt)
    _check(clips, sample_rate)
    _refuse_existing([path], overwrite)
    write_audio(path, merge(clips, sample_rate, gap_seconds), sample_rate, fmt=fmt)
    return path


def segment_paths(folder: str | Path, count: int, stem: str = "segment", fmt: str = "WAV") -> list[Path]:
    """The file names :func:`export_segments` writes: ``segment_001.wav`` … (zero-padded, sortable)."""
    width = max(3, len(str(count)))
    ext = FORMATS[_fmt(fmt)]
    return [Path(folder) / f"{stem}_{i + 1:0{width}d}{ext}" for i in range(count)]


def export_segments(
    folder: str | Path,
    clips: Sequence[Clip],
    sample_rate: int,
    stem: str = "segment",
    fmt: str = "WAV",
    overwrite: bool = False,
) -> list[Path]:
    """Write one file per clip into ``folder``; returns the paths in script order."""
    from app.audio.io import write_audio

    _check(clips, sample_rate)
    paths = segment_paths(folder, len(clips), stem, fmt)
    _refuse_existing(paths, overwrite)
    for clip, path in zip(clips, paths, strict=True):
        write_audio(path, np.asarray(clip.samples, dtype=np.float32), sample_rate, fmt=_fmt(fmt))
    return paths


def srt_time(seconds: float) -> str:
    """``HH:MM:SS,mmm`` (rounded to the millisecond; hours may exceed 99)."""
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{ms:03d}"


def to_srt(clips: Sequence[Clip], sample_rate: int, gap_seconds: float = 0.3) -> str:
    """SRT cues for the merged audio: one per clip, numbered from 1, timed cumulatively with the gaps."""
    _check(clips, sample_rate)
    cues = []
    for n, (clip, (start, end)) in enumerate(
        zip(clips, spans(clips, sample_rate, gap_seconds), strict=True), 1
    ):
        text = "\n".join(line for line in clip.text.splitlines() if line.strip()) or " "
        cues.append(f"{n}\n{srt_time(start / sample_rate)} --> {srt_time(end / sample_rate)}\n{text}\n")
    return "\n".join(cues)


def export_srt(
    path: str | Path,
    clips: Sequence[Clip],
    sample_rate: int,
    gap_seconds: float = 0.3,
    overwrite: bool = False,
) -> Path:
    """Write SRT subtitles matching :func:`export_merged` with the same gap; returns the path."""
    path = Path(path)
    text = to_srt(clips, sample_rate, gap_seconds)
    _refuse_existing([path], overwrite)
    atomic.write_text(path, text)
    return path
