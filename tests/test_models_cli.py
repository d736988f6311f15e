"""``voxdesk models list`` and ``voxdesk models download NAME`` against 127.0.0.1 servers shaped
like the Hugging Face API (tests/test_download.py's and tests/test_asr.py's): the model manager's
catalog and downloader, a progress bar, licences shown and accepted, Ctrl+C and resume."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_asr import asr_hub  # noqa: F401
from test_download import hub  # noqa: F401
from tiny import tiny_v2  # noqa: F401

from app.cli import main
from app.models import licenses
from app.models.download import validate_model_dir

ROOT = Path(__file__).resolve().parent.parent


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _models(home: Path) -> Path:
    from app.paths import models_dir

    return models_dir()


def test_models_list_names_size_licence_and_state(home, capsys):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    keys = ("VoxCPM2", "VoxCPM1.5", "VoxCPM-0.5B", "Fun-CosyVoice3-0.5B", "CosyVoice2-0.5B", "IndexTTS-2.5",
            "IndexTTS-2.5-QwenEmotion", "SenseVoiceSmall", "CAMPlusSpeaker")  # fmt: skip
    for key in keys:
        assert f"\n{key} " in f"\n{out}"
    assert out.count("licence Apache-2.0") == 6 and "licence FunASR Model Open Source License" in out
    assert out.count("licence bilibili Model Use License Agreement") == 2
    assert "optional part, into the model's folder, about 1,518 MB" in out
    assert out.count("not downloaded") == 9 and "speaker similarity (training)" in out
    (_models(home) / "VoxCPM2").mkdir()
    (_models(home) / "VoxCPM2" / "model.safetensors.part").write_bytes(b"x")
    main(["models", "list"])
    assert "partly downloaded (download again to resume)" in capsys.readouterr().out


def test_a_name_that_is_no_model_is_one_line(home, capsys):
    assert main(["models", "download", "voxcpm"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could be VoxCPM2, VoxCPM1.5, VoxCPM-0.5B" in err
    assert main(["models", "download", "whisper"]) == 1
    assert "no model called 'whisper'" in capsys.readouterr().err


def test_download_a_model_with_progress(hub, home, capsys):  # noqa: F811
    assert main(["models", "download", "voxcpm2", "--mirror", hub.endpoint]) == 0
    out, err = capsys.readouterr()
    assert "VoxCPM2 (2B, 30 languages, 48 kHz): licence Apache-2.0" in out
    folder = _models(home) / "VoxCPM2"
    assert f"VoxCPM2 is ready in {folder}." in out
    assert validate_model_dir(folder) == []
    assert (folder / "model.safetensors").read_bytes() == hub.files["model.safetensors"]
    bars = err.splitlines()  # not a terminal: one line per tenth
    assert bars[-1].startswith(f"[{'#' * 30}] 100%") and 1 < len(bars) <= 11
    main(["models", "list"])
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].strip() == "speech model, about 4,957 MB, licence Apache-2.0; installed"
    assert not (_models(home) / licenses.RECORD).exists()  # nothing to accept for Apache-2.0


def test_the_recognizer_licence_must_be_accepted(asr_hub, home, capsys, monkeypatch):  # noqa: F811
    endpoint, served = asr_hub
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # noqa: SIM115  (not a terminal: no prompt)
    assert main(["models", "download", "sensevoice", "--mirror", endpoint]) == 1
    out, err = capsys.readouterr()
    assert "licence FunASR Model Open Source License Agreement (https://github.com/modelscope/FunASR" in out
    assert err.count("\n") == 1 and "--accept-license" in err
    assert served == [] and not (_models(home) / "speech-recognition" / "SenseVoiceSmall").exists()

    assert main(["models", "download", "sensevoice", "--mirror", endpoint, "--accept-license"]) == 0
    assert sorted(served) == ["model.int8.onnx", "tokens.txt"]
    record = json.loads((_models(home) / licenses.RECORD).read_text(encoding="utf-8"))
    assert record["SenseVoiceSmall"]["license"] == licenses.FUNASR_MODEL.name
    # accepted once is accepted: the same command without the flag runs (and finds it complete)
    capsys.readouterr()
    assert main(["models", "download", "SenseVoiceSmall", "--mirror", endpoint]) == 0
    assert sorted(served) == ["model.int8.onnx", "tokens.txt"]


def test_interactive_prompt_records_the_answer(asr_hub, home, capsys, monkeypatch):  # noqa: F811
    endpoint, served = asr_hub
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["models", "download", "sensevoice", "--mirror", endpoint]) == 1
    assert "Licence not accepted" in capsys.readouterr().err and served == []
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert main(["models", "download", "sensevoice", "--mirror", endpoint]) == 0
    assert licenses.accepted("SenseVoiceSmall", licenses.FUNASR_MODEL)


# ---- Ctrl+C and resume ----------------------------------------------------------------------
class SlowHub:
    """A Hugging Face-shaped server for one repo that sends files at about 1 MB/s, with Range."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.ranges = files, []
        hub_self = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = urllib.parse.urlsplit(self.path).path
                if path == "/api/models/openbmb/VoxCPM2/tree/main":
                    listing = [
                        {"type": "file", "path": k, "size": len(v), "lfs": {"oid": _sha(v)}}
                        for k, v in hub_self.files.items()
                    ]
                    return self._send(200, json.dumps(listing).encode())
                name = path.removeprefix("/openbmb/VoxCPM2/resolve/main/")
                data = hub_self.files[name]
                rng = self.headers.get("Range")
                start = int(rng.removeprefix("bytes=").rstrip("-")) if rng else 0
                hub_self.ranges.append((name, rng))
                return self._send(206 if rng else 200, data[start:], slow=len(data) > 2_000_000)

            def _send(self, status, body, slow=False):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(0, len(body), 65536):
                        self.wfile.write(body[i : i + 65536])
                        if slow:
                            time.sleep(0.06)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_keeps_a_resumable_part(tiny_v2, home, tmp_path, capsys):  # noqa: F811
    files = {p.name: p.read_bytes() for p in tiny_v2.iterdir() if p.is_file()}
    files["model.safetensors"] += b"\0" * (6_000_000 - len(files["model.safetensors"]))  # a slow, big one
    slow = SlowHub(files)
    try:
        part = _models(home) / "VoxCPM2" / "model.safetensors.part"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "app.cli", "models", "download", "VoxCPM2", "--mirror"]
        command.append(slow.endpoint)
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (part.exists() and part.stat().st_size > 0):
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        assert child.returncode == 130, err
        last = err.strip().splitlines()[-1]
        assert last.startswith("voxdesk: download stopped (") and last.endswith("run the same command again "
                                                                                 "to resume.")  # fmt: skip
        assert "Traceback" not in err
        kept = part.stat().st_size
        assert 0 < kept < len(files["model.safetensors"])
        assert main(["models", "download", "VoxCPM2", "--mirror", slow.endpoint]) == 0, capsys.readouterr()
        assert ("model.safetensors", f"bytes={kept}-") in slow.ranges
        assert (part.parent / "model.safetensors").read_bytes() == files["model.safetensors"]
        assert not part.exists()
    finally:
        slow.server.shutdown()
        slow.server.server_close()
