"""``voxdesk serve`` with an IndexTTS-2.5 folder: /v1/models names its architecture and controls,
and a request with a reference clip is spoken (the same seed, the same audio)."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import soundfile
from server_fixtures import Live, start_live
from tiny_indextts import tiny_ix  # noqa: F401

from app.selftest import voice_clip


@pytest.fixture(scope="module")
def ix_live(tiny_ix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:  # noqa: F811
    server = start_live(tiny_ix, tmp_path_factory.mktemp("ix-voices"))
    yield server
    server.server.stop()
    server.host.close()


def _ref(rate: int = 24000) -> str:
    buf = io.BytesIO()
    soundfile.write(buf, voice_clip(rate, 2.0), rate, format="WAV")
    return base64.b64encode(buf.getvalue()).decode()


def test_the_server_speaks_with_a_reference_clip(ix_live) -> None:
    (model,) = httpx.get(ix_live.url + "/v1/models").json()["data"]
    assert model["architecture"] == "indextts25" and model["sample_rate"] == 22050
    assert model["controls"] == ["emotion", "emotion_text", "language", "reference", "speed"]
    client = ix_live.client(max_retries=0, timeout=300)

    def speak() -> bytes:
        return client.audio.speech.create(model="tts-1", voice="default", input="你好，世界。",
                                          response_format="pcm", extra_body={"seed": 1, "ref_audio": _ref()}
                                          ).content  # fmt: skip

    first = speak()
    assert len(first) > 22050  # PCM16: more than half a second
    assert speak() == first
