"""The script: text, default voice, generation settings, pronunciation, and the segment list."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui.views.failure_bar import FailureBar, fix_for
from ui.views.generation_form import GenerationForm
from ui.views.pacing import PauseForm, RateBox
from ui.views.segment_table import SegmentTable
from ui.views.tag_checker import (
    TagHighlighter,
    bad_pauses,
    cast_tags,
    emotion_tags,
    unknown_tags,
)

EDIT_SETTLE_MS = 300


class ScriptEditor(QWidget):
    """Emits ``scriptChanged`` once typing settles; the window re-segments and autosaves then."""

    scriptChanged = Signal()
    settingsChanged = Signal()
    pronunciationClicked = Signal()
    pickVoiceForTag = Signal(str)  # quick fix for an unknown [Name]: choose an existing voice
    removeCastForTag = Signal(str)  # the [Name] is spoken by its own name's voice again
    createVoiceForTag = Signal(str)  # quick fix: import a recording as a voice of that name

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.voice = QComboBox()
        self.voice.setMinimumWidth(120)
        self.pronunciation = QPushButton(
            self.style().standardIcon(QStyle.StandardPixmap.SP_FileDialogDetailedView), ""
        )
        self.normalize = QCheckBox()
        self.normalize.setChecked(True)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("scriptText")
        self.editor.setTabChangesFocus(True)  # the model reads a tab as a space: let Tab leave the editor
        font = QFont(self.editor.font())
        font.setPointSizeF(font.pointSizeF() + 1.5)
        self.editor.setFont(font)
        self.tags = TagHighlighter(self.editor.document())
        # Which fix a failed row gets ("trim", "pick_voice", "regenerate"); the window sets it.
        self.fix_for: Callable[[int, str], str] = lambda _row, message: fix_for(message)
        self._voice_names: list[str] = []
        self._cast: dict[str, str] = {}  # the project's cast: [Character] -> voice
        self._controls: frozenset[str] | None = None  # the loaded family's (None: no model yet)
        self.tag_warning = QLabel()
        self.tag_warning.setObjectName("tagWarning")
        self.tag_warning.setWordWrap(True)
        self.tag_warning.setTextFormat(Qt.TextFormat.RichText)
        self.tag_warning.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.tag_warning.linkActivated.connect(self._tag_link)
        self.tag_warning.hide()
        self.settings = GenerationForm(compact=True, seed=True)
        self.rate_label = QLabel()
        self.rate = RateBox()  # the script's speaking rate (a voice's or a line's own wins)
        self.rate_label.setBuddy(self.rate)
        self.pauses = PauseForm()
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
        box_layout.setContentsMargins(6, 6, 6, 6)  # narrow margins: the window fits 800 px
        box_layout.addWidget(self.settings)
        pacing = QHBoxLayout()  # a script setting: here, not in the row above the text
        pacing.addWidget(self.normalize)
        pacing.addSpacing(12)
        pacing.addWidget(self.rate_label)
        pacing.addWidget(self.rate)
        pacing.addStretch(1)
        box_layout.addLayout(pacing)
        box_layout.addWidget(self.pauses)

        upper = QWidget()
        text_col = QVBoxLayout(upper)
        text_col.setContentsMargins(0, 0, 0, 0)
        text_col.addLayout(top)
        text_col.addWidget(self.editor, 1)
        text_col.addWidget(self.tag_warning)
        text_col.addWidget(self.hint)
        text_col.addWidget(self.settings_box)

        self.segments_box = QGroupBox()
        seg_layout = QVBoxLayout(self.segments_box)
        seg_layout.setContentsMargins(6, 6, 6, 6)
        seg_layout.addWidget(self.table)
        self.failure = FailureBar()
        seg_layout.addWidget(self.failure)
        table = self.table
        # The table's own actions (its context menu offers the same ones, by the same names).
        self.play_row = self._action_button(table.play_action)
        self.again_row = self._action_button(table.regenerate_action)
        self.new_take_row = self._action_button(table.new_take_action)
        self.settings_row = self._action_button(table.settings_action)
        row_buttons = QHBoxLayout()
        for button in (self.play_row, self.again_row, self.new_take_row, self.settings_row):
            row_buttons.addWidget(button)
        row_buttons.addStretch(1)
        seg_layout.addLayout(row_buttons)
        table.itemSelectionChanged.connect(self.update_failure)
        self.failure.regenerateClicked.connect(lambda r: table.regenerateRequested.emit(r, False))
        self.failure.detailsClicked.connect(table.detailsRequested)

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
        self.editor.textChanged.connect(self._check_tags)
        self.voice.currentIndexChanged.connect(lambda _i: self.settingsChanged.emit())
        self.settings.changed.connect(self.settingsChanged)
        self.pronunciation.clicked.connect(self.pronunciationClicked)
        self.normalize.toggled.connect(lambda _on: self.settingsChanged.emit())
        self.rate.valueChanged.connect(lambda _v: self.settingsChanged.emit())
        self.pauses.changed.connect(self.settingsChanged)
        self.retranslate()

    def retranslate(self) -> None:
        self.voice_label.setText(self.tr("Default voice:"))
        self.pronunciation.setText(self.tr("Pronunciation…"))
        self.normalize.setText(self.tr("Read numbers as words"))
        self.normalize.setToolTip(
            self.tr(
                "Numbers, dates, times, money, units and symbols are spoken as words "
                "(after the pronunciation list), as the official VoxCPM normalizer reads them"
            )
        )
        self._show_help()
        self.rate_label.setText(self.tr("Speaking rate:"))
        self.rate.setToolTip(
            self.tr(
                "How fast the script is spoken, 0.5× to 2.0×, pitch unchanged. A voice's own rate "
                "(voice panel) and a line's (Segment settings…) win over it."
            )
        )
        self.pauses.retranslate()
        self.settings_box.setTitle(self.tr("Script settings"))
        self.segments_box.setTitle(self.tr("Segments"))
        self.table.retranslate()
        self.failure.retranslate()

    def _show_help(self) -> None:
        """The placeholder and the hint under the editor; the emotion tag only for a model that
        speaks emotions."""
        placeholder = self.tr(
            "Type or paste your script here. Start a line with [Voice name] to have another voice "
            "speak it, e.g.\n[Anna] Hello there!\n"
            "[pause 800ms] or [pause 1.5s] adds a pause, a blank line a paragraph pause, "
            "and a line that starts with # (a heading) starts a chapter."
        )
        hint = self.tr(
            "Sentences become segments. Tag a line with [Voice] for dialogue, [pause 1s] for a pause, "
            "# for a chapter; Ctrl+Enter speaks."
        )
        if self._controls is not None and "emotion" in self._controls:
            placeholder += "\n" + self.tr(
                "[Anna|angry] or [Anna|happy 0.5, surprised 0.3] gives a line an emotion; "
                '[Anna|@Bob] takes it from Bob\'s recording, [Anna|"a quiet whisper"] from a description, '
                "[|sad] keeps the default voice."
            )
            hint += " " + self.tr("[Voice|angry] gives a line an emotion.")
        self.editor.setPlaceholderText(placeholder)
        self.hint.setText(hint)

    def set_controls(self, controls: frozenset[str] | None) -> None:
        """The loaded family's controls: its settings' fields, the help and the emotion hints."""
        self._controls = controls
        self.settings.set_controls(controls)
        self._show_help()
        self._check_tags()

    @staticmethod
    def _action_button(action: QAction) -> QToolButton:
        button = QToolButton()
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setMinimumHeight(26)
        return button

    def update_failure(self) -> None:
        """Explain the selected row's failure, else the first failed row's (else hide)."""
        rows = self.table.rows()
        current = self.table.currentRow() if self.table.selectionModel().hasSelection() else -1
        failed = [i for i, r in enumerate(rows) if r.status == "failed"]
        row = current if current in failed else (failed[0] if failed else -1)
        if row < 0:
            self.failure.clear()
        else:
            self.failure.show_failure(row, rows[row].message, self.fix_for(row, rows[row].message))

    # --- content ----------------------------------------------------------------------------
    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self._check_tags()

    def flush(self) -> None:
        """Deliver a pending ``scriptChanged`` now (before speaking or closing)."""
        if self._settle.isActive():
            self._settle.stop()
            self.scriptChanged.emit()

    # --- [Voice] tags ----------------------------------------------------------------------
    def unknown_tags(self) -> list[str]:
        return unknown_tags(self.text(), self.tags.known)

    def _check_tags(self) -> None:
        """Runs on every keystroke: the hint under the editor names the unknown tags."""
        from html import escape

        unknown = self.unknown_tags()
        known_voices = {n.casefold() for n in self._voice_names}
        cast = [(c, v) for c, v in cast_tags(self.text(), self._cast) if v.casefold() in known_voices]
        broken = bad_pauses(self.text())
        emotions = self._emotion_hints()
        if not unknown and not cast and not broken and not emotions:
            self.tag_warning.hide()
            return
        lines = [
            '<span style="color:#c81e1e">'
            + escape(self.tr("{0} is not a pause: write [pause 800ms] or [pause 1.5s].").format(tag))
            + "</span>"
            for tag in broken[:3]
        ]
        lines += emotions
        change, remove = escape(self.tr("change")), escape(self.tr("remove"))
        for character, voice in cast[:5]:
            q = escape(character, quote=True)
            lines.append(
                escape(self.tr("[{0}] → {1}").format(character, voice))
                + f' <a href="pick:{q}">{change}</a> · <a href="uncast:{q}">{remove}</a>'
            )
        pick = escape(self.tr("pick a voice"))
        for name in unknown[:3]:
            q = escape(name, quote=True)
            create = escape(self.tr("create “{0}”").format(name))
            lines.append(
                '<span style="color:#c81e1e">'
                + escape(self.tr("No voice is named [{0}]:").format(name))
                + f' <a href="pick:{q}">{pick}</a> · <a href="create:{q}">{create}</a></span>'
            )
        self.tag_warning.setText("<br>".join(lines))
        self.tag_warning.show()

    def _emotion_hints(self) -> list[str]:
        """Lines for the hint about emotion tags: those that cannot be read, and those the loaded
        model cannot honour (a model without emotions ignores them; a description needs QwenEmotion;
        a recording needs a voice of that name)."""
        from html import escape

        bad, tags = emotion_tags(self.text())
        problems = [self.tr("The emotion in {0} cannot be read: {1}").format(*b) for b in bad[:3]]
        controls = self._controls
        ignored = ""
        if controls is not None and "emotion" not in controls:
            if tags:
                ignored = self.tr(
                    "IndexTTS-2.5 speaks emotions; this model ignores tags such as {0}."
                ).format(tags[0][0])
            tags = []
        described = [tag for tag, spec in tags if spec.kind == "text"]
        if described and controls is not None and "emotion_text" not in controls:
            problems.append(
                self.tr(
                    "{0} describes an emotion in words, which needs the QwenEmotion model this folder lacks: "
                    "install it from the Models page, or name the emotion (angry 0.6)."
                ).format(described[0])
            )
        for tag, spec in tags:
            if spec.kind == "clip" and not self.tags.is_known(spec.voice):
                problems.append(
                    self.tr(
                        "No voice is named [{0}] for {1}: import one by that name or change the tag."
                    ).format(spec.voice, tag)
                )
        lines = [f'<span style="color:#c81e1e">{escape(line)}</span>' for line in problems]
        return lines + ([escape(ignored)] if ignored else [])

    def _tag_link(self, link: str) -> None:
        kind, _, name = link.partition(":")
        signals = {"pick": self.pickVoiceForTag, "uncast": self.removeCastForTag}
        signals.get(kind, self.createVoiceForTag).emit(name)

    def set_cast(self, cast: dict[str, str]) -> None:
        """The project's cast: its characters count as known while their voice exists."""
        self._cast = dict(cast)
        self._update_known()

    def _update_known(self) -> None:
        voices = {n.casefold() for n in self._voice_names}
        characters = [c for c, v in self._cast.items() if v.casefold() in voices]
        self.tags.set_known(self._voice_names + characters)
        self._check_tags()

    def set_voices(self, names: list[str], current: str | None) -> None:
        self._voice_names = list(names)
        self._update_known()
        self.voice.blockSignals(True)
        self.voice.clear()
        self.voice.addItem(self.tr("(no voice: the model's own)"), "")  # not None: see segment_table.py
        for name in names:
            self.voice.addItem(name, name)
        index = self.voice.findData(current) if current else 0
        self.voice.setCurrentIndex(max(0, index))
        self.voice.blockSignals(False)

    def set_normalize(self, on: bool) -> None:
        """Show the script's normalization switch without reporting it as a change."""
        self.normalize.blockSignals(True)
        self.normalize.setChecked(on)
        self.normalize.blockSignals(False)

    def set_pacing(self, rate: float, gaps: dict[str, float]) -> None:
        """The script's rate and pause lengths, without announcing a change."""
        self.rate.blockSignals(True)
        self.rate.setValue(rate)
        self.rate.blockSignals(False)
        self.pauses.set_values(gaps)

    def default_voice(self) -> str | None:
        return (self.voice.currentData() if self.voice.count() else "") or None
