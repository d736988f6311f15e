"""The script-wide emotion and language (issue 19 §4, the window's generation form) in the project:
which emotion a segment gets (its own, its line's tag, the script's), what a family without the
controls gets, what a take records of them and what a file may hold."""

from __future__ import annotations

import json

import pytest

from app.errors import VoxDeskError
from app.project import Project, SegmentOverride
from app.takes import Made, take_changes
from app.voices.emotion import EmotionSpec

INDEXTTS = frozenset({"reference", "speed", "emotion", "language"})
COSYVOICE = frozenset({"speed", "instruction", "prompt", "reference", "stream"})
CALM = EmotionSpec("vector", vector=(0, 0, 0, 0, 0, 0, 0, 0.6), weight=0.7)
ANGRY = EmotionSpec("vector", vector=(0, 0.8, 0, 0, 0, 0, 0, 0))


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch) -> None:
    """Takes and autosaves go to a throw-away home, not the user's."""
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))


def _project(text: str = "[Anna|angry] Stop it.\n[Anna] Please.") -> Project:
    p = Project(text=text)
    p.controls = INDEXTTS
    p.with_settings(emotion=CALM.to_dict(), language="en")
    return p


def test_a_segment_takes_its_own_emotion_else_its_lines_else_the_scripts() -> None:
    p = _project()
    tagged, plain = p.jobs()
    assert (tagged.emotion, plain.emotion) == (ANGRY, CALM)
    assert tagged.language == plain.language == "en"
    p.set_override(plain.key, SegmentOverride(emotion=EmotionSpec(), language="zh"))  # "the voice's own"
    p.set_override(tagged.key, SegmentOverride(emotion={"kind": "text", "text": "tired"}))
    tagged, plain = p.jobs()
    assert plain.emotion.is_none() and plain.language == "zh"
    assert tagged.emotion == EmotionSpec("text", text="tired") and tagged.language == "en"


@pytest.mark.parametrize("controls", [None, COSYVOICE])
def test_a_family_without_the_controls_gets_neither(controls) -> None:
    p = _project()
    p.controls = controls
    assert all(j.emotion.is_none() and j.language == "" for j in p.jobs())


def test_the_language_and_the_instruction_are_part_of_what_a_take_was_made_with(tmp_path) -> None:
    p = _project("Hello there.")
    job = p.jobs()[0]
    wav = p.audio_path(job, seed=3, context="ix")
    wav.write_bytes(b"x")
    p.mark(job, "done", context="ix", audio_file=str(wav), duration=1.0, seed=3)
    made = p.results[job.key].made
    assert (made.emotion, made.language, made.instruction) == (CALM.label(), "en", "")
    p.with_settings(language="")
    now = p.jobs()[0]
    assert now.fingerprint("ix") != job.fingerprint("ix")
    assert take_changes(p.take(now).made, 3, now, "ix") == {"language": "en"}
    p.with_settings(language="en", emotion={"kind": "none"})
    assert take_changes(p.take(p.jobs()[0]).made, 3, p.jobs()[0], "ix") == {"emotion": CALM.label()}

    cosy = Project(text="Hello there.", controls=COSYVOICE)
    cosy.with_settings(instruction="Speak softly.")
    made = Made.of(cosy.jobs()[0], "cv")
    cosy.with_settings(instruction="Speak loudly.")
    assert take_changes(made, None, cosy.jobs()[0], "cv") == {"instruction": "Speak softly."}
    older = Made(**{k: v for k, v in json.loads(json.dumps(made.__dict__)).items() if k != "instruction"})
    assert take_changes(older, None, cosy.jobs()[0], "cv") == {}  # not recorded then: not a change


def test_the_script_wide_choices_are_saved_and_a_bad_one_is_a_damaged_file(tmp_path) -> None:
    p = _project()
    p.set_override(p.jobs()[1].key, SegmentOverride(emotion={"kind": "clip", "voice": "Bob"}, language="ja"))
    loaded = Project.load(p.save(tmp_path / "script"))
    assert loaded.settings.emotion == CALM and loaded.settings.language == "en"
    assert loaded.overrides[p.jobs()[1].key] == SegmentOverride(emotion=EmotionSpec("clip", voice="Bob"),
                                                                language="ja")  # fmt: skip
    data = json.loads((tmp_path / "script.voxdesk").read_text())
    assert data["settings"]["emotion"] == CALM.to_dict()
    for key, value in (("language", "../../x"), ("emotion", {"kind": "vector", "vector": [1, 1] + [0] * 6})):
        bad = json.loads(json.dumps(data))
        bad["settings"][key] = value
        with pytest.raises(VoxDeskError) as caught:
            Project.from_dict(bad)
        assert "damaged" in str(caught.value) and "\n" not in str(caught.value)
    old = json.loads(json.dumps(data))
    del old["settings"]["emotion"], old["settings"]["language"]  # a file from before emotions
    settings = Project.from_dict(old).settings
    assert settings.emotion.is_none() and settings.language == ""
