"""Recording a voice sample from a microphone (sounddevice ``InputStream``).

The audio callback only copies each block into a preallocated buffer and advances a counter;
the GUI thread reads the live level (:meth:`Recorder.level`) and the elapsed time from that
buffer on a timer. Recording stops by itself at ``max_seconds`` (:attr:`Recorder.full` turns
true; the GUI then calls :meth:`Recorder.stop`). The stream factory is injectable so tests can
feed known blocks without a sound card.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.audio import devices
from app.errors import VoxDeskError

FLOOR_DB = -100.0
LEVEL_WINDOW = 0.05  # seconds of audio the live meter looks at
DEFAULT_RATE = 48000


@dataclass(frozen=True)
class Level:
    """Live input level in dBFS (``FLOOR_DB`` for silence)."""

    rms_db: float
    peak_db: float


def _db(value: float) -> float:
    return max(FLOOR_DB, 20 * math.log10(value)) if value > 0 else FLOOR_DB


class Recorder:
    """Records mono float32 audio; use from the GUI thread (the callback runs on PortAudio's)."""

    def __init__(
        self,
        device: int | str | None = None,
        sample_rate: int | None = None,
        max_seconds: float = 60.0,
        stream_factory: Callable[..., Any] | None = None,
    ) -> None:
        self.device = device
        self.sample_rate = sample_rate
        self.max_seconds = max_seconds
        self._factory = stream_factory
        self._stream: Any = None
        self._buffer = np.zeros(0, np.float32)
        self._count = 0  # samples recorded so far (advanced by the callback after copying)
        self.overflows = 0  # blocks PortAudio flagged (input overflow: samples were lost)

    @property
    def recording(self) -> bool:
        return self._stream is not None

    @property
    def full(self) -> bool:
        """True once ``max_seconds`` have been recorded (further input is dropped)."""
        return len(self._buffer) > 0 and self._count >= len(self._buffer)

    @property
    def seconds(self) -> float:
        """Length of the recording so far."""
        return self._count / self.sample_rate if self.sample_rate else 0.0

    def start(self) -> None:
        """Open the microphone and start recording; VoxDeskError when there is none."""
        if self.recording:
            return
        factory = self._factory
        if factory is None:
            sd = devices.sounddevice()
            devices.check_device(self.device, "input")
            factory = sd.InputStream
            if self.sample_rate is None:
                info = sd.query_devices(self.device, kind="input")
                self.sample_rate = int(info["default_samplerate"]) or DEFAULT_RATE
        self.sample_rate = self.sample_rate or DEFAULT_RATE
        self._buffer = np.zeros(int(self.max_seconds * self.sample_rate), np.float32)
        self._count = 0
        self.overflows = 0
        try:
            self._stream = factory(
                samplerate=self.sample_rate,
                channels=1,
                dtype="float32",
                device=self.device,
                callback=self._callback,
            )
            self._stream.start()
        except Exception as exc:  # PortAudioError, or ValueError for a bad device/rate
            self._stream = None
            raise VoxDeskError(
                f"The microphone could not be opened at {self.sample_rate} Hz ({exc}). "
                "Pick another input device in Settings."
            ) from None

    def _callback(self, indata: np.ndarray, frames: int, _time: Any, status: Any) -> None:
        if status:
            self.overflows += 1
        start = self._count
        n = min(frames, len(self._buffer) - start)
        if n > 0:
            self._buffer[start : start + n] = indata[:n, 0]
            self._count = start + n

    def level(self) -> Level:
        """RMS and peak of the last ~50 ms (for the meter)."""
        end = self._count
        window = self._buffer[max(0, end - int(LEVEL_WINDOW * (self.sample_rate or DEFAULT_RATE))) : end]
        if not len(window):
            return Level(FLOOR_DB, FLOOR_DB)
        rms = math.sqrt(float(np.dot(window, window)) / len(window))
        return Level(_db(rms), _db(float(np.max(np.abs(window)))))

    def samples(self) -> np.ndarray:
        """A copy of what has been recorded so far."""
        return self._buffer[: self._count].copy()

    def stop(self) -> np.ndarray:
        """Stop recording; returns the recording (mono float32 at :attr:`sample_rate`)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
            finally:
                stream.close()
        return self.samples()
