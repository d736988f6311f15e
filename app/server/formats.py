"""Response audio: what libsndfile (through soundfile) writes, and the streamed forms.

``wav`` and ``pcm`` stream as the engine produces them (16-bit little-endian mono at the model
rate; a streamed WAV has an open-ended header, as OpenAI's does). ``flac``, ``mp3`` and ``opus``
(in Ogg) are encoded whole, since their encoders need the finished signal; like vLLM-Omni, the
server streams only ``wav`` and ``pcm``. ``aac`` has no libsndfile encoder and is refused.
"""

from __future__ import annotations

import io
import struct
from functools import cache

import numpy as np
import soundfile as sf

MEDIA_TYPES = {
    "wav": "audio/wav",
    "pcm": "audio/pcm",
    "flac": "audio/flac",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
}
STREAMABLE = ("wav", "pcm")
_SNDFILE = {"wav": ("WAV", "PCM_16"), "flac": ("FLAC", "PCM_16"), "mp3": ("MP3", "MPEG_LAYER_III"),
            "opus": ("OGG", "OPUS")}  # fmt: skip
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)


@cache
def supported_formats() -> tuple[str, ...]:
    """The response formats this machine's libsndfile can write (wav, pcm, flac always)."""
    found = ["wav", "pcm", "flac"]
    for name in ("mp3", "opus"):
        fmt, subtype = _SNDFILE[name]
        if fmt in sf.available_formats() and sf.check_format(fmt, subtype):
            found.append(name)
    return tuple(found)


def pcm16(samples: np.ndarray) -> bytes:
    """Float samples as 16-bit little-endian PCM, converted by libsndfile itself, so a streamed
    body holds the very samples of a WAV file written by ``voxdesk synth`` or the window."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    if clipped.size == 0:
        return b""
    buffer = io.BytesIO()
    sf.write(buffer, clipped, 8000, format="RAW", subtype="PCM_16", endian="LITTLE")
    return buffer.getvalue()


def wav_header(sample_rate: int, data_bytes: int | None = None) -> bytes:
    """A 44-byte PCM WAV header; ``data_bytes=None`` leaves the sizes open (a stream)."""
    size = 0xFFFFFFFF if data_bytes is None else data_bytes
    riff = 0xFFFFFFFF if data_bytes is None else 36 + data_bytes
    return (
        b"RIFF" + struct.pack("<I", riff) + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16)
        + b"data" + struct.pack("<I", size)
    )  # fmt: skip


def encode_whole(samples: np.ndarray, sample_rate: int, fmt: str) -> bytes:
    """The finished audio in ``fmt`` (one of :func:`supported_formats`)."""
    if fmt == "pcm":
        return pcm16(samples)
    if fmt == "wav":
        data = pcm16(samples)
        return wav_header(sample_rate, len(data)) + data
    data = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    if fmt == "opus" and sample_rate not in OPUS_RATES:
        from app.audio.io import resample

        data, sample_rate = resample(data, sample_rate, 48000), 48000
    if len(data) == 0:
        data = np.zeros(1, dtype=np.float32)
    buffer = io.BytesIO()
    container, subtype = _SNDFILE[fmt]
    sf.write(buffer, data, sample_rate, format=container, subtype=subtype)
    return buffer.getvalue()
