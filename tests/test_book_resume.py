"""``voxdesk book`` killed mid-chapter and run again: finished segments are kept as they are,
nothing is generated twice, and the book's audio equals an uninterrupted run's with the same seed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from app.longform.book import import_book
from app.longform.project import BookProject, BookSettings, read_log

ROOT = Path(__file__).resolve().parents[1]
BOOK = "\n\n".join(
    f"Chapter {c}\n\n" + " ".join(f"Sentence {s} of part {c}." for s in range(4)) for c in range(1, 4)
)


def _book(tmp_path: Path, model: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "app.cli", "book", str(tmp_path / "book.txt"), "--model", str(model),
           "--device", "cpu", "--dtype", "float32", "--threads", "1", "--window", "1", "--no-export",
           "--out", str(out), *extra]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _segments(out: Path) -> list[Path]:
    return sorted((out / "chapters").glob("*/[0-9]*.flac"))


def _finish(proc: subprocess.Popen) -> str:
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    return stdout


def test_killed_run_resumes_without_regenerating(tmp_path, tiny_v2):
    (tmp_path / "book.txt").write_text(BOOK, encoding="utf-8")
    out = tmp_path / "killed"
    proc = _book(tmp_path, tiny_v2, out, "--seed", "7")
    deadline = time.monotonic() + 300
    while len(_segments(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.kill()  # SIGKILL on POSIX: no cleanup runs
    proc.wait(timeout=60)
    kept = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in _segments(out)}
    project = BookProject.open(out)
    done = [len(project.done(i)) for i in range(3)]
    assert 0 < done[0] < 4 or 0 < done[1] < 4, done  # killed in the middle of a chapter
    assert not project.is_done()

    stdout = _finish(_book(tmp_path, tiny_v2, out))  # the same command, without the seed: continues
    assert f"Resuming: {sum(d == 4 for d in done)} of 3 chapters done" in stdout
    for path, stamp in kept.items():  # what the killed run finished was not made again
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp
    log = [(ch, seg) for ch, seg, _seed in read_log(out)]
    assert len(log) == len(set(log))  # no segment generated twice
    assert BookProject.open(out).is_done() and len(_segments(out)) == 12

    whole = tmp_path / "whole"
    _finish(_book(tmp_path, tiny_v2, whole, "--seed", "7"))
    assert [p.relative_to(whole) for p in _segments(whole)] == [p.relative_to(out) for p in _segments(out)]
    for a, b in zip(_segments(out), _segments(whole), strict=True):
        np.testing.assert_array_equal(sf.read(a)[0], sf.read(b)[0])
    assert read_log(whole) == sorted(read_log(whole), key=lambda r: (r[0], r[1]))
    # the same seeds (a kill between a segment's file and its log line may cost the log that line)
    assert {r[2] for r in read_log(out)} <= {r[2] for r in read_log(whole)} and len(read_log(out)) >= 11


def test_another_seed_or_book_in_the_folder_is_refused(tmp_path, tiny_v2):
    (tmp_path / "book.txt").write_text("Chapter 1\n\nOne line.", encoding="utf-8")
    out = tmp_path / "b"
    BookProject.create(out, import_book(tmp_path / "book.txt"), BookSettings(seed=1))
    proc = _book(tmp_path, tiny_v2, out, "--seed", "2")
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "started with seed 1" in stderr and "Traceback" not in stderr
    (tmp_path / "book.txt").write_text("Chapter 1\n\nAnother text.", encoding="utf-8")
    proc = _book(tmp_path, tiny_v2, out)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "holds another book" in stderr and stderr.count("\n") == 1
