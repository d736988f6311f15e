"""Recording, the model manager, settings and the crash handler, through their widgets."""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tiny import tone
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, wait_for_imports  # noqa: F401

from app.cpu_precision import decide
from app.voices.library import VoiceLibrary
from ui.engine_host import describe_device


class FakeInputStream:
    """Stands in for sounddevice.InputStream: calls back from its own thread, like PortAudio."""

    def __init__(self, samplerate, channels, dtype, device, callback):
        self.rate, self.callback = samplerate, callback
        self.signal = tone(samplerate * 60, samplerate)  # the dialog's longest recording
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.blocks = 0

    def _run(self) -> None:
        block = self.rate // 100
        while not self._stop.is_set():
            start = self.blocks * block
            data = self.signal[start : start + block].reshape(-1, 1)
            self.callback(data, len(data), None, None)
            self.blocks += 1
            time.sleep(0.002)  # faster than real time: the test stays short

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def close(self) -> None:
        pass


def test_record_a_voice_through_a_fake_microphone(qtbot, home):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()  # the first-run model manager
    window.activateWindow()  # what the window manager does when a dialog closes
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.input_stream_factory = FakeInputStream
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    dialog = window.actions.dialog
    dialog._countdown_start = 1  # one tick of countdown is enough to see it
    dialog.name.setText("Mic take")
    # the fake microphone is faster than real time: 5 s would fill in about 1 s of wall time, and
    # a full recorder stops and resets the meter the wait below looks at
    dialog.max_seconds.setValue(60)
    qtbot.mouseClick(dialog.record_button, Qt.MouseButton.LeftButton)
    assert "Starting in 1" in dialog.elapsed.text()
    qtbot.waitUntil(dialog.recording, timeout=3000)
    qtbot.waitUntil(lambda: dialog.meter.value() > -60 and dialog._recorder.seconds > 0.8, timeout=5000)
    assert dialog.meter.value() > -20  # the tone peaks near -9 dBFS
    qtbot.mouseClick(dialog.stop_button, Qt.MouseButton.LeftButton)
    samples, rate = dialog.take()
    assert len(samples) / rate >= 0.8 and not dialog.recording()
    np.testing.assert_array_equal(samples, FakeInputStream(rate, 1, "", None, None).signal[: len(samples)])
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    # the take is saved by the import worker, not on the GUI thread; the panel says so meanwhile
    assert "Saving the recording “Mic take”" in window.voices.import_status.label.text()
    wait_for_imports(qtbot, window)
    voices = VoiceLibrary().list()
    assert [v.name for v in voices] == ["Mic take"] and voices[0].source == "recording"
    assert window.voices.list.currentItem().text() == "Mic take"
    assert dialogs.errors == []


def test_recording_stops_at_the_limit(qtbot, home):  # noqa: F811
    from ui.views.record_dialog import RecordDialog

    dialog = RecordDialog(None, ScriptedDialogs(), None, FakeInputStream, countdown=0)
    qtbot.addWidget(dialog)
    dialog.max_seconds.setValue(5)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.take() is not None, timeout=20_000)
    samples, rate = dialog.take()
    assert len(samples) == 5 * rate and not dialog.recording()


def test_first_run_opens_model_manager_and_checks_a_folder(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    manager = window.actions.dialog
    assert manager is not None and manager.isVisible() and manager.intro.isVisible()
    assert window.engine_label.text() == "Engine: no model"

    empty = tmp_path / "not-a-model"
    empty.mkdir()
    dialogs.folders.append(empty)
    qtbot.mouseClick(manager.folder_button, Qt.MouseButton.LeftButton)
    assert "config.json is missing" in dialogs.errors[-1] and manager.isVisible()

    dialogs.folders.append(ui_model)
    qtbot.mouseClick(manager.folder_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.ready, timeout=30_000)
    assert window.settings.model_dir == ui_model
    assert window.engine_label.text() == "Engine: ready"
    assert window.device_label.text() == describe_device("cpu", decide())  # the automatic choice, and why


def test_model_manager_download_is_resumable_and_cancellable(qtbot, home, monkeypatch):  # noqa: F811
    """The network is faked at the download module's boundary: the dialog's job is the threading,
    progress display and cancel."""
    from app.models import download as dl
    from ui.settings import Settings
    from ui.views.model_manager import ModelManager

    started = threading.Event()

    def fake_download(model, source, dest, progress, cancel):
        assert source.endpoint == "https://mirror.example"
        started.set()
        for i in range(1000):
            if cancel.is_set():
                raise dl.DownloadCancelled("Download cancelled. Start it again to resume where it stopped.")
            progress(dl.Progress("model.safetensors", i, 1000, i, 1000, 1e6))
            time.sleep(0.005)
        return dest

    monkeypatch.setattr(dl, "download_model", fake_download)
    dialogs = ScriptedDialogs()
    manager = ModelManager(Settings(), dialogs)
    qtbot.addWidget(manager)
    manager.source.setCurrentIndex(manager.source.findData("mirror"))
    manager.mirror.setText("https://mirror.example")
    qtbot.mouseClick(manager.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: manager.progress.value() > 0, timeout=5000)
    assert not manager.download_button.isEnabled() and manager.cancel_button.isEnabled()
    assert "MB" in manager.status.text()
    qtbot.mouseClick(manager.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: manager.download_button.isEnabled(), timeout=5000)
    assert "resume" in manager.status.text() and dialogs.errors == []


def test_settings_dialog_round_trip(qtbot, home):  # noqa: F811
    from ui.settings import Settings
    from ui.views.settings_dialog import SettingsDialog

    settings = Settings()
    dialog = SettingsDialog(settings, ScriptedDialogs())
    qtbot.addWidget(dialog)
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    dialog.device.setCurrentIndex(dialog.device.findData("cpu"))
    combo = dialog.cpu.combo
    assert combo.currentData() == "auto"  # the processor decides unless the user does
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "float32", "bfloat16", "int8"]
    assert not dialog.cpu.button.isEnabled()  # nothing to measure without a loaded model
    combo.setCurrentIndex(combo.findData("int8"))
    dialog.accept()
    again = Settings()
    assert (again.language, again.theme, again.device) == ("zh_CN", "dark", "cpu")
    assert again.cpu_precision == "int8"
    assert again.path.parent == home / "config"


def test_cpu_precision_setting_reads_the_older_cpu_weights_key(home):  # noqa: F811
    """Before the automatic choice, "float32" was the default everyone had saved: it now reads
    Automatic; an "int8" was a choice and stays one."""
    from ui.settings import Settings

    settings = Settings()
    assert settings.cpu_precision == "auto"
    for old, new in (("float32", "auto"), ("int8", "int8")):
        settings._set("engine/cpu_weights", old)
        assert Settings().cpu_precision == new
    settings.cpu_precision = "bfloat16"
    assert Settings().cpu_precision == "bfloat16"
    settings._set("engine/cpu_precision", "fp8")
    assert Settings().cpu_precision == "auto"


def test_uncaught_exception_is_logged_and_shown(home):  # noqa: F811
    from ui.errors import install_excepthook, log_file, setup_logging

    setup_logging()
    shown: list[str] = []
    previous = sys.excepthook
    install_excepthook(shown.append)
    try:
        try:
            raise RuntimeError("boom in a slot")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
    finally:
        sys.excepthook = previous
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file().read_text(encoding="utf-8")
    assert "Traceback" in text and "boom in a slot" in text
    assert len(shown) == 1 and "Traceback" not in shown[0] and str(log_file()) in shown[0]


def test_chinese_translation_loads(qtbot, home):  # noqa: F811
    from ui.i18n import install_translators, remove_translators
    from ui.views.transport import TransportBar

    app = QApplication.instance()
    translators = install_translators(app, "zh_CN")
    try:
        bar = TransportBar()
        qtbot.addWidget(bar)
        assert bar.speak_button.text() == "朗读"
    finally:
        remove_translators(app, translators)
    assert Path(__file__).parent.parent.joinpath("ui", "i18n", "voxdesk_zh_CN.qm").is_file()


def test_cpu_precision_is_shown_in_chinese(qtbot, home):  # noqa: F811
    """The status bar's precision and reason, and Settings › On the CPU, in the Chinese window."""
    from ui.i18n import install_translators, remove_translators
    from ui.views.cpu_settings import CpuPrecisionBox

    app = QApplication.instance()
    translators = install_translators(app, "zh_CN")
    amx = {"amx_tile": True, "avx512_bf16": True}
    try:
        assert describe_device("cpu", decide("auto", amx)) == "CPU · bf16：此 CPU 支持 AMX"
        assert describe_device("cpu", decide("auto", {})) == "CPU · fp32：此 CPU 无原生 bf16"
        assert describe_device("cpu", decide("int8", amx)) == "CPU · 8 位权重：在设置中选择"
        box = CpuPrecisionBox("int8", None, "")
        qtbot.addWidget(box)
        assert box.button.text() == "在本机上测速" and box.combo.currentText() == "更快（8 位权重）"
        assert box.combo.itemText(0).startswith("自动（")
    finally:
        remove_translators(app, translators)


SMOKE = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from ui.main import create_app, run

def look_then_quit():
    shown = sorted(type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible())
    if "ModelManager" in shown:  # the window is up and has started (a splash comes first)
        print(shown)
        QApplication.quit()

create_app()
poll = QTimer()
poll.timeout.connect(look_then_quit)
poll.start(100)
sys.exit(run([]))
"""


def test_run_opens_the_window_and_quits_cleanly(home):  # noqa: F811
    """In its own process: quitting the application's event loop cannot be undone."""
    import os
    import subprocess

    from ui.errors import log_file

    root = Path(__file__).parent.parent
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "VOXDESK_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", SMOKE], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "'MainWindow'" in done.stdout and "'ModelManager'" in done.stdout  # first run: no model yet
    assert "VoxDesk window opened" in log_file().read_text(encoding="utf-8")
    assert "Destroyed while thread" not in done.stderr


def test_settings_checks_a_new_model_folder(qtbot, home, ui_model, tmp_path):  # noqa: F811
    from ui.settings import Settings
    from ui.views.settings_dialog import SettingsDialog

    dialogs = ScriptedDialogs()
    settings = Settings()
    dialog = SettingsDialog(settings, dialogs)
    qtbot.addWidget(dialog)
    dialogs.folders.append(tmp_path)
    dialog._pick_model()
    assert "not a usable model folder" in dialogs.errors[-1] and dialog.model_dir.text() == ""
    dialogs.folders.append(ui_model)
    dialog._pick_model()
    dialog.accept()
    assert Settings().model_dir == ui_model
