"""Finished takes survive a settings change: kept, playable, exportable, marked stale, and made
again on request; a stray mouse wheel over a settings box changes nothing (offscreen)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import soundfile
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox, QDoubleSpinBox, QSpinBox
from test_ui_window import import_voice, speak_and_wait, type_script
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, write_voice_file  # noqa: F401

from app.voices.library import AUDIO, VoiceLibrary
from ui.views.export_dialog import ExportOptions


def status(window, row: int) -> str:
    """The Status cell as it reads without the playhead (the finished script is playing)."""
    table = window.script.table
    return table.status_text(replace(table.rows()[row], playing=False))


def wheel(widget, steps: int = 1) -> None:
    """One wheel tick over ``widget`` (up), as the window system sends it."""
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        centre,
        widget.mapToGlobal(centre),
        QPoint(0, 0),
        QPoint(0, 120 * steps),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_a_settings_change_keeps_finished_takes_marked_and_regenerate_stale_makes_them_again(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "One sentence. Two sentences.")
    speak_and_wait(qtbot, window)
    before = [s.samples() for s in window.session.segments]
    cfg = window.script.settings.cfg
    assert cfg.value() == 2.0 and window.session.stale_indices() == []

    # A wheel tick over the Guidance box without focus changes nothing; with focus it does.
    window.script.table.setFocus()
    wheel(cfg)
    assert cfg.value() == 2.0 and cfg.focusPolicy() == Qt.FocusPolicy.StrongFocus
    cfg.setFocus()
    wheel(cfg, -1)
    assert cfg.value() == 1.9 and window.project.settings.cfg_value == 1.9

    # Every finished row stays done, playable and exportable, marked with what it was made with.
    segs = window.session.segments
    assert [s.status for s in segs] == ["done", "done"] and window.session.stale_indices() == [0, 1]
    for seg, audio in zip(segs, before, strict=True):
        np.testing.assert_allclose(seg.samples(), audio, atol=1 / 32768)  # read back from its file
    assert status(window, 0) == "Made with CFG 2.0 · Regenerate to apply"
    table = window.script.table  # Status is wide enough for the mark (up to a third of the table)
    mark = table.fontMetrics().horizontalAdvance(status(window, 0))
    assert table.columnWidth(3) >= min(mark, table.viewport().width() // 3)
    wide = table.viewport().width()
    table.resize(table.width() - wide // 2, table.height())  # a narrower window: Text keeps its room
    assert table.columnWidth(3) <= table.viewport().width() // 3 < wide // 3
    assert "CFG 2.0" in window.script.table.cell(0, 3).toolTip()
    assert window.transport.counts_text(window.session.counts()).startswith("2 done")
    window.actions.export()  # through the dialog: its choices are remembered
    dialog = window.actions.dialog
    dialog.path.setText(str(tmp_path / "stale.wav"))
    dialog.fmt.setCurrentIndex(dialog.fmt.findData("FLAC"))
    dialog.segments.setChecked(True)
    dialog.srt.setChecked(False)
    dialog.accept()
    out = tmp_path / "stale.flac"
    assert soundfile.info(str(out)).frames == sum(len(a) for a in before) + round(0.3 * 48000)
    assert len(list((tmp_path / "stale_segments").glob("*.flac"))) == 2

    # Back to 2.0: current again, with no regeneration.
    cfg.setValue(2.0)
    assert window.session.stale_indices() == [] and status(window, 0) == "Done"
    cfg.setValue(2.4)

    # Stale across a restart too (the script keeps what each take was made with).
    dialogs.unsaved_answers.append("save")
    dialogs.files.append(tmp_path / "takes.voxdesk")
    window.close()
    window = open_window(qtbot, ui_model, dialogs)
    assert window.session.stale_indices() == [0, 1]
    assert "Made with CFG 2.0" in status(window, 1)
    window.actions.export()  # the last export's choices, after a restart too
    remembered = window.actions.dialog.options()
    window.actions.dialog.reject()
    assert remembered == ExportOptions(path=tmp_path / "stale.wav", fmt="FLAC", segments=True, srt=False)

    # Speech › Regenerate stale takes makes both again with CFG 2.4.
    action = next(a for a in window.actions.speech_menu.actions() if a.text() == "Regenerate stale takes")
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        action.trigger()
    assert window.session.stale_indices() == []
    assert [s.status for s in window.session.segments] == ["done"] * 2
    assert all(s.made.cfg_value == 2.4 for s in window.session.segments)
    assert status(window, 0) == "Done"
    action.trigger()  # nothing stale: says so
    assert "current settings" in dialogs.infos[-1]

    # A regeneration that fails (the voice's recording is gone) does not cost the takes.
    window.session.wait_for_writes()  # the regenerated takes are recorded in the project
    window.script.settings.cfg.setValue(3.0)
    library = VoiceLibrary()
    (library.folder(library.list()[0]) / AUDIO).unlink()
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        action.trigger()
    assert [s.status for s in window.session.segments] == ["failed"] * 2
    assert all(window.project.take(s.job) is not None for s in window.session.segments)
    window.script.settings.cfg.setValue(2.9)  # any refresh: the kept takes are back, marked
    assert window.session.stale_indices() == [0, 1] and "CFG 2.4" in status(window, 0)


def test_spin_and_combo_boxes_ignore_the_wheel_without_focus_in_dialogs_too(qtbot, home):  # noqa: F811
    window = open_window(qtbot, None, ScriptedDialogs())
    window.actions.dialog.reject()
    window.actions.open_settings()
    dialog = window.actions.dialog
    dialog.show()
    boxes = [b for kind in (QSpinBox, QDoubleSpinBox, QComboBox) for b in dialog.findChildren(kind)]
    assert len(boxes) >= 4
    for box in boxes:
        assert box.focusPolicy() != Qt.FocusPolicy.WheelFocus
    theme = dialog.theme
    was = theme.currentIndex()
    wheel(theme, -1)
    assert theme.currentIndex() == was
    dialog.activateWindow()
    theme.setFocus()
    qtbot.waitUntil(theme.hasFocus)
    wheel(theme, -1)
    assert theme.currentIndex() != was
