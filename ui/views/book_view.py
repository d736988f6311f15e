"""The Book view: a book project's cover, title and author, its chapters with their state and
progress, the book's ETA from the measured speed, Start / Pause / Resume and Export….

A window of its own (File › Open book… / Import book…), so the script window stays as it is;
closing it does not stop the book, which goes on while the app runs.
It only shows what :class:`ui.book_session.BookSession` reports and asks it to act; nothing here
waits for the engine or the disk.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.longform.project import ChapterState
from app.longform.runner import BookProgress, format_eta
from ui.book_session import BookSession

COVER_SIZE = 120


class BookView(QWidget):
    def __init__(self, session: BookSession, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.session = session
        self.progress: BookProgress | None = None
        self._state_items: list[QTableWidgetItem] = []  # no per-cell item lookups (test_ui_refcount)
        self.setObjectName("bookView")
        self.resize(820, 600)
        self.cover = QLabel()
        self.cover.setFixedSize(COVER_SIZE, COVER_SIZE)
        self.cover.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.cover.setFrameShape(QLabel.Shape.StyledPanel)
        self.title = QLabel()
        self.title.setStyleSheet("font-size: 16pt; font-weight: 600;")
        self.title.setWordWrap(True)
        self.author = QLabel()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Fixed)
        self.table.setColumnWidth(2, 180)
        self.bar = QProgressBar()
        self.eta = QLabel()
        self.start_button = QPushButton()
        self.pause_button = QPushButton()
        self.export_button = QPushButton()
        self.start_button.clicked.connect(session.start)
        self.pause_button.clicked.connect(session.pause)
        self._build()
        session.opened.connect(self.show_project)
        session.progressed.connect(self.show_progress)
        session.runningChanged.connect(lambda _running: self._update_buttons())
        session.engineChanged.connect(lambda _ready: self._update_buttons())
        self.retranslate()

    def _build(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.cover, 0, Qt.AlignmentFlag.AlignTop)
        words = QVBoxLayout()
        for w in (self.title, self.author, self.summary):
            words.addWidget(w)
        words.addStretch(1)
        top.addLayout(words, 1)
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.eta)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.pause_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addLayout(buttons)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Book"))
        self.table.setHorizontalHeaderLabels([self.tr("Chapter"), self.tr("State"), self.tr("Progress")])
        self.pause_button.setText(self.tr("Pause"))
        self.export_button.setText(self.tr("Export…"))
        if self.session.project is None:
            self.title.setText(self.tr("No book open"))
            self.summary.setText(self.tr("Open a book project, or import an EPUB, TXT or Markdown file."))
        self._update_buttons()

    # ---- what the session reports --------------------------------------------------------
    def show_project(self, project) -> None:
        self.title.setText(project.title)
        self.author.setText(project.author)
        self.author.setVisible(bool(project.author))
        pixmap = QPixmap()
        cover = project.cover
        if cover and pixmap.loadFromData(cover):
            self.cover.setPixmap(pixmap.scaled(COVER_SIZE, COVER_SIZE, Qt.AspectRatioMode.KeepAspectRatio,
                                               Qt.TransformationMode.SmoothTransformation))  # fmt: skip
        else:
            self.cover.setPixmap(QPixmap())
            self.cover.setText(self.tr("No cover"))
        voice = project.settings.voice or self.tr("the model's own voice")
        self.summary.setText(
            self.tr("{0} chapters, {1} characters · voice: {2} · seed {3}").format(
                len(project.chapters), f"{project.total_chars:,}", voice, project.settings.seed
            )
        )
        self.table.setRowCount(len(project.chapters))
        self._state_items = []
        for row, info in enumerate(project.chapters):
            self.table.setItem(row, 0, QTableWidgetItem(info.title))
            self._state_items.append(QTableWidgetItem())
            self.table.setItem(row, 1, self._state_items[-1])
            bar = QProgressBar()
            bar.setRange(0, max(1, info.segments))
            bar.setFormat("%v / %m")
            self.table.setCellWidget(row, 2, bar)

    def show_progress(self, progress: BookProgress) -> None:
        self.progress = progress
        names = {
            ChapterState.PENDING: self.tr("Pending"),
            ChapterState.GENERATING: self.tr("Generating"),
            ChapterState.DONE: self.tr("Done"),
            ChapterState.FAILED: self.tr("Failed"),
        }
        for row, chapter in enumerate(progress.chapters[: len(self._state_items)]):
            item = self._state_items[row]
            item.setText(names[chapter.state])
            item.setToolTip(chapter.message)
            bar = self.table.cellWidget(row, 2)
            if isinstance(bar, QProgressBar):
                bar.setValue(chapter.done)
        self.bar.setRange(0, 1000)
        self.bar.setValue(int(1000 * progress.fraction))
        self.bar.setFormat(f"{100 * progress.fraction:.1f} %")
        if progress.fraction >= 1.0:
            self.eta.setText(self.tr("Finished"))
        elif progress.running and progress.eta_s is None:
            self.eta.setText(self.tr("Measuring speed…"))
        elif progress.running:
            self.eta.setText(self.tr("{0} left at {1:.0f} characters/s").format(
                format_eta(progress.eta_s), progress.chars_per_s))  # fmt: skip
        else:
            self.eta.setText(self.tr("Paused") if progress.done_chars else "")
        self._update_buttons()

    def _update_buttons(self) -> None:
        s = self.session
        started = self.progress is not None and self.progress.done_chars > 0
        self.start_button.setText(self.tr("Resume") if started else self.tr("Start"))
        self.start_button.setEnabled(s.can_generate and not s.running)
        self.pause_button.setEnabled(s.running)
        done = s.project is not None and self.progress is not None and self.progress.fraction >= 1.0
        self.export_button.setEnabled(done and not s.running)
        if s.project is not None and not s.can_generate and not done:
            self.start_button.setToolTip(self.tr("Load a model first (Tools › Models…)."))
        else:
            self.start_button.setToolTip("")
