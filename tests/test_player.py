"""Ring buffer, sinks, playlist ordering; the real sounddevice path through an ALSA file device."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from app.audio import devices
from app.audio.player import CaptureSink, Playlist, SoundDeviceSink
from app.audio.ring import RingBuffer
from app.errors import VoxDeskError

RATE = 1000
ROOT = Path(__file__).resolve().parents[1]


def test_ring_wraps_and_refuses_overflow():
    ring = RingBuffer(8)
    assert ring.write(np.arange(6, dtype=np.float32)) == 6
    out = np.full(4, -1, np.float32)
    assert ring.read_into(out) == 4 and out.tolist() == [0, 1, 2, 3]
    assert ring.write(np.arange(10, 20, dtype=np.float32)) == 6  # only 6 free; wraps around
    out = np.full(10, -1, np.float32)
    assert ring.read_into(out) == 8
    assert out.tolist() == [4, 5, 10, 11, 12, 13, 14, 15, -1, -1]
    assert ring.available == 0 and ring.total_read == 12


def test_capture_sink_pads_and_counts_underruns():
    sink = CaptureSink(buffer_seconds=1.0)
    sink.start(RATE)
    sink.pull(10)  # nothing written yet: silence, not an underrun
    assert sink.underruns == 0
    assert sink.write(np.ones(1500, np.float32)) == 1000  # buffer holds 1 s
    sink.pull(600)
    sink.pull(600)  # 400 real + 200 silence: starved while more was expected
    assert sink.underruns == 1 and sink.position == 1000
    sink.end_of_stream()
    sink.pull(100)
    assert sink.underruns == 1
    assert sink.captured.sum() == 1000 and len(sink.captured) == 1310


def _chunks(value: float, sizes):
    return [np.full(n, value, np.float32) for n in sizes]


def test_playlist_plays_in_script_order_without_gaps():
    sink = CaptureSink()
    playlist = Playlist(sink, RATE)
    playlist.start(["a", "b", "c"])
    # Segment b and c arrive before a finishes; they must wait.
    for chunk in _chunks(2, [30, 20]):
        playlist.add("b", chunk)
    playlist.add("c", np.full(10, 3, np.float32))
    playlist.finish("c")
    playlist.add("a", np.full(40, 1, np.float32))
    playlist.pump()
    sink.pull(40)
    assert playlist.playing is None  # position 40 is past a's released audio; b not released yet
    assert sink.underruns == 0
    sink.pull(5)  # a is not finished and nothing else is released: an underrun (silence)
    assert sink.underruns == 1
    playlist.add("a", np.full(15, 1, np.float32))
    playlist.finish("a")
    playlist.pump()
    playlist.finish("b")
    playlist.pump()
    sink.drain()
    played = sink.captured[sink.captured != 0]
    assert played.tolist() == [1] * 55 + [2] * 50 + [3] * 10
    assert playlist.done
    assert [playlist.segment_at(p) for p in (0, 54, 55, 104, 105, 114, 115)] == [
        "a",
        "a",
        "b",
        "b",
        "c",
        "c",
        None,
    ]


def test_playlist_gap_failed_segment_and_backpressure():
    sink = CaptureSink(buffer_seconds=0.1)  # room for 100 samples only
    playlist = Playlist(sink, RATE, gap_seconds=0.05)
    playlist.start(["a", "b", "c"])
    playlist.add("a", np.full(120, 1, np.float32))
    playlist.finish("a")
    playlist.add("b", np.full(7, 2, np.float32))
    playlist.fail("b")  # what arrived of b plays, then c
    playlist.add("c", np.full(30, 3, np.float32))
    playlist.finish("c")
    playlist.add("zzz", np.ones(5, np.float32))  # unknown segment: ignored
    assert playlist.pump() == 100  # the sink is full; the rest waits in the playlist
    while not playlist.done:
        sink.pull(64)
        playlist.pump()
    expected = [1] * 120 + [0] * 50 + [2] * 7 + [0] * 50 + [3] * 30
    assert sink.captured[: len(expected)].tolist() == expected
    assert not sink.captured[len(expected) :].any() and sink.underruns == 0


def test_playlist_stop_and_restart():
    sink = CaptureSink()
    playlist = Playlist(sink, RATE)
    playlist.start(["a"])
    playlist.add("a", np.ones(50, np.float32))
    playlist.pump()
    playlist.stop()
    assert sink.buffered == 0
    playlist.start(["b"])
    playlist.add("b", np.full(5, 4, np.float32))
    playlist.finish("b")
    playlist.pump()
    sink.drain()
    assert sink.captured[sink.captured != 0].tolist() == [4] * 5


class FakeStream:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.started = self.closed = False

    def start(self):
        self.started = True

    def abort(self):
        pass

    def close(self):
        self.closed = True


def test_sounddevice_sink_callback_copies_from_ring():
    made = []

    def factory(**kwargs):
        made.append(FakeStream(**kwargs))
        return made[-1]

    sink = SoundDeviceSink(stream_factory=factory)
    sink.start(RATE)
    assert made[0].started and made[0].kwargs["samplerate"] == RATE and made[0].kwargs["dtype"] == "float32"
    sink.write(np.arange(1, 6, dtype=np.float32))
    out = np.full((8, 1), 9, np.float32)
    made[0].kwargs["callback"](out, 8, None, None)
    assert out[:, 0].tolist() == [1, 2, 3, 4, 5, 0, 0, 0] and sink.underruns == 1
    sink.stop()
    assert made[0].closed


def test_missing_output_device_is_a_plain_error(monkeypatch):
    sd = pytest.importorskip("sounddevice", exc_type=OSError, reason="PortAudio is not installed")

    def no_device(*_a, **_k):
        raise sd.PortAudioError("Error querying device -1")

    monkeypatch.setattr(sd, "query_devices", no_device)
    with pytest.raises(VoxDeskError, match="No audio output device was found"):
        SoundDeviceSink().start(16000)
    assert devices.output_devices() == []

    def broken(**_k):
        raise sd.PortAudioError("Invalid sample rate")

    with pytest.raises(VoxDeskError, match="could not play audio at 16000 Hz"):
        SoundDeviceSink(stream_factory=broken).start(16000)


def test_missing_portaudio_is_a_plain_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # import fails as without libportaudio
    with pytest.raises(VoxDeskError, match="PortAudio"):
        devices.output_devices()


ASOUNDRC = """
pcm.!default {{
    type plug
    slave {{ pcm "capture"; format S16_LE; rate 16000; channels 1 }}
}}
pcm.capture {{
    type file
    slave.pcm "null"
    file "{out}"
    format "raw"
}}
"""

PLAY = """
import numpy as np
from app.audio.player import SoundDeviceSink
rate = 16000
signal = (0.5 * np.cos(2 * np.pi * 440 * np.arange(rate) / rate)).astype(np.float32)
sink = SoundDeviceSink()
sink.start(rate)
assert sink.write(signal) == rate
assert sink.drain(timeout=10)
sink.stop()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the ALSA file device exists on Linux only")
def test_real_sounddevice_output_through_alsa_file(tmp_path):
    try:
        import sounddevice  # noqa: F401
    except OSError:
        pytest.skip("PortAudio (libportaudio2) is not installed")
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "captured.raw"
    (home / ".asoundrc").write_text(ASOUNDRC.format(out=out))
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", textwrap.dedent(PLAY)], env=env, check=True, timeout=60)
    captured = np.fromfile(out, dtype="<i2").astype(np.float32) / 32768
    start = int(np.flatnonzero(captured)[0])
    expected = 0.5 * np.cos(2 * np.pi * 440 * np.arange(16000) / 16000)
    assert len(captured) >= start + 16000
    assert np.abs(captured[start : start + 16000] - expected).max() < 2e-4
    assert not captured[:start].any() and not captured[start + 16000 :].any()
