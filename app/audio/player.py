"""Playback: the ``AudioSink`` interface, the sounddevice sink, a capture sink, and the playlist.

The app writes float32 chunks into a sink's ring buffer (never blocking); the sink's consumer —
PortAudio's callback, or ``CaptureSink.pull`` in tests — copies them out. When the buffer runs
dry while more audio is expected, the consumer plays silence and counts an underrun.

:class:`Playlist` plays a script's segments in order with no gaps while they are still being
generated: chunks of later segments are held back until every earlier segment has been released,
then go to the sink in order. The window calls :meth:`Playlist.pump` on a timer.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from app.audio import devices
from app.audio.ring import RingBuffer
from app.errors import VoxDeskError

BUFFER_SECONDS = 20.0


class AudioSink:
    """Somewhere to play mono float32 audio. Subclasses supply the consumer of the ring buffer."""

    def __init__(self, buffer_seconds: float = BUFFER_SECONDS) -> None:
        self.buffer_seconds = buffer_seconds
        self.sample_rate = 0
        self.underruns = 0
        self._ring: RingBuffer | None = None
        self._expect_more = False

    def start(self, sample_rate: int) -> None:
        """Open the output at ``sample_rate``; drops anything buffered from before."""
        self.sample_rate = int(sample_rate)
        self._ring = RingBuffer(max(1, int(self.buffer_seconds * sample_rate)))
        self.underruns = 0
        self._expect_more = False

    def write(self, chunk: np.ndarray) -> int:
        """Queue samples without blocking; returns how many fitted (the caller keeps the rest)."""
        if self._ring is None:
            raise RuntimeError("write() before start()")
        self._expect_more = True
        return self._ring.write(np.asarray(chunk, dtype=np.float32).reshape(-1))

    @property
    def free(self) -> int:
        """Samples that :meth:`write` would accept now."""
        return 0 if self._ring is None else self._ring.free

    @property
    def buffered(self) -> int:
        """Samples written but not yet played."""
        return 0 if self._ring is None else self._ring.available

    @property
    def position(self) -> int:
        """Samples of written audio played so far (silence from underruns not counted)."""
        return 0 if self._ring is None else self._ring.total_read

    @property
    def written(self) -> int:
        """Samples written since :meth:`start` (played or not)."""
        return 0 if self._ring is None else self._ring.total_written

    def unwrite(self, position: int) -> int:
        """Drop what is buffered from stream sample ``position`` on (what already played stays
        played); returns the position the next write starts at."""
        return 0 if self._ring is None else self._ring.unwrite(position)

    def end_of_stream(self) -> None:
        """No more audio is coming for now: running dry is no longer an underrun."""
        self._expect_more = False

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything written has played; False on timeout."""
        self.end_of_stream()
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.buffered:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def stop(self) -> None:
        """Stop at once and drop what is buffered."""
        if self._ring is not None:
            self._ring.clear()
        self._expect_more = False

    def _render(self, out: np.ndarray) -> None:
        """The consumer's whole job: copy from the ring, pad with silence. Runs on the audio thread."""
        ring = self._ring
        n = 0 if ring is None else ring.read_into(out)
        if n < len(out):
            out[n:] = 0.0
            if self._expect_more:
                self.underruns += 1


class CaptureSink(AudioSink):
    """A sink for tests: :meth:`pull` plays ``frames`` samples into :attr:`captured`."""

    def __init__(self, buffer_seconds: float = BUFFER_SECONDS) -> None:
        super().__init__(buffer_seconds)
        self.blocks: list[np.ndarray] = []

    def pull(self, frames: int) -> np.ndarray:
        """Consume one block as an audio callback would; returns it (silence-padded)."""
        out = np.empty(frames, dtype=np.float32)
        self._render(out)
        self.blocks.append(out)
        return out

    @property
    def captured(self) -> np.ndarray:
        """Everything "played" so far, padding included."""
        return np.concatenate(self.blocks) if self.blocks else np.zeros(0, np.float32)

    def drain(self, timeout: float | None = None) -> bool:
        """Play everything buffered at once (tests have no clock)."""
        self.end_of_stream()
        if self.buffered:
            self.pull(self.buffered)
        return True


class SoundDeviceSink(AudioSink):
    """Plays through a sounddevice ``OutputStream``; its callback is only :meth:`AudioSink._render`."""

    def __init__(
        self,
        device: int | str | None = None,
        buffer_seconds: float = BUFFER_SECONDS,
        blocksize: int = 0,
        stream_factory: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(buffer_seconds)
        self.device = device
        self.blocksize = blocksize
        self._factory = stream_factory
        self._stream: Any = None
        self.status_flags = 0  # PortAudio callback status bits seen (output underflows etc.)

    def start(self, sample_rate: int) -> None:
        """Open and start the stream; VoxDeskError when there is no usable output device."""
        self.stop()
        super().start(sample_rate)
        factory = self._factory
        if factory is None:
            sd = devices.sounddevice()
            devices.check_device(self.device, "output")
            factory = sd.OutputStream
        try:
            self._stream = factory(
                samplerate=sample_rate,
                channels=1,
                dtype="float32",
                device=self.device,
                blocksize=self.blocksize,
                callback=self._callback,
            )
            self._stream.start()
        except Exception as exc:  # PortAudioError, or ValueError for a bad device/rate
            self._stream = None
            raise VoxDeskError(
                f"The sound device could not play audio at {sample_rate} Hz ({exc}). "
                "Pick another output device in Settings."
            ) from None

    def _callback(self, outdata: np.ndarray, frames: int, _time: Any, status: Any) -> None:
        if status:
            self.status_flags += 1
        self._render(outdata[:, 0])

    def drain(self, timeout: float | None = None) -> bool:
        """Wait for the ring to empty, then for the device's own latency."""
        if not super().drain(timeout):
            return False
        if self._stream is not None:
            time.sleep(float(getattr(self._stream, "latency", 0.0) or 0.0))
        return True

    def stop(self) -> None:
        """Stop the stream at once and close it."""
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.abort()
            finally:
                stream.close()
        super().stop()


class Playlist:
    """Plays segments in script order, gap-free, while they arrive out of order.

    Use from one thread (the GUI's): :meth:`start` with the segment keys in order, then
    :meth:`add` chunks and :meth:`finish` (or :meth:`fail`) segments as the engine reports them,
    and call :meth:`pump` regularly to move released audio into the sink.
    """

    def __init__(self, sink: AudioSink, sample_rate: int, gap_seconds: float = 0.0) -> None:
        self.sink = sink
        self.sample_rate = sample_rate
        self.gap = max(0, round(gap_seconds * sample_rate))
        self._gaps: dict[str, int] = {}  # key -> samples of silence after it, where not self.gap
        self._order: list[str] = []
        self._held: dict[str, deque[np.ndarray]] = {}
        self._finished: set[str] = set()
        self._current = 0  # index in _order of the segment being released
        self._outbox: deque[np.ndarray] = deque()
        self._released = 0  # samples handed to the outbox so far
        self._spans: dict[str, list[int]] = {}  # key -> [start, end] in stream samples

    def start(self, keys: Sequence[str], gaps: Mapping[str, float] | None = None) -> None:
        """Begin playing these segments (in this order) from silence. ``gaps``: seconds of silence
        after a segment (a script's pauses, paragraph and chapter gaps); others get the default."""
        if len(set(keys)) != len(keys):
            raise ValueError("segment keys must be unique")
        self.sink.start(self.sample_rate)
        self._gaps = {k: max(0, round(v * self.sample_rate)) for k, v in (gaps or {}).items()}
        self._order = list(keys)
        self._held = {k: deque() for k in keys}
        self._finished = set()
        self._current = 0
        self._outbox.clear()
        self._released = 0
        self._spans = {}
        self._advance()

    def add(self, key: str, samples: np.ndarray) -> None:
        """A chunk of segment ``key`` (ignored if the key is not in this playlist)."""
        if key in self._held and key not in self._finished and len(samples):
            chunk = np.asarray(samples, dtype=np.float32).reshape(-1)
            if self._is_current(key):
                self._release(key, chunk)
            else:
                self._held[key].append(chunk)

    def finish(self, key: str) -> None:
        """Segment ``key`` has all its audio."""
        if key in self._held:
            self._finished.add(key)
            self._advance()

    def fail(self, key: str) -> None:
        """Segment ``key`` failed: play what arrived of it and move on."""
        self.finish(key)

    def restart(self, key: str) -> None:
        """Segment ``key`` starts over (its take was drawn again): what arrived of it is dropped,
        and if it is being heard it stops now; the new take plays from where the segment began
        (or from the current position, when the old take was already partly heard)."""
        if key not in self._held or key in self._finished:
            return
        self._held[key].clear()
        if not self._is_current(key):
            return
        start = self._spans[key][0]
        handed = self.sink.written  # stream position where the outbox begins
        keep = max(0, start - handed)
        kept: deque[np.ndarray] = deque()
        for chunk in self._outbox:
            if keep <= 0:
                break
            kept.append(chunk[:keep])
            keep -= len(kept[-1])
        self._outbox = kept
        resume = self.sink.unwrite(start) if handed > start else start
        self._released = resume
        self._spans[key] = [resume, resume]

    def _is_current(self, key: str) -> bool:
        return self._current < len(self._order) and self._order[self._current] == key

    def _release(self, key: str, chunk: np.ndarray) -> None:
        self._outbox.append(chunk)
        self._released += len(chunk)
        self._spans[key][1] = self._released

    def _advance(self) -> None:
        """Release held chunks of the current segment; step past finished ones, adding gaps."""
        while self._current < len(self._order):
            key = self._order[self._current]
            if key not in self._spans:
                self._spans[key] = [self._released, self._released]
            held = self._held[key]
            while held:
                self._release(key, held.popleft())
            if key not in self._finished:
                return
            self._current += 1
            gap = self._gaps.get(key, self.gap)
            if gap and self._current < len(self._order):
                self._outbox.append(np.zeros(gap, np.float32))
                self._released += gap

    def pump(self) -> int:
        """Move released audio into the sink as far as it has room; returns samples moved."""
        moved = 0
        while self._outbox:
            chunk = self._outbox[0]
            n = self.sink.write(chunk)
            moved += n
            if n < len(chunk):
                self._outbox[0] = chunk[n:]
                break
            self._outbox.popleft()
        if not self._outbox and self._current >= len(self._order):
            self.sink.end_of_stream()
        return moved

    def segment_at(self, position: int) -> str | None:
        """The segment audible at stream sample ``position`` (None in a gap or past the end)."""
        for key, (start, end) in self._spans.items():
            if start <= position < end:
                return key
        return None

    def span(self, key: str) -> tuple[int, int] | None:
        """Where segment ``key`` lies in the stream, ``(start, end)`` samples; None before it starts."""
        span = self._spans.get(key)
        return (span[0], span[1]) if span else None

    @property
    def playing(self) -> str | None:
        """The segment being heard now (for highlighting the row)."""
        return self.segment_at(self.sink.position)

    @property
    def done(self) -> bool:
        """Every segment finished and all audio handed over and played."""
        return self._current >= len(self._order) and not self._outbox and self.sink.buffered == 0

    def stop(self) -> None:
        """Stop playback now and forget everything queued."""
        self.sink.stop()
        self._order, self._held, self._outbox = [], {}, deque()
        self._current = 0
