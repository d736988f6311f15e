"""The request's emotion control (app/engine/request.py): one source, checked in one plain line.

The weights' rule (:func:`check_vector`) lives here once; IndexTTS's emotion code uses it."""

import numpy as np
import pytest

from app.engine.request import EMOTIONS, EmotionControl, SynthRequest, check_vector
from app.errors import VoxDeskError

RATE = 16000
CLIP = (0.3 * np.sin(np.arange(RATE) * 0.05)).astype(np.float32)


def test_emotions_are_the_vectors_order() -> None:
    assert EMOTIONS == ("happy", "angry", "sad", "afraid", "disgusted", "melancholic", "surprised", "calm")


def test_check_vector_accepts_a_mix() -> None:
    assert check_vector([0, 0.3, 0, 0, 0.2, 0, 0, 0.5]) == [0.0, 0.3, 0.0, 0.0, 0.2, 0.0, 0.0, 0.5]
    assert check_vector((0.1,) * 8)[0] == 0.1


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ([0.1] * 7, "has 8 weights"),
        ("0.1,0.2", "has 8 weights"),
        ([0, 1.5, 0, 0, 0, 0, 0, 0], "angry weight is 1.5"),
        ([0, 0, -0.1, 0, 0, 0, 0, 0], "sad weight is -0.1"),
        ([0, 0, 0, float("nan"), 0, 0, 0, 0], "afraid weight is nan"),
        ([0, 0, 0, 0, "x", 0, 0, 0], "disgusted weight is 'x'"),
        ([True, 0, 0, 0, 0, 0, 0, 0], "happy weight is True"),
        ([0.5, 0.3, 0, 0, 0, 0, 0, 0.4], "add up to 1.2"),
    ],
)
def test_check_vector_refuses_with_one_line(values, says: str) -> None:
    with pytest.raises(VoxDeskError) as err:
        check_vector(values)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("control", "kind"),
    [
        (EmotionControl(clip=CLIP, clip_rate=RATE, weight=0.6), "clip"),
        (EmotionControl(vector=(0, 0.8, 0, 0, 0, 0, 0, 0)), "vector"),
        (EmotionControl(text="a quiet, frightened whisper", weight=0.5), "text"),
        (EmotionControl(text=""), "text"),  # "" reads the spoken text
    ],
)
def test_one_source_passes_and_names_its_kind(control: EmotionControl, kind: str) -> None:
    control.check()
    SynthRequest("hello", emotion=control).check()
    assert control.kind == kind


@pytest.mark.parametrize(
    ("control", "says"),
    [
        (EmotionControl(), "has no source: give a recording, 8 weights or a description"),
        (EmotionControl(clip=CLIP, clip_rate=RATE, text="x"), "from a recording and a description"),
        (EmotionControl(vector=(0.1,) * 8, text="x"), "from weights and a description: choose one"),
        (EmotionControl(text="x", weight=1.5), "emotion weight is 1.5: use a number from 0 to 1"),
        (EmotionControl(text="x", weight=-0.1), "emotion weight is -0.1"),
        (EmotionControl(text="x", weight=float("nan")), "emotion weight is nan"),
        (EmotionControl(text="x", weight=True), "emotion weight is True"),
        (EmotionControl(vector=(0.5, 0.6, 0, 0, 0, 0, 0, 0)), "add up to 1.1"),
        (EmotionControl(vector=(0.5,) * 7), "has 8 weights"),
        (EmotionControl(clip=np.zeros(RATE, np.float32), clip_rate=RATE), "emotion recording is silent"),
        (EmotionControl(clip=np.full(RATE, np.nan, np.float32), clip_rate=RATE), "NaN or infinity"),
        (EmotionControl(clip=np.zeros(0, np.float32), clip_rate=RATE), "not audio samples"),
        (EmotionControl(clip=CLIP, clip_rate=0), "sample rate is 0: it must be 1,000-384,000 Hz"),
    ],
)
def test_a_bad_control_is_refused_in_one_line(control: EmotionControl, says: str) -> None:
    for check in (control.check, SynthRequest("hello", emotion=control).check):
        with pytest.raises(VoxDeskError) as err:
            check()
        assert says in str(err.value) and "\n" not in str(err.value)
