"""CosyVoice through the engine beyond the goldens: a long text spoken piece by piece, and
requests that cannot be spoken, which fail alone with one plain line while the others go on.

One Fun-CosyVoice3 engine for the module; each bad-input test puts a good request beside the
bad one and checks the good one still equals the official golden.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from test_cosyvoice_parity import V3_SYSTEM, _prompt, check, run, user_request
from tiny_cosyvoice import tiny_cv3  # noqa: F401

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import RequestFailed
from app.engine.request import SynthRequest
from app.engine.voice import VoicePrompt
from app.models.cosyvoice.lm_loop import LMRequest, generate
from app.models.cosyvoice.stream import MAX_SILENT, SILENT_V3
from app.models.cosyvoice.text import request_texts

FAMILY = "cosyvoice3"


@pytest.fixture(scope="module")
def engine(tiny_cv3) -> Iterator[Engine]:  # noqa: F811
    torch.set_num_threads(2)
    config = EngineConfig(str(tiny_cv3), device="cpu", dtype="float32", threads=2, max_num_seqs=8,
                          max_model_len=2048, cuda_graphs=False)  # fmt: skip
    eng = Engine(config)
    yield eng
    eng.shutdown()


LONG = "今天天气很好，我们一起去公园散步吧，顺便看看湖边的风景和正在开放的花朵。" * 3


def _drop_silence(tokens: list[int]) -> list[int]:
    """The official llm_job's rule for CosyVoice3: a silent token after five in a row is dropped."""
    out, run_ = [], 0
    for t in tokens:
        run_ = run_ + 1 if t in SILENT_V3 else 0
        if run_ <= MAX_SILENT:
            out.append(t)
    return out


def test_long_text_is_spoken_piece_by_piece(engine: Engine) -> None:
    """A text the official splits in two is two LM runs, in order, on one generator, into one
    stream: the tokens equal two runs of the reference LM loop, one chunk per piece."""
    runner = engine.runner
    audio, rate = _prompt()
    prompt = "希望你以后能够做的比我还好呦。"
    voice = VoicePrompt(prompt_audio=audio, prompt_text=prompt, sample_rate=rate)
    req = SynthRequest(LONG, voice=voice, seed=11, stream=False)
    (_rid, result), = run(engine, [req]).items()
    assert not isinstance(result["end"], RequestFailed), result["end"]
    pieces, prompt_slot = request_texts(FAMILY, "zero_shot", LONG, prompt, encode=runner.tokenizer.encode)
    assert len(pieces) == 2 and prompt_slot.startswith(V3_SYSTEM)
    speech = torch.from_numpy(runner.voices.resolve(voice)[0].speech_tokens)
    gen = torch.Generator().manual_seed(11)
    expected = []
    for piece in pieces:
        ids = runner.tokenizer.encode(prompt_slot) + runner.tokenizer.encode(piece)
        lm_req = LMRequest(torch.tensor(ids), len(runner.tokenizer.encode(piece)), speech, gen)
        expected.append(_drop_silence(generate(runner.lm, [lm_req], runner.params)[0]))
    assert result["tokens"] == expected[0] + expected[1]
    assert [len(c) for c in result["chunks"]] == [2 * 480 * len(t) for t in expected]


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
