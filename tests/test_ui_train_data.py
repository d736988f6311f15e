"""The training wizard's recordings page: slicing and transcription off the GUI thread, the clip
table (play, edit, exclude) and the minimum of usable speech that gates Next."""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWizard
from ui_fixtures import home, played  # noqa: F401
from ui_train_fixtures import add_recording, open_wizard, train_model, train_window, write_recording  # noqa: F401

from app.train.clips import MIN_SPEECH_SECONDS
from ui.train.clip_table import EXCLUDE, PLAY, TEXT


def _drop(data: QMimeData) -> QDropEvent:
    return QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )


def test_the_minimum_blocks_next_with_the_reason(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_wizard(qtbot, window)
    page = wizard.data_page
    next_button = wizard.button(QWizard.WizardButton.NextButton)
    assert not next_button.isEnabled() and "At least 2 minutes of speech" in page.total.text()
    add_recording(qtbot, wizard, dialogs, write_recording(tmp_path / "short.wav", 40))
    speech = wizard.dataset.speech_seconds()
    assert 20 < speech < MIN_SPEECH_SECONDS and page.table.rowCount() == len(wizard.dataset.clips) >= 2
    assert not next_button.isEnabled()
    assert "of the 2:00 minimum. Add more recordings to go on." in page.total.text()
    # Every clip has the words the tiny recognizer heard (tones it knows as words).
    assert all(page.table.item(row, TEXT).text() for row in range(page.table.rowCount()))
    assert dialogs.errors == []


def test_clips_are_played_corrected_and_excluded(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_wizard(qtbot, window)
    page, table = wizard.data_page, wizard.data_page.table
    add_recording(qtbot, wizard, dialogs, write_recording(tmp_path / "reading.wav", 40))
    first = wizard.dataset.clips[0]
    before = wizard.dataset.speech_seconds()

    # Play: the clip's audio goes to the window's player.
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(0, PLAY)).center()
    )
    qtbot.waitUntil(lambda: len(played(window)) > 0, timeout=10_000)

    # Correct the words: saved in the data set (the user's words count as certain).
    table.item(0, TEXT).setText("hello my voice")
    saved = json.loads((wizard.run.data_dir / "dataset.json").read_text())["clips"][0]
    assert saved["text"] == "hello my voice" and saved["confidence"] == 1.0
    assert table.item(0, TEXT).text() == "hello my voice"

    # Exclude: the clip no longer counts, and the choice is saved.
    table.item(0, EXCLUDE).setCheckState(Qt.CheckState.Checked)
    assert wizard.dataset.speech_seconds() == round(before - first.seconds, 3)
    saved = json.loads((wizard.run.data_dir / "dataset.json").read_text())["clips"][0]
    assert saved["excluded"] is True
    assert f"Usable speech: {int(before - first.seconds) // 60}:" in page.total.text()
    assert dialogs.errors == []


def test_preparation_runs_off_the_gui_thread_and_can_be_cancelled(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_wizard(qtbot, window)
    page = wizard.data_page
    # Dropped on the page (a folder, or audio files; anything else is refused).
    recording = write_recording(tmp_path / "long.wav", 150)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(recording)), QUrl.fromLocalFile(str(tmp_path / "notes.txt"))])
    assert page._dropped(_drop(data)) == [recording]
    page.dropEvent(_drop(data))
    assert page.running and page.busy_row.isVisible() and not page.add_file_button.isEnabled()
    qtbot.waitUntil(lambda: "Writing down the words" in page.status.text(), timeout=30_000)
    page.cancel_button.click()
    qtbot.waitUntil(lambda: not page.running, timeout=30_000)
    assert page.status.text() == "Cancelled; the clips made so far are kept."
    assert wizard.dataset.clips and page.add_file_button.isEnabled()
    assert dialogs.errors == []
