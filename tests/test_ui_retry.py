"""A segment whose take runs away is drawn again: the window drops the bad take from playback and
export and plays the new one from the segment's start (tiny model whose stop head never fires,
so every take reaches the official bad-case length and three takes are drawn)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from PySide6.QtCore import Qt
from tiny import set_stop_head
from ui_fixtures import ScriptedDialogs, home, open_window, played, write_ui_model  # noqa: F401

from app.audio.player import CaptureSink, Playlist
from app.export import Clip, merge
from app.models.voxcpm.generate import Synthesizer

STEPS = 3  # solver steps a patch: quick capped takes


@pytest.fixture(scope="module")
def runaway_model(tmp_path_factory):
    return set_stop_head(write_ui_model(tmp_path_factory.mktemp("ui-runaway")), "never")


def test_playlist_restart_drops_the_bad_take():
    sink = CaptureSink()
    playlist = Playlist(sink, 10)
    playlist.start(["a", "b"])
    playlist.add("a", np.full(6, 1.0, np.float32))
    playlist.add("b", np.full(3, 9.0, np.float32))  # held back until "a" is done
    playlist.pump()
    sink.pull(2)  # two samples of the bad take were heard
    playlist.add("a", np.full(4, 1.0, np.float32))  # still in the outbox
    playlist.restart("a")
    playlist.restart("b")  # a segment not yet heard just loses what it had
    playlist.add("a", np.full(5, 2.0, np.float32))
    playlist.add("b", np.full(2, 3.0, np.float32))
    playlist.finish("a")
    playlist.finish("b")
    playlist.pump()
    sink.drain()
    np.testing.assert_array_equal(sink.captured, [1, 1, 2, 2, 2, 2, 2, 3, 3])
    assert playlist.segment_at(2) == "a" and playlist.segment_at(7) == "b"


def test_retried_segments_play_and_export_only_their_last_take(qtbot, home, runaway_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, runaway_model, dialogs, CaptureSink(buffer_seconds=600))
    window.script.settings.steps.setValue(STEPS)
    window.script.editor.setPlainText("Hi. Go.")
    window.script.flush()
    retried = []
    window.client.host.retried.connect(lambda tag, take: retried.append(take))
    with qtbot.waitSignal(window.session.runFinished, timeout=120_000):
        window.speak()
    assert dialogs.errors == [] and dialogs.infos == []
    segs = window.session.segments
    assert [s.status for s in segs] == ["done", "done"] and sorted(retried) == [2, 2, 3, 3]
    assert [s.takes for s in segs] == [3, 3]
    assert window.script.table.cell_text(0, 3).endswith("Done · take 3")  # "▶ 0 ms · " while playing

    # each segment holds exactly the take the one-request loop keeps for the same seed
    synth = Synthesizer.from_dir(runaway_model, "cpu")
    for seg in segs:
        kept = synth.synthesize(seg.job.text, seed=seg.seed, timesteps=STEPS)
        assert kept.takes == 3
        np.testing.assert_allclose(seg.samples(), kept.audio, atol=1e-3, rtol=0)

    rate, gap = window.session.sample_rate, window.project.settings.gap_seconds
    expected = merge([Clip(s.job.display_text, s.samples()) for s in segs], rate, gap)
    heard = played(window)
    np.testing.assert_array_equal(heard[: len(expected)], expected)  # no bad take in between
    assert not np.any(heard[len(expected) :])

    out = tmp_path / "speech.wav"
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    window.actions.dialog.path.setText(str(out))
    window.actions.dialog.accept()
    exported, _ = soundfile.read(str(out), dtype="float32")
    np.testing.assert_allclose(exported, expected, atol=1e-4, rtol=0)
