"""The full text of a model's licence agreement, what it means in one paragraph, and an explicit
"I agree" (Cancel is the default button): shown before a download or before a model folder that
carries the agreement is used. Opened window-modal with ``open()``: the GUI thread never waits."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.models.licenses import License, LicenseText

# The summaries of the catalogue's agreements (app/models/licenses.py is Qt-free), marked for
# lupdate; tests/test_ui_model_licence.py checks that each one is here and translated.
SUMMARIES = (
    QT_TRANSLATE_NOOP(
        "LicenseDialog",
        "What it means for you: bilibili grants a worldwide, royalty-free, non-exclusive licence to use "
        "the model (2.1). Above 100 million monthly active users or RMB 1 billion annual revenue you need "
        "a separate licence from bilibili (2.2). Every copy must keep the copyright notices and this "
        "agreement: the model folder keeps its LICENSE file (3.4 b). The model and what it speaks may "
        "not be used to improve any other AI model, except IndexTTS itself, its derivatives or "
        "non-commercial models (3.4 c). No high-risk use (medical diagnosis, autonomous driving, "
        "military, critical infrastructure, biometric surveillance, automated decisions about people, "
        "4.2), and what you make must be lawful (4.1). bilibili may revoke the licence if you breach "
        "it (5.1). Chinese law applies, disputes go to arbitration in Shanghai (6); the Chinese text "
        "prevails (9).",
    ),
)


class LicenseDialog(QDialog):
    """Accepted only by its "I agree" button; rejected by Cancel (the default), Esc or closing."""

    def __init__(self, title: str, terms: License, text: LicenseText, accepted_on: str | None = None,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle(self.tr("Licence of {0}").format(title))
        self.resize(760, 620)
        self.heading = QLabel(
            self.tr("{0} comes under the {1}. Read it before VoxDesk downloads or uses the model; "
                    "your answer is recorded.").format(title, terms.name)  # fmt: skip
        )
        self.heading.setWordWrap(True)
        font = QFont(self.heading.font())
        font.setBold(True)
        self.heading.setFont(font)
        self.changed = QLabel(
            self.tr("Its text changed since you accepted it on {0}: read it again.").format(accepted_on)
        )
        self.changed.setWordWrap(True)
        self.changed.setVisible(accepted_on is not None)
        self.summary = QLabel(QCoreApplication.translate("LicenseDialog", terms.summary))
        self.summary.setWordWrap(True)
        self.text = QPlainTextEdit(text.text)
        self.text.setReadOnly(True)
        self.origin = QLabel(
            self.tr("The full text of {0} as the model's publisher ships it (SHA-256 {1}…).").format(
                text.name, text.sha256[:16]
            )
        )
        self.origin.setObjectName("hint")
        self.agree_button = QPushButton(self.tr("I agree"))
        self.agree_button.setAutoDefault(False)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setDefault(True)
        self.agree_button.clicked.connect(self.accept)
        self.cancel_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.agree_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.changed)
        layout.addWidget(self.summary)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.origin)
        layout.addLayout(buttons)
        self.cancel_button.setFocus()
