"""The book runner on the tiny model, in this process: progress and ETA, pause and resume,
a failing chapter, and a project folder whose files do not grow with the segments spoken."""

from __future__ import annotations

import json
import threading

import pytest

from app.engine import Engine, EngineConfig
from app.engine.host import EngineHost
from app.errors import VoxDeskError
from app.longform.book import Book, Chapter
from app.longform.project import BookProject, BookSettings, ChapterState, read_log, segment_seed
from app.longform.runner import BookRunner, book_progress

BOOK = Book(
    "Test Book",
    tuple(
        Chapter(f"Chapter {c}", "\n".join(f"Line {p} of part {c}. It ends here." for p in range(2)))
        for c in range(1, 4)
    ),  # fmt: skip
    author="A. Writer",
)


@pytest.fixture(scope="module")
def host(tiny_v2):
    engine = Engine(EngineConfig(model_dir=str(tiny_v2), device="cpu", max_num_seqs=4))
    h = EngineHost(engine).start()
    yield h
    h.close()


def _runner(project, host, window=4):
    return BookRunner(project, host, None, int(host.engine.sample_rate), window=window)


def test_project_layout_seeds_and_gaps(tmp_path):
    project = BookProject.create(
        tmp_path / "b", BOOK, BookSettings(seed=9, sentence_gap=0.2, paragraph_gap=0.7)
    )
    assert [c.segments for c in project.chapters] == [4, 4, 4]
    assert [p.gap for p in project.pieces(0)] == [
        0.2,
        0.7,
        0.2,
        2.0,
    ]  # sentence, paragraph, sentence, chapter
    assert segment_seed(9, 0, 1) == segment_seed(9, 0, 1) != segment_seed(9, 1, 0)
    assert book_progress(project).fraction == 0 and not project.is_done()
    with pytest.raises(VoxDeskError, match="already holds"):
        BookProject.create(tmp_path / "b", BOOK, BookSettings(seed=9))
    with pytest.raises(VoxDeskError, match="Quality steps"):
        BookSettings(seed=1, timesteps=0)


def test_run_reports_progress_and_an_eta_then_finishes(tmp_path, host):
    project = BookProject.create(tmp_path / "b", BOOK, BookSettings(seed=3))
    meta_before = (tmp_path / "b" / "book.json").read_bytes()
    seen = []
    final = _runner(project, host).run(progress=seen.append)
    assert final.fraction == 1.0 and not final.running and final.chapters_done == 3
    assert [p.done_chars for p in seen] == sorted(p.done_chars for p in seen)
    assert seen[0].eta_s is None and seen[0].chapters[0].state is ChapterState.GENERATING
    assert seen[-2].chars_per_s > 0 and seen[-2].eta_s is not None
    assert project.is_done() and len(read_log(project.root)) == 12
    # the project file is written once: what is done lives in the segment files
    assert (tmp_path / "b" / "book.json").read_bytes() == meta_before
    reopened = BookProject.open(tmp_path / "b")
    assert reopened.is_done() and [len(reopened.done(i)) for i in range(3)] == [4, 4, 4]
    assert (
        _runner(reopened, host).run().fraction == 1.0 and len(read_log(project.root)) == 12
    )  # nothing redone


def test_pause_then_resume_makes_each_segment_once(tmp_path, host):
    project = BookProject.create(tmp_path / "b", BOOK, BookSettings(seed=4))
    stop = threading.Event()
    paused = _runner(project, host, window=2).run(
        progress=lambda p: stop.set() if p.done_chars else None, cancel=stop.is_set
    )
    assert not paused.running and 0 < paused.done_chars < paused.total_chars
    assert all(c.state is not ChapterState.GENERATING for c in paused.chapters)
    again = BookProject.open(project.root)
    assert _runner(again, host, window=2).run().fraction == 1.0
    log = [(ch, seg) for ch, seg, _ in read_log(project.root)]
    assert sorted(log) == sorted(set(log)) and len(log) == 12


def test_a_failing_segment_fails_its_chapter_only(tmp_path, host):
    project = BookProject.create(tmp_path / "b", BOOK, BookSettings(seed=5))
    damaged = project.root / "chapters" / "002" / "segments.json"
    pieces = json.loads(damaged.read_text(encoding="utf-8"))
    pieces[2]["text"] = "   "  # the engine refuses an empty text
    damaged.write_text(json.dumps(pieces), encoding="utf-8")
    final = _runner(BookProject.open(project.root), host).run()
    states = [c.state for c in final.chapters]
    assert states == [ChapterState.DONE, ChapterState.FAILED, ChapterState.DONE]
    assert "no text" in final.chapters[1].message
    assert BookProject.open(project.root).state(1) == (ChapterState.FAILED, final.chapters[1].message)
