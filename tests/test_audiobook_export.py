"""The audiobook encoder (app/longform/audiobook_export.py): chaptered M4B and per-chapter MP3s,
read back with mutagen and PyAV; loudness, peaks, streaming, cancel and write failures."""

from __future__ import annotations

import errno
import io
import math
import os
import tempfile
import tracemalloc
from pathlib import Path

import av
import mutagen.mp3
import mutagen.mp4
import numpy as np
import pyloudnorm
import pytest
import soundfile as sf
from audiobook_media import jpeg, speechlike

from app.errors import VoxDeskError
from app.export import ExportExists
from app.longform.audiobook_export import (
    BookMeta,
    ChapterAudio,
    ExportCancelled,
    export_audiobook,
)
from app.longform.loudness import LoudnessMeter


def book(folder: Path, levels=(0.05, 0.1, 0.2), seconds=(2.0, 3.0, 1.5)) -> list[ChapterAudio]:
    """Three chapters of two parts each, at mixed rates and formats, with pauses after each part."""
    chapters = []
    for c, level in enumerate(levels):
        parts = []
        for p, (rate, ext) in enumerate([(16000, "wav"), (24000, "flac")]):
            path = folder / f"c{c}p{p}.{ext}"
            sf.write(path, speechlike(seconds[c], rate, level, seed=3 * c + p), rate)
            parts.append((path, 0.4 if p == 0 else 1.0))
        chapters.append(ChapterAudio(f"Chapter {c + 1}: «{'一二三'[c]}»", parts))
    return chapters


def decode(path: Path) -> tuple[np.ndarray, int]:
    with av.open(str(path)) as c:
        rate = c.streams.audio[0].rate
        return np.concatenate([f.to_ndarray().reshape(-1) for f in c.decode(audio=0)]), rate


def lufs(samples: np.ndarray, rate: int) -> float:
    return pyloudnorm.Meter(rate).integrated_loudness(samples.astype(np.float64))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book")
    chapters = book(folder)
    seen = []
    meta = BookMeta("A Tale / Of Two", "Jane Doe", jpeg(), language="eng")
    result = export_audiobook(chapters, meta, folder / "out", progress=seen.append)
    return chapters, meta, result, seen


def test_m4b_chapter_marks_titles_and_durations_read_back(exported):
    chapters, _, result, seen = exported
    planned = [2 * s + 0.4 + 1.0 for s in (2.0, 3.0, 1.5)]  # two parts of s seconds, and their pauses
    assert [c.duration for c in result.chapters] == pytest.approx(planned, abs=1e-3)
    starts = [0.0, planned[0], planned[0] + planned[1]]
    assert result.m4b.name == "A Tale Of Two.m4b" and result.sample_rate == 24000
    # mutagen reads the Nero chapter list (chpl)
    mp4 = mutagen.mp4.MP4(result.m4b)
    assert [c.title for c in mp4.chapters] == [c.title for c in chapters]
    assert [c.start for c in mp4.chapters] == pytest.approx(starts, abs=1e-3)
    assert mp4.info.length == pytest.approx(sum(planned), abs=0.1)
    # PyAV (FFmpeg) reads the QuickTime chapter track: starts and ends
    with av.open(str(result.m4b)) as c:
        marks = c.chapters()
        assert [m["metadata"]["title"] for m in marks] == [c.title for c in chapters]
        assert [float(m["start"] * m["time_base"]) for m in marks] == pytest.approx(starts, abs=1e-3)
        ends = [float(m["end"] * m["time_base"]) for m in marks]
        assert np.diff([0.0, *ends]) == pytest.approx(planned, abs=1e-3)
        assert c.metadata["major_brand"] == "M4B "
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_metadata_and_cover_read_back(exported):
    chapters, meta, result, _ = exported
    tags = mutagen.mp4.MP4(result.m4b).tags
    assert tags["©nam"] == [meta.title] and tags["©alb"] == [meta.title]
    assert tags["©ART"] == [meta.author] and tags["©gen"] == ["Audiobook"]
    assert bytes(tags["covr"][0]) == meta.cover and result.cover
    for n, path in enumerate(result.chapter_files, 1):
        id3 = mutagen.mp3.MP3(path).tags
        assert str(id3["TIT2"]) == chapters[n - 1].title and str(id3["TPE1"]) == meta.author
        assert str(id3["TALB"]) == meta.title and str(id3["TRCK"]) == f"{n}/3"
        assert str(id3["TLAN"]) == "eng"
        assert id3.getall("APIC")[0].data == meta.cover
    assert [p.name for p in result.chapter_files] == ["01 Chapter 1 «一».mp3", "02 Chapter 2 «二».mp3",
                                                      "03 Chapter 3 «三».mp3"]  # fmt: skip


def test_mp3s_decode_and_every_file_is_on_the_loudness_target(exported):
    _, _, result, _ = exported
    # the parts were 14 dB apart; every chapter comes out at the target
    assert [c.loudness for c in result.chapters] == sorted(c.loudness for c in result.chapters)
    assert result.chapters[2].loudness - result.chapters[0].loudness > 10
    for info, path in zip(result.chapters, result.chapter_files, strict=True):
        samples, rate = decode(path)
        assert rate == 24000
        assert len(samples) / rate == pytest.approx(info.duration, abs=0.1)  # plus the MP3 padding
        assert abs(lufs(samples, rate) - -18.0) < 1.0
        assert np.abs(samples).max() < 1.0
    samples, rate = decode(result.m4b)
    assert abs(lufs(samples, rate) - -18.0) < 1.0
    per_chapter = [lufs(samples[round(c.start * rate) : round((c.start + c.duration) * rate)], rate)
                   for c in result.chapters]  # fmt: skip
    assert max(abs(x - -18.0) for x in per_chapter) < 1.0


def test_the_true_peak_ceiling_wins_over_the_target_and_nothing_clips(tmp_path):
    rate = 24000
    quiet = speechlike(4.0, rate, level=0.02)
    quiet[rate : rate + 40] = 0.9 * np.sign(np.sin(np.arange(40)))  # one loud click
    sf.write(tmp_path / "a.wav", quiet, rate)
    result = export_audiobook([ChapterAudio("Loud click", [(tmp_path / "a.wav", 0.5)])], BookMeta("Clicks"),
                              tmp_path / "out", target_lufs=-10.0)  # fmt: skip
    chapter = result.chapters[0]
    assert chapter.gain_db == pytest.approx(-1.0 - chapter.true_peak_db)
    assert chapter.true_peak_db >= 20 * math.log10(0.9)
    assert chapter.loudness + chapter.gain_db < -10.0  # the ceiling held it under the target
    for path in [result.m4b, *result.chapter_files]:
        samples, _ = decode(path)
        assert np.abs(samples).max() < 1.0  # decoded, after the lossy encoders' own overshoot


@pytest.mark.parametrize("rate", [16000, 22050, 48000])
def test_streaming_loudness_equals_pyloudnorm_on_the_whole_array(rate):
    rng = np.random.default_rng(rate)
    samples = np.concatenate(
        [speechlike(7.3, rate, 0.2, seed=1), np.zeros(rate), speechlike(3.1, rate, 0.01)]
    )
    meter = LoudnessMeter(rate)
    at = 0
    while at < len(samples):
        step = int(rng.integers(1, 9000))
        meter.add(samples[at : at + step])
        at += step
    meter.finish()
    assert abs(meter.integrated() - lufs(samples, rate)) < 0.1
    assert meter.true_peak >= np.abs(samples).max()


def test_a_long_chapter_is_streamed_not_held_in_memory(tmp_path):
    """Three minutes at 16 kHz (11.5 MB as float32) cost only a few MB of Python and NumPy memory:
    every pass reads the part files block by block."""
    rate = 16000
    block = speechlike(30.0, rate, 0.1)
    with sf.SoundFile(tmp_path / "long.flac", "w", rate, 1) as f:
        for _ in range(6):
            f.write(block)
    tracemalloc.start()
    try:
        result = export_audiobook([ChapterAudio("Long", [(tmp_path / "long.flac", 0.0)])], BookMeta("Long"),
                                  tmp_path / "out", formats=["m4b"])  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.chapters[0].duration == pytest.approx(180.0)
    assert peak < 6 * 2**20, f"{peak / 2**20:.1f} MB"


def test_cancel_leaves_no_file(tmp_path):
    chapters = book(tmp_path)
    before = sorted(tmp_path.iterdir())
    seen = []
    with pytest.raises(ExportCancelled, match="cancelled"):
        export_audiobook(chapters, BookMeta("Cancelled"), tmp_path, progress=seen.append,
                         cancel=lambda: len(seen) > 0 and seen[-1] > 0.5)  # fmt: skip
    assert 0.5 < seen[-1] < 1.0  # it stopped in the encoding pass, with files open
    assert sorted(tmp_path.iterdir()) == before


def test_a_full_disk_is_one_plain_line_and_leaves_nothing(tmp_path, monkeypatch):
    chapters = book(tmp_path)
    before = sorted(tmp_path.iterdir())

    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(VoxDeskError, match="disk is full") as err:
        export_audiobook(chapters, BookMeta("Full"), tmp_path)
    assert "\n" not in str(err.value)
    assert sorted(tmp_path.iterdir()) == before


def test_a_refused_folder_or_a_file_as_folder_is_one_plain_line(tmp_path, monkeypatch):
    chapters = book(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(VoxDeskError, match="is a file, not a folder"):
        export_audiobook(chapters, BookMeta("X"), tmp_path / "file")

    def refused(*_args, **_kw):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(VoxDeskError, match="not allowed to write") as err:
        export_audiobook(chapters, BookMeta("X"), tmp_path / "out")
    assert "\n" not in str(err.value)


def test_existing_files_are_replaced_only_when_allowed(tmp_path):
    chapters = book(tmp_path, seconds=(1.0, 1.0, 1.0))
    first = export_audiobook(chapters, BookMeta("Twice"), tmp_path / "out", formats=["mp3"])
    assert first.m4b is None and len(first.chapter_files) == 3
    with pytest.raises(ExportExists):
        export_audiobook(chapters, BookMeta("Twice"), tmp_path / "out", formats=["mp3"], overwrite=False)
    again = export_audiobook(chapters, BookMeta("Twice"), tmp_path / "out", formats=["MP3"])
    assert again.chapter_files == first.chapter_files
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in first.chapter_files)


def test_bad_input_is_one_plain_line(tmp_path):
    chapters = book(tmp_path, seconds=(1.0, 1.0, 1.0))
    cases = {
        "no chapters": ([], {}),
        "has no audio": ([ChapterAudio("Empty", [])], {}),
        "does not exist": ([ChapterAudio("Gone", [(tmp_path / "gone.wav", 0.0)])], {}),
        "Unknown audiobook format": (chapters, {"formats": ["ogg"]}),
        "out of range": (chapters, {"target_lufs": 3.0}),
        "pause after": ([ChapterAudio("Neg", [(chapters[0].parts[0][0], -1.0)])], {}),
    }
    for message, (chs, kw) in cases.items():
        with pytest.raises(VoxDeskError, match=message) as err:
            export_audiobook(chs, BookMeta("Bad"), tmp_path / "out", **kw)
        assert "\n" not in str(err.value)
    # a picture that is neither JPEG nor PNG is left out, not a reason to lose the export
    result = export_audiobook(chapters, BookMeta("No cover", cover=b"GIF89a..."), tmp_path / "out")
    assert not result.cover and "covr" not in mutagen.mp4.MP4(result.m4b).tags


def test_a_disk_that_fills_while_encoding_is_one_plain_line_and_leaves_nothing(tmp_path, monkeypatch):
    """The encoders write on threads of their own: the failure still reaches the caller as the
    disk-full line, and every temporary file goes."""
    from app.longform import audiobook_export

    chapters = book(tmp_path)
    before = sorted(tmp_path.iterdir())

    class Filling(io.FileIO):
        def write(self, data) -> int:
            if self.tell() + len(data) > 20_000:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data)

    monkeypatch.setattr(audiobook_export, "open", lambda path, mode: Filling(path, mode.replace("b", "")),
                        raising=False)  # fmt: skip
    with pytest.raises(VoxDeskError, match="disk is full") as err:
        export_audiobook(chapters, BookMeta("Filling"), tmp_path)
    assert "\n" not in str(err.value)
    assert sorted(tmp_path.iterdir()) == before
