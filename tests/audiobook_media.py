"""Media the audiobook tests and tests/bench_book.py make: speech-like audio and a real JPEG."""

from __future__ import annotations

import io

import av
import numpy as np


def speechlike(seconds: float, rate: int, level: float = 0.1, seed: int = 0) -> np.ndarray:
    """Voiced-speech-like audio: a harmonic series on a gliding 110-220 Hz pitch, in 4 Hz syllables
    with short pauses, plus a little breath noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    f0 = 165 + 55 * np.sin(2 * np.pi * 0.37 * t + seed)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voice = sum(np.sin(k * phase) / k for k in range(1, 12) if k * 220 < rate / 2)
    syllables = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) * (np.sin(2 * np.pi * 0.5 * t) > -0.7)
    noise = 0.02 * rng.standard_normal(len(t))
    return (level * (voice * syllables + noise)).astype(np.float32)


def jpeg(width: int = 32, height: int = 24) -> bytes:
    """A real JPEG picture, encoded with PyAV's MJPEG encoder."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mjpeg") as out:
        stream = out.add_stream("mjpeg", rate=1)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuvj420p"
        img = np.zeros((height, width, 3), np.uint8)
        img[:, : width // 2, 0] = 200
        frame = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuvj420p")
        for packet in [*stream.encode(frame), *stream.encode()]:
            out.mux(packet)
    return buf.getvalue()
