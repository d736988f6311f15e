"""A single-producer, single-consumer ring buffer of float32 samples.

The audio callback (PortAudio's thread) is the consumer on playback and the producer on
recording; the app is the other side. Each side only advances its own counter, after copying, so
no lock is needed under the GIL, and the callback does nothing but one or two numpy slice copies.
"""

from __future__ import annotations

import numpy as np


class RingBuffer:
    """Fixed-capacity FIFO of mono float32 samples."""

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self._data = np.zeros(capacity, dtype=np.float32)
        self.capacity = capacity
        self._written = 0  # total samples ever written (producer's counter)
        self._read = 0  # total samples ever read (consumer's counter)

    @property
    def available(self) -> int:
        """Samples waiting to be read."""
        return max(0, self._written - self._read)

    @property
    def free(self) -> int:
        """Room for more samples."""
        return self.capacity - self.available

    @property
    def total_read(self) -> int:
        return self._read

    @property
    def total_written(self) -> int:
        return self._written

    def write(self, samples: np.ndarray) -> int:
        """Copy as many samples as fit; returns how many were taken (never blocks)."""
        self._written = max(self._written, self._read)  # after an unwrite the reader went past
        n = min(len(samples), self.free)
        if n <= 0:
            return 0
        start = self._written % self.capacity
        first = min(n, self.capacity - start)
        self._data[start : start + first] = samples[:first]
        self._data[: n - first] = samples[first:n]
        self._written += n  # publish only after the copy
        return n

    def read_into(self, out: np.ndarray) -> int:
        """Fill ``out`` from the buffer; returns how many samples were copied (the rest is untouched)."""
        n = min(len(out), self.available)
        if n <= 0:
            return 0
        start = self._read % self.capacity
        first = min(n, self.capacity - start)
        out[:first] = self._data[start : start + first]
        out[first:n] = self._data[: n - first]
        self._read += n
        return n

    def unwrite(self, total: int) -> int:
        """Producer side: take back what was written past stream position ``total`` and not read
        yet; returns where the next write lands (``total``, or the reader's position when it has
        already played past it)."""
        self._written = max(min(self._written, total), self._read)
        return self._written

    def clear(self) -> None:
        """Drop everything (only when the other side is stopped)."""
        self._read = self._written
