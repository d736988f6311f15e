"""The training wizard's first page and entry points, on this machine (no NVIDIA GPU)."""

from __future__ import annotations

from PySide6.QtWidgets import QWizard
from ui_fixtures import home  # noqa: F401
from ui_train_fixtures import train_model, train_window  # noqa: F401


def test_without_a_gpu_the_first_page_says_so_and_the_cpu_needs_a_choice(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    menu = next(a.menu() for a in window.menuBar().actions() if a.menu() and "Voices" in a.text())
    train = next(a for a in menu.actions() if a.text() == "Train this voice…")
    train.trigger()
    wizard = window.training.wizard
    assert wizard is not None and wizard.windowTitle() == "Train the voice “Ada”"
    page = wizard.device_page
    qtbot.waitUntil(lambda: page.found is not None, timeout=30_000)
    assert page.found[0] is None  # no CUDA on the test machine
    assert "Training needs an NVIDIA GPU, and none was found on this computer." in page.device.text()
    assert "very slowly" in page.detail.text()
    assert page.use_cpu.isVisible() and not page.use_cpu.isChecked()
    next_button = wizard.button(QWizard.WizardButton.NextButton)
    assert not next_button.isEnabled()  # no way on without the explicit choice
    page.use_cpu.setChecked(True)
    assert next_button.isEnabled()
    next_button.click()
    assert wizard.currentPage() is wizard.data_page and wizard.device == "cpu"

    # A second Train this voice… brings the open wizard forward rather than opening another.
    train.trigger()
    assert window.training.wizard is wizard
    wizard.close()
    assert window.training.wizard is None and dialogs.asked == [] and dialogs.errors == []


def test_training_needs_a_local_model(qtbot, home, train_model, tmp_path):  # noqa: F811
    window, dialogs = train_window(qtbot, train_model, tmp_path)
    window.settings.model_dir = None
    window.voices.train_button.click()
    assert window.training.wizard is None
    assert dialogs.errors and "choose a downloaded model in Tools → Models…" in dialogs.errors[-1]
