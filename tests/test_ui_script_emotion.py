"""Emotion tags in the script editor (issue 19): the help names the form for a model that speaks
emotions, and the hint under the text points out a tag that cannot be read, one the model
ignores, a description without QwenEmotion and a recording's voice that does not exist."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QTextCharFormat
from ui_fixtures import home  # noqa: F401

from ui.stale_takes import describe_changes
from ui.views.script_editor import ScriptEditor
from ui.views.tag_checker import UNKNOWN_RED, tag_format_at

INDEXTTS = frozenset({"reference", "speed", "emotion", "language"})
INDEXTTS_QWEN = INDEXTTS | {"emotion_text"}
VOXCPM2 = frozenset(
    {"cfg", "timesteps", "prompt", "reference", "voice_design", "lora", "normalize", "stream"}
)


def _editor(qtbot, controls: frozenset[str] | None, text: str) -> ScriptEditor:
    editor = ScriptEditor()
    qtbot.addWidget(editor)
    editor.set_voices(["Anna", "Bob"], None)
    editor.set_controls(controls)
    editor.set_text(text)
    return editor


def _warning(editor: ScriptEditor) -> str:
    return editor.tag_warning.text() if not editor.tag_warning.isHidden() else ""


def test_the_help_names_the_emotion_tag_only_for_a_model_that_speaks_emotions(qtbot):
    editor = _editor(qtbot, VOXCPM2, "")
    assert "[Voice|angry]" not in editor.hint.text() and "|angry]" not in editor.editor.placeholderText()
    editor.set_controls(INDEXTTS)
    assert "[Voice|angry] gives a line an emotion" in editor.hint.text()
    assert "[Anna|@Bob]" in editor.editor.placeholderText()
    assert "[pause 800ms]" in editor.editor.placeholderText()  # the rest of the help stays
    assert editor.settings.cfg.isHidden()  # (the settings form gets the controls too: IndexTTS has no CFG)


def test_hints_for_emotion_tags(qtbot):
    script = "\n".join(
        [
            "[Anna|furious] Get out!",
            "[Anna|angry] Go.",
            '[Bob|"a quiet whisper"] Hush.',
            "[|@Carol] Like Carol.",
        ]
    )
    editor = _editor(qtbot, INDEXTTS, script)
    warning = _warning(editor)
    assert "The emotion in [Anna|furious] cannot be read: “furious” is not an emotion" in warning
    assert "describes an emotion in words" in warning  # no QwenEmotion in this folder
    assert "No voice is named [Carol] for [|@Carol]" in warning
    assert "ignores" not in warning and "[Anna|angry]" not in warning  # a good tag is quiet

    editor.set_controls(INDEXTTS_QWEN)
    assert "describes an emotion in words" not in _warning(editor)
    editor.set_cast({"Carol": "Bob"})  # a character cast to an existing voice is a voice
    assert "Carol" not in _warning(editor)

    editor.set_controls(VOXCPM2)  # ignored with a plain hint, not an error
    warning = _warning(editor)
    assert "IndexTTS-2.5 speaks emotions; this model ignores tags such as [Anna|angry]." in warning
    assert "cannot be read" in warning  # a broken tag is still pointed out

    editor.set_text("[Anna|angry] Go.")
    editor.set_controls(None)  # no model yet: nothing to say
    assert _warning(editor) == ""


def test_a_broken_emotion_tag_is_underlined_like_an_unknown_voice(qtbot):
    editor = _editor(qtbot, INDEXTTS, "[Anna|furious] Get out!\n[Anna|angry] Go.\n[|sad] Oh.")
    document = editor.editor.document()
    broken = tag_format_at(document, 0, 3)
    assert broken is not None and broken.foreground().color() == UNKNOWN_RED
    assert broken.underlineStyle() == QTextCharFormat.UnderlineStyle.SpellCheckUnderline
    good = tag_format_at(document, 1, 8)
    assert good is not None and good.fontWeight() == 600 and good.foreground().color() != UNKNOWN_RED
    default_voice = tag_format_at(document, 2, 2)
    assert default_voice is not None and default_voice.fontItalic()


def test_a_stale_take_says_which_emotion_it_was_made_with(qtbot):
    assert describe_changes({"emotion": "angry 0.8"}) == "emotion angry 0.8"
    assert describe_changes({"emotion": ""}) == "no emotion"


def test_the_emotion_help_and_hints_in_chinese(qtbot):
    from PySide6.QtWidgets import QApplication

    from ui.i18n import install_translators, remove_translators

    app = QApplication.instance()
    translators = install_translators(app, "zh_CN")
    try:
        editor = _editor(qtbot, INDEXTTS, "[Anna|furious] 出去！\n[|@Carol] 像她一样。")
        assert "[声音|愤怒] 为一行指定情感。" in editor.hint.text()
        assert "[Anna|高兴 0.5，惊讶 0.3]" in editor.editor.placeholderText()
        assert "无法识别 [Anna|furious] 中的情感" in _warning(editor)
        assert "[|@Carol] 需要名为 [Carol] 的声音" in _warning(editor)
        editor.set_controls(VOXCPM2)
        assert "IndexTTS-2.5 才能表达情感；当前模型会忽略 [Anna|furious] 这类情感标记" not in _warning(editor)
        editor.set_text("[Anna|愤怒 0.6] 出去！")
        assert "IndexTTS-2.5 才能表达情感；当前模型会忽略 [Anna|愤怒 0.6] 这类情感标记。" in _warning(editor)
        assert describe_changes({"emotion": ""}) == "无情感"
    finally:
        remove_translators(app, translators)


def test_the_dub_reads_each_cue_emotion_for_a_model_that_speaks_emotions(qtbot, home, tmp_path):  # noqa: F811
    """The subtitle view's dub gets each distinct emotion's control, read on the GUI thread (a
    recording through the script's cast); a model without emotions gets none."""
    from PySide6.QtCore import Qt
    from ui_fixtures import ScriptedDialogs, open_window, wait_for_imports, write_voice_file

    from app.engine.request import EmotionControl
    from app.errors import VoxDeskError
    from app.longform.subtitles import Cue
    from app.voices.emotion import parse_emotion
    from ui.engine_host import ModelInfo

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    dialogs.files.append(write_voice_file(tmp_path / "Anna.wav", 220))
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)
    wait_for_imports(qtbot, window)
    window.project.set_cast("Carol", "Anna")
    tags = ["@Carol 0.5", "angry", "@Nobody", "angry"]
    window.dubbing.cues = [Cue(n, n, n + 0.5, "Hi.", emotion=parse_emotion(t)) for n, t in enumerate(tags)]
    window.model.info = ModelInfo("IndexTTS-2.5", "ix", "indextts25", 22050, 16000, "CPU", controls=INDEXTTS)
    emotions = window.dubbing._emotions()
    assert set(emotions) == {parse_emotion(t) for t in tags}
    carol = emotions[parse_emotion("@Carol 0.5")]
    assert isinstance(carol, EmotionControl) and carol.weight == 0.5
    anna = window.library.find("Anna")
    np.testing.assert_array_equal(carol.clip, window.library.audio(anna))
    assert emotions[parse_emotion("angry")].vector == parse_emotion("angry").vector
    assert isinstance(emotions[parse_emotion("@Nobody")], VoxDeskError)
    window.model.info = ModelInfo("VoxCPM2", "v2", "voxcpm2", 48000, 16000, "CPU", controls=VOXCPM2)
    assert window.dubbing._emotions() is None
