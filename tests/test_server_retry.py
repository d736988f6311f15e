"""The bad-case retry through ``voxdesk serve``: a whole-file response holds the last take only
(as official ``generate()``), a stream keeps its first (bytes sent cannot be taken back, and the
official package turns the retry off when streaming). Tiny model whose stop head never fires."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from server_fixtures import start_live
from tiny import set_stop_head
from ui_fixtures import write_ui_model

from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.events import AudioChunk, RequestFinished, RequestRetried

BODY = {"input": "Hi", "seed": 5, "inference_timesteps": 2, "response_format": "pcm"}


@pytest.fixture(scope="module")
def runaway(tmp_path_factory):
    model = set_stop_head(write_ui_model(tmp_path_factory.mktemp("runaway-api")), "never")
    server = start_live(model, tmp_path_factory.mktemp("runaway-voices"))
    yield server
    server.server.stop()
    server.host.close()


def _engine_audio(model_dir, retry: bool) -> np.ndarray:
    engine = Engine(EngineConfig(model_dir=str(model_dir), device="cpu"))
    engine.submit(SynthRequest("Hi", seed=5, inference_timesteps=2, retry_badcase=retry))
    chunks: list[np.ndarray] = []
    while True:
        for ev in engine.step():
            if isinstance(ev, AudioChunk):
                chunks.append(ev.samples)
            elif isinstance(ev, RequestRetried):
                chunks = []
            elif isinstance(ev, RequestFinished):
                return np.concatenate(chunks)


def _floats(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, "<i2").astype(np.float32) / 32768


def test_whole_file_retries_and_stream_keeps_the_first_take(runaway):
    whole = httpx.post(runaway.url + "/v1/audio/speech", json=BODY, timeout=120).content
    with httpx.stream(
        "POST", runaway.url + "/v1/audio/speech", json={**BODY, "stream_format": "audio"}, timeout=120
    ) as response:
        streamed = b"".join(response.iter_bytes())
    runaway.wait_idle()
    last, first = _engine_audio(runaway.model_dir, True), _engine_audio(runaway.model_dir, False)
    assert len(whole) == len(streamed) == 2 * len(last)  # every take runs to the same cap
    assert np.abs(_floats(whole) - np.clip(last, -1, 1)).max() < 1e-3
    assert np.abs(_floats(streamed) - np.clip(first, -1, 1)).max() < 1e-3
    assert whole != streamed
