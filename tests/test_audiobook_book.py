"""Issue 20 end to end: an EPUB built here with ebooklib (3 chapters, a cover) → the book project,
spoken by the tiny model through the book runner → an M4B whose chapters, titles, durations, tags
and cover read back with mutagen and PyAV."""

from __future__ import annotations

import shutil
from pathlib import Path

import av
import mutagen.mp4
import pytest
import soundfile as sf
from audiobook_media import jpeg
from ebooklib import epub  # a test dependency (AGPL: tests only)
from tiny import set_stop_head

from app.engine import Engine, EngineConfig
from app.engine.host import EngineHost
from app.longform.book import import_book
from app.longform.book_export import export_book
from app.longform.project import BookProject, BookSettings
from app.longform.runner import BookRunner

TITLES = ["The Harbour", "Night Watch", "Morning"]


def make_epub(path: Path, cover: bytes) -> Path:
    book = epub.EpubBook()
    book.set_identifier("voxdesk-audiobook-test")
    book.set_title("The Lighthouse Keeper")
    book.set_language("en")
    book.add_author("Ada Writer")
    book.set_cover("images/cover.jpg", cover)
    docs = []
    for i, title in enumerate(TITLES, 1):
        doc = epub.EpubHtml(title=title, file_name=f"text/ch{i}.xhtml", lang="en")
        doc.content = f"<html><body><h1>{title}</h1><p>The lamp was lit on night {i}.</p></body></html>"
        book.add_item(doc)
        docs.append(doc)
    book.toc = docs
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *docs]
    epub.write_epub(str(path), book)
    return path


@pytest.fixture(scope="module")
def quick_model(tmp_path_factory, tiny_v2) -> Path:
    """A copy of the tiny VoxCPM2 with its stop head voting to stop at once: short takes, a fast test."""
    copy = tmp_path_factory.mktemp("tiny-stop") / "model"
    shutil.copytree(tiny_v2, copy)
    return set_stop_head(copy, "always")


def test_epub_to_chaptered_m4b(tmp_path, quick_model):
    cover = jpeg(40, 30)
    book = import_book(make_epub(tmp_path / "keeper.epub", cover))
    project = BookProject.create(tmp_path / "project", book, BookSettings(seed=7, chapter_gap=1.5))
    engine = Engine(EngineConfig(model_dir=str(quick_model), device="cpu", max_num_seqs=4))
    host = EngineHost(engine).start()
    try:
        final = BookRunner(project, host, None, int(engine.sample_rate), window=4).run()
    finally:
        host.close()
    assert final.chapters_done == 3 and project.is_done()

    result = export_book(project, tmp_path / "out")
    chapters = [project.chapter_parts(i) for i in range(len(project.chapters))]

    # each chapter lasts its segments plus their pauses, as the project holds them
    rate = result.sample_rate
    planned = [
        sum(
            round(sf.info(str(path)).frames * rate / sf.info(str(path)).samplerate) / rate + gap
            for path, gap in parts
        )
        for parts in chapters
    ]
    assert [c.title for c in project.chapters] == TITLES
    mp4 = mutagen.mp4.MP4(result.m4b)
    assert [c.title for c in mp4.chapters] == TITLES
    assert [c.start for c in mp4.chapters] == pytest.approx(
        [0, planned[0], planned[0] + planned[1]], abs=2e-3
    )
    with av.open(str(result.m4b)) as container:
        marks = container.chapters()
        assert [m["metadata"]["title"] for m in marks] == TITLES
        durations = [float((m["end"] - m["start"]) * m["time_base"]) for m in marks]
        assert durations == pytest.approx(planned, abs=2e-3)
        assert container.metadata["title"] == "The Lighthouse Keeper"
        assert container.metadata["artist"] == "Ada Writer"
    assert bytes(mp4.tags["covr"][0]) == cover
    assert len(result.chapter_files) == 3 and all(p.stat().st_size > 0 for p in result.chapter_files)
