"""``voxdesk serve`` as a user starts it: a process that prints its address, answers, and stops."""

from __future__ import annotations

import signal
import subprocess
import sys

import httpx
from server_fixtures import api_model  # noqa: F401


def test_voxdesk_serve_starts_answers_and_stops(api_model, tmp_path):  # noqa: F811
    cmd = [sys.executable, "-m", "app.cli", "serve", "--model", str(api_model), "--port", "0",
           "--device", "cpu", "--voices", str(tmp_path / "voices")]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("VoxDesk speech server on http://127.0.0.1:"), proc.stderr.read()
        url = line.split()[4].removesuffix("/v1")
        assert httpx.get(url + "/health").json()["status"] == "ok"
        body = {"model": "tts-1", "input": "Hi.", "voice": "default", "response_format": "wav",
                "min_new_tokens": 4, "max_new_tokens": 4}  # fmt: skip
        response = httpx.post(url + "/v1/audio/speech", json=body, timeout=60)
        assert response.status_code == 200 and response.content[:4] == b"RIFF"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
