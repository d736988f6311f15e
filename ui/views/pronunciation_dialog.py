"""Edit the script's pronunciation list: find → replace rules, tried out live on a sample."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import VoxDeskError
from app.text.pronunciation import PronunciationList, Rule
from ui.dialogs import OK_CANCEL

_CHECK_FLAGS = Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_CHECKS = ("regex", "case_sensitive", "whole_word", "enabled")


class PronunciationDialog(QDialog):
    """A table of rules; ``rules()`` returns them when the dialog is accepted."""

    def __init__(self, rules: list[Rule], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Pronunciation"))
        self.resize(720, 420)
        self.table = QTableWidget(0, 6)
        self.table.setHorizontalHeaderLabels(
            [
                self.tr("Find"),
                self.tr("Say as"),
                self.tr("Regex"),
                self.tr("Match case"),
                self.tr("Whole word"),
                self.tr("On"),
            ]
        )
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        add = QPushButton(self.tr("Add rule"))
        remove = QPushButton(self.tr("Remove rule"))
        add.clicked.connect(lambda: self._add(Rule(find="")))
        remove.clicked.connect(self._remove)
        self.sample = QLineEdit()
        self.sample.setPlaceholderText(self.tr("Type a sentence to try the rules on"))
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("hint")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.sample)
        layout.addWidget(self.preview)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        # Each row's items, kept here so cells are never looked up with item() (PySide6 6.12 drops
        # a reference to None whenever item() finds no item; see segment_table.py).
        self._cells: list[list[QTableWidgetItem]] = []
        for rule in rules:
            self._add(rule)
        self.table.itemChanged.connect(self._refresh)
        self.sample.textChanged.connect(self._refresh)

    def _add(self, rule: Rule) -> None:
        self.table.blockSignals(True)  # the row is complete only at the end
        row = self.table.rowCount()
        self.table.insertRow(row)
        cells = [QTableWidgetItem(rule.find), QTableWidgetItem(rule.replace)]
        for name in _CHECKS:
            item = QTableWidgetItem()
            item.setFlags(_CHECK_FLAGS)
            item.setCheckState(Qt.CheckState.Checked if getattr(rule, name) else Qt.CheckState.Unchecked)
            cells.append(item)
        for col, item in enumerate(cells):
            self.table.setItem(row, col, item)
        self._cells.append(cells)
        self.table.blockSignals(False)
        self._refresh()

    def _remove(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)
            del self._cells[row]
        self._refresh()

    def rules(self) -> list[Rule]:
        out = []
        for cells in self._cells:
            find, replace = cells[0].text(), cells[1].text()
            flags = {
                name: cells[col].checkState() == Qt.CheckState.Checked
                for col, name in enumerate(_CHECKS, start=2)
            }
            if find:
                out.append(Rule(find=find, replace=replace, **flags))
        return out

    def _refresh(self) -> None:
        try:
            rules = PronunciationList(self.rules())
            rules.validate()
            self.preview.setText(rules.apply(self.sample.text()))
            self.error.setText("")
        except VoxDeskError as err:
            self.error.setText(str(err))

    def accept(self) -> None:
        try:
            PronunciationList(self.rules()).validate()
        except VoxDeskError as err:
            self.error.setText(str(err))
            return
        super().accept()
