"""Playback for the window: the in-order :class:`Playlist` on one sink, plus pause and clips.

The sink's ring buffer is kept short (``SINK_SECONDS``) and refilled from a GUI timer, so pausing
is simply not refilling: sound stops within that fraction of a second and resumes where it was.
A missing sound device is reported once per run and generation carries on (export still works).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from app.audio.player import AudioSink, Playlist
from app.errors import VoxDeskError

SINK_SECONDS = 0.5
PUMP_MS = 20
CLIP = "clip"


class Playback(QObject):
    """Owns the playlist of the current run and feeds the sink from a timer."""

    stateChanged = Signal(bool)  # playing (not paused, audio left to play)
    error = Signal(str)
    # Where the listener is: (segment key or CLIP, seconds into it) while audio plays, (None, 0.0)
    # in a gap, when paused at nothing, and when playback ends.
    playhead = Signal(object, float)

    def __init__(self, sink: AudioSink, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sink = sink
        self.playlist: Playlist | None = None
        self.paused = False
        self._available = True
        self._playing = False
        self.clip_source = ""  # what the current clip is, e.g. "voice:<id>:<offset>" (see play_clip)
        self._head: tuple[str | None, float] = (None, 0.0)
        self._timer = QTimer(self)
        self._timer.setInterval(PUMP_MS)
        self._timer.timeout.connect(self.pump)

    # --- runs -------------------------------------------------------------------------------
    def begin(
        self,
        keys: list[str],
        sample_rate: int,
        gap_seconds: float = 0.0,
        gaps: dict[str, float] | None = None,
    ) -> None:
        """Start a new in-order run of these segment keys (drops whatever was playing); ``gaps``:
        the silence after each segment where it is not ``gap_seconds``."""
        self.stop()
        playlist = Playlist(self.sink, sample_rate, gap_seconds)
        try:
            playlist.start(keys, gaps)
        except VoxDeskError as err:
            self.playlist = None
            if self._available:
                self.error.emit(str(err))
            self._available = False  # say it once; generation and export go on
            return
        self._available = True
        self.playlist = playlist
        self.paused = False
        self._timer.start()

    def add(self, key: str, samples: np.ndarray) -> None:
        if self.playlist is not None:
            self.playlist.add(key, samples)

    def finish(self, key: str) -> None:
        if self.playlist is not None:
            self.playlist.finish(key)

    def fail(self, key: str) -> None:
        if self.playlist is not None:
            self.playlist.fail(key)

    def restart(self, key: str) -> None:
        """The segment's take is drawn again: stop hearing it; its new take plays from its start."""
        if self.playlist is not None:
            self.playlist.restart(key)

    def play_clip(self, samples: np.ndarray, sample_rate: int, source: str = "") -> None:
        """Play one piece of audio (a voice, a selection, a finished segment). ``source`` says
        which, so the window can draw the playhead in the right place."""
        self._available = True  # the user asked for sound explicitly: report a failure again
        self.begin([CLIP], sample_rate)
        self.clip_source = source
        self.add(CLIP, samples)
        self.finish(CLIP)

    # --- transport --------------------------------------------------------------------------
    def toggle_pause(self) -> None:
        if self.playlist is None:
            return
        self.paused = not self.paused
        self._update()

    def stop(self) -> None:
        self._timer.stop()
        if self.playlist is not None:
            self.playlist.stop()
            self.playlist = None
        self.paused = False
        self.clip_source = ""
        self._update()
        self._move_head(None, 0.0)

    def pump(self) -> None:
        playlist = self.playlist
        if playlist is None:
            return
        if not self.paused:
            playlist.pump()
        position = playlist.sink.position
        key = playlist.segment_at(position)
        span = playlist.span(key) if key is not None else None
        offset = (position - span[0]) / max(1, playlist.sample_rate) if span else 0.0
        if playlist.done:
            self._timer.stop()
            self.playlist = None
            key, offset = None, 0.0
        self._update()
        self._move_head(key, offset)

    def _move_head(self, key: str | None, seconds: float) -> None:
        if (key, seconds) != self._head:
            self._head = (key, seconds)
            self.playhead.emit(key, seconds)

    @property
    def playing(self) -> bool:
        return self.playlist is not None and not self.paused

    def _update(self) -> None:
        if self.playing != self._playing:
            self._playing = self.playing
            self.stateChanged.emit(self._playing)


def describe_output(sink: AudioSink) -> str:
    """One line naming where sound goes (or saying there is nowhere)."""
    from PySide6.QtCore import QCoreApplication

    from app.audio.player import SoundDeviceSink

    output = QCoreApplication.translate("Playback", "Output: {0}")
    if not isinstance(sink, SoundDeviceSink):  # e.g. the tests' and screenshots' capture sink
        return output.format(getattr(sink, "description", type(sink).__name__))
    from app.audio import devices

    try:
        sd = devices.sounddevice()
        devices.check_device(sink.device, "output")
        name = sd.query_devices(sink.device, kind="output")["name"]
    except VoxDeskError:
        return QCoreApplication.translate(
            "Playback", "No audio output device: playback is off (export still works)."
        )
    except Exception:  # noqa: BLE001 - a driver oddity must not stop the window
        return QCoreApplication.translate("Playback", "Output: the system default device")
    return output.format(name)


def default_sink(device: str | None) -> AudioSink:
    """The sound card via sounddevice, with a short ring buffer (see the module docstring)."""
    from app.audio.player import SoundDeviceSink

    return SoundDeviceSink(device=device or None, buffer_seconds=SINK_SECONDS)
