"""One encoded audio file (MP3, or AAC in an M4B) written with PyAV, fed float32 mono chunks.

PyAV's wheels carry FFmpeg, so nothing is needed on the system: MP3 through FFmpeg's libmp3lame,
AAC through FFmpeg's own encoder, the MP4 and MP3 muxers for the container, the tags, the cover
(an attached picture: MP4 ``covr``, ID3 ``APIC``) and the M4B chapters (FFmpeg writes both the
Nero ``chpl`` list and a QuickTime chapter track, so Apple's players and the others find them).
The writer owns an open binary file the caller made (a temporary name), so a write error is the
file's own ``OSError`` (a full disk has its errno) and the caller decides where it ends up.
"""

from __future__ import annotations

import io
import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import BinaryIO

import av
import numpy as np

log = logging.getLogger(__name__)

# format -> (muxer, encoder, muxer options)
CODECS = {
    "mp3": ("mp3", "libmp3lame", {}),
    # brand M4B: what Apple's players look for; faststart: the index first, so a player or a
    # server streams the book without reading to its end
    "m4b": ("mp4", "aac", {"brand": "M4B ", "movflags": "+faststart"}),
}
MAX_COVER_BYTES = 16 * 2**20
_IMAGE_PIPES = {b"\xff\xd8\xff": "jpeg_pipe", b"\x89PNG\r\n\x1a\n": "png_pipe"}


@dataclass(frozen=True)
class Mark:
    """A chapter mark: its title and its span in samples at the file's rate."""

    title: str
    start: int
    end: int


def cover_format(data: bytes | None) -> str | None:
    """The demuxer that reads ``data`` (a JPEG or PNG within the size bound); None (logged) for
    anything else, which is left out rather than stopping a whole book's export."""
    if not data:
        return None
    if len(data) > MAX_COVER_BYTES:
        log.warning("cover left out: %d bytes is more than %d", len(data), MAX_COVER_BYTES)
        return None
    for magic, pipe in _IMAGE_PIPES.items():
        if data.startswith(magic):
            return pipe
    log.warning("cover left out: neither JPEG nor PNG (starts %r)", data[:8])
    return None


class AudioWriter:
    """Encode mono float32 chunks at ``rate`` into ``file`` as ``fmt`` (a key of :data:`CODECS`)."""

    def __init__(
        self,
        file: BinaryIO,
        fmt: str,
        rate: int,
        bit_rate: int,
        tags: Mapping[str, str],
        *,
        cover: bytes | None = None,
        marks: Sequence[Mark] = (),
        language: str = "",
    ) -> None:
        muxer, codec, options = CODECS[fmt]
        self._out = av.open(file, "w", format=muxer, options=dict(options))
        self._pos = 0
        self._rate = rate
        self._cover: tuple[av.container.InputContainer, av.stream.Stream] | None = None
        self._open = True
        try:
            self._out.metadata.update({k: v for k, v in tags.items() if v})
            self._audio = self._out.add_stream(codec, rate=rate, layout="mono")
            self._audio.bit_rate = bit_rate
            if language:  # the MP4 track's language (ISO 639-2), and the MP3's ID3 TLAN
                self._audio.metadata["language"] = language
                self._out.metadata["language"] = language
            self._cover = self._add_cover(cover)
            if marks:
                self._out.set_chapters(
                    [
                        {
                            "id": n,
                            "start": mark.start,
                            "end": mark.end,
                            "time_base": Fraction(1, rate),
                            "metadata": {"title": mark.title},
                        }
                        for n, mark in enumerate(marks, 1)
                    ]
                )
        except BaseException:
            self.abandon()
            raise

    def _add_cover(self, data: bytes | None) -> tuple[av.container.InputContainer, av.stream.Stream] | None:
        """Open the picture as a one-frame input and add a stream copied from it (no re-encode)."""
        pipe = cover_format(data)
        if pipe is None or data is None:
            return None
        try:
            source = av.open(io.BytesIO(data), "r", format=pipe)
            picture = source.streams.video[0]
        except (av.error.FFmpegError, IndexError) as exc:
            log.warning("cover left out: unreadable (%s)", exc)
            return None
        stream = self._out.add_stream_from_template(picture)
        stream.disposition = av.stream.Disposition.attached_pic
        return source, stream

    @property
    def has_cover(self) -> bool:
        return self._cover is not None

    def write(self, samples: np.ndarray) -> None:
        if not len(samples):
            return
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples, dtype=np.float32)[None, :], format="fltp", layout="mono"
        )
        frame.sample_rate = self._rate
        frame.time_base = Fraction(1, self._rate)
        frame.pts = self._pos
        self._pos += len(samples)
        for packet in self._audio.encode(frame):
            self._out.mux(packet)

    def close(self) -> None:
        """Flush the encoder, add the cover picture and write the trailer (the MP4 index); a failure
        here (a full disk) is raised, and the file is then only fit to be removed."""
        for packet in self._audio.encode(None):
            self._out.mux(packet)
        if self._cover is not None:
            source, stream = self._cover
            for packet in source.demux(source.streams.video[0]):
                if packet.size:
                    packet.stream = stream
                    self._out.mux(packet)
        self._release(self._out.close)

    def abandon(self) -> None:
        """Release the container of a file that is being thrown away (cancel, or an error already
        raised): closing it may fail again the same way, which is logged, not raised over the first
        error. Idempotent."""

        def close_quietly() -> None:
            try:
                self._out.close()
            except Exception as exc:  # noqa: BLE001 - the file is removed next
                log.debug("closing an abandoned %s: %s", self._out.format.name, exc)

        self._release(close_quietly)

    def _release(self, close_output: Callable[[], None]) -> None:
        if not self._open:
            return
        self._open = False
        try:
            if self._cover is not None:
                self._cover[0].close()
        finally:
            close_output()


class Background:
    """An :class:`AudioWriter` fed on a thread of its own: PyAV releases the GIL while FFmpeg encodes,
    so the M4B's AAC and a chapter's MP3 take two cores. The queue holds a few blocks at most (the
    memory bound), and an error on the thread is raised at the next :meth:`write` or :meth:`close`."""

    def __init__(self, writer: AudioWriter, depth: int = 4) -> None:
        self.writer = writer
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="audiobook-encoder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (samples := self._queue.get()) is not None:
            if self._error is None:  # after an error, only drain, so the producer never blocks
                try:
                    self.writer.write(samples)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                    self._error = exc

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _join(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def write(self, samples: np.ndarray) -> None:
        self._raise()
        self._queue.put(samples)

    def close(self) -> None:
        self._join()
        self._raise()
        self.writer.close()

    def abandon(self) -> None:
        self._join()
        self.writer.abandon()
