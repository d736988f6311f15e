"""The selected voice's LoRA: which one is attached, "Attach LoRA…" and "Remove LoRA".

Attaching copies the folder the official trainer wrote into the voice's folder and checks it
(``VoiceLibrary.attach_lora``), which reads the whole weights file: that runs on a worker thread
and the result comes back through a signal (queued to the GUI thread), so the window never waits
on the disk. Removing asks first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from app.voices.library import Voice, VoiceLibrary
from ui.dialogs import Dialogs
from ui.errors import report


class LoRARow(QWidget):
    """``changed(voice_id)`` after a LoRA was attached or removed."""

    changed = Signal(str)
    _done = Signal(str, str)  # voice id, error message ("" on success): from the worker thread

    def __init__(self, library: VoiceLibrary, dialogs: Dialogs, selected: Callable[[], Voice | None]) -> None:
        super().__init__()
        self.library, self.dialogs, self.selected = library, dialogs, selected
        self.badge = QLabel()
        self.badge.setObjectName("hint")
        # a long status wraps, never widening the voice panel (the window fits 800 px)
        self.badge.setWordWrap(True)
        self.badge.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.attach_button = QPushButton()
        self.remove_button = QPushButton()
        self.worker: threading.Thread | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.badge, 1)
        row.addWidget(self.attach_button)
        row.addWidget(self.remove_button)
        self.attach_button.clicked.connect(self.attach)
        self.remove_button.clicked.connect(self.remove)
        self._done.connect(self._finished)
        self.retranslate()

    def retranslate(self) -> None:
        self.attach_button.setText(self.tr("Attach LoRA…"))
        self.attach_button.setToolTip(
            self.tr(
                "Speak this voice with a LoRA fine-tuned on its speaker: choose the folder the trainer wrote."
            )
        )
        self.remove_button.setText(self.tr("Remove LoRA"))
        self.show_voice(self.selected())

    def show_voice(self, voice: Voice | None) -> None:
        busy = self.worker is not None
        if busy:
            self.badge.setText(self.tr("Checking the LoRA…"))
        elif voice is not None and voice.lora:
            self.badge.setText(self.tr("LoRA: {0}").format(voice.lora))
        else:
            self.badge.setText(self.tr("No LoRA: the recording alone sets the voice."))
        self.attach_button.setEnabled(voice is not None and not busy)
        self.remove_button.setEnabled(voice is not None and bool(voice.lora) and not busy)

    def attach(self) -> None:
        voice = self.selected()
        if voice is None or self.worker is not None:
            return
        folder = self.dialogs.pick_folder(
            self, self.tr("Choose the LoRA folder (lora_weights and lora_config.json)")
        )
        if folder is None:
            return
        self.worker = threading.Thread(target=self._work, args=(voice, Path(folder)), daemon=True)
        self.worker.start()
        self.show_voice(voice)

    def _work(self, voice: Voice, folder: Path) -> None:
        try:
            self.library.attach_lora(voice, folder)
            self._done.emit(voice.id, "")
        except Exception as exc:  # noqa: BLE001 - one line for the user, traceback to the log
            self._done.emit(voice.id, report(exc, "attaching a LoRA"))

    def _finished(self, voice_id: str, message: str) -> None:
        if self.worker is not None:
            self.worker.join()
        self.worker = None
        if message:
            self.dialogs.error(self, message)
        else:
            self.changed.emit(voice_id)
        self.show_voice(self.selected())

    def remove(self) -> None:
        voice = self.selected()
        if voice is None or not voice.lora or self.worker is not None:
            return
        question = self.tr("Remove the LoRA “{0}” from the voice “{1}”? Its copy in the library is deleted.")
        if not self.dialogs.confirm(self, question.format(voice.lora, voice.name)):
            return
        try:
            self.library.remove_lora(voice)
        except Exception as exc:  # noqa: BLE001
            self.dialogs.error(self, report(exc, "removing a LoRA"))
            return
        self.changed.emit(voice.id)
        self.show_voice(self.selected())
