"""A finished book project → per-chapter MP3s and one M4B, through the audiobook encoder
(app/longform/audiobook_export.py: loudness, chapter marks, tags, streamed from disk)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from app.errors import VoxDeskError
from app.longform.project import BookProject

DEFAULT_FORMATS = ("mp3", "m4b")


def export_book(
    project: BookProject,
    out_dir: Path,
    *,
    target_lufs: float = -18.0,
    formats: Sequence[str] = DEFAULT_FORMATS,
    progress: Callable[[float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
):
    """Encode every chapter of a finished project into ``out_dir``; returns the encoder's
    ``AudiobookExport`` (``chapter_files``, ``m4b``)."""
    from app.longform.audiobook_export import (  # PyAV: only when exporting
        BookMeta,
        ChapterAudio,
        export_audiobook,
    )

    if not project.is_done():
        raise VoxDeskError("The book is not finished: generate every chapter before exporting it.")
    chapters = [ChapterAudio(info.title, project.chapter_parts(i)) for i, info in enumerate(project.chapters)]
    meta = BookMeta(project.title, project.author, project.cover, project.cover_mime, project.language)
    return export_audiobook(
        chapters, meta, out_dir, target_lufs=target_lufs, formats=formats, progress=progress, cancel=cancel
    )
