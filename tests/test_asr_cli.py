"""``voxdesk transcribe FILE [--language …] [--model DIR]`` on the tiny recognizer."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
from tiny_asr import tone_words, write_tiny_sensevoice

from app.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_transcribe_prints_the_text(tiny_asr, tmp_path, capsys):
    wav = tmp_path / "me.wav"
    audio = soxr.resample(tone_words([0, 1, 4, 5]), 16000, 44100)
    sf.write(wav, np.stack([audio, audio], axis=1), 44100)  # stereo, 44.1 kHz
    code, out, err = _run(["transcribe", str(wav), "--model", str(tiny_asr), "--language", "zh"], capsys)
    assert (code, out, err) == (0, "hello world你好\n", "")


def test_transcribe_errors_are_one_line(tiny_asr, tmp_path, capsys, monkeypatch):
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(16000, np.float32), 16000)
    code, out, err = _run(["transcribe", str(silent), "--model", str(tiny_asr)], capsys)
    assert (code, out) == (1, "")
    assert err == "voxdesk: The recording is silent: there is no speech to recognize.\n"

    code, _, err = _run(["transcribe", str(silent), "--model", str(tiny_asr), "--language", "xx"], capsys)
    assert code == 1 and "does not know the language “xx”" in err and err.count("\n") == 1

    code, _, err = _run(["transcribe", str(tmp_path / "nope.wav"), "--model", str(tiny_asr)], capsys)
    assert code == 1 and err.startswith("voxdesk: ") and err.count("\n") == 1

    damaged = write_tiny_sensevoice(tmp_path / "damaged")
    (damaged / "model.int8.onnx").write_bytes(b"\x08\x07")
    code, _, err = _run(["transcribe", str(silent), "--model", str(damaged)], capsys)
    assert code == 1 and "damaged or incomplete" in err and err.count("\n") == 1

    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    code, _, err = _run(["transcribe", str(silent)], capsys)
    assert code == 1 and "No speech recognizer is installed" in err and err.count("\n") == 1


def test_transcribe_from_the_command_line(tiny_asr, tmp_path):
    wav = tmp_path / "a.flac"
    sf.write(wav, tone_words([8, 9]), 16000)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
         "transcribe", str(wav), "--model", str(tiny_asr)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "yes no\n"), done.stderr


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev/zero are POSIX")
def test_transcribe_names_devices_and_fifos_and_never_reads_them(tiny_asr, tmp_path, capsys):
    fifo = tmp_path / "pipe.wav"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    code, out, err = _run(["transcribe", str(fifo), "--model", str(tiny_asr)], capsys)
    assert (code, out) == (1, "") and "is a named pipe (FIFO), not an audio file" in err
    code, out, err = _run(["transcribe", "/dev/zero", "--model", str(tiny_asr)], capsys)
    assert (code, out) == (1, "") and "/dev/zero is a device, not an audio file" in err
    assert err.count("\n") == 1 and "folder" not in err
    code, _, err = _run(["transcribe", str(tmp_path), "--model", str(tiny_asr)], capsys)
    assert code == 1 and "is a folder" in err
