"""Per-line emotion in scripts (issue 19): ``[Anna|angry]`` tags in the segmenter, the project's jobs,
take fingerprints and what a take records, saved and loaded."""

import json

import pytest

from app.engine.request import EMOTIONS
from app.project import Project
from app.takes import Made, take_changes
from app.text.segmenter import Segment, line_tag, split_script, tag_span
from app.voices.emotion import EmotionSpec, parse_emotion

INDEXTTS = frozenset({"reference", "speed", "emotion", "language"})
COSYVOICE = frozenset({"speed", "instruction", "prompt", "reference", "stream"})


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))


def vec(**weights: float) -> tuple[float, ...]:
    return tuple(float(weights.get(name, 0.0)) for name in EMOTIONS)


def test_every_tag_form_gives_its_lines_an_emotion() -> None:
    script = "\n".join(
        [
            "[Anna|angry] Go away. Now!",
            "[Anna|happy 0.5, surprised 0.3] Oh, hello.",
            "[Anna|@Bob] Like Bob said it.",
            '[Anna | "a quiet, frightened whisper" 0.6] Is someone there?',
            "[|sad] The script's voice, sadly.",
            "[Anna] Plain again.",
            "No tag [pause 1s] at all.",
        ]
    )
    segs = split_script(script)
    angry = EmotionSpec("vector", vector=vec(angry=0.8))
    assert segs[:2] == [
        Segment("Go away.", "Anna", 0, emotion=angry),
        Segment("Now!", "Anna", 0, emotion=angry),
    ]
    assert segs[2].emotion == EmotionSpec("vector", vector=vec(happy=0.5, surprised=0.3))
    assert (segs[3].voice, segs[3].emotion) == ("Anna", EmotionSpec("clip", voice="Bob"))
    assert segs[4].text == "Is someone there?"
    assert segs[4].emotion == EmotionSpec("text", text="a quiet, frightened whisper", weight=0.6)
    assert (segs[5].voice, segs[5].emotion, segs[5].text) == (
        None,
        parse_emotion("sad"),
        "The script's voice, sadly.",
    )
    assert (segs[6].voice, segs[6].emotion.is_none()) == ("Anna", True)
    assert [(s.text, s.voice, s.pause, s.emotion.is_none()) for s in segs[7:]] == [
        ("No tag", None, 1.0, True),
        ("at all.", None, None, True),
    ]


def test_tags_without_an_emotion_read_as_before() -> None:
    def read(line: str) -> tuple[str | None, str]:
        tag = line_tag(line)
        return (None, line) if tag is None else (tag.voice, line[tag.end :])

    assert read("[Alice] Hi") == ("Alice", " Hi")
    assert read("[Alice|angry] Hi") == ("Alice", " Hi")
    assert read("[|angry] Hi") == (None, " Hi")
    assert read("[pause 1s] Hi") == (None, "[pause 1s] Hi")
    assert read("[] Hi") == (None, "[] Hi")
    assert tag_span("  [Alice|angry] Hi") == (2, 15, "Alice")
    assert tag_span("[|angry] Hi") is None  # no voice to check against the library
    assert split_script("[Alice] Hi.") == [Segment("Hi.", "Alice", 0)]


def test_a_broken_emotion_is_a_plain_message_and_the_line_is_still_spoken() -> None:
    line = "[Anna|furious] Get out!"
    segs = split_script(line)
    assert [(s.text, s.voice, s.emotion.is_none()) for s in segs] == [("Get out!", "Anna", True)]
    tag = line_tag(line)
    assert line[tag.start : tag.end] == "[Anna|furious]" and tag.emotion.is_none()
    assert "“furious” is not an emotion" in tag.problem and "\n" not in tag.problem
    assert line_tag("[Anna|angry] fine").problem == "" and line_tag("[Anna] fine").problem == ""
    assert "Give each emotion its weight" in line_tag("[|happy, sad] x").problem


def test_jobs_carry_the_line_emotion_only_for_a_family_that_speaks_emotions() -> None:
    p = Project(text="[Anna|angry 0.6] One.\n[Anna] Two.\n[Carol|@Ben] Three.")
    assert all(j.emotion.is_none() for j in p.jobs())  # no model yet: VoxCPM2's controls
    p.controls = COSYVOICE
    assert all(j.emotion.is_none() for j in p.jobs())  # (the editor says it is ignored)
    p.controls = INDEXTTS
    one, two, three = p.jobs()
    assert one.emotion == parse_emotion("angry 0.6") and two.emotion.is_none()
    assert three.emotion == EmotionSpec("clip", voice="Ben")
    p.set_cast("Ben", "Bob")  # a character's name as the clip: the cast's voice speaks it
    assert p.jobs()[2].emotion == EmotionSpec("clip", voice="Bob")


def test_a_take_made_with_another_emotion_is_not_reused(tmp_path) -> None:
    p = Project(text="[Anna|angry] Hello there.")
    p.controls = INDEXTTS
    job = p.jobs()[0]
    wav = p.audio_path(job, seed=5, context="ix")
    wav.write_bytes(b"x")
    p.mark(job, "done", context="ix", audio_file=str(wav), duration=1.0, seed=5)
    assert p.result(job, "ix").status == "done"
    assert p.results[job.key].made.emotion == "angry 0.8"

    p.text = "[Anna|sad] Hello there."
    now = p.jobs()[0]
    assert now.key == job.key  # the line's overrides and take follow it...
    assert p.result(now, "ix").status == "queued"  # ...but the take is not current
    assert take_changes(p.take(now).made, 5, now, "ix") == {"emotion": "angry 0.8"}
    p.text = "[Anna] Hello there."
    assert take_changes(p.take(p.jobs()[0]).made, 5, p.jobs()[0], "ix") == {"emotion": "angry 0.8"}

    # What it was made with survives saving; a file from before emotions opens with none.
    p.text = "[Anna|angry] Hello there."
    loaded = Project.load(p.save(tmp_path / "s"))
    loaded.controls = INDEXTTS
    assert loaded.result(loaded.jobs()[0], "ix").status == "done"
    assert loaded.take(loaded.jobs()[0]).made.emotion == "angry 0.8"
    data = json.loads((tmp_path / "s.voxdesk").read_text())
    del data["results"][job.key]["made"]["emotion"]
    assert Project.from_dict(data).results[job.key].made.emotion == ""


def test_takes_without_an_emotion_keep_their_fingerprint() -> None:
    """A line without an emotion tag hashes as before emotions existed, so old takes stay current."""
    p = Project(text="[Anna] Hello there.")
    p.controls = INDEXTTS
    job = p.jobs()[0]
    assert Made.of(job).emotion == "" and job.emotion.is_none()
    p.text = "[Anna|angry] Hello there."
    assert p.jobs()[0].fingerprint("ix") != job.fingerprint("ix")
    p.text = "[Anna|happy 0.8] Hello there."  # the same emotion written another way
    same = p.jobs()[0].fingerprint("ix")
    p.text = "[Anna|Happy] Hello there."
    assert p.jobs()[0].fingerprint("ix") == same
