"""``voxdesk synth --model <CosyVoice folder>`` (issue 18 §3, §5, §7): the family found from the
folder, the official modes from the voice options, native speed, the official seeding, options
the family cannot honour and broken folders refused in one plain line."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch
from tiny_cosyvoice import tiny_cv3  # noqa: F401

from app.cli import main
from app.engine.family import detect_family
from app.selftest import voice_clip

TEXT = "Hello there, how are you today?"


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clip") / "voice.wav"
    soundfile.write(str(path), voice_clip(22050, 2.0), 22050)  # a rate neither model uses
    return path


def _synth(model: Path, out: Path, *extra: str) -> int:
    argv = ["synth", "--model", str(model), "--text", TEXT, "--out", str(out), "--device", "cpu"]
    return main([*argv, *extra])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("voxdesk: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_zero_shot_and_instruct_with_speed_speak(tiny_cv3, clip, tmp_path, capsys):  # noqa: F811
    """(Cross-lingual and the seed's repeatability through the engine: the server's tests.)"""
    assert detect_family(tiny_cv3) == "cosyvoice"
    zero, instruct = tmp_path / "zero.wav", tmp_path / "instruct.wav"
    assert _synth(tiny_cv3, zero, "--prompt-wav", str(clip), "--prompt-text", "Words.", "--seed", "7") == 0
    assert f"{zero}: " in capsys.readouterr().out
    control = ("--control", "请用四川话表达。", "--speed", "1.2")
    assert _synth(tiny_cv3, instruct, "--ref-wav", str(clip), *control, "--seed", "7") == 0
    assert "seed 7" in capsys.readouterr().out
    for path in (zero, instruct):
        audio, rate = soundfile.read(str(path), dtype="float32")
        assert rate == 24000 and audio.size > 0 and np.isfinite(audio).all() and np.abs(audio).max() > 0


def test_seed_seeds_pythons_numpys_and_torchs_generators_as_the_official_examples(tiny_cv3, tmp_path, capsys):  # noqa: F811
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    # refused after the seeding (the option is checked once the family is loaded): nothing spoken
    assert _synth(tiny_cv3, tmp_path / "x.wav", "--seed", "1234", "--cfg", "3") == 1
    assert "--cfg is not a setting of Fun-CosyVoice3" in _one_line(capsys)
    state = random.getstate(), np.random.get_state()[1].copy(), torch.initial_seed()
    random.seed(1234), np.random.seed(1234)
    assert state[0] == random.getstate() and np.array_equal(state[1], np.random.get_state()[1])
    assert state[2] == 1234


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--timesteps", "4"], "--timesteps is not a setting of Fun-CosyVoice3"),
        (["--max-len", "30"], "--max-len counts VoxCPM's patches"),
        (["--no-retry"], "--no-retry counts VoxCPM's patches"),
        (["--prompt-text", "words"], "--prompt-text needs --prompt-wav"),
        (["--prompt-wav", "CLIP", "--prompt-text", "w", "--ref-wav", "CLIP"], "takes one recording"),
    ],
)
def test_an_option_the_family_cannot_honour_is_one_line(tiny_cv3, clip, tmp_path, capsys, extra, message):  # noqa: F811
    extra = [str(clip) if e == "CLIP" else e for e in extra]
    assert _synth(tiny_cv3, tmp_path / "x.wav", *extra) == 1
    assert message in _one_line(capsys)
    assert not (tmp_path / "x.wav").exists()


class _Boom:
    """A pickle that would create ``marker`` when loaded (it must never be)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _damage(folder: Path, how: str, marker: Path) -> str:
    """Break ``folder`` one way; the name of the file the message must name."""
    if how == "missing":
        (folder / "hift.pt").unlink()
        return "hift.pt"
    if how == "hostile-yaml":
        yaml = folder / "cosyvoice3.yaml"
        yaml.write_text(yaml.read_text() + f"\nboom: !!python/object/apply:os.system ['touch {marker}']\n")
        return "cosyvoice3.yaml"
    if how == "pickled-pt":
        torch.save({"weights": _Boom(marker)}, folder / "flow.pt")
        return "flow.pt"
    (folder / "campplus.onnx").write_bytes(b"this is not an ONNX graph" * 40)
    return "campplus.onnx"


BROKEN = ["missing", "hostile-yaml", "pickled-pt", "not-onnx"]


@pytest.mark.parametrize("how", BROKEN)
def test_a_broken_folder_is_one_line_naming_the_file_and_runs_nothing(tiny_cv3, clip, tmp_path, capsys, how):  # noqa: F811
    folder = shutil.copytree(tiny_cv3, tmp_path / "model")
    marker = tmp_path / "ran"
    name = _damage(folder, how, marker)
    assert _synth(folder, tmp_path / "x.wav", "--ref-wav", str(clip)) == 1
    assert name in _one_line(capsys)
    assert not marker.exists() and not (tmp_path / "x.wav").exists()
