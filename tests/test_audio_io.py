"""Reading odd audio files to mono float32 at a target rate, and atomic writes."""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from official import _librosa_load

from app.audio import io as audio_io
from app.audio.io import audio_info, load_audio, resample, write_audio
from app.errors import VoxDeskError


def tone(rate: int, seconds: float, freq: float = 440.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def make(path: Path, data: np.ndarray, rate: int, fmt: str, subtype: str | None) -> Path:
    sf.write(str(path), data, rate, format=fmt, subtype=subtype)
    return path


CASES = [  # (name, format, subtype, rate, channels, tolerance vs the ideal tone)
    ("u8.wav", "WAV", "PCM_U8", 16000, 1, 2e-2),
    ("s16.wav", "WAV", "PCM_16", 44100, 1, 1e-3),
    ("s24.wav", "WAV", "PCM_24", 48000, 1, 1e-3),
    ("s32.wav", "WAV", "PCM_32", 8000, 1, 1e-3),
    ("float.wav", "WAV", "FLOAT", 22050, 1, 1e-3),
    ("stereo.wav", "WAV", "PCM_16", 44100, 2, 1e-3),
    ("six.wav", "WAV", "FLOAT", 48000, 6, 1e-3),
    ("lossless.flac", "FLAC", "PCM_16", 48000, 2, 1e-3),
    ("vorbis.ogg", "OGG", "VORBIS", 44100, 1, None),
    ("layer3.mp3", "MP3", "MPEG_LAYER_III", 44100, 1, None),
]


@pytest.mark.parametrize("name,fmt,subtype,rate,channels,tol", CASES)
def test_reads_formats_mono_at_target_rate(tmp_path, name, fmt, subtype, rate, channels, tol) -> None:
    if not sf.check_format(fmt, subtype):
        pytest.skip(f"this libsndfile cannot write {fmt}/{subtype}")
    mono = tone(rate, 1.1)[: rate + 7]  # a length soxr and librosa's ceil() round differently
    gains = np.linspace(1.0, 0.5, channels, dtype=np.float32)
    path = make(tmp_path / name, mono[:, None] * gains if channels > 1 else mono, rate, fmt, subtype)

    got = load_audio(path, 16000)

    want, _ = _librosa_load(path, sr=16000, mono=True)  # the official v2 prompt path
    assert got.dtype == np.float32 and got.ndim == 1
    assert np.array_equal(got, want)
    frames = sf.info(str(path)).frames
    assert len(got) == math.ceil(frames * 16000 / rate)
    if tol is not None:  # lossless: the content is the tone, mixed by the channel mean
        ideal = tone(16000, 1.0, amp=0.5 * float(gains.mean()))
        inner = slice(200, 15800)  # resampler edges
        np.testing.assert_allclose(got[inner], ideal[inner], atol=tol + 2e-3)


def test_resample_matches_librosa_length_rule() -> None:
    x = tone(44100, 0.5)
    for n in (1, 2, 3, 100, 22049, 22050):
        for rate in (8000, 11025, 22050, 44100, 48000, 96000):
            y = resample(x[:n], 44100, rate)
            assert len(y) == int(np.ceil(n * (float(rate) / 44100)))
    assert resample(x, 44100, 44100) is x


def test_audio_info(tmp_path) -> None:
    info = audio_info(make(tmp_path / "a.flac", np.zeros((4410, 2), np.float32), 44100, "FLAC", "PCM_16"))
    assert (info.frames, info.sample_rate, info.channels, info.format) == (4410, 44100, 2, "FLAC")
    assert info.duration == pytest.approx(0.1)


def error_of(path, **kwargs) -> str:
    with pytest.raises(VoxDeskError) as err:
        load_audio(path, 16000, **kwargs)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_missing_file_and_folder(tmp_path) -> None:
    assert "does not exist" in error_of(tmp_path / "nope.wav")
    assert "folder" in error_of(tmp_path)


def test_not_audio_or_damaged(tmp_path) -> None:
    text = tmp_path / "notes.wav"
    text.write_text("these are my notes, not a recording\n" * 20)
    assert "not an audio file" in error_of(text)
    noise = tmp_path / "noise.flac"
    noise.write_bytes(np.random.default_rng(0).bytes(4096))
    assert "not an audio file" in error_of(noise)
    good = make(tmp_path / "good.wav", tone(16000, 1.0), 16000, "WAV", "PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(good.read_bytes()[:20])  # header cut short
    assert "damaged" in error_of(cut)


def test_empty_silent_and_invalid(tmp_path) -> None:
    empty = make(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000, "WAV", "PCM_16")
    assert "contains no audio" in error_of(empty)
    silent = make(tmp_path / "silent.wav", np.zeros(16000, np.float32), 16000, "WAV", "PCM_16")
    assert "silent" in error_of(silent)
    hiss = make(tmp_path / "hiss.wav", tone(16000, 1.0, amp=3e-4), 16000, "WAV", "PCM_16")
    assert "silent" in error_of(hiss)
    assert len(load_audio(hiss, 16000, reject_silence=False)) == 16000
    quiet = make(tmp_path / "quiet.wav", tone(16000, 1.0, amp=0.01), 16000, "WAV", "PCM_16")  # -40 dBFS
    assert np.abs(load_audio(quiet, 16000)).max() > 0.009
    bad = tone(16000, 1.0)
    bad[100] = np.nan
    nan = make(tmp_path / "nan.wav", bad, 16000, "WAV", "FLOAT")
    assert "invalid samples" in error_of(nan)


def test_too_long_is_refused_before_reading(tmp_path, monkeypatch) -> None:
    path = make(tmp_path / "long.wav", tone(8000, 3.0), 8000, "WAV", "PCM_16")
    assert len(load_audio(path, 8000, max_seconds=3)) == 24000

    def no_read(*_args, **_kwargs):
        raise AssertionError("the samples of a too-long file were read")

    monkeypatch.setattr(audio_io.sf, "read", no_read)
    assert "3 seconds long" in error_of(path, max_seconds=2.5)


def test_write_roundtrip_and_clipping(tmp_path) -> None:
    x = tone(24000, 0.5)
    x[10] = 1.7  # out of range: clipped, not wrapped around
    write_audio(tmp_path / "a.wav", x, 24000)
    back, rate = sf.read(str(tmp_path / "a.wav"), dtype="float32")
    assert rate == 24000 and sf.info(str(tmp_path / "a.wav")).subtype == "PCM_16"
    assert back[10] > 0.99
    np.testing.assert_allclose(np.delete(back, 10), np.delete(x, 10), atol=1 / 32768)

    write_audio(tmp_path / "b.flac", x, 48000, fmt="flac")
    assert sf.info(str(tmp_path / "b.flac")).subtype == "PCM_24"
    write_audio(tmp_path / "c.wav", x, 16000, subtype="FLOAT")
    assert np.array_equal(sf.read(str(tmp_path / "c.wav"), dtype="float32")[0], x)
    with pytest.raises(ValueError):
        write_audio(tmp_path / "d.mp3", x, 16000, fmt="MP3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "b.flac", "c.wav"]


@pytest.mark.parametrize(
    "err,message",
    [(errno.ENOSPC, "disk is full"), (errno.EACCES, "not allowed"), (errno.EIO, "Could not save")],
)
def test_failed_write_keeps_old_file(tmp_path, monkeypatch, err, message) -> None:
    target = tmp_path / "take.wav"
    write_audio(target, tone(16000, 0.2), 16000)
    before = target.read_bytes()

    def failing_fsync(_fd):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(VoxDeskError, match=message):
        write_audio(target, tone(16000, 1.0, freq=220), 16000)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["take.wav"]  # no temporary file left


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_samples_are_refused(tmp_path, bad) -> None:
    data = tone(16000, 0.1)
    data[10] = bad
    with pytest.raises(VoxDeskError, match="invalid samples"):
        write_audio(tmp_path / "x.wav", data, 16000)
    assert not (tmp_path / "x.wav").exists()


def test_read_audio_reports_progress_and_stops_when_cancelled(tmp_path):
    import threading

    path = make(tmp_path / "long.flac", np.stack([tone(96_000, 4.0)] * 4, axis=1), 96_000, "FLAC", None)
    fractions: list[float] = []
    samples, rate = audio_io.read_audio(path, 16_000, progress=fractions.append)
    assert rate == 16_000 and len(samples) == 64_000
    # one call per block of about 1 MiB: 4 s of 4 channels at 96 kHz is 6 MiB of float32
    assert len(fractions) >= 6 and fractions == sorted(fractions) and fractions[-1] == 1.0

    cancel = threading.Event()
    seen: list[float] = []

    def stop_after_two(fraction: float) -> None:
        seen.append(fraction)
        if len(seen) == 2:
            cancel.set()

    with pytest.raises(audio_io.AudioCancelled, match="long.flac was cancelled"):
        audio_io.read_audio(path, 16_000, progress=stop_after_two, cancel=cancel)
    assert len(seen) == 2 and seen[-1] < 0.5  # stopped at the next block, not at the end
