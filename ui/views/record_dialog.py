"""Record a voice: pick the microphone, count down, watch the level, stop (or hit the limit),
listen back, name it and keep it.

The recorder's callback only fills a buffer on PortAudio's thread; this dialog reads the level and
the elapsed time from it on a GUI timer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.audio import devices
from app.audio.recorder import FLOOR_DB, Recorder
from app.errors import VoxDeskError
from app.voices.library import RECOMMENDED_SECONDS
from ui.dialogs import OK_CANCEL, Dialogs
from ui.errors import report

METER_MS = 50
METER_FLOOR_DB = -60


class RecordDialog(QDialog):
    """Accepted with :meth:`take` holding the recording. ``stream_factory`` replaces sounddevice's
    ``InputStream`` (tests feed known audio through it)."""

    playRequested = Signal(object, int)

    def __init__(
        self,
        device: str | None,
        dialogs: Dialogs,
        parent: QWidget | None = None,
        stream_factory: Callable[..., Any] | None = None,
        countdown: int = 3,
    ) -> None:
        super().__init__(parent)
        self.dialogs = dialogs
        self._factory = stream_factory
        self._countdown_start = countdown
        self._countdown = 0
        self._recorder: Recorder | None = None
        self._take: tuple[np.ndarray, int] | None = None
        self.setWindowTitle(self.tr("Record a voice"))
        self.setMinimumWidth(460)
        icon = self.style().standardIcon

        self.device = QComboBox()
        self.device.addItem(self.tr("System default"), None)
        try:
            names = [d.name for d in devices.input_devices()]
        except VoxDeskError:  # no PortAudio: the default entry stays; start() explains
            names = []
        for name in names:
            self.device.addItem(name, name)
        if device:
            index = self.device.findData(device)
            self.device.setCurrentIndex(index if index >= 0 else 0)
        self.name = QLineEdit(self.tr("My voice"))
        self.max_seconds = QSpinBox()
        self.max_seconds.setRange(5, 60)
        self.max_seconds.setValue(30)
        self.max_seconds.setSuffix(" s")
        self.tip = QLabel(
            self.tr(
                "Read a few sentences in your normal voice, in a quiet room. {0}–{1} seconds of clear "
                "speech works best. Type what you said as the transcript afterwards for the closest match."
            ).format(*(f"{s:.0f}" for s in RECOMMENDED_SECONDS))
        )
        self.tip.setObjectName("hint")
        self.tip.setWordWrap(True)
        self.meter = QProgressBar()
        self.meter.setRange(METER_FLOOR_DB, 0)
        self.meter.setValue(METER_FLOOR_DB)
        self.meter.setTextVisible(False)
        self.elapsed = QLabel()
        self.record_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaPlay), self.tr("Record"))
        self.stop_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaStop), self.tr("Stop"))
        self.play_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaVolume), self.tr("Listen"))
        self.buttons = QDialogButtonBox(OK_CANCEL)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Keep this voice"))

        form = QFormLayout()
        form.addRow(self.tr("Microphone:"), self.device)
        form.addRow(self.tr("Name:"), self.name)
        form.addRow(self.tr("Stop after:"), self.max_seconds)
        controls = QHBoxLayout()
        for button in (self.record_button, self.stop_button, self.play_button):
            controls.addWidget(button)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tip)
        form.addRow(self.tr("Level:"), self.meter)
        layout.addLayout(form)
        layout.addWidget(self.elapsed)
        layout.addLayout(controls)
        layout.addWidget(self.buttons)

        self._timer = QTimer(self)
        self._timer.setInterval(METER_MS)
        self._timer.timeout.connect(self._tick)
        self._count_timer = QTimer(self)
        self._count_timer.setInterval(1000)
        self._count_timer.timeout.connect(self._count_down)
        self.record_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.play_button.clicked.connect(self._play)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self._update()

    # --- state ------------------------------------------------------------------------------
    def take(self) -> tuple[np.ndarray, int] | None:
        """(samples, sample rate) of the last recording, or None."""
        return self._take

    def voice_name(self) -> str:
        return self.name.text().strip() or self.tr("My voice")

    def recording(self) -> bool:
        return self._recorder is not None and self._recorder.recording

    def _update(self) -> None:
        busy = self.recording() or self._count_timer.isActive()
        self.record_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.play_button.setEnabled(self._take is not None and not busy)
        self.device.setEnabled(not busy)
        self.max_seconds.setEnabled(not busy)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(
            self._take is not None and not busy
        )
        if self._count_timer.isActive():
            self.elapsed.setText(self.tr("Starting in {0}…").format(self._countdown))
        elif self.recording():
            self.elapsed.setText(
                self.tr("Recording: {0:.1f} s of at most {1} s").format(
                    self._recorder.seconds, self.max_seconds.value()
                )
            )
        elif self._take is not None:
            self.elapsed.setText(self.tr("Recorded {0:.1f} s.").format(len(self._take[0]) / self._take[1]))
        else:
            self.elapsed.setText(self.tr("Press Record, wait for the countdown, then speak."))

    # --- actions ----------------------------------------------------------------------------
    def start(self) -> None:
        """Count down, then record."""
        self._countdown = self._countdown_start
        if self._countdown <= 0:
            self._begin()
            return
        self._count_timer.start()
        self._update()

    def _count_down(self) -> None:
        self._countdown -= 1
        if self._countdown <= 0:
            self._count_timer.stop()
            self._begin()
        else:
            self._update()

    def _begin(self) -> None:
        recorder = Recorder(
            device=self.device.currentData(),
            max_seconds=float(self.max_seconds.value()),
            stream_factory=self._factory,
        )
        try:
            recorder.start()
        except Exception as exc:  # noqa: BLE001
            self.dialogs.error(self, report(exc, "starting to record"))
            self._update()
            return
        self._recorder = recorder
        self._timer.start()
        self._update()

    def _tick(self) -> None:
        recorder = self._recorder
        if recorder is None:
            return
        level = recorder.level()
        self.meter.setValue(
            int(max(METER_FLOOR_DB, level.peak_db if level.peak_db > FLOOR_DB else METER_FLOOR_DB))
        )
        if recorder.full:
            self.stop()
        else:
            self._update()

    def stop(self) -> None:
        """Stop the countdown or the recording (keeping what was recorded)."""
        self._count_timer.stop()
        self._timer.stop()
        recorder, self._recorder = self._recorder, None
        if recorder is not None:
            samples = recorder.stop()
            if len(samples):
                self._take = (samples, int(recorder.sample_rate or 0))
        self.meter.setValue(METER_FLOOR_DB)
        self._update()

    def _play(self) -> None:
        if self._take is not None:
            self.playRequested.emit(*self._take)

    def done(self, result: int) -> None:
        self.stop()
        super().done(result)
