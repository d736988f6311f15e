"""``voxdesk synth --model <IndexTTS-2.5 folder>``: ``--ref-wav`` is the speaker clip, the emotion
comes from ``--emotion-wav`` (with ``--emotion-weight``), ``--emotion-vector`` or ``--emotion-text``,
``--speed F`` is the duration factor 1/F and ``--language`` the text's language; every mistake in
them is one plain line and exit code 2, before anything is spoken."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
import soundfile
from server_fixtures import api_model  # noqa: F401
from tiny_indextts import tiny_ix  # noqa: F401

from app.cli import main
from app.engine.family import FamilyInfo
from app.errors import UsageError
from app.selftest import voice_clip
from app.synth_emotion import check_emotion_options

TEXT = "你好，世界。"
ANGRY = "0,0.8,0,0,0,0,0,0"


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ix-clips")
    paths = {name: folder / f"{name}.wav" for name in ("voice", "emotion", "silent")}
    soundfile.write(str(paths["voice"]), voice_clip(24000, 2.0), 24000)
    soundfile.write(str(paths["emotion"]), voice_clip(16000, 1.5)[::-1].copy(), 16000)
    soundfile.write(str(paths["silent"]), np.zeros(16000, np.float32), 16000)
    paths["text"] = folder / "notes.wav"
    paths["text"].write_text("not audio")
    return paths


def _synth(model: Path, out: Path, clips: dict[str, Path], *extra: str) -> int:
    argv = ["synth", "--model", str(model), "--text", TEXT, "--out", str(out), "--device", "cpu"]
    return main([*argv, "--ref-wav", str(clips["voice"]), "--seed", "5", *extra])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("voxdesk: ") and "\n" not in err and "Traceback" not in err, err
    return err


def _read(path: Path) -> np.ndarray:
    audio, rate = soundfile.read(str(path), dtype="float32")
    assert rate == 22050 and audio.ndim == 1 and np.isfinite(audio).all() and np.abs(audio).max() > 0
    return audio


def test_an_emotion_vector_a_language_and_a_speed_write_a_wav(tiny_ix, clips, tmp_path, capsys):  # noqa: F811
    """(--emotion-wav at speeds 0.8 and 1.25, lengths compared: tests/test_indextts_server.py, whose
    live server ``synth --server`` sends them to, saving two more model loads here.)"""
    out = tmp_path / "angry.wav"
    assert _synth(tiny_ix, out, clips, "--emotion-vector", ANGRY, "--speed", "1.25", "--language", "zh") == 0
    assert capsys.readouterr().out.startswith(f"{out}: ")
    _read(out)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--emotion-vector", "0,0.8,0,0,0,0,0"], "8 weights"),
        (["--emotion-vector", "0,1.2,0,0,0,0,0,0"], "from 0 to 1"),
        (["--emotion-vector", "0.6,0.6,0,0,0,0,0,0"], "add up to 1.2"),
        (["--emotion-vector", "angry"], "8 numbers separated by commas"),
        (["--emotion-vector", ANGRY, "--emotion-weight", "1.5"], "from 0 to 1"),
        (["--emotion-weight", "0.5"], "--emotion-weight needs an emotion"),
        (["--emotion-vector", ANGRY, "--emotion-text", "calm"], "two emotions"),
        (["--emotion-wav", "SILENT"], "silent"),
        (["--emotion-wav", "TEXT"], "not an audio file"),
        (["--emotion-wav", "MISSING"], "missing.wav"),
    ],
)
def test_a_bad_emotion_is_one_line_and_exit_2_before_the_model_loads(tmp_path, clips, capsys, extra, message):
    """(The model folder does not exist: the options are refused before it is looked at.)"""
    names = {"SILENT": clips["silent"], "TEXT": clips["text"], "MISSING": tmp_path / "missing.wav"}
    extra = [str(names.get(e, e)) for e in extra]
    assert _synth(tmp_path / "no-model", tmp_path / "x.wav", clips, *extra) == 2
    assert message in _one_line(capsys)
    assert not (tmp_path / "x.wav").exists()


def test_an_emotion_or_language_on_another_family_is_one_line_and_exit_2(api_model, tmp_path, clips, capsys):  # noqa: F811
    assert _synth(api_model, tmp_path / "x.wav", clips, "--emotion-vector", ANGRY) == 2
    assert "--emotion-vector needs a model that speaks emotions (IndexTTS-2.5); VoxCPM2" in _one_line(capsys)
    assert _synth(api_model, tmp_path / "x.wav", clips, "--language", "en") == 2
    assert "--language is not a setting of VoxCPM2" in _one_line(capsys)


def _options(**given: str) -> argparse.Namespace:
    return argparse.Namespace(**{"emotion_wav": None, "emotion_vector": None, "emotion_text": None,
                                 "language": "", **given})  # fmt: skip


def test_the_loaded_family_controls_and_languages_decide():
    """(What IndexTTS's runner says it honours is its own tests' business: here, what the CLI does
    with it. A folder without QwenEmotion lacks "emotion_text".)"""
    controls = frozenset({"reference", "emotion", "language"})
    info = FamilyInfo("indextts", "IndexTTS-2.5", "indextts25", controls, 22050, 22050, ("zh", "en"))

    def refused(args: argparse.Namespace) -> str:
        with pytest.raises(UsageError) as err:
            check_emotion_options(args, info.label, info.controls, info.languages)
        return str(err.value)

    assert "--emotion-text needs the QwenEmotion model" in refused(_options(emotion_text="a quiet whisper"))
    assert "'FR' is not one IndexTTS-2.5 speaks: use one of zh, en" in refused(_options(language="FR"))
    for code in ("EN", "auto", ""):  # the code's case is free; auto: guessed from the text
        check_emotion_options(_options(language=code, emotion_vector=ANGRY), info.label, info.controls,
                              info.languages)  # fmt: skip
    assert check_emotion_options(_options(language="auto"), "VoxCPM2", frozenset(), ()) is None
