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
