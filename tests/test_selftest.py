"""The bundle's runtime pieces: the self-test, the frozen entry point's crash log, the PortAudio hook.

PyInstaller itself is not run here (installer/build_linux.sh does that); these tests run the same
code in-process on a tiny checkpoint.
"""

from __future__ import annotations

import ctypes.util
import importlib
import importlib.util
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tiny_indextts import tiny_ix  # noqa: F401

from app import selftest
from app.cpu_precision import decide, device_line
from app.errors import VoxDeskError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return selftest.write_selftest_model(tmp_path_factory.mktemp("selftest") / "model")


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_self_test_passes_on_the_tiny_model(tiny_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["--self-test", str(tiny_model)]) == 0
    out = capsys.readouterr().out
    assert last_line(out).startswith("SELF-TEST PASSED")
    assert "wav file:" in out and "Hz" in out and "PortAudio" in out
    assert f"  device:          {device_line('cpu', decide())}\n" in out  # the CPU precision and why


def test_self_test_writes_its_own_model_in_a_source_checkout(
    tiny_ix: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """Every family speaks; IndexTTS's folder (always written at self-test time, never shipped) is
    the session's copy of the same writer's output, saving its 12 s write here."""
    written = []
    monkeypatch.setattr(selftest, "write_selftest_indextts", lambda folder: written.append(folder) or tiny_ix)
    assert selftest.run_self_test(device="cpu") == 0
    out = capsys.readouterr().out
    assert last_line(out).startswith("SELF-TEST PASSED")
    assert [Path(f).name for f in written] == [selftest.INDEXTTS_FOLDER]
    line = next(line for line in out.splitlines() if line.startswith("  IndexTTS-2.5:"))
    assert "at 22050 Hz" in line and "wav file:" in line, line


def test_python_m_app_self_test_opens_no_window(tiny_model: Path, tmp_path: Path) -> None:
    env = {**os.environ, "VOXDESK_HOME": str(tmp_path), "QT_QPA_PLATFORM": "xcb", "DISPLAY": ""}
    command = [sys.executable, "-m", "app", "--self-test", str(tiny_model)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert last_line(done.stdout).startswith("SELF-TEST PASSED")


def test_corrupt_model_fails_with_one_clear_line(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for item in tiny_model.iterdir():
        (broken / item.name).write_bytes(item.read_bytes())
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # a download cut short
    assert selftest.run_self_test(broken, device="cpu") == 1
    line = last_line(capsys.readouterr().out)
    assert line.startswith("SELF-TEST FAILED: ") and len(line) > len("SELF-TEST FAILED: ") + 10


def test_missing_model_folder_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert selftest.run_self_test(tmp_path / "nowhere", device="cpu") == 1
    assert "is not a folder" in last_line(capsys.readouterr().out)


def test_text_normalization_is_checked(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle missing wetext's grammars or inflect's source fails here, not at a user's first
    number (inflect's import raised ``OSError: could not get source code`` in one such build)."""
    assert selftest.run_self_test(tiny_model, device="cpu") == 0
    assert "'Chapter 12, page 3.' -> 'Chapter twelve, page three.'" in capsys.readouterr().out
    from app.text import normalize

    def broken() -> None:
        raise OSError("could not get source code")

    monkeypatch.setattr(normalize, "normalizer", broken)
    assert selftest.run_self_test(tiny_model, device="cpu") == 1
    line = last_line(capsys.readouterr().out)
    assert line == "SELF-TEST FAILED: text normalization does not load (OSError: could not get source code)"

    class Digits:
        def normalize(self, text: str) -> str:
            return text

    monkeypatch.setattr(normalize, "normalizer", Digits)
    assert selftest.run_self_test(tiny_model, device="cpu") == 1
    assert "text normalization left digits" in last_line(capsys.readouterr().out)


def test_silent_audio_is_caught(tmp_path: Path) -> None:
    import soundfile

    wav = tmp_path / "quiet.wav"
    soundfile.write(str(wav), np.zeros(1600, np.float32), 16000)
    with pytest.raises(selftest.SelfTestFailure, match="silent"):
        selftest.check_file(wav, 16000, 1600)
    with pytest.raises(selftest.SelfTestFailure, match="Hz"):
        selftest.check_file(wav, 48000, 1600)


# ---- installer/entry.py: nothing ends silently -------------------------------------------------
def load_entry():
    spec = importlib.util.spec_from_file_location("voxdesk_entry", ROOT / "installer" / "entry.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_crash_log_holds_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path))
    entry = load_entry()
    try:
        raise RuntimeError("torch DLL missing")
    except RuntimeError as exc:
        path = entry.write_crash_log(exc)
        message = entry.crash_message(exc, path)
    assert path.parent == tmp_path / "logs"
    text = path.read_text(encoding="utf-8")
    assert "Traceback" in text and "RuntimeError: torch DLL missing" in text
    assert str(path) in message and "\n" not in message
    assert entry.crash_message(VoxDeskError("The model folder is empty."), path).startswith(
        "The model folder is empty."
    )


def test_windowed_process_gets_a_console_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path))
    entry = load_entry()
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    assert entry.redirect_missing_streams() is True
    print("report line")
    sys.stdout.flush()
    assert (tmp_path / "logs" / entry.CONSOLE_LOG).read_text(encoding="utf-8") == "report line\n"
    sys.stdout.close()


def test_crash_in_main_exits_non_zero_with_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path))
    entry = load_entry()
    monkeypatch.setattr(entry.faulthandler, "enable", lambda *args, **kwargs: None)
    broken = type(sys)("app.cli")
    broken.main = lambda argv: 1 / 0
    monkeypatch.setitem(sys.modules, "app.cli", broken)
    monkeypatch.delitem(sys.modules, "PySide6.QtWidgets", raising=False)  # no dialog in a test run
    assert entry.main() == 1
    assert "unexpected error" in capsys.readouterr().err
    assert len(list((tmp_path / "logs").glob("crash-*.log"))) == 1


# ---- installer/rthook_portaudio.py --------------------------------------------------------------
def test_portaudio_hook_points_at_the_bundled_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = tmp_path / "libportaudio.so.2"
    bundled.write_bytes(b"")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: f"system-{name}")
    runpy.run_path(str(ROOT / "installer" / "rthook_portaudio.py"))
    assert ctypes.util.find_library("portaudio") == str(bundled)
    assert ctypes.util.find_library("sndfile") == "system-sndfile"


# ---- installer/rthook_bytecode_first.py ---------------------------------------------------------
def test_bundle_imports_bytecode_and_keeps_the_source_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import inspect
    import py_compile

    layout = 'VALUE = "{}"\n\n\ndef kernel():\n    return 1\n'
    (tmp_path / "bundled_mod.py").write_text(layout.format("bytecode"), encoding="utf-8")
    py_compile.compile(str(tmp_path / "bundled_mod.py"), cfile=str(tmp_path / "bundled_mod.pyc"))
    (tmp_path / "bundled_mod.py").write_text(layout.format("source"), encoding="utf-8")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    monkeypatch.setattr(sys, "path_hooks", list(sys.path_hooks))
    monkeypatch.setattr(sys, "path_importer_cache", dict(sys.path_importer_cache))
    monkeypatch.syspath_prepend(str(tmp_path))
    runpy.run_path(str(ROOT / "installer" / "rthook_bytecode_first.py"))
    module = importlib.import_module("bundled_mod")
    monkeypatch.delitem(sys.modules, "bundled_mod")
    assert module.VALUE == "bytecode"  # the .pyc won over the .py next to it
    assert module.__file__ == str(tmp_path / "bundled_mod.py")  # PyInstaller's inspect override needs this
    assert "VALUE" in inspect.getsource(module)
    assert "return 1" in inspect.getsource(module.kernel)  # what @triton.jit and TorchScript need


def test_self_test_arguments_are_parsed(
    tiny_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    import torch

    from app.cli import main

    seen = []
    monkeypatch.setattr(
        selftest, "run_self_test", lambda model_dir=None, device="auto": seen.append((model_dir, device)) or 0
    )
    assert main(["--self-test", "--device", "cpu", str(tiny_model)]) == 0
    assert main(["--self-test"]) == 0
    assert seen == [(str(tiny_model), "cpu"), (None, "auto")]
    with pytest.raises(SystemExit):
        main(["--self-test", "--device", "tpu"])
    assert "invalid choice: 'tpu'" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main(["--self-test", str(tiny_model), "--device", "cuda"]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "CUDA" in err
    assert len(seen) == 2
