"""The saved emotion choice (app/voices/emotion.py): the script tag form, the JSON form, the request."""

import json

import numpy as np
import pytest

from app.engine.request import EMOTIONS, EmotionControl
from app.errors import VoxDeskError
from app.text.segmenter import line_tag
from app.voices.emotion import CN_NAMES, EmotionSpec, parse_emotion, to_control
from app.voices.library import VoiceLibrary


def vec(**weights: float) -> tuple[float, ...]:
    return tuple(float(weights.get(name, 0.0)) for name in EMOTIONS)


@pytest.mark.parametrize(
    ("tag", "spec"),
    [
        ("angry", EmotionSpec("vector", vector=vec(angry=0.8))),
        ("  Angry  ", EmotionSpec("vector", vector=vec(angry=0.8))),
        ("angry 0.6", EmotionSpec("vector", vector=vec(angry=0.6))),
        ("angry:0.6", EmotionSpec("vector", vector=vec(angry=0.6))),
        ("sad .25", EmotionSpec("vector", vector=vec(sad=0.25))),
        ("happy 0.5, surprised 0.3", EmotionSpec("vector", vector=vec(happy=0.5, surprised=0.3))),
        ("happy 0.5，calm 0.5", EmotionSpec("vector", vector=vec(happy=0.5, calm=0.5))),
        ("愤怒", EmotionSpec("vector", vector=vec(angry=0.8))),
        ("高兴 0.4、惊讶 0.2", EmotionSpec("vector", vector=vec(happy=0.4, surprised=0.2))),
        ("calm 0", EmotionSpec("vector", vector=vec())),
        ("@Bob", EmotionSpec("clip", voice="Bob")),
        ("@ Bob Smith 0.6", EmotionSpec("clip", voice="Bob Smith", weight=0.6)),
        ("@Track 2", EmotionSpec("clip", voice="Track 2")),
        ('"a quiet, frightened whisper"', EmotionSpec("text", text="a quiet, frightened whisper")),
        ("“低声地，害怕地” 0.6", EmotionSpec("text", text="低声地，害怕地", weight=0.6)),
        ("「开心」", EmotionSpec("text", text="开心")),
        ('""', EmotionSpec("text", text="")),
        ("", EmotionSpec()),
        ("   ", EmotionSpec()),
    ],
)
def test_parse_emotion_reads_every_form(tag: str, spec: EmotionSpec) -> None:
    assert parse_emotion(tag) == spec


@pytest.mark.parametrize(
    ("tag", "says"),
    [
        ("furious", "“furious” is not an emotion: use happy, angry, sad"),
        ("angry 0.6 please", "is not an emotion"),
        ("happy, sad", "Give each emotion its weight"),
        ("angry 0.5, angry 0.2", "angry is named twice"),
        ("angry 1.5", "The angry weight is 1.5: each emotion weight is a number from 0 to 1"),
        ("happy 0.7, sad 0.6", "add up to 1.3"),
        ('"unclosed whisper', "put the whole description in quotes"),
        ("@", "is not an emotion"),
        ("happy 0.5,", "“(nothing)” is not an emotion"),
        ('"a" 1.5', "The emotion weight is 1.5"),
    ],
)
def test_parse_emotion_refuses_with_one_line(tag: str, says: str) -> None:
    with pytest.raises(VoxDeskError) as err:
        parse_emotion(tag)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_chinese_names_are_the_official_keys_in_order() -> None:
    from app.models.indextts.qwen_emotion import CN_KEYS

    assert CN_NAMES == CN_KEYS
    for cn, en in zip(CN_NAMES, EMOTIONS, strict=True):
        assert parse_emotion(cn) == parse_emotion(en)


def test_fields_of_other_kinds_are_cleared() -> None:
    assert EmotionSpec("none", voice="Bob", vector=vec(sad=1), text="x", weight=0.2) == EmotionSpec()
    spec = EmotionSpec("clip", voice="  Bob   Smith ", vector=vec(sad=1), text="x", weight=0.5)
    assert (spec.voice, spec.vector, spec.text, spec.weight) == ("Bob Smith", (), "", 0.5)


@pytest.mark.parametrize(
    "spec",
    [
        EmotionSpec(),
        EmotionSpec("vector", vector=vec(happy=0.5, surprised=0.3), weight=0.7),
        EmotionSpec("clip", voice="Bob", weight=0.6),
        EmotionSpec("text", text="a quiet whisper"),
        EmotionSpec("text", text=""),
    ],
)
def test_json_round_trip(spec: EmotionSpec) -> None:
    data = json.loads(json.dumps(spec.to_dict()))
    assert EmotionSpec.from_dict(data) == spec
    assert EmotionSpec.from_dict({**data, "unknown": 1}) == spec  # a newer file's extra key


@pytest.mark.parametrize(
    "tag",
    ["angry", "angry 0.6", "happy 0.5, surprised 0.3", "calm 0", "@Bob", "@Bob Smith 0.6", '"a whisper"',
     '"" 0.5', '“say "hi" softly”', "高兴 0.4、惊讶 0.2", "「开心」 0.3"],
)  # fmt: skip
def test_tag_writes_what_parse_reads_back(tag: str) -> None:
    spec = parse_emotion(tag)
    assert parse_emotion(spec.tag()) == spec


def test_tag_of_what_no_script_wrote() -> None:
    assert EmotionSpec().tag() == ""
    assert EmotionSpec("vector", vector=vec(angry=0.8), weight=0.5).tag() == "angry 0.4"
    tiny = EmotionSpec("vector", vector=vec(sad=0.000001))
    assert tiny.tag() == "sad 0.000001" and parse_emotion(tiny.tag()) == tiny
    assert EmotionSpec("text", text='[loud] and "“「x」”"').tag() == '"(loud) and “「x」”"'
    assert line_tag(f"[Anna|{EmotionSpec('text', text='a [b]').tag()}] hi").emotion.text == "a (b)"


def test_a_dict_holds_only_its_kind() -> None:
    assert EmotionSpec().to_dict() == {"kind": "none"}
    assert EmotionSpec("clip", voice="Bob").to_dict() == {"kind": "clip", "voice": "Bob", "weight": 1.0}


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "angry",
        {"kind": 3},
        {"kind": "furious"},
        {"kind": "vector"},  # no weights
        {"kind": "vector", "vector": [0.1] * 7},
        {"kind": "vector", "vector": "0.1" * 8},
        {"kind": "vector", "vector": [0.5] * 8},  # total 4
        {"kind": "vector", "vector": [float("nan")] + [0.0] * 7},
        {"kind": "vector", "vector": [True] + [0.0] * 7},
        {"kind": "vector", "vector": ["0.1"] + [0.0] * 7},
        {"kind": "clip"},
        {"kind": "clip", "voice": 5},
        {"kind": "clip", "voice": "[Bob]"},
        {"kind": "clip", "voice": "x" * 65},
        {"kind": "text", "text": None},
        {"kind": "text", "text": "x" * 501},
        {"kind": "text", "text": "x", "weight": "0.5"},
        {"kind": "text", "text": "x", "weight": -0.1},
        {"kind": "text", "text": "x", "weight": float("inf")},
    ],
)
def test_from_dict_never_trusts_the_file(data: object) -> None:
    with pytest.raises(VoxDeskError) as err:
        EmotionSpec.from_dict(data)
    assert "\n" not in str(err.value)


def test_labels_are_short_and_plain() -> None:
    assert EmotionSpec().label() == ""
    assert parse_emotion("angry").label() == "angry 0.8"
    assert parse_emotion("happy 0.5, surprised 0.3").label() == "happy 0.5, surprised 0.3"
    assert parse_emotion("@Bob").label() == "like Bob's recording"
    assert parse_emotion('"whispering" 0.6').label() == "“whispering” ×0.6"
    assert parse_emotion('""').label() == "as the line reads"
    assert parse_emotion("calm 0").label() == "the voice's own emotion"


def test_key_tells_apart_what_speaks_differently() -> None:
    specs = [
        EmotionSpec(),
        parse_emotion("angry"),
        parse_emotion("angry 0.6"),
        parse_emotion("@Bob"),
        parse_emotion("@Bob 0.5"),
        parse_emotion('"x"'),
        parse_emotion('""'),
    ]
    keys = [s.key() for s in specs]
    assert keys[0] == "" and len(set(keys)) == len(keys)
    assert parse_emotion("Angry 0.8").key() == keys[1]


@pytest.fixture
def library(tmp_path) -> VoiceLibrary:
    lib = VoiceLibrary(tmp_path / "voices")
    t = np.arange(16000 * 2) / 16000
    lib.create_from_samples((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000, "Bob")
    return lib


def test_to_control_builds_the_request_control(library: VoiceLibrary) -> None:
    assert to_control(EmotionSpec(), library) is None
    control = to_control(parse_emotion("happy 0.5, surprised 0.3"), library)
    assert isinstance(control, EmotionControl)
    assert control.kind == "vector" and control.vector == vec(happy=0.5, surprised=0.3)
    control = to_control(parse_emotion('"a quiet whisper" 0.6'), library)
    assert (control.kind, control.text, control.weight) == ("text", "a quiet whisper", 0.6)
    control = to_control(parse_emotion("@bob 0.7"), library)  # names are case-blind, as [tags]
    bob = library.find("Bob")
    assert control.kind == "clip" and control.clip_rate == bob.sample_rate and control.weight == 0.7
    np.testing.assert_array_equal(control.clip, library.audio(bob))
    assert to_control(EmotionSpec("clip", voice=bob.id), library).clip_rate == 16000  # or by its id


def test_to_control_names_a_missing_voice(library: VoiceLibrary) -> None:
    with pytest.raises(VoxDeskError, match="No voice is named “Carol”.*import one by that name"):
        to_control(parse_emotion("@Carol"), library)


def test_a_new_voice_name_cannot_hold_the_emotion_bar(library: VoiceLibrary) -> None:
    """``[A|B]`` is voice A with emotion B, so a new name may not hold "|"; an old one still loads."""
    with pytest.raises(VoxDeskError, match=r"cannot contain \|"):
        library.rename(library.find("Bob"), "Bob|angry")
    with pytest.raises(VoxDeskError, match=r"cannot contain \|"):
        library.create_from_samples(np.full(16000, 0.1, np.float32), 16000, "A|B")
    from app.voices.voice import Voice

    old = library.find("Bob").to_dict() | {"name": "Bob|old"}
    assert Voice.from_dict(old).name == "Bob|old"
