"""Recorder: fake input stream, live level, maximum length, plain errors for missing devices."""

import numpy as np
import pytest

from app.audio.recorder import FLOOR_DB, Recorder
from app.errors import VoxDeskError

RATE = 8000


class FakeInput:
    """Stands in for sounddevice.InputStream: the test pushes blocks through the callback."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.running = False
        self.closed = False

    def start(self):
        self.running = True

    def stop(self):
        self.running = False

    def close(self):
        self.closed = True

    def feed(self, block: np.ndarray, status=None):
        self.kwargs["callback"](block.reshape(-1, 1).astype(np.float32), len(block), None, status)


def _recorder(**kwargs):
    made = []

    def factory(**kw):
        made.append(FakeInput(**kw))
        return made[-1]

    return Recorder(sample_rate=RATE, stream_factory=factory, **kwargs), made


def test_records_blocks_in_order_and_stops():
    rec, made = _recorder(max_seconds=2.0)
    rec.start()
    stream = made[0]
    assert stream.running and stream.kwargs["samplerate"] == RATE and stream.kwargs["channels"] == 1
    blocks = [np.full(512, i / 10, np.float32) for i in range(5)]
    for block in blocks:
        stream.feed(block)
    assert rec.recording and rec.seconds == pytest.approx(5 * 512 / RATE)
    out = rec.stop()
    assert np.array_equal(out, np.concatenate(blocks))
    assert not rec.recording and stream.closed and not stream.running


def test_live_level_reads_recent_audio():
    rec, made = _recorder()
    rec.start()
    assert rec.level().peak_db == FLOOR_DB  # nothing yet
    t = np.arange(RATE) / RATE
    made[0].feed((0.5 * np.sin(2 * np.pi * 400 * t)).astype(np.float32))
    level = rec.level()
    assert level.peak_db == pytest.approx(-6.02, abs=0.05)
    assert level.rms_db == pytest.approx(-9.03, abs=0.05)
    made[0].feed(np.zeros(RATE // 10, np.float32))  # the meter only looks at the last 50 ms
    assert rec.level().rms_db == FLOOR_DB


def test_maximum_length_drops_the_rest():
    rec, made = _recorder(max_seconds=0.5)
    rec.start()
    for _ in range(10):
        made[0].feed(np.ones(1000, np.float32))
    assert rec.full and rec.seconds == 0.5
    assert len(rec.stop()) == 4000


def test_overflow_flags_are_counted():
    rec, made = _recorder()
    rec.start()
    made[0].feed(np.zeros(10, np.float32), status="input overflow")
    assert rec.overflows == 1


def test_missing_microphone_is_a_plain_error(monkeypatch):
    sd = pytest.importorskip("sounddevice", exc_type=OSError, reason="PortAudio is not installed")

    def none(*_a, **_k):
        raise sd.PortAudioError("Error querying device -1")

    monkeypatch.setattr(sd, "query_devices", none)
    with pytest.raises(VoxDeskError, match="No microphone was found"):
        Recorder().start()

    def broken(**_k):
        raise sd.PortAudioError("Device unavailable")

    rec = Recorder(sample_rate=RATE, stream_factory=broken)
    with pytest.raises(VoxDeskError, match="microphone could not be opened"):
        rec.start()
    assert not rec.recording
