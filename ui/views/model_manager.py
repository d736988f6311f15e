"""Choose the speech model: download one (Hugging Face, a mirror, or ModelScope — the user picks)
with progress, resume and cancel, or point at a folder that already holds one.

Nothing here touches the network until the user presses Download (or Read licence). The download
runs on a plain worker thread; its progress comes back through a queued signal. A licence that is
not permissive is accepted first (ui/views/license_gate.py); for an agreement with texts of its own
(IndexTTS-2.5) Download stays disabled until then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.asr import catalog as asr_catalog
from app.models import download as dl
from app.models import licenses
from app.models.catalog import model_for_family
from app.paths import models_dir
from ui.dialogs import Dialogs
from ui.errors import report
from ui.settings import Settings
from ui.views.license_dialog import LicenseDialog
from ui.views.license_gate import LicenseGate, Runner, Texts


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n < 1e9 else f"{n / 1e9:,.2f} GB"


# The catalogue's descriptions (app/models/download.py is Qt-free), marked here for lupdate so the
# list reads in the user's language; tests/test_ui_models.py checks that none is missing.
MODEL_TITLES = (
    QT_TRANSLATE_NOOP("ModelManager", "VoxCPM2 (2B, 30 languages, 48 kHz)"),
    QT_TRANSLATE_NOOP("ModelManager", "VoxCPM1.5 (44.1 kHz)"),
    QT_TRANSLATE_NOOP("ModelManager", "VoxCPM-0.5B (16 kHz)"),
    QT_TRANSLATE_NOOP("ModelManager", "Fun-CosyVoice3 (0.5B, 9 languages, 18+ dialects, 24 kHz)"),
    QT_TRANSLATE_NOOP("ModelManager", "CosyVoice2 (0.5B, zh/en/ja/ko and dialects, 24 kHz)"),
    QT_TRANSLATE_NOOP("ModelManager", "IndexTTS-2.5 (zh/en/ja/es/ar, emotion control, 22 kHz)"),
)
EXTRA_TITLES = (QT_TRANSLATE_NOOP("ModelManager", "QwenEmotion (emotion from a sentence)"),)
RECOGNIZER_TITLE = QT_TRANSLATE_NOOP(
    "ModelManager", "SenseVoice Small (Chinese, English, Japanese, Korean, Cantonese)"
)


class _Worker(QObject):
    """Runs one download on a Python thread; every signal crosses to the GUI thread queued."""

    progress = Signal(object)  # dl.Progress
    done = Signal(object)  # the job's result: a folder, or a licence's texts
    failed = Signal(str, bool)  # message, cancelled

    def __init__(self, job: Callable[[Callable[[dl.Progress], None], threading.Event], object]) -> None:
        super().__init__()
        self.cancel = threading.Event()
        self._job = job  # job(progress, cancel) -> result
        self.thread = threading.Thread(target=self._run, name="voxdesk-download", daemon=True)

    def _run(self) -> None:
        try:
            result = self._job(self.progress.emit, self.cancel)
        except dl.DownloadCancelled as err:
            self.failed.emit(str(err), True)
        except Exception as exc:  # noqa: BLE001 - shown as one line, traceback to the log
            self.failed.emit(report(exc, "downloading a model"), False)
        else:
            self.done.emit(result)


def _free_space(folder: Path) -> str:
    import shutil

    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return QCoreApplication.translate("ModelManager", "unknown")
    return QCoreApplication.translate("ModelManager", "{0} free on this drive").format(_mb(free))


MIN_WIDTH = 620  # the dialog's; _fit_list widens it to the longest model line


class ModelManager(QDialog):
    """Accepted with :meth:`chosen_folder` set to a validated model folder.

    Also installs the optional speech recognizer (same sources, progress and resume); emits
    ``recognizerChanged`` when one is downloaded or chosen."""

    recognizerChanged = Signal()

    def __init__(
        self,
        settings: Settings,
        dialogs: Dialogs,
        first_run: bool = False,
        parent: QWidget | None = None,
        loaded: tuple[Path, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.loaded = loaded  # (folder, name) of the model the window runs now
        self.settings = settings
        self.dialogs = dialogs
        self._chosen: Path | None = None
        self._worker: _Worker | None = None
        self.setWindowTitle(self.tr("Models"))
        self.setMinimumWidth(MIN_WIDTH)
        icon = self.style().standardIcon

        self.intro = QLabel()
        self.intro.setWordWrap(True)
        if first_run:
            self.intro.setText(
                self.tr(
                    "VoxDesk needs a speech model before it can speak. Download one below (only this "
                    "download uses the internet), or choose a folder that already holds a model."
                )
            )
        self.intro.setVisible(first_run)
        self.models = QListWidget()
        self.models.setMinimumHeight(110)
        for model in dl.KNOWN_MODELS:
            item = QListWidgetItem(icon(QStyle.StandardPixmap.SP_ComputerIcon), "")
            item.setData(Qt.ItemDataRole.UserRole, model.key)
            self.models.addItem(item)
        self.source = QComboBox()
        self.source.addItem(self.tr("Hugging Face (huggingface.co)"), "hf")
        self.source.addItem(self.tr("Hugging Face mirror"), "mirror")
        self.source.addItem(self.tr("ModelScope (modelscope.cn)"), "ms")
        self.mirror = QLineEdit(dl.HF_MIRROR_DEFAULT)
        self.mirror.setEnabled(False)
        self.dest = QLabel(str(models_dir()))
        self.dest.setObjectName("hint")
        self.space = QLabel()  # free disk space where models are saved
        self.space.setObjectName("hint")
        self.license = QLabel()  # the selected model's licence, with its address
        self.license.setObjectName("hint")
        self.license.setOpenExternalLinks(True)
        self.license.setWordWrap(True)
        self.license_button = QPushButton(self.tr("Read licence…"))  # an agreement with its own text
        self.extra_state = QLabel()  # the selected model's optional part (IndexTTS: QwenEmotion)
        self.extra_state.setWordWrap(True)
        self.extra_button = QPushButton(icon(QStyle.StandardPixmap.SP_ArrowDown), "")
        self.progress = QProgressBar()  # shown only while a download runs, with its figures as text
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p %")
        self.progress.hide()
        self._sizes: dict[str, int] = {}  # download size in bytes, once a server has said it
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.download_button = QPushButton(icon(QStyle.StandardPixmap.SP_ArrowDown), self.tr("Download"))
        self.cancel_button = QPushButton(
            icon(QStyle.StandardPixmap.SP_BrowserStop), self.tr("Cancel download")
        )
        self.use_button = QPushButton(
            icon(QStyle.StandardPixmap.SP_DialogApplyButton), self.tr("Use this model")
        )
        self.folder_button = QPushButton(icon(QStyle.StandardPixmap.SP_DirOpenIcon), self.tr("Use a folder…"))
        self.close_button = QPushButton(self.tr("Close"))

        self.asr_box = QGroupBox(self.tr("Speech recognition (optional)"))
        self.asr_intro = QLabel(
            self.tr(
                "Fills in a voice's transcript from its recording (for the closest likeness) and "
                "checks what VoxDesk speaks. {0}, about {1} MB; it runs on this computer."
            ).format(self.tr(asr_catalog.SENSEVOICE_SMALL.title), asr_catalog.SENSEVOICE_SMALL.size_mb)
        )
        self.asr_intro.setWordWrap(True)
        self.asr_state = QLabel()
        self.asr_download_button = QPushButton(
            icon(QStyle.StandardPixmap.SP_ArrowDown), self.tr("Download recognizer")
        )
        self.asr_folder_button = QPushButton(
            icon(QStyle.StandardPixmap.SP_DirOpenIcon), self.tr("Use a recognizer folder…")
        )
        asr_layout = QVBoxLayout(self.asr_box)
        asr_layout.addWidget(self.asr_intro)
        asr_row = QHBoxLayout()
        asr_row.addWidget(self.asr_state, 1)
        asr_row.addWidget(self.asr_download_button)
        asr_row.addWidget(self.asr_folder_button)
        asr_layout.addLayout(asr_row)

        form = QFormLayout()
        form.addRow(self.tr("Download from:"), self.source)
        form.addRow(self.tr("Mirror address:"), self.mirror)
        form.addRow(self.tr("Saved in:"), self.dest)
        form.addRow(self.tr("Free space:"), self.space)
        license_row = QHBoxLayout()
        license_row.addWidget(self.license, 1)
        license_row.addWidget(self.license_button)
        form.addRow(self.tr("Licence:"), license_row)
        extra_row = QHBoxLayout()
        extra_row.addWidget(self.extra_state, 1)
        extra_row.addWidget(self.extra_button)
        self.extra_label = QLabel(self.tr("Optional:"))
        form.addRow(self.extra_label, extra_row)
        buttons = QHBoxLayout()
        for button in (self.download_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (self.folder_button, self.use_button, self.close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        self.loaded_label = QLabel()  # which model the window runs now, wherever its folder is
        self.loaded_label.setWordWrap(True)
        self.loaded_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if loaded is not None:
            self.loaded_label.setText(self.tr("Loaded now: {0} ({1})").format(loaded[1], loaded[0]))
        self.loaded_label.setVisible(loaded is not None)
        layout.addWidget(self.loaded_label)
        layout.addWidget(self.models)
        layout.addLayout(form)
        layout.addWidget(self.asr_box)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self.source.currentIndexChanged.connect(
            lambda _i: self.mirror.setEnabled(self.source.currentData() == "mirror")
        )
        self.models.currentRowChanged.connect(lambda _r: self._refresh())
        self.gate = LicenseGate(self, dialogs, lambda: settings.language, self.status.setText, self._refresh)
        self.download_button.clicked.connect(self.start_download)
        self.license_button.clicked.connect(self.read_license)
        self.extra_button.clicked.connect(self.add_extra)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.use_button.clicked.connect(self._use_selected)
        self.folder_button.clicked.connect(self.choose_folder)
        self.close_button.clicked.connect(self.reject)
        self.asr_download_button.clicked.connect(self.start_recognizer_download)
        self.asr_folder_button.clicked.connect(self.choose_recognizer_folder)
        current = settings.model_dir.name if settings.model_dir else dl.KNOWN_MODELS[0].key
        keys = [m.key for m in dl.KNOWN_MODELS]
        self.models.setCurrentRow(keys.index(current) if current in keys else 0)
        self._refresh()

    # --- state ------------------------------------------------------------------------------
    def selected_model(self) -> dl.KnownModel:
        return dl.KNOWN_MODELS[max(0, self.models.currentRow())]

    def folder_of(self, model: dl.KnownModel) -> Path:
        return models_dir() / model.key

    def chosen_folder(self) -> Path | None:
        return self._chosen

    def is_loaded(self, model: dl.KnownModel) -> bool:
        """Whether this catalog model's folder is the one the window runs now."""
        if self.loaded is None:
            return False
        try:
            return self.folder_of(model).resolve() == Path(self.loaded[0]).resolve()
        except OSError:
            return False

    def _model_state(self, model: dl.KnownModel) -> str:
        folder = self.folder_of(model)
        if self.is_loaded(model):
            return self.tr("loaded ✓")
        if not folder.is_dir() or not any(folder.iterdir()):
            return self.tr("not downloaded")
        if not dl.validate_model_dir(folder):
            return self.tr("installed")
        return self.tr("partly downloaded: Download resumes it")

    def _refresh(self) -> None:
        for row, model in enumerate(dl.KNOWN_MODELS):
            size = self._sizes.get(model.key)
            if size:
                extra = self.tr(" · {0} to download").format(_mb(size))
            else:  # before a server has listed the files: the architecture's weights
                extra = self.tr(" · about {0} to download").format(_mb(model.approx_mb * 10**6))
            item = self.models.item(row)
            loaded = self.is_loaded(model)
            if loaded:
                extra = ""
            item.setText(f"{self.tr(model.title)} — {self._model_state(model)}{extra}")
            font = item.font()
            font.setBold(loaded)
            item.setFont(font)
            icon = (
                QStyle.StandardPixmap.SP_DialogApplyButton
                if loaded
                else QStyle.StandardPixmap.SP_ComputerIcon
            )
            item.setIcon(self.style().standardIcon(icon))
        self._fit_list()
        self.space.setText(_free_space(models_dir()))
        model = self.selected_model()
        terms = model.license
        agreed = licenses.accepted(model.key, terms)
        link = f'<a href="{terms.url}">{terms.name}</a>'
        if terms.texts:
            day = licenses.accepted_on(model.key, terms)
            state = (self.tr("Licence accepted on {0}").format(day) if agreed and day
                     else self.tr("read and accept it before the download"))  # fmt: skip
            link = f"{link} · {state}"
        self.license.setText(link)
        self.license_button.setVisible(bool(terms.texts))
        running = self._worker is not None
        installed = not dl.validate_model_dir(self.folder_of(model))
        self.license_button.setEnabled(not running)
        self.download_button.setEnabled(not running and not installed and (agreed or not terms.texts))
        self._refresh_extra(model, installed, running)
        self.cancel_button.setEnabled(running)
        self.use_button.setEnabled(not running and installed)
        self.folder_button.setEnabled(not running)
        self.models.setEnabled(not running)
        self.source.setEnabled(not running)
        asr_folder = asr_catalog.default_folder()
        asr_problems = asr_catalog.validate_recognizer_dir(asr_folder)
        chosen = self.settings.recognizer_dir
        if chosen is not None:
            self.asr_state.setText(self.tr("Using {0}").format(chosen))
        elif not asr_problems:
            self.asr_state.setText(self.tr("Installed"))
        elif asr_folder.is_dir() and any(asr_folder.iterdir()):
            self.asr_state.setText(self.tr("Partly downloaded or damaged: Download resumes or repairs it"))
        else:
            self.asr_state.setText(self.tr("Not installed"))
        self.asr_download_button.setEnabled(not running and bool(asr_problems))
        self.asr_folder_button.setEnabled(not running)

    @property
    def license_dialog(self) -> LicenseDialog | None:
        """The licence dialog open now, if any."""
        return self.gate.dialog

    def _fit_list(self) -> None:
        """The list as wide as its longest line, up to most of the screen: a model's size, at the
        end of its line, was cut off behind a horizontal scroll bar (CosyVoice, IndexTTS)."""
        models = self.models
        frame = 2 * models.frameWidth() + models.verticalScrollBar().sizeHint().width()
        need = models.sizeHintForColumn(0) + frame
        screen = self.screen().availableGeometry().width() if self.screen() is not None else need + 80
        models.setMinimumWidth(min(need, screen - 80))  # room for the dialog's margins and frame
        # the dialog's own minimum would otherwise win over its layout's, and Qt opens a
        # window at most 2/3 of the screen wide: the list would be cut by the dialog's edge instead
        self.setMinimumWidth(max(MIN_WIDTH, self.layout().totalMinimumSize().width()))

    def _refresh_extra(self, model: dl.KnownModel, installed: bool, running: bool) -> None:
        """The optional part's row: shown for a model that has one, addable once the model is in."""
        extra = model.extras[0] if model.extras else None
        for widget in (self.extra_label, self.extra_state, self.extra_button):
            widget.setVisible(extra is not None)
        if extra is None:
            return
        present = extra.installed_in(self.folder_of(model))
        state = self.tr("installed") if present else self.tr("not installed, about {0}").format(
            _mb(extra.approx_mb * 10**6))
        self.extra_state.setText(f"{self.tr(extra.title)}: {state}")
        self.extra_button.setText(self.tr("Add {0}").format(extra.title.split(" ")[0]))
        self.extra_button.setEnabled(installed and not present and not running)

    def _source(self) -> dl.Source:
        kind = self.source.currentData()
        if kind == "mirror":
            return dl.hf_mirror(self.mirror.text())
        return dl.MODELSCOPE if kind == "ms" else dl.HUGGING_FACE

    def _chosen_source(self) -> dl.Source | None:
        """The chosen download source, or None after saying in the status line why it is unusable
        (e.g. a malformed mirror address)."""
        try:
            return self._source()
        except Exception as exc:  # noqa: BLE001
            self.status.setText(report(exc))
            return None

    # --- actions ----------------------------------------------------------------------------
    def start_download(self) -> None:
        source = self._chosen_source()
        if source is None:
            return
        model, dest = self.selected_model(), self.folder_of(self.selected_model())

        def download() -> None:
            self._start(
                _Worker(lambda progress, cancel: dl.download_model(model, source, dest, progress, cancel)),
                source,
                self._on_done,
            )

        self._after_license(model, source, download)

    def read_license(self) -> None:
        """Fetch the selected model's agreement (only its text files) and show it to accept."""
        source = self._chosen_source()
        if source is None:
            return
        model = self.selected_model()
        self._after_license(model, source, None, always=True)

    def add_extra(self) -> None:
        """Download the selected model's optional part into its installed folder."""
        source = self._chosen_source()
        if source is None:
            return
        model, dest = self.selected_model(), self.folder_of(self.selected_model())
        keys = tuple(e.key for e in model.extras)

        def download() -> None:
            self._start(
                _Worker(lambda progress, cancel: dl.download_model(model, source, dest, progress, cancel,
                                                                   extras=keys, base=False)),  # fmt: skip
                source,
                self._on_extra_done,
            )

        self._after_license(model, source, download)

    def start_recognizer_download(self) -> None:
        """Download the speech recognizer into the models folder (the user pressed the button)."""
        source = self._chosen_source()
        if source is None:
            return
        model = asr_catalog.SENSEVOICE_SMALL
        self.gate.check(
            model.key,
            model.title,
            model.license,
            lambda: self._start(
                _Worker(
                    lambda progress, cancel: asr_catalog.download_recognizer(
                        model, source, None, progress, cancel
                    )
                ),
                source,
                self._on_recognizer_done,
            ),
        )

    def _after_license(self, model: dl.KnownModel, source: dl.Source, then: Callable[[], None] | None,
                       always: bool = False) -> None:  # fmt: skip
        """Run ``then`` once ``model``'s licence is accepted as ``source`` serves its texts now."""
        self.gate.check(model.key, model.key, model.license, then, always=always,
                        fetch=lambda: dl.license_texts(model, source), run=self._fetch_license(source))

    def _fetch_license(self, source: dl.Source) -> Runner:
        """The gate's runner: read a licence's texts on the worker thread, then go on with them."""

        def run(job: Callable[[], Texts], then: Callable[[Texts], None]) -> None:
            def done(texts: Texts) -> None:
                self._worker = None
                self.status.clear()
                self._refresh()
                then(texts)

            self._start(_Worker(lambda _progress, _cancel: job()), source, done)
            self.status.setText(self.tr("Reading the licence from {0}…").format(source.title))

        return run

    def _start(self, worker: _Worker, source: dl.Source, on_done: Callable[[str], None]) -> None:
        worker.progress.connect(self._on_progress)
        worker.done.connect(on_done)
        worker.failed.connect(self._on_failed)
        self._worker = worker
        self.status.setText(self.tr("Connecting to {0}…").format(source.title))
        self._refresh()
        worker.thread.start()

    def cancel_download(self) -> None:
        if self._worker is not None:
            self._worker.cancel.set()
            self.status.setText(self.tr("Cancelling…"))

    def _on_progress(self, p: dl.Progress) -> None:
        self.progress.show()
        if p.total:
            self.progress.setValue(int(1000 * p.done / p.total))
            model = self.selected_model()
            if self._sizes.get(model.key) != p.total:
                self._sizes[model.key] = p.total
                self._refresh()
        left = (p.total - p.done) / p.bytes_per_second if p.bytes_per_second > 0 and p.total else None
        eta = self.tr(", about {0} min left").format(max(1, round(left / 60))) if left else ""
        self.status.setText(
            self.tr("{0} of {1} · {2}/s{3} · {4}").format(
                _mb(p.done), _mb(p.total), _mb(int(p.bytes_per_second)), eta, p.file
            )
        )

    def _on_done(self, folder: str) -> None:
        self._worker = None
        self.progress.setValue(1000)
        self.progress.hide()
        self.status.setText(self.tr("Download complete."))
        self._refresh()
        self._choose(Path(folder))

    def _on_extra_done(self, folder: str) -> None:
        self._worker = None
        self.progress.hide()
        self.status.setText(self.tr("{0} is installed in {1}.").format(
            self.tr(self.selected_model().extras[0].title), folder))  # fmt: skip
        self._refresh()

    def _on_recognizer_done(self, folder: str) -> None:
        self._worker = None
        self.progress.setValue(1000)
        self.settings.recognizer_dir = None  # the downloaded one, found in its default place
        self.status.setText(self.tr("Speech recognition is installed."))
        self._refresh()
        self.recognizerChanged.emit()

    def choose_recognizer_folder(self) -> None:
        folder = self.dialogs.pick_folder(self, self.tr("Choose a speech recognizer folder"), models_dir())
        if folder is None:
            return
        problems = asr_catalog.validate_recognizer_dir(folder)
        if problems:
            message = self.tr("{0} is not a usable speech recognizer: {1}.").format(folder, problems[0])
            self.status.setText(message)
            self.dialogs.error(self, message)
            return
        self.settings.recognizer_dir = folder
        self.status.setText(self.tr("Speech recognition uses {0}.").format(folder))
        self._refresh()
        self.recognizerChanged.emit()

    def _on_failed(self, message: str, cancelled: bool) -> None:
        self._worker = None
        self.progress.hide()
        self.status.setText(message)
        self._refresh()
        if not cancelled:
            self.dialogs.error(self, message)

    def _use_selected(self) -> None:
        self._choose(self.folder_of(self.selected_model()))

    def choose_folder(self) -> None:
        folder = self.dialogs.pick_folder(self, self.tr("Choose a model folder"), models_dir())
        if folder is not None:
            self._choose(folder)

    def _choose(self, folder: Path) -> None:
        problems = dl.validate_model_dir(folder)
        if problems:
            message = self.tr("{0} is not a usable model folder: {1}").format(folder, " ".join(problems))
            self.status.setText(message)
            self.dialogs.error(self, message)
            return
        from app.engine.family import detect_family

        model = model_for_family(detect_family(folder))  # a family whose weights carry an agreement
        if model is None:
            self._chosen = folder
            self.accept()
            return

        def use() -> None:
            self._chosen = folder
            self.accept()

        self.gate.check(model.key, model.key, model.license, use,
                               texts=licenses.read_texts(folder, model.license))  # fmt: skip

    def reject(self) -> None:
        self.cancel_download()
        super().reject()
