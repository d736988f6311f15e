"""Decode bombs: audio is judged by its header (rate, channels, frames) before a sample is
decoded, then read in bounded blocks, so a small file never costs more than its result.

Peak memory is measured in a child process (its peak RSS before and after one read), so what
numpy, libsndfile and soxr allocate all counts."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from audio_bombs import claim_frames, flac_constant, small_flac, vorbis_wide
from official import _librosa_load

from app.audio import io as audio_io
from app.audio.io import load_audio, read_audio
from app.errors import VoxDeskError

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20


def one_line_error(source, target_sr=16000, **kwargs) -> str:
    with pytest.raises(VoxDeskError) as err:
        read_audio(source, target_sr, **kwargs)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def peak_growth_mb(path: Path, target_sr: int | None, max_seconds: float | None) -> tuple[float, str]:
    """Peak RSS growth (MB) of a child process reading ``path`` once, and what the read said."""
    code = textwrap.dedent(
        f"""
        import resource, sys
        import numpy, soundfile, soxr
        from app.audio.io import read_audio
        from app.errors import VoxDeskError
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            samples, rate = read_audio({str(path)!r}, {target_sr!r}, max_seconds={max_seconds!r})
            said = f"read {{len(samples)}} at {{rate}}"
        except VoxDeskError as err:
            said = str(err)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) / 1024)
        print(said)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    growth, said = done.stdout.splitlines()[:2]
    return float(growth), said


def test_flac_at_655_khz_with_8_channels_is_refused_from_its_header(tmp_path) -> None:
    bomb = flac_constant(tmp_path / "bomb.flac", 655_000, 8, 59.9)  # the 457 KB bomb
    assert bomb.stat().st_size < 400_000 and sf.info(str(bomb)).frames == 39_234_500
    assert "655,000 Hz" in one_line_error(bomb, max_seconds=60)
    growth, said = peak_growth_mb(bomb, None, 60.0)
    assert "sample rate" in said and growth < 16  # whole, it was 1.25 GB of float32


def test_vorbis_with_255_channels_is_refused_from_its_header(tmp_path) -> None:
    bomb = vorbis_wide(tmp_path / "wide.ogg")
    assert "255 channels" in one_line_error(bomb)
    assert "255 channels" in one_line_error(bomb.read_bytes(), name="'ref_audio'")


def test_a_large_file_is_decoded_in_blocks_within_bounded_memory(tmp_path) -> None:
    # 20 s of 8 channels at 384 kHz: 61 M samples, 246 MB as one float32 array; 117 KB on disk.
    big = flac_constant(tmp_path / "big.flac", 384_000, 8, 20.0)
    assert big.stat().st_size < 200_000
    growth, said = peak_growth_mb(big, 16000, 60.0)
    assert said == "read 320000 at 16000"
    assert growth < 40, f"reading grew the process by {growth:.0f} MB"


def test_a_header_claiming_2_36_frames_is_refused_without_reading(tmp_path) -> None:
    liar = claim_frames(small_flac(tmp_path / "audio.flac"), 2**36 - 1)
    assert liar.stat().st_size < 1000
    assert "too large to read" in one_line_error(liar)
    assert "seconds long" in one_line_error(liar, max_seconds=60)
    growth, _said = peak_growth_mb(liar, None, None)
    assert growth < 16


def test_a_header_claiming_fewer_frames_is_read_only_that_far(tmp_path) -> None:
    short = claim_frames(flac_constant(tmp_path / "a.flac", 16000, 1, 3.0), 16000)
    samples, rate = read_audio(short, None)
    assert rate == 16000 and len(samples) == 16000


@pytest.mark.parametrize("rate,channels", [(44100, 2), (48000, 6), (16000, 1), (8000, 1)])
def test_reading_in_blocks_is_bit_for_bit_the_whole_read(tmp_path, monkeypatch, rate, channels) -> None:
    monkeypatch.setattr(audio_io, "BLOCK_BYTES", 4096)  # many blocks, odd boundaries
    t = np.arange(int(rate * 1.3) + 7) / rate
    mono = (0.4 * np.sin(2 * np.pi * 330 * t) * np.sin(2 * np.pi * 3 * t)).astype(np.float32)
    data = mono[:, None] * np.linspace(1.0, 0.3, channels, dtype=np.float32) if channels > 1 else mono
    path = tmp_path / "x.wav"
    sf.write(str(path), data, rate, subtype="FLOAT")
    want, _ = _librosa_load(path, sr=16000)
    assert np.array_equal(load_audio(path, 16000), want)
    assert len(want) == math.ceil(len(t) * 16000 / rate)
    own, own_rate = read_audio(path)
    assert own_rate == rate and np.array_equal(own, data.mean(axis=1) if channels > 1 else data)


def test_bytes_read_like_the_file(tmp_path) -> None:
    path = flac_constant(tmp_path / "a.flac", 44100, 2, 0.5)
    assert np.array_equal(read_audio(path.read_bytes(), 16000)[0], read_audio(path, 16000)[0])
    assert "'ref_audio' is not an audio file" in one_line_error(b"RIFF" + bytes(40), name="'ref_audio'")


def test_limits_from_the_header(tmp_path) -> None:
    low = tmp_path / "low.wav"
    sf.write(str(low), np.full(100, 0.5, np.float32), 500)
    assert "500 Hz" in one_line_error(low)
    nine = tmp_path / "nine.wav"
    sf.write(str(nine), np.full((1000, 9), 0.5, np.float32), 16000)
    assert "9 channels" in one_line_error(nine)
    long_ = flac_constant(tmp_path / "long.flac", 48000, 2, 61.0)
    assert "61 seconds long" in one_line_error(long_, max_seconds=60)
    # More than MAX_DECODED_BYTES of float32: refused from the header, not after decoding it.
    huge = flac_constant(tmp_path / "huge.flac", 384_000, 8, 200.0)
    assert "too large to read" in one_line_error(huge, 16000)
