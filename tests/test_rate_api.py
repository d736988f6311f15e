"""The speaking rate through the faces: the server's OpenAI ``speed``, ``voxdesk synth --speed``
(local engine and ``--server``)."""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf
from server_fixtures import api_model, live  # noqa: F401

from app.audio.stretch import change_rate
from app.cli import main

TEXT = "Hello world. " * 5
LONG = {"seed": 3, "min_new_tokens": 60, "max_new_tokens": 60}  # 2880 samples at 48 kHz


def _served(live, **extra) -> np.ndarray:  # noqa: F811
    body = {**LONG, **extra}
    reply = live.client().audio.speech.create(
        model="tts-1", voice="default", input=TEXT, response_format="wav", extra_body=body
    )
    audio, rate = sf.read(io.BytesIO(reply.content), dtype="float32")
    assert rate == 48000
    return audio


def test_server_speed_and_synth_speed(live, tmp_path, capsys):  # noqa: F811
    plain = _served(live)
    fast = _served(live, speed=1.5)
    assert len(plain) == 2880 and len(fast) == round(len(plain) / 1.5)
    # the stretched stream is the stretch of the plain take (up to 16-bit rounding of both files;
    # the tiny model's random output is loud, so the files clip it at full scale)
    assert np.abs(fast - np.clip(change_rate(plain, 48000, 1.5), -1, 1)).max() < 2e-3
    slow = live.client().audio.speech.with_streaming_response.create(
        model="tts-1", voice="default", input=TEXT, response_format="pcm", stream_format="audio",
        extra_body={**LONG, "speed": 0.8},
    )  # fmt: skip
    with slow as response:
        pcm = b"".join(response.iter_bytes())
    assert len(pcm) // 2 == round(len(plain) / 0.8)

    settings = ["--text", TEXT, "--seed", "3", "--min-len", "60", "--max-len", "60", "--speed", "1.5"]
    local = tmp_path / "local.wav"
    model = ["--model", str(live.model_dir), "--device", "cpu", "--threads", "1"]
    assert main(["synth", *model, *settings, "--out", str(local)]) == 0
    remote = tmp_path / "remote.wav"
    assert main(["synth", "--server", live.url, *settings, "--out", str(remote)]) == 0
    capsys.readouterr()
    for path in (local, remote):
        audio, _ = sf.read(path, dtype="float32")
        assert len(audio) == len(fast)
        assert np.abs(audio - fast).max() < 2e-3, path  # the same engine, seed and stretch


def test_a_speed_out_of_range_is_one_line(live, tmp_path, capsys):  # noqa: F811
    code = main(["synth", "--model", str(live.model_dir), "--text", "Hi.", "--speed", "3",
                 "--out", str(tmp_path / "x.wav")])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "speaking rate 3.0 is out of range" in err and "Traceback" not in err
    assert not (tmp_path / "x.wav").exists()
