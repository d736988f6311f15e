"""Reference preparation: silence trim, loudness, length advice, undo; the recording is kept."""

from __future__ import annotations

import numpy as np
import pytest

from app.audio.prepare import loudness_gain_db, speech_bounds, speech_level_db
from app.errors import VoxDeskError
from app.voices.library import VoiceLibrary
from app.voices.prepare import (
    RECOMMENDED_SECONDS,
    Edit,
    EditHistory,
    normalise_loudness,
    too_long,
    trim_silence,
)

RATE = 16000


def padded_speech(lead: float, speech: float, tail: float, amp: float = 0.1) -> np.ndarray:
    """A 'word' (a tone with a soft attack) between stretches of faint room noise."""
    rng = np.random.default_rng(0)
    n = int((lead + speech + tail) * RATE)
    out = (0.0005 * rng.standard_normal(n)).astype(np.float32)
    t = np.arange(int(speech * RATE)) / RATE
    a = int(lead * RATE)
    out[a : a + len(t)] += (amp * np.sin(2 * np.pi * 200 * t) * np.minimum(1, t / 0.05)).astype(np.float32)
    return out


def test_speech_bounds_and_level():
    audio = padded_speech(1.0, 2.0, 1.5)
    start, end = speech_bounds(audio, RATE, pad_s=0.0)
    assert abs(start / RATE - 1.0) < 0.05 and abs(end / RATE - 3.0) < 0.05
    start_p, end_p = speech_bounds(audio, RATE)  # default padding keeps soft edges
    assert start_p < start and end_p > end
    assert speech_level_db(audio, RATE) == pytest.approx(20 * np.log10(0.1 / np.sqrt(2)), abs=0.3)
    assert speech_bounds(np.zeros(RATE, np.float32), RATE) is None
    gain = loudness_gain_db(audio, RATE)
    assert speech_level_db(audio * 10 ** (gain / 20), RATE) == pytest.approx(-20.0, abs=0.1)
    loud_peak = padded_speech(0.2, 1.0, 0.2, amp=0.05)
    loud_peak[RATE // 2] = 0.9  # a click: the gain stops where the peak would clip
    g = loudness_gain_db(loud_peak, RATE)
    assert np.max(np.abs(loud_peak)) * 10 ** (g / 20) == pytest.approx(10 ** (-1 / 20), rel=1e-3)


@pytest.fixture
def lib(tmp_path):
    return VoiceLibrary(tmp_path / "voices")


def test_trim_silence_normalise_and_undo_keep_the_recording(lib):
    audio = padded_speech(1.0, 2.0, 1.5)
    voice = lib.create_from_samples(audio, RATE, "Anna")
    stored = (lib.folder(voice) / "audio.flac").read_bytes()
    history = EditHistory()

    trimmed = trim_silence(lib, voice)
    history.record(voice, trimmed)
    assert 0.8 < trimmed.trim_start < 1.0 and 3.0 < trimmed.trim_end < 3.2
    with pytest.raises(VoxDeskError, match="no silence to trim"):
        trim_silence(lib, trimmed)  # a second click finds nothing more

    loud = normalise_loudness(lib, trimmed)
    history.record(trimmed, loud)
    assert loud.normalised and speech_level_db(lib.audio(loud), RATE) == pytest.approx(-20.0, abs=0.2)

    assert history.can_undo(loud)
    back = history.undo(lib, loud)
    assert Edit.of(back) == Edit.of(trimmed) and lib.get(voice.id) == back
    back = history.undo(lib, back)
    assert Edit.of(back) == Edit.of(voice) and not history.can_undo(back)
    with pytest.raises(VoxDeskError, match="nothing to undo"):
        history.undo(lib, back)
    assert (lib.folder(voice) / "audio.flac").read_bytes() == stored  # never rewritten
    np.testing.assert_allclose(lib.audio(back), audio, atol=1e-4)


def test_silent_reference_is_a_clear_message(lib):
    voice = lib.create_from_samples(padded_speech(0.5, 1.0, 0.5), RATE, "Quiet")
    lib.set_preparation(voice, trim_start=0.0, trim_end=0.45)  # only the leading noise in use
    noise_only = lib.get(voice.id)
    lib.set_preparation(noise_only, gain_db=-200.0)
    with pytest.raises(VoxDeskError, match="No speech"):
        trim_silence(lib, lib.get(voice.id))
    with pytest.raises(VoxDeskError, match="silent"):
        normalise_loudness(lib, lib.get(voice.id))


def test_length_advice_warns_but_does_not_refuse(lib):
    short = lib.create_from_samples(padded_speech(0.2, 3.0, 0.2), RATE, "Short")
    assert not too_long(short)
    long = lib.create_from_samples(padded_speech(0.5, RECOMMENDED_SECONDS[1] + 10, 0.5), RATE, "Long")
    assert too_long(long)
    assert lib.get(long.id).duration > RECOMMENDED_SECONDS[1]  # kept as it is
