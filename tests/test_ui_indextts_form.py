"""The generation form's IndexTTS-2.5 controls (issue 19 §4), on the form alone: they show by the
family's controls (FamilyInfo.controls, not its name), the eight weights never add up past 1,
"from a sentence" says what to download without QwenEmotion, and the values survive a round trip
through the form and the project file."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from ui_fixtures import home  # noqa: F401

from app import project as projects
from app.engine.family import FamilyInfo
from app.engine.request import EMOTIONS
from app.models.cosyvoice.runner import CONTROLS as COSYVOICE
from app.voices.emotion import EmotionSpec
from ui.views.generation_form import GenerationForm, SegmentSettingsDialog

LANGUAGES = ("zh", "en", "ja", "es", "ar")
INDEXTTS = FamilyInfo("indextts", "IndexTTS-2.5", "indextts25",
                      frozenset({"reference", "speed", "emotion", "language"}), 22050, 16000,
                      languages=LANGUAGES)  # fmt: skip
FIELDS = ("cfg", "steps", "style_text", "instruction", "emotion", "language")


def _form(qtbot, controls: frozenset[str] | None, languages: tuple[str, ...] = ()) -> GenerationForm:
    form = GenerationForm(compact=True, seed=True)
    qtbot.addWidget(form)
    form.set_controls(controls, languages)
    form.set_voices(["Anna", "Bob"])
    form.show()
    return form


def _shown(form: GenerationForm) -> dict[str, bool]:
    return {name: getattr(form, name).isVisible() for name in FIELDS}


@pytest.mark.parametrize(
    ("controls", "shown"),
    [
        (INDEXTTS.controls, {"emotion", "language"}),
        (None, {"cfg", "steps", "style_text"}),  # no model yet: VoxCPM2's
        (frozenset({"cfg", "timesteps", "prompt", "lora"}), {"cfg", "steps"}),  # VoxCPM1
        (COSYVOICE, {"instruction"}),
    ],
)
def test_the_emotion_and_language_show_only_for_a_family_that_has_them(qtbot, controls, shown):
    form = _form(qtbot, controls, INDEXTTS.languages if controls == INDEXTTS.controls else ())
    assert _shown(form) == {name: name in shown for name in FIELDS}


def test_languages_are_offered_by_name_with_auto_first(qtbot):
    form = _form(qtbot, INDEXTTS.controls, INDEXTTS.languages)
    box = form.language
    assert [box.itemData(i) for i in range(box.count())] == ["", *LANGUAGES]
    assert [box.itemText(i) for i in range(box.count())] == [
        "Auto", "Chinese", "English", "Japanese", "Spanish", "Arabic"
    ]  # fmt: skip
    box.setCurrentIndex(box.findData("ja"))
    assert form.values()["language"] == "ja"
    form.set_controls(COSYVOICE)  # a family without languages: the choice is kept, not lost
    form.set_controls(INDEXTTS.controls, INDEXTTS.languages)
    assert form.values()["language"] == "ja" and box.currentText() == "Japanese"


def test_only_the_chosen_sources_fields_show(qtbot):
    form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    emotion = form.emotion
    visible = lambda: {w for w in ("voice", "text", "weight", "vector_panel")  # noqa: E731
                       if getattr(emotion, w).isVisible()}  # fmt: skip
    assert emotion.kind() == "none" and visible() == set() and form.values()["emotion"] == {"kind": "none"}
    emotion.source.setCurrentIndex(emotion.source.findData("clip"))
    assert visible() == {"voice", "weight"}
    emotion.voice.setCurrentIndex(emotion.voice.findData("Bob"))
    emotion.weight.setValue(60)
    assert form.values()["emotion"] == {"kind": "clip", "voice": "Bob", "weight": 0.6}
    emotion.source.setCurrentIndex(emotion.source.findData("vector"))
    assert visible() == {"weight", "vector_panel"}
    emotion.source.setCurrentIndex(emotion.source.findData("text"))
    assert visible() == {"text", "weight"}
    emotion.text.setText("  a quiet, frightened whisper ")
    assert form.values()["emotion"] == {"kind": "text", "text": "a quiet, frightened whisper", "weight": 0.6}


def test_the_eight_weights_are_held_at_a_total_of_one(qtbot):
    form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    emotion = form.emotion
    emotion.source.setCurrentIndex(emotion.source.findData("vector"))
    sliders = emotion.sliders
    assert list(sliders) == list(EMOTIONS)
    sliders["angry"].setValue(70)
    assert "at most 1" in emotion.total.text() and "0.70" in emotion.total.text()
    sliders["sad"].setValue(50)  # only 0.30 is left
    assert sliders["sad"].value() == 30 and emotion.numbers["sad"].text() == "0.30"
    assert "lower another" in emotion.total.text() and "1.00" in emotion.total.text()
    sliders["happy"].setFocus()
    qtbot.keyClick(sliders["happy"], Qt.Key.Key_End)  # nothing left at all
    assert sliders["happy"].value() == 0
    spec = EmotionSpec.from_dict(form.values()["emotion"])
    assert spec.vector == (0.0, 0.7, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0) and sum(spec.vector) <= 1.0
    qtbot.mouseClick(emotion.reset, Qt.MouseButton.LeftButton)
    assert [s.value() for s in sliders.values()] == [0] * 8 and "0.00" in emotion.total.text()
    sliders["calm"].setValue(100)  # all of it for one, once the others are free again
    assert sliders["calm"].value() == 100


def test_from_a_sentence_says_what_to_download_without_qwen_emotion(qtbot):
    form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    emotion = form.emotion
    emotion.source.setCurrentIndex(emotion.source.findData("text"))
    assert not emotion.text.isEnabled() and emotion.text_reason.isVisible()
    reason = emotion.text_reason.text()
    assert "QwenEmotion" in reason and "Models" in reason and "\n" not in reason
    form.set_controls(INDEXTTS.controls | {"emotion_text"}, LANGUAGES)
    assert emotion.text.isEnabled() and not emotion.text_reason.isVisible()


def test_from_another_recording_needs_a_voice_in_the_library(qtbot):
    form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    clip = form.emotion.source.model().item(1)
    assert clip.isEnabled()
    form.set_voices([])
    assert not clip.isEnabled()


def test_the_choices_survive_the_project_file(qtbot, home, tmp_path):  # noqa: F811
    form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    emotion = form.emotion
    emotion.source.setCurrentIndex(emotion.source.findData("vector"))
    emotion.sliders["happy"].setValue(50)
    emotion.sliders["surprised"].setValue(30)
    emotion.weight.setValue(80)
    form.language.setCurrentIndex(form.language.findData("es"))
    values = form.values()
    project = projects.Project(text="Hola.")
    project.with_settings(emotion=values["emotion"], language=values["language"])
    loaded = projects.Project.load(project.save(tmp_path / "script"))
    assert loaded.settings.emotion == EmotionSpec("vector", vector=(0.5, 0, 0, 0, 0, 0, 0.3, 0), weight=0.8)
    assert loaded.settings.language == "es"
    again = _form(qtbot, INDEXTTS.controls, LANGUAGES)
    again.set_values({"emotion": loaded.settings.emotion.to_dict(), "language": loaded.settings.language})
    assert again.values()["emotion"] == values["emotion"] and again.values()["language"] == "es"
    assert again.emotion.numbers["happy"].text() == "0.50" and again.emotion.vector_panel.isVisible()


def test_a_damaged_emotion_in_a_project_file_is_one_plain_line(home, tmp_path):  # noqa: F811
    project = projects.Project(text="Hello.")
    data = project.to_dict()
    data["settings"]["emotion"] = {"kind": "vector", "vector": [0.9, 0.9, 0, 0, 0, 0, 0, 0]}
    with pytest.raises(projects.VoxDeskError) as caught:
        projects.Project.from_dict(data)
    assert "damaged" in str(caught.value) and "\n" not in str(caught.value)


def test_the_segment_dialog_offers_the_emotion_and_language(qtbot):
    angry = {"kind": "vector", "vector": [0, 0.8, 0, 0, 0, 0, 0, 0], "weight": 1.0}
    script = {"emotion": angry, "language": ""}
    dialog = SegmentSettingsDialog(script, None, None, controls=INDEXTTS.controls, languages=LANGUAGES,
                                   voices=["Anna"])  # fmt: skip
    qtbot.addWidget(dialog)
    dialog.show()
    form = dialog.form
    assert form.emotion.isVisible() and form.language.isVisible() and not form.cfg.isVisible()
    assert form.emotion.sliders["angry"].value() == 80  # the line's own emotion, shown
    dialog.custom.setChecked(True)
    form.emotion.source.setCurrentIndex(form.emotion.source.findData("none"))
    form.language.setCurrentIndex(form.language.findData("en"))
    own, _seed = dialog.result_values()
    assert own is not None and own["emotion"] == {"kind": "none"} and own["language"] == "en"
    override = projects.SegmentOverride(emotion=own["emotion"], language=own["language"])
    assert override.emotion == EmotionSpec() and override.language == "en"


def test_the_controls_read_in_chinese(qtbot):
    from PySide6.QtWidgets import QApplication

    from ui.i18n import install_translators, remove_translators

    app = QApplication.instance()
    translators = install_translators(app, "zh_CN")
    try:
        form = _form(qtbot, INDEXTTS.controls, LANGUAGES)
        emotion = form.emotion
        assert [emotion.source.itemText(i) for i in range(4)] == [
            "声音自带的情感", "取自另一段录音", "用八个滑块设定", "取自一句描述"
        ]  # fmt: skip
        assert form.language.itemText(0) == "自动" and form.language.itemText(1) == "中文"
        assert emotion.reset.text() == "重置" and "QwenEmotion" in emotion.text_reason.text()
    finally:
        remove_translators(app, translators)
