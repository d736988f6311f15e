"""The script: text, default voice, generation settings, pronunciation, and the segment list."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from ui.views.generation_form import GenerationForm
from ui.views.segment_table import SegmentTable

EDIT_SETTLE_MS = 300


class ScriptEditor(QWidget):
    """Emits ``scriptChanged`` once typing settles; the window re-segments and autosaves then."""

    scriptChanged = Signal()
    settingsChanged = Signal()
    pronunciationClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.voice = QComboBox()
        self.voice.setMinimumWidth(160)
        self.pronunciation = QPushButton(
            self.style().standardIcon(QStyle.StandardPixmap.SP_FileDialogDetailedView), ""
        )
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("scriptText")
        font = QFont(self.editor.font())
        font.setPointSizeF(font.pointSizeF() + 1.5)
        self.editor.setFont(font)
        self.settings = GenerationForm(compact=True)
        self.table = SegmentTable()
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)

        top = QHBoxLayout()
        self.voice_label = QLabel()
        top.addWidget(self.voice_label)
        top.addWidget(self.voice)
        top.addStretch(1)
        top.addWidget(self.pronunciation)

        self.settings_box = QGroupBox()
        box_layout = QVBoxLayout(self.settings_box)
        box_layout.addWidget(self.settings)

        upper = QWidget()
        text_col = QVBoxLayout(upper)
        text_col.setContentsMargins(0, 0, 0, 0)
        text_col.addLayout(top)
        text_col.addWidget(self.editor, 1)
        text_col.addWidget(self.hint)
        text_col.addWidget(self.settings_box)

        self.segments_box = QGroupBox()
        seg_layout = QVBoxLayout(self.segments_box)
        seg_layout.addWidget(self.table)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(upper)
        splitter.addWidget(self.segments_box)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(EDIT_SETTLE_MS)
        self._settle.timeout.connect(self.scriptChanged)
        self.editor.textChanged.connect(self._settle.start)
        self.voice.currentIndexChanged.connect(lambda _i: self.settingsChanged.emit())
        self.settings.changed.connect(self.settingsChanged)
        self.pronunciation.clicked.connect(self.pronunciationClicked)
        self.retranslate()

    def retranslate(self) -> None:
        self.voice_label.setText(self.tr("Default voice:"))
        self.pronunciation.setText(self.tr("Pronunciation…"))
        self.editor.setPlaceholderText(
            self.tr(
                "Type or paste your script here. Start a line with [Voice name] to have another voice "
                "speak it, e.g.\n[Anna] Hello there!"
            )
        )
        self.hint.setText(
            self.tr("Sentences become segments. Tag a line with [Voice] for dialogue; Ctrl+Enter speaks.")
        )
        self.settings_box.setTitle(self.tr("Script settings"))
        self.segments_box.setTitle(self.tr("Segments"))
        self.table.retranslate()

    # --- content ----------------------------------------------------------------------------
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)

    def flush(self) -> None:
        """Deliver a pending ``scriptChanged`` now (before speaking or closing)."""
        if self._settle.isActive():
            self._settle.stop()
            self.scriptChanged.emit()

    def set_voices(self, names: list[str], current: str | None) -> None:
        self.voice.blockSignals(True)
        self.voice.clear()
        self.voice.addItem(self.tr("(no voice: the model's own)"), None)
        for name in names:
            self.voice.addItem(name, name)
        index = self.voice.findData(current) if current else 0
        self.voice.setCurrentIndex(max(0, index))
        self.voice.blockSignals(False)

    def default_voice(self) -> str | None:
        return self.voice.currentData()
