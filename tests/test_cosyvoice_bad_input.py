"""CosyVoice requests that cannot be spoken fail alone, with one plain line; the others go on.

One Fun-CosyVoice3 engine for the module; each test puts a good request beside the bad one and
checks the good one still equals the official golden.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from test_cosyvoice_parity import _prompt, check, run, user_request
from tiny_cosyvoice import tiny_cv3  # noqa: F401

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import RequestFailed
from app.engine.request import SynthRequest
from app.engine.voice import VoicePrompt

FAMILY = "cosyvoice3"


@pytest.fixture(scope="module")
def engine(tiny_cv3) -> Iterator[Engine]:  # noqa: F811
    torch.set_num_threads(2)
    config = EngineConfig(str(tiny_cv3), device="cpu", dtype="float32", threads=2, max_num_seqs=8,
                          max_model_len=512, cuda_graphs=False)  # fmt: skip
    eng = Engine(config)
    yield eng
    eng.shutdown()


def _failed(result: dict) -> str:
    end = result["end"]
    assert isinstance(end, RequestFailed), end
    assert "\n" not in end.message and "Traceback" not in end.message
    return end.message


@pytest.mark.parametrize(
    "audio",
    [np.zeros(16000, np.float32), np.full(16000, np.nan, np.float32), np.ones(100, np.float32) * 0.1],
    ids=["silent", "nan", "too-short"],
)
def test_unusable_voice_audio_fails_alone(engine: Engine, audio: np.ndarray) -> None:
    bad = user_request(FAMILY, "zero_shot", voice_audio=audio)
    results = list(run(engine, [bad, user_request(FAMILY, "zero_shot")]).items())
    assert "voice audio" in _failed(results[0][1])
    check(engine, FAMILY, "zero_shot", results[1][1], results[1][0])


def test_a_request_without_voice_is_refused(engine: Engine) -> None:
    (_rid, result), = run(engine, [SynthRequest("你好。", seed=1)]).items()
    assert "voice" in _failed(result)


@pytest.mark.parametrize("text", ["   ", "。，！"], ids=["blank", "punctuation"])
def test_empty_text_fails_alone(engine: Engine, text: str) -> None:
    audio, rate = _prompt()
    bad = SynthRequest(text, voice=VoicePrompt(reference_audio=audio, sample_rate=rate), seed=1)
    results = list(run(engine, [bad, user_request(FAMILY, "cross_lingual")]).items())
    assert "text" in _failed(results[0][1])
    check(engine, FAMILY, "cross_lingual", results[1][1], results[1][0])


def test_guidance_settings_are_refused(engine: Engine) -> None:
    audio, rate = _prompt()
    voice = VoicePrompt(reference_audio=audio, sample_rate=rate)
    (_rid, result), = run(engine, [SynthRequest("你好。", voice=voice, cfg_value=3.0)]).items()
    assert "cfg" in _failed(result)


def test_cancel_mid_generation_ends_only_that_request(engine: Engine) -> None:
    """The streaming request is cancelled at its first chunk; the other finishes as the golden."""
    cancelled: list[int] = []

    def on_chunk(eng: Engine, ev, ids: list[int]) -> None:  # noqa: ANN001
        if ev.request_id == ids[0] and not cancelled:
            eng.cancel(ids[0])
            cancelled.append(ids[0])

    stream = user_request(FAMILY, "stream")
    results = list(run(engine, [stream, user_request(FAMILY, "zero_shot")], on_chunk).items())
    assert cancelled and _failed(results[0][1]) == "Cancelled."
    assert len(results[0][1]["chunks"]) == 1
    check(engine, FAMILY, "zero_shot", results[1][1], results[1][0])


def test_non_finite_mel_fails_alone(engine: Engine) -> None:
    """A voice whose cached prompt mel is damaged (NaN) makes a non-finite mel for its request."""
    runner = engine.runner
    audio, rate = _prompt()
    good = VoicePrompt(reference_audio=audio, sample_rate=rate)
    _voice, entries = runner.resolve_voice(good)
    feat = entries["cv_prompt_feat"].copy()
    feat[3, 5] = np.nan
    damaged = VoicePrompt(
        reference_audio=audio, sample_rate=rate, features={**entries, "cv_prompt_feat": feat}
    )
    bad = SynthRequest("Hello world.", voice=damaged, seed=1235, stream=False)
    results = list(run(engine, [bad, user_request(FAMILY, "cross_lingual")]).items())
    assert "invalid audio" in _failed(results[0][1])
    check(engine, FAMILY, "cross_lingual", results[1][1], results[1][0])
