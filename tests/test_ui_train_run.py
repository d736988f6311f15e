"""The training wizard end to end on the tiny model (CPU, the explicit choice): a recording in, a
voice in the library out; pause and resume; closing the wizard or quitting the app mid-training
asks and keeps the run, and the next start offers to resume it."""

from __future__ import annotations

import torch
from PySide6.QtCore import Qt
from ui_fixtures import GuiThreadWatcher, ScriptedDialogs, home, open_window  # noqa: F401
from ui_train_fixtures import (
    LONG_WORDS,
    add_recording,
    open_prepared,
    open_wizard,
    prepared_data,  # noqa: F401
    start_training,
    train_model,  # noqa: F401
    train_window,
    wait_stopped,
    write_recording,
)

from ui.train import runs
from ui.train.checkpoint_table import NOTE
from ui.train.clip_table import EXCLUDE


def _trained_clips(job_dir) -> set[str]:
    """The ids of the clips the job encoded to train on (its features.pt cache, see app/train/job.py)."""
    return set(torch.load(job_dir / "features.pt", weights_only=True))


def test_walk_from_a_recording_to_a_voice_in_the_library(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_wizard(qtbot, window)
    add_recording(qtbot, wizard, dialogs, write_recording(tmp_path / "reading.wav", LONG_WORDS))
    table = wizard.data_page.table
    excluded = wizard.dataset.clips[0]
    table.item(0, EXCLUDE).setCheckState(Qt.CheckState.Checked)
    watcher = GuiThreadWatcher(heavy=("/torch/", "/app/train/trainer.py", "/app/train/forward.py"))
    start_training(qtbot, wizard, steps=2)
    wait_stopped(qtbot, wizard)
    assert watcher.stop() == []  # the training never ran on the GUI thread
    page = wizard.train_page
    assert page.last.phase == "done" and wizard.run.stage == "trained" and dialogs.errors == []
    assert "Step 2 of 2" in page.headline.text()
    assert [step for step, _ in page.chart.points] == [1, 2]

    # Excluded clips are not trained on; the others are.
    trained = _trained_clips(wizard.run.job_dir)
    assert excluded.id not in trained
    assert trained == {clip.id for clip in wizard.dataset.training_clips()}

    # Closed without keeping a voice: the next Train this voice… offers the ended run again.
    wizard.close()
    assert window.training.wizard is None and dialogs.asked == []
    dialogs.answers = [True]
    window.voices.refresh(select_id=window.library.find("Ada").id)
    window.voices.train_button.click()
    assert "The last training of “Ada” ended at step 2 of 2" in dialogs.questions[-1]
    wizard = window.training.wizard
    page = wizard.train_page
    assert wizard.currentPage() is page and not wizard.training_running
    assert [step for step, _ in page.chart.points] == [1, 2] and not page.pause_button.isEnabled()

    # Every checkpoint was validated; the best one is marked and selected.
    checkpoints = page.table.checkpoints
    assert [c.step for c in checkpoints] == [1, 2]
    assert all(c.validation is not None for c in checkpoints)
    best_row = [c.step for c in checkpoints].index(page.table.best.step)
    assert page.table.item(best_row, NOTE).text() == "best" and page.table.selected() is page.table.best

    # Use this checkpoint: a named voice in the library, selected in the voice panel.
    assert page.name.text() == "Ada (trained)" and page.use_button.isEnabled()
    page.use_button.click()
    assert dialogs.errors == [] and "“Ada (trained)” is in the voice library now" in dialogs.infos[-1]
    voice = window.library.find("Ada (trained)")
    assert voice is not None and window.voices.selected().id == voice.id
    assert (window.library.folder(voice) / "lora" / "lora_config.json").is_file()
    wizard.close()
    assert window.training.wizard is None and runs.open_for(window.library.find("Ada").id) is None


def test_pause_and_resume_continue_from_the_checkpoint(qtbot, home, train_model, prepared_data, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_prepared(qtbot, window, prepared_data)
    start_training(qtbot, wizard, steps=4)
    page = wizard.train_page
    qtbot.waitUntil(lambda: page.last is not None and page.last.step >= 1, timeout=120_000)
    page.pause_button.click()
    assert not page.pause_button.isEnabled()  # until the checkpoint is saved
    wait_stopped(qtbot, wizard)
    paused_at = page.last.step
    assert page.last.phase == "paused" and page.pause_button.text() == "Resume"
    assert max(c.step for c in wizard.job.checkpoints()) == paused_at
    assert wizard.run.stage == "training" and runs.unfinished() == [wizard.run]

    page.pause_button.click()  # Resume
    qtbot.waitUntil(lambda: page.first_step is not None, timeout=120_000)
    assert page.first_step == paused_at + 1
    # The curve continues: one loss per step, none repeated.
    points = [step for step, _ in page.chart.points]
    assert points == list(range(1, points[-1] + 1)) and points[-1] >= paused_at + 1
    dialogs.answers = [True]
    page.stop_button.click()  # Stop training (asked)
    wait_stopped(qtbot, wizard)
    assert page.last.phase == "cancelled" and wizard.run.stage == "cancelled" and runs.unfinished() == []
    assert dialogs.errors == []


def test_closing_asks_and_the_next_start_resumes(qtbot, home, train_model, prepared_data, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    wizard = open_prepared(qtbot, window, prepared_data)
    start_training(qtbot, wizard, steps=4)
    page = wizard.train_page
    qtbot.waitUntil(lambda: page.last is not None and page.last.step >= 1, timeout=120_000)

    # Close the wizard: asked; "Keep training" keeps it open and running.
    dialogs.ask_answers = [2]
    wizard.close()
    assert dialogs.asked[-1][1] == ["Pause and keep", "Stop training", "Keep training"]
    assert "The voice is training" in dialogs.asked[-1][0]
    assert wizard.isVisible() and wizard.training_running

    # Quit the app: asked again; "Pause and keep" pauses, then the window closes by itself.
    dialogs.ask_answers = [0]
    dialogs.unsaved_answers = ["discard"]
    window.close()
    assert window.isVisible()  # not yet: the run is saving its checkpoint
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    run = runs.unfinished()[0]
    assert run.stage == "training" and run.step >= 1 and run.total_steps == 4

    # The next start offers to resume it, and resuming continues from its checkpoint.
    dialogs2 = ScriptedDialogs()
    dialogs2.answers = [True]
    window2 = open_window(qtbot, train_model, dialogs2)
    qtbot.waitUntil(lambda: window2.training.wizard is not None, timeout=10_000)
    assert f"Training of the voice “Ada” stopped at step {run.step} of 4" in dialogs2.questions[0]
    wizard2 = window2.training.wizard
    assert wizard2.currentPage() is wizard2.train_page
    page2 = wizard2.train_page
    qtbot.waitUntil(lambda: page2.first_step is not None, timeout=120_000)
    assert page2.first_step == run.step + 1
    dialogs2.ask_answers = [1]  # Stop training
    wizard2.close()
    qtbot.waitUntil(lambda: window2.training.wizard is None, timeout=60_000)
    assert runs.unfinished() == [] and dialogs2.errors == []
