"""Pause markup and gaps (segmenter, project, export) and the speaking rate per script, voice and line."""

import re

import numpy as np
import pytest
import soundfile as sf

from app.audio.player import Playlist
from app.export import export_merged, project_clips
from app.project import Project, ScriptSettings, SegmentOverride
from app.takes import take_changes
from app.text.segmenter import split_script
from app.voices.library import VoiceLibrary

RATE = 16000


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


SCRIPT = """# Chapter One
[Alice] Hello there. How are you [pause 800ms] today?
Fine [PAUSE 1.5s][pause 500ms]

Thanks.
## Two
[pause 300ms] Next [pause 1,5s] line."""


def test_pause_tags_blank_lines_and_headings():
    segs = split_script(SCRIPT)
    assert [(s.text, s.voice, s.pause, s.boundary) for s in segs] == [
        ("Chapter One", None, None, "paragraph"),  # a heading is its own paragraph
        ("Hello there.", "Alice", None, "sentence"),
        ("How are you", "Alice", 0.8, "sentence"),  # a pause tag breaks the sentence there
        ("today?", "Alice", None, "sentence"),
        ("Fine", None, 2.0, "paragraph"),  # tags in a row add up; a blank line follows
        ("Thanks.", None, None, "chapter"),  # the next line is a heading
        ("Two", None, 0.3, "paragraph"),  # a tag before a line's words follows the segment before
        ("Next [pause 1,5s] line.", None, None, "sentence"),  # not a pause tag: ordinary text
    ]
    assert split_script("[pause 1s] Hi.")[0].pause is None  # nothing before it to follow
    assert split_script("Hi [pause 5min].")[0].text == "Hi [pause 5min]."


def test_nothing_but_whitespace_and_tags_is_dropped():
    pattern = r"\[pause [0-9.]+m?s\]|^[ \t]*\[[^\]\n]*\]|^[ \t]{0,3}#{1,6}[ \t]+(?=\S)"
    tags = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    rng = np.random.default_rng(1)
    words = ["Hello.", "[pause 1s]", "x", "3.5", "Why?", "[Bob]", "#", "## Head", "\n", "\n\n", "你好。", ","]
    for _ in range(200):
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 30))))
        kept = "".join(s.text for s in split_script(text, 20))
        assert kept.replace(" ", "") == re.sub(r"\s", "", tags.sub("", text)), text


def test_gaps_come_from_the_settings_and_the_tags():
    settings = ScriptSettings(gap_seconds=0.2, paragraph_gap_seconds=0.7, chapter_gap_seconds=1.9)
    project = Project(text=SCRIPT, settings=settings)
    assert [j.pause_after for j in project.jobs()] == [0.7, 0.2, 0.8, 0.2, 2.0, 1.9, 0.3, 0.0]
    with pytest.raises(ValueError, match="chapter_gap_seconds"):
        ScriptSettings(chapter_gap_seconds=11)


def _silences(audio: np.ndarray, floor: float = 1e-4) -> list[float]:
    """Lengths in seconds of the silent runs between sounding samples."""
    loud = np.flatnonzero(np.abs(audio) > floor)
    steps = np.diff(loud)
    return [round((s - 1) / RATE, 3) for s in steps if s > 1]


def test_pauses_are_in_the_exported_audio_and_the_playlist(tmp_path):
    text = "One [pause 800ms] two.\n\nThree. Four [pause 1.5s]\n# Five"
    project = Project(text=text, settings=ScriptSettings(gap_seconds=0.25, paragraph_gap_seconds=0.6))
    for i, job in enumerate(project.jobs()):
        wav = project.audio_path(job, seed=i)
        sf.write(wav, np.full(1600, 0.2, np.float32), RATE)  # 0.1 s of sound each
        project.mark(job, "done", audio_file=str(wav), duration=0.1, seed=i)
    out = export_merged(tmp_path / "all.wav", project_clips(project, RATE), RATE, 0.25)
    audio, _ = sf.read(out, dtype="float32")
    assert _silences(audio) == [0.8, 0.6, 0.25, 1.5]  # tag, blank line, sentence, tag (before a heading)
    assert len(audio) == 5 * 1600 + round(3.15 * RATE)

    class Sink:  # the sound card is what this machine lacks
        written = position = buffered = 0

        def __init__(self):
            self.audio = []

        def start(self, rate):
            pass

        def write(self, chunk):
            self.audio.append(chunk)
            return len(chunk)

        def end_of_stream(self):
            pass

    sink = Sink()
    playlist = Playlist(sink, RATE, 0.25)
    jobs = project.jobs()
    playlist.start([j.key for j in jobs], {j.key: j.pause_after for j in jobs})
    for job in jobs:
        playlist.add(job.key, np.full(1600, 0.2, np.float32))
        playlist.finish(job.key)
    playlist.pump()
    assert np.allclose(np.concatenate(sink.audio), audio, atol=1e-4)  # (the file is 16-bit)


def test_rate_precedence_line_over_voice_over_script():
    project = Project(text="[Alice] One.\n[Bob] Two.\nThree.", settings=ScriptSettings(rate=1.2))
    assert [j.rate for j in project.jobs()] == [1.2, 1.2, 1.2]
    project.voice_rates = {"alice": 0.8}
    assert [j.rate for j in project.jobs()] == [0.8, 1.2, 1.2]
    alice = project.jobs()[0]
    project.set_override(alice.key, SegmentOverride(rate=1.5))
    project.set_override(project.jobs()[2].key, SegmentOverride(rate=0.6))
    assert [j.rate for j in project.jobs()] == [1.5, 1.2, 0.6]
    with pytest.raises(ValueError, match="rate"):
        SegmentOverride(rate=2.5)
    with pytest.raises(ValueError, match="rate"):
        ScriptSettings(rate=0.4)


def test_a_voice_keeps_its_rate(tmp_path):
    library = VoiceLibrary(tmp_path / "voices")
    wav = tmp_path / "v.wav"
    t = np.arange(RATE * 3) / RATE
    sf.write(wav, (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), RATE)
    voice = library.import_file(wav, "Alice")
    assert voice.rate is None
    library.set_rate(voice, 0.9)
    assert VoiceLibrary(tmp_path / "voices").get(voice.id).rate == 0.9
    with pytest.raises(Exception, match="speaking rate"):
        library.set_rate(voice, 3)


def test_a_rate_change_marks_the_take_stale_and_is_saved(tmp_path):
    project = Project(text="One. Two.")
    job = project.jobs()[0]
    wav = project.audio_path(job, seed=4)
    wav.write_bytes(b"x")
    project.mark(job, "done", audio_file=str(wav), duration=1.0, seed=4)
    assert project.result(project.jobs()[0]).status == "done"
    project.with_settings(rate=1.25)
    now = project.jobs()[0]
    assert project.result(now).status == "queued"  # to be made again at the new rate
    assert take_changes(project.take(now).made, 4, now) == {"rate": 1.0}
    project.set_override(now.key, SegmentOverride(rate=1.0))
    assert project.result(project.jobs()[0]).status == "done"  # back at the rate it was made at
    loaded = Project.load(project.save(tmp_path / "r"))
    assert loaded.settings.rate == 1.25 and loaded.overrides[now.key].rate == 1.0
