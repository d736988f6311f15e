"""The README's two lines that call the server (curl, the openai client) work as written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf
from server_fixtures import start_live

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _line(start: str) -> str:
    return next(line for line in README.splitlines() if line.startswith(start))


@pytest.fixture(scope="module")
def small(tiny_v2, tmp_path_factory):
    """A server on the stock tiny model: its 256 positions keep README's open-ended requests short."""
    server = start_live(tiny_v2, tmp_path_factory.mktemp("readme-voices"))
    yield server
    server.server.stop()
    server.host.close()


@pytest.mark.parametrize("start", ["curl ", "python -c "])
def test_readme_calls_work(small, tmp_path, start):
    line = _line(start).replace("127.0.0.1:8000", f"127.0.0.1:{small.server.port}")
    if start == "curl ":
        if shutil.which("curl") is None:
            pytest.skip("curl is not installed")
        argv = ["bash", "-c", line]
    else:
        argv = ["bash", "-c", line.replace("python -c ", f"{sys.executable} -c ", 1)]
    subprocess.run(argv, cwd=tmp_path, check=True, timeout=120, capture_output=True)
    audio, rate = sf.read(tmp_path / "hello.wav")
    assert rate == 48000 and len(audio) > 0
    assert "voxdesk serve --model DIR" in README
