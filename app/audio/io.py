"""Audio files in and out: any file libsndfile reads → mono float32 at a target rate; atomic writes.

Reading follows what the official VoxCPM2 code gets from ``librosa.load(path, sr=16000)``
(librosa 0.11): float32 samples from soundfile, channel mean, soxr in its HQ mode, then the
length fixed to ``ceil(n · target/source)`` (zero-padded or cut, as ``librosa.util.fix_length``
does). So a prompt is bit-for-bit the audio the official model encodes.

Only the app (voice library, export) imports this module; the engine and model never do.
"""

from __future__ import annotations

import errno
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from app import atomic
from app.errors import VoxDeskError

# A prompt whose loudest sample is below -60 dBFS holds no usable speech (16-bit dither and
# hiss sit far below a real recording's peaks).
SILENCE_PEAK = 10 ** (-60 / 20)

WRITE_FORMATS = {"WAV": "PCM_16", "FLAC": "PCM_24"}  # format -> default subtype

# What libsndfile decodes, named once for the import filter and the error message alike
# (libsndfile reads no M4A/AAC, so neither offers it).
READABLE_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".mp3", ".aiff", ".aif")
_READABLE = "Use a WAV, FLAC, OGG, Opus, MP3 or AIFF file."


@dataclass(frozen=True)
class AudioInfo:
    frames: int
    sample_rate: int
    channels: int
    format: str
    subtype: str

    @property
    def duration(self) -> float:
        return self.frames / self.sample_rate


def _check_file(path: Path) -> None:
    if not path.exists():
        raise VoxDeskError(f"The audio file {path} does not exist. Check the name and folder.")
    if not path.is_file():
        raise VoxDeskError(f"{path} is a folder, not an audio file. Choose a file inside it.")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise VoxDeskError(
            f"VoxDesk cannot open {path.name} ({exc.strerror}). Check its permissions."
        ) from None


def _unreadable(path: Path) -> VoxDeskError:
    return VoxDeskError(f"{path.name} is not an audio file VoxDesk can read, or it is damaged. {_READABLE}")


def audio_info(path: str | os.PathLike[str]) -> AudioInfo:
    """Format, rate, channels and length of an audio file, without reading its samples."""
    path = Path(path)
    _check_file(path)
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError):
        raise _unreadable(path) from None
    if info.samplerate <= 0 or info.channels <= 0:
        raise _unreadable(path)
    return AudioInfo(info.frames, info.samplerate, info.channels, info.format, info.subtype)


def load_audio(
    path: str | os.PathLike[str],
    target_sr: int,
    *,
    max_seconds: float | None = None,
    reject_silence: bool = True,
) -> np.ndarray:
    """Read ``path`` as mono float32 at ``target_sr`` (channel mean, then soxr HQ resampling).

    ``max_seconds`` (measured at the file's own rate) refuses longer files before reading them.
    Raises :class:`VoxDeskError` for a missing, unreadable, empty, silent or too long file.
    """
    path = Path(path)
    info = audio_info(path)
    if info.frames == 0:
        raise VoxDeskError(f"{path.name} contains no audio. Choose a recording with speech in it.")
    limit = None
    if max_seconds is not None:
        limit = int(math.floor(max_seconds * info.sample_rate))
        if info.frames > limit:
            raise _too_long(path, info.duration, max_seconds)
    try:
        # frames=limit+1 bounds memory even when the header's frame count is wrong (e.g. some MP3s).
        data, rate = sf.read(
            str(path), frames=-1 if limit is None else limit + 1, dtype="float32", always_2d=True
        )
    except (sf.LibsndfileError, RuntimeError):
        raise _unreadable(path) from None
    if limit is not None and len(data) > limit:
        raise _too_long(path, len(data) / rate, max_seconds)
    if len(data) == 0:
        raise VoxDeskError(f"{path.name} contains no audio. Choose a recording with speech in it.")
    samples = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if not np.all(np.isfinite(samples)):
        raise VoxDeskError(f"{path.name} contains invalid samples. Export it again from your audio editor.")
    if reject_silence and float(np.max(np.abs(samples))) < SILENCE_PEAK:
        raise VoxDeskError(f"{path.name} is silent. Choose a recording in which someone speaks.")
    return np.ascontiguousarray(resample(samples, rate, target_sr), dtype=np.float32)


def resample(samples: np.ndarray, source_sr: int, target_sr: int) -> np.ndarray:
    """soxr HQ resampling with librosa's output length, ``ceil(n · target/source)``."""
    if source_sr == target_sr:
        return samples
    out = soxr.resample(samples, source_sr, target_sr, quality="HQ")
    # Same float expression as librosa, so the rounding of the length matches too.
    size = int(np.ceil(samples.shape[-1] * (float(target_sr) / source_sr)))
    if len(out) < size:
        return np.pad(out, (0, size - len(out)))
    return out[:size]


def _too_long(path: Path, seconds: float, max_seconds: float) -> VoxDeskError:
    return VoxDeskError(
        f"{path.name} is {seconds:.0f} seconds long; VoxDesk uses at most {max_seconds:g} seconds. "
        "Trim it and try again."
    )


def write_audio(
    path: str | os.PathLike[str],
    samples: np.ndarray,
    sample_rate: int,
    fmt: str = "WAV",
    subtype: str | None = None,
) -> None:
    """Atomically write ``samples`` (``[n]`` mono or ``[n, channels]``, float in [-1, 1]).

    ``fmt`` is "WAV" (default subtype PCM_16) or "FLAC" (PCM_24). Integer subtypes clip to
    [-1, 1] first (libsndfile would otherwise wrap around). The file appears complete or not at
    all; the previous file at ``path`` survives any failure. A full disk or an unwritable folder
    raises :class:`VoxDeskError`.
    """
    path = Path(path)
    fmt = fmt.upper()
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"unsupported audio format {fmt!r}; use one of {sorted(WRITE_FORMATS)}")
    subtype = (subtype or WRITE_FORMATS[fmt]).upper()
    if not sf.check_format(fmt, subtype):
        raise ValueError(f"{fmt} files cannot hold {subtype} samples")
    data = np.asarray(samples, dtype=np.float32)
    if data.ndim not in (1, 2) or data.shape[0] == 0:
        raise ValueError(f"expected [n] or [n, channels] samples with n > 0, got shape {data.shape}")
    if not np.isfinite(data).all():
        raise VoxDeskError(
            f"The audio for {path.name} is broken (it contains invalid samples), so it was not saved: "
            "try other settings or another seed."
        )
    if subtype.startswith("PCM"):
        data = np.clip(data, -1.0, 1.0)
    buffer = io.BytesIO()
    sf.write(buffer, data, int(sample_rate), format=fmt, subtype=subtype)
    try:
        atomic.write_bytes(path, buffer.getvalue())
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise VoxDeskError(f"The disk is full: could not save {path.name}. Free some space.") from None
        raise VoxDeskError(
            f"Could not save {path.name} in {path.parent} ({exc.strerror or exc}). Choose another folder."
        ) from None
