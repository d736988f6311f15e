"""Speaking rate (app/audio/stretch.py) on speech-like audio made here: duration, pitch, streaming."""

import numpy as np
import pytest
from speechlike import active_seconds, pitch_hz, speech_like

from app.audio.stretch import RateStretcher, change_rate
from app.errors import VoxDeskError

SR = 24000
SPEECH = speech_like(SR)


def _stream(x: np.ndarray, rate: float, chunk: int = 1920) -> tuple[np.ndarray, int]:
    """The streamed output, and the index of the first chunk that gave audio back."""
    st = RateStretcher(SR, rate)
    parts = [st.push(x[i : i + chunk]) for i in range(0, len(x), chunk)]
    first = next((i for i, p in enumerate(parts) if len(p)), len(parts))
    return np.concatenate([*parts, st.flush()]), first


@pytest.mark.parametrize("rate", [0.5, 0.8, 1.25, 2.0])
def test_duration_follows_rate_and_pitch_stays(rate):
    y = change_rate(SPEECH, SR, rate)
    assert abs(len(y) - round(len(SPEECH) / rate)) <= 2
    said, want = active_seconds(y, SR), active_seconds(SPEECH, SR) / rate
    assert abs(said - want) <= 0.03 * want, (said, want)  # nothing cut at either end, nothing added
    semitones = 12 * np.log2(pitch_hz(y, SR) / pitch_hz(SPEECH, SR))
    assert abs(semitones) < 1.0, semitones


def test_rate_one_is_the_input_and_bad_rates_are_refused():
    assert np.array_equal(change_rate(SPEECH, SR, 1.0), SPEECH)
    for bad in (0.49, 2.01, float("nan"), "fast"):
        with pytest.raises(VoxDeskError, match="rate"):
            change_rate(SPEECH, SR, bad)
    with pytest.raises(VoxDeskError, match="mono"):
        change_rate(np.zeros((2, 100), np.float32), SR, 1.5)


@pytest.mark.parametrize("rate", [0.8, 1.25, 2.0])
def test_stream_equals_whole_buffer(rate):
    whole = change_rate(SPEECH, SR, rate)
    streamed, first = _stream(SPEECH, rate)
    assert len(streamed) == len(whole)
    assert first < 8  # audio comes back after a few chunks, long before the end (30 chunks)
    assert abs(12 * np.log2(pitch_hz(streamed, SR) / pitch_hz(SPEECH, SR))) < 1.0
    # the same sound: short-time loudness follows the whole-buffer rendering, no click at a seam
    frame = SR // 50
    n = len(whole) // frame
    rms = [np.sqrt(np.mean(a[: n * frame].reshape(n, frame) ** 2, axis=1)) for a in (whole, streamed)]
    assert np.abs(rms[0] - rms[1]).max() < 0.2 * rms[0].max()
    assert np.abs(np.diff(streamed)).max() <= 1.2 * np.abs(np.diff(SPEECH)).max()


def test_stream_of_odd_chunks_and_short_input():
    tiny = SPEECH[:500]
    streamed, _ = _stream(tiny, 1.5, chunk=7)
    assert len(streamed) == round(500 / 1.5)
    odd, _ = _stream(SPEECH, 0.8, chunk=333)
    assert len(odd) == round(len(SPEECH) / 0.8)
    passthrough = RateStretcher(SR, 1.0)
    assert np.array_equal(passthrough.push(SPEECH[:100]), SPEECH[:100]) and not len(passthrough.flush())
