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
import stat
import threading
from collections.abc import Callable
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

# What a file may cost to read, checked from its header before a sample is decoded (a 457 KB FLAC
# can claim 60 s of 8 channels at 655 kHz; a small Ogg Vorbis, 255 channels).
MAX_CHANNELS = 8  # 7.1 surround; more is not a voice recording
MIN_RATE, MAX_RATE = 1_000, 384_000  # 384 kHz: the highest rate of studio converters
# float32 samples at the file's own rate and channel count pass through the decoder in blocks,
# never held at once: this bounds the CPU time (60 s of 8 channels at 384 kHz is 737 MB; 1.5 h of
# 48 kHz stereo, 2 GiB), while BLOCK_BYTES bounds the memory.
MAX_DECODED_BYTES = 2 * 2**30
BLOCK_BYTES = 2**20
# The mono float32 result held in memory: 70 min at 16 kHz, 23 min at 48 kHz, 3 min at 384 kHz.
MAX_OUTPUT_BYTES = 256 * 2**20


class AudioCancelled(VoxDeskError):
    """A read (or an import built on one) stopped because its ``cancel`` event was set."""


Progress = Callable[[float], None]  # fraction of the frames decoded, 0..1


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
    """Refuse what is not a regular file, from its metadata alone: a FIFO or a device is never
    opened (reading /dev/zero never ends; opening a FIFO waits for a writer)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise VoxDeskError(f"The audio file {path} does not exist. Check the name and folder.") from None
    except OSError as exc:
        raise VoxDeskError(
            f"VoxDesk cannot open {path.name} ({exc.strerror or exc}). Check its permissions."
        ) from None
    if stat.S_ISDIR(mode):
        raise VoxDeskError(f"{path} is a folder, not an audio file. Choose a file inside it.")
    if not stat.S_ISREG(mode):
        raise VoxDeskError(f"{path} is {_kind(mode)}, not an audio file. Choose a recording saved as a file.")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise VoxDeskError(
            f"VoxDesk cannot open {path.name} ({exc.strerror}). Check its permissions."
        ) from None


def _kind(mode: int) -> str:
    """What a path that is not a regular file or a folder is, in words."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _unreadable(name: str) -> VoxDeskError:
    return VoxDeskError(f"{name} is not an audio file VoxDesk can read, or it is damaged. {_READABLE}")


def audio_info(path: str | os.PathLike[str]) -> AudioInfo:
    """Format, rate, channels and length of an audio file, without reading its samples."""
    path = Path(path)
    _check_file(path)
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError):
        raise _unreadable(path.name) from None
    if info.samplerate <= 0 or info.channels <= 0:
        raise _unreadable(path.name)
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
    Raises :class:`VoxDeskError` for a missing, unreadable, empty, silent, too long or too costly
    file (see :func:`read_audio`).
    """
    return read_audio(path, target_sr, max_seconds=max_seconds, reject_silence=reject_silence)[0]


def read_audio(
    source: str | os.PathLike[str] | bytes,
    target_sr: int | None = None,
    *,
    max_seconds: float | None = None,
    reject_silence: bool = True,
    name: str | None = None,
    max_rate: int | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> tuple[np.ndarray, int]:
    """The one reader of audio that comes in (files, voice recordings read back, uploaded bytes):
    mono float32 at ``target_sr`` and that rate. ``target_sr=None``: the file's own rate, or
    ``max_rate`` when the file's is higher (the voice library stores at most 48 kHz).

    The header (rate, channels, frames) is checked against :data:`MAX_CHANNELS`,
    ``MIN_RATE``–``MAX_RATE``, ``max_seconds`` and the byte budgets before any sample is decoded;
    then the file is decoded in blocks of about :data:`BLOCK_BYTES`, each mixed down to mono and
    fed to a streaming resampler, so memory stays near the size of the result whatever the file
    claims. Reading stops at the bound even when the header understates the length. ``name``
    names ``bytes`` in messages (default "The audio"). Thread-safe: the server and the window
    call it from a worker, which may pass ``progress`` (called after each block with the fraction
    decoded) and ``cancel`` (checked before each block: :class:`AudioCancelled`). Raises
    :class:`VoxDeskError` with one plain line.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = name or "The audio"
        opener = lambda: sf.SoundFile(io.BytesIO(bytes(source)))  # noqa: E731
    else:
        path = Path(source)
        _check_file(path)
        label = name or path.name
        opener = lambda: sf.SoundFile(str(path))  # noqa: E731
    try:
        with opener() as f:
            out_rate = target_sr or min(f.samplerate, max_rate or f.samplerate)
            limit = _check_header(label, f.samplerate, f.channels, f.frames, out_rate, max_seconds)
            samples = _stream(f, label, out_rate, limit, max_seconds, progress, cancel)
    except (sf.LibsndfileError, RuntimeError, TypeError, EOFError):
        raise _unreadable(label) from None
    if len(samples) == 0:
        raise VoxDeskError(f"{label} contains no audio. Choose a recording with speech in it.")
    # max and -min rather than abs(): no second copy of the result
    if reject_silence and max(float(samples.max()), -float(samples.min())) < SILENCE_PEAK:
        raise VoxDeskError(f"{label} is silent. Choose a recording in which someone speaks.")
    return samples, out_rate


def _check_header(
    label: str, rate: int, channels: int, frames: int, out_rate: int, max_seconds: float | None
) -> int:
    """Refuse, from the header alone, a file whose decoding would cost more than the bounds;
    returns the most frames to read."""
    if rate <= 0 or channels <= 0 or frames < 0:
        raise _unreadable(label)
    if not MIN_RATE <= rate <= MAX_RATE:
        raise VoxDeskError(
            f"{label} has a sample rate of {rate:,} Hz; VoxDesk reads {MIN_RATE:,}–{MAX_RATE:,} Hz. "
            "Convert it to 48 kHz and try again."
        )
    if channels > MAX_CHANNELS:
        raise VoxDeskError(
            f"{label} has {channels} channels; VoxDesk reads at most {MAX_CHANNELS}. "
            "Export it as mono or stereo and try again."
        )
    if frames == 0:
        raise VoxDeskError(f"{label} contains no audio. Choose a recording with speech in it.")
    limit = _frame_limit(rate, channels, out_rate, max_seconds)
    if frames > limit:
        if max_seconds is not None and frames > max_seconds * rate:
            raise _too_long(label, frames / rate, max_seconds)
        raise VoxDeskError(
            f"{label} is too large to read: it says it holds {_length(frames / rate)} of {channels} "
            f"channel(s) at {rate:,} Hz, more than VoxDesk decodes at once. Use a shorter clip."
        )
    return limit


def _frame_limit(rate: int, channels: int, out_rate: int, max_seconds: float | None) -> int:
    """The most frames (at the file's rate) worth decoding: within ``max_seconds``, within
    :data:`MAX_DECODED_BYTES` of float32 at the file's channel count, and with a result within
    :data:`MAX_OUTPUT_BYTES` at ``out_rate``."""
    limit = MAX_DECODED_BYTES // (4 * channels)
    limit = min(limit, int(MAX_OUTPUT_BYTES // 4 * rate / out_rate))
    if max_seconds is not None:
        limit = min(limit, int(math.floor(max_seconds * rate)))
    return limit


def _stream(
    f: sf.SoundFile,
    label: str,
    out_rate: int,
    limit: int,
    max_seconds: float | None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> np.ndarray:
    """Decode ``f`` block by block (mono mix, then streaming soxr HQ at ``out_rate``) up to
    ``limit`` frames; one frame more is a file longer than its header said: refused."""
    rate, channels = f.samplerate, f.channels
    block = np.empty((max(1024, BLOCK_BYTES // (4 * channels)), channels), np.float32)
    stream = None
    if out_rate != rate:
        stream = soxr.ResampleStream(rate, out_rate, 1, dtype="float32", quality="HQ")
    # The result is written in place (sized from the header, which passed the checks), so the
    # peak is the result plus one block, not twice the result.
    out = np.empty(int(np.ceil(min(f.frames, limit) * (float(out_rate) / rate))) + 64, np.float32)
    n = read = 0
    expected = max(1, min(f.frames, limit))

    def put(chunk: np.ndarray) -> None:
        nonlocal out, n
        if n + len(chunk) > len(out):  # more than the header said (still within the bound)
            out = np.concatenate([out[:n], np.empty(max(len(chunk), len(out) // 2), np.float32)])
        out[n : n + len(chunk)] = chunk
        n += len(chunk)

    while True:
        if cancel is not None and cancel.is_set():
            raise AudioCancelled(f"Reading {label} was cancelled.")
        data = f.read(min(len(block), limit + 1 - read), dtype="float32", always_2d=True, out=block)
        if len(data) == 0:
            break
        read += len(data)
        if read > limit:
            if max_seconds is not None and read > max_seconds * rate:
                raise _too_long(label, read / rate, max_seconds)
            raise VoxDeskError(
                f"{label} is longer than its header says, or too large to read. Use a shorter clip."
            )
        mono = data.mean(axis=1) if channels > 1 else data[:, 0]
        if not np.isfinite(mono).all():
            raise VoxDeskError(f"{label} contains invalid samples. Export it again from your audio editor.")
        put(mono if stream is None else stream.resample_chunk(mono, last=False))
        if progress is not None:
            progress(min(1.0, read / expected))
    if stream is None:
        return out[:n]
    put(stream.resample_chunk(np.zeros(0, np.float32), last=True))
    size = int(np.ceil(read * (float(out_rate) / rate)))  # librosa's length rule (see resample)
    put(np.zeros(max(0, size - n), np.float32))
    return out[:size]


def _length(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.0f} hours"
    return f"{seconds:.0f} seconds"


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


def _too_long(label: str, seconds: float, max_seconds: float) -> VoxDeskError:
    return VoxDeskError(
        f"{label} is {seconds:.0f} seconds long; VoxDesk uses at most {max_seconds:g} seconds. "
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
