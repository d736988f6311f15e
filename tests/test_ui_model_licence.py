"""The model manager shows SenseVoice Small's licence (not a permissive one) before downloading it,
and records the acceptance where ``voxdesk models download`` looks for it; IndexTTS-2.5's agreement
is shown in full (from tests/ix_hub.py's 127.0.0.1 server or the chosen folder) and bound to its
SHA-256."""

from __future__ import annotations

import json

from ix_hub import LICENSE_EN, LICENSE_ZH, index_hub, index_repos  # noqa: F401
from test_asr import asr_hub  # noqa: F401
from ui_fixtures import ScriptedDialogs, home  # noqa: F401

from app.asr import catalog as asr_catalog
from app.models import download as dl
from app.models import licenses
from app.models.catalog import INDEXTTS_PARTS
from ui.settings import Settings


def test_recognizer_licence_is_asked_once_and_recorded(qtbot, home, asr_hub):  # noqa: F811
    from ui.views.model_manager import ModelManager

    endpoint, served = asr_hub
    dialogs = ScriptedDialogs()
    manager = ModelManager(Settings(), dialogs)
    qtbot.addWidget(manager)
    manager.source.setCurrentIndex(manager.source.findData("mirror"))
    manager.mirror.setText(endpoint)
    terms = asr_catalog.SENSEVOICE_SMALL.license

    dialogs.answers = [False]
    manager.start_recognizer_download()
    assert terms.name in dialogs.questions[-1] and terms.url in dialogs.questions[-1]
    assert manager.status.text() == "Licence not accepted: nothing was downloaded."
    assert served == [] and not licenses.accepted("SenseVoiceSmall", terms)

    dialogs.answers = [True]
    manager.start_recognizer_download()
    qtbot.waitUntil(lambda: asr_catalog.validate_recognizer_dir(asr_catalog.default_folder()) == [],
                    timeout=30_000)  # fmt: skip
    assert sorted(served) == ["model.int8.onnx", "tokens.txt"]
    assert licenses.accepted("SenseVoiceSmall", terms) and len(dialogs.questions) == 2


def test_every_catalogue_model_is_listed_in_the_users_language(qtbot, home):  # noqa: F811
    """The descriptions come from the Qt-free catalogue; each one is marked for translation, so
    a model added to app/models/download.py without a translation fails here, not in a zh_CN window."""
    from PySide6.QtWidgets import QApplication

    from app.asr import catalog as asr_catalog
    from app.models import download as dl
    from ui.i18n import install_translators, remove_translators
    from ui.views.model_manager import MODEL_TITLES, RECOGNIZER_TITLE, ModelManager

    assert sorted(m.title for m in dl.KNOWN_MODELS) == sorted(MODEL_TITLES)
    assert asr_catalog.SENSEVOICE_SMALL.title == RECOGNIZER_TITLE
    translators = install_translators(QApplication.instance(), "zh_CN")
    try:
        manager = ModelManager(Settings(), ScriptedDialogs())
        qtbot.addWidget(manager)
        rows = [manager.models.item(i).text() for i in range(manager.models.count())]
        intro = manager.asr_intro.text()
    finally:
        remove_translators(QApplication.instance(), translators)
    for model, row in zip(dl.KNOWN_MODELS, rows[: len(dl.KNOWN_MODELS)], strict=True):
        assert model.title not in row and "kHz" in row, row
    assert any("种语言" in row for row in rows)
    assert RECOGNIZER_TITLE not in intro and "粤语" in intro


def test_every_model_line_is_seen_whole(qtbot, home):  # noqa: F811
    """The list is as wide as its longest line: a model's download size, at the end of it, was
    cut off behind a horizontal scroll bar (seen in the Windows build under Wine)."""
    from PySide6.QtCore import QPoint

    from ui.views.model_manager import ModelManager

    manager = ModelManager(Settings(), ScriptedDialogs(), first_run=True)
    qtbot.addWidget(manager)
    manager.show()
    qtbot.waitExposed(manager)
    models = manager.models
    assert models.sizeHintForColumn(0) <= models.viewport().width()
    assert not models.horizontalScrollBar().isVisible()
    right = models.mapTo(manager, QPoint(models.width(), 0)).x()
    assert right <= manager.contentsRect().right() + 1  # and the dialog is as wide as the list


# ---- IndexTTS-2.5: the bilibili agreement in full, accepted before the download -------------------
def _indextts_manager(qtbot, index_hub, dialogs, language: str = "en"):  # noqa: F811
    from ui.views.model_manager import ModelManager

    settings = Settings()
    settings.language = language
    manager = ModelManager(settings, dialogs)
    qtbot.addWidget(manager)
    manager.models.setCurrentRow([m.key for m in dl.KNOWN_MODELS].index("IndexTTS-2.5"))
    manager.source.setCurrentIndex(manager.source.findData("mirror"))
    manager.mirror.setText(index_hub.endpoint)
    return manager


def _dialog(qtbot, manager):
    qtbot.waitUntil(lambda: manager.license_dialog is not None and manager.license_dialog.isVisible(),
                    timeout=20_000)  # fmt: skip
    return manager.license_dialog


def test_indextts_download_waits_for_the_licence_and_records_it(qtbot, home, index_hub):  # noqa: F811
    import hashlib

    from PySide6.QtCore import Qt

    from app.paths import models_dir

    dialogs = ScriptedDialogs()
    manager = _indextts_manager(qtbot, index_hub, dialogs)
    model = manager.selected_model()
    assert model.key == "IndexTTS-2.5" and "bilibili Model Use License Agreement" in manager.license.text()
    assert not manager.download_button.isEnabled() and manager.license_button.isVisibleTo(manager)
    assert "read and accept it before the download" in manager.license.text()

    # Cancel (the default button) keeps nothing: no record, no folder, only the licence texts read
    qtbot.mouseClick(manager.license_button, Qt.MouseButton.LeftButton)
    dialog = _dialog(qtbot, manager)
    assert LICENSE_EN.decode() == dialog.text.toPlainText() and "royalty-free" in dialog.summary.text()
    assert dialog.cancel_button.isDefault() and not dialog.agree_button.isDefault()
    assert not dialog.changed.isVisibleTo(dialog)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert manager.status.text() == "Licence not accepted: nothing was downloaded."
    assert not (models_dir() / licenses.RECORD).exists() and not manager.folder_of(model).exists()
    assert set(index_hub.served) == {f"IndexTeam/IndexTTS-2.5/{n}" for n in ("LICENSE", "LICENSE_ZH.txt")}
    assert not manager.download_button.isEnabled()

    qtbot.mouseClick(manager.license_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(_dialog(qtbot, manager).agree_button, Qt.MouseButton.LeftButton)
    day = licenses.accepted_on(model.key, model.license)
    assert day is not None and f"Licence accepted on {day}" in manager.license.text()
    record = json.loads((models_dir() / licenses.RECORD).read_text(encoding="utf-8"))["IndexTTS-2.5"]
    assert record["sha256"] == hashlib.sha256(LICENSE_EN).hexdigest()
    assert manager.download_button.isEnabled() and not manager.folder_of(model).exists()

    # a new text on the server: Download shows it again, saying so; agreeing downloads the folder
    index_hub.repos["IndexTeam/IndexTTS-2.5"]["LICENSE"] = LICENSE_EN + b"3. A new clause.\n"
    qtbot.mouseClick(manager.download_button, Qt.MouseButton.LeftButton)
    dialog = _dialog(qtbot, manager)
    assert dialog.changed.isVisibleTo(dialog) and day in dialog.changed.text()
    assert "3. A new clause." in dialog.text.toPlainText()
    qtbot.mouseClick(dialog.agree_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: manager.chosen_folder() is not None, timeout=30_000)
    folder = manager.folder_of(model)
    assert manager.chosen_folder() == folder and (folder / "LICENSE").read_bytes().endswith(b"new clause.\n")
    assert not (folder / "qwen0.6bemo4-merge").exists()

    # QwenEmotion afterwards, from a new manager: only its files come
    manager = _indextts_manager(qtbot, index_hub, dialogs)
    assert manager.extra_button.isEnabled() and "QwenEmotion" in manager.extra_button.text()
    assert "not installed" in manager.extra_state.text()
    index_hub.served.clear()
    qtbot.mouseClick(manager.extra_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: (folder / "qwen0.6bemo4-merge" / "model.safetensors").exists(), timeout=30_000)
    qtbot.waitUntil(lambda: manager.extra_state.text().endswith("installed") and "not" not in
                    manager.extra_state.text(), timeout=10_000)  # fmt: skip
    assert {s for s in index_hub.served if "LICENSE" not in s} == {
        "IndexTeam/IndexTTS-2.5/qwen0.6bemo4-merge/config.json",
        "IndexTeam/IndexTTS-2.5/qwen0.6bemo4-merge/model.safetensors",
    }
    assert dialogs.errors == []


def test_the_chinese_window_shows_the_chinese_text(qtbot, home, index_hub):  # noqa: F811
    from PySide6.QtWidgets import QApplication

    from ui.i18n import install_translators, remove_translators

    translators = install_translators(QApplication.instance(), "zh_CN")
    try:
        manager = _indextts_manager(qtbot, index_hub, ScriptedDialogs(), language="zh_CN")
        manager.read_license()
        dialog = _dialog(qtbot, manager)
        assert dialog.text.toPlainText() == LICENSE_ZH.decode()
        assert "bilibili" in dialog.summary.text() and "royalty-free" not in dialog.summary.text()
        assert dialog.agree_button.text() != "I agree"
        dialog.reject()
    finally:
        remove_translators(QApplication.instance(), translators)
    assert not licenses.accepted("IndexTTS-2.5", licenses.BILIBILI_MODEL)


def _local_indextts(folder):
    """An IndexTTS-2.5 folder in the official layout from the hub's files (stand-in weights)."""
    for repo, files in index_repos().items():
        for path, data in files.items():
            target = path if repo == "IndexTeam/IndexTTS-2.5" else next(
                (local for part in INDEXTTS_PARTS for remote, local in part.files
                 if part.hf_repo == repo and remote == path), None)  # fmt: skip
            if target is not None:
                (folder / target).parent.mkdir(parents=True, exist_ok=True)
                (folder / target).write_bytes(data)
    assert dl.validate_model_dir(folder) == []
    return folder


def test_a_local_folder_with_the_agreement_asks_first(qtbot, home, index_hub, tmp_path):  # noqa: F811
    from ui.views.model_manager import ModelManager

    folder = _local_indextts(tmp_path / "my-indextts")
    dialogs = ScriptedDialogs()
    dialogs.folders = [folder, folder]
    manager = ModelManager(Settings(), dialogs)
    qtbot.addWidget(manager)
    manager.choose_folder()
    dialog = _dialog(qtbot, manager)
    assert dialog.text.toPlainText() == LICENSE_EN.decode()
    dialog.reject()
    assert manager.chosen_folder() is None and not licenses.accepted("IndexTTS-2.5", licenses.BILIBILI_MODEL)
    manager.choose_folder()
    _dialog(qtbot, manager).accept()
    assert manager.chosen_folder() == folder and manager.result() == manager.DialogCode.Accepted
    terms = licenses.BILIBILI_MODEL
    assert licenses.accepted("IndexTTS-2.5", terms, licenses.read_texts(folder, terms))
    assert index_hub.served == []  # a local folder: nothing from the network


def test_every_licence_summary_is_translated(qtbot, home):  # noqa: F811
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from ui.i18n import install_translators, remove_translators
    from ui.views.license_dialog import SUMMARIES
    from ui.views.model_manager import EXTRA_TITLES

    summaries = {m.license.summary for m in dl.KNOWN_MODELS if m.license.summary}
    assert summaries == set(SUMMARIES)
    assert {e.title for m in dl.KNOWN_MODELS for e in m.extras} == set(EXTRA_TITLES)
    translators = install_translators(QApplication.instance(), "zh_CN")
    try:
        for text in SUMMARIES:
            assert QCoreApplication.translate("LicenseDialog", text) != text
        for text in EXTRA_TITLES:
            assert QCoreApplication.translate("ModelManager", text) != text
    finally:
        remove_translators(QApplication.instance(), translators)


def test_a_local_folder_without_the_agreement_asks_the_question_once(qtbot, home, tmp_path):  # noqa: F811
    from ui.views.model_manager import ModelManager

    folder = _local_indextts(tmp_path / "bare")
    for name in ("LICENSE", "LICENSE_ZH.txt"):
        (folder / name).unlink()
    dialogs = ScriptedDialogs()
    dialogs.folders = [folder, folder]
    dialogs.answers = [False, True]
    for _ in range(2):
        manager = ModelManager(Settings(), dialogs)
        qtbot.addWidget(manager)
        manager.choose_folder()
    assert len(dialogs.questions) == 2 and "bilibili Model Use License Agreement" in dialogs.questions[0]
    assert manager.chosen_folder() == folder and licenses.accepted("IndexTTS-2.5", licenses.BILIBILI_MODEL)
    dialogs.folders = [folder]
    manager = ModelManager(Settings(), dialogs)
    qtbot.addWidget(manager)
    manager.choose_folder()
    assert manager.chosen_folder() == folder and len(dialogs.questions) == 2  # accepted once is accepted
