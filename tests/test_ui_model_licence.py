"""The model manager shows SenseVoice Small's licence (not a permissive one) before downloading it,
and records the acceptance where ``voxdesk models download`` looks for it."""

from __future__ import annotations

from test_asr import asr_hub  # noqa: F401
from ui_fixtures import ScriptedDialogs, home  # noqa: F401

from app.asr import catalog as asr_catalog
from app.models import licenses
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
