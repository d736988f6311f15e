"""IndexTTS-2.5's controls through the engine: each request's audio equals ``reference.synthesize``
with the same control, alone and in one batch of requests with different controls and seeds.

The reference is held to the official ``infer`` for each control by tests/test_indextts_parity.py
(the goldens of tests/data/indextts/infer.json); here the engine's audio must equal the reference's
within 1e-5 (and so the goldens within 1e-3 of full scale, checked too). The controls reach the model
through the request: ``emotion`` (a second clip with its weight, 8 weights, a description read by
the tiny QwenEmotion), ``speed`` (the official ``duration_factor`` = 1 / speed) and ``language``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tiny_indextts import tiny_ix  # noqa: F401

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import EmotionControl, SynthRequest
from app.engine.voice import VoicePrompt
from app.models.indextts.beam import BeamParams
from app.models.indextts.decoder import PEAK
from app.models.indextts.models import IndexModels
from app.models.indextts.pipeline import parts_from
from app.models.indextts.reference import synthesize
from app.models.indextts.voice import Emotion, Voice

DATA = Path(__file__).parent / "data" / "indextts"
GOLD = json.loads((DATA / "infer.json").read_text(encoding="utf-8"))
CLIPS = {k: v.astype(np.float32) / 32768 for k, v in np.load(DATA / "infer_clips.npz").items()}
RATE = GOLD["rate"]
PARAMS = BeamParams(max_mel_tokens=GOLD["max_mel_tokens"])
SPANISH = ("Hola, ¿qué tal?", "es", 7)  # the script says "en": only the request's language gives "es"


def _options(name: str) -> dict:
    return GOLD["cases"][name]["options"]


# per case: the request's controls, and the reference's (its Emotion and duration factor)
ALPHA = _options("emotion_audio")["emo_alpha"]
CONTROLS = {
    "emotion_audio": (
        {"emotion": EmotionControl(clip=CLIPS["emotion"], clip_rate=RATE, weight=ALPHA)},
        {"emotion": Emotion.from_clip(CLIPS["emotion"], RATE, ALPHA)},
    ),
    "emotion_vector": (
        {"emotion": EmotionControl(vector=tuple(_options("emotion_vector")["emo_vector"]))},
        {"emotion": Emotion.from_vector(_options("emotion_vector")["emo_vector"])},
    ),
    "emotion_text": (
        {"emotion": EmotionControl(text=_options("emotion_text")["emo_text"])},
        {"emotion": Emotion.from_text(_options("emotion_text")["emo_text"])},
    ),
    "duration_075": ({"speed": 1 / 0.75}, {"duration_factor": 0.75}),
    "duration_150": ({"speed": 1 / 1.5}, {"duration_factor": 1.5}),
}  # fmt: skip
CASES = [*CONTROLS, "language"]

pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def models(tiny_ix: Path) -> IndexModels:  # noqa: F811
    return IndexModels.load(tiny_ix)


def _request(name: str) -> SynthRequest:
    voice = VoicePrompt(reference_audio=CLIPS["speaker"], sample_rate=RATE)
    if name == "language":
        text, lang, seed = SPANISH
        return SynthRequest(text=text, voice=voice, seed=seed, language=lang)
    case = GOLD["cases"][name]
    return SynthRequest(text=case["text"], voice=voice, seed=case["seed"], **CONTROLS[name][0])


@pytest.fixture(scope="module")
def expected(models: IndexModels) -> dict[str, np.ndarray]:
    """Each case's samples from ``reference.synthesize`` (the voice built once: it draws as new)."""
    voice = Voice.from_audio(models, CLIPS["speaker"], RATE)
    out = {}
    for name in CASES:
        if name == "language":
            text, lang, seed = SPANISH
            ref = synthesize(models, text, lang, CLIPS["speaker"], RATE, seed=seed, params=PARAMS,
                             voice=voice)  # fmt: skip
        else:
            case = GOLD["cases"][name]
            ref = synthesize(models, case["text"], case["lang"], CLIPS["speaker"], RATE, seed=case["seed"],
                             params=PARAMS, voice=voice, **CONTROLS[name][1])  # fmt: skip
            assert ref.codes == case["codes"]
        out[name] = ref.wav.numpy() / PEAK
    return out


@pytest.fixture(scope="module")
def engine(tiny_ix: Path, models: IndexModels) -> Engine:  # noqa: F811
    config = EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", block_size=4,
                          max_num_seqs=len(CASES), max_model_len=256)  # fmt: skip
    return Engine(config, model=parts_from(models, PARAMS))


def run(engine: Engine, names: list[str]) -> dict[str, np.ndarray]:
    """Submit the cases' requests together; each one's audio (all must finish)."""
    ids = {engine.submit(_request(name)): name for name in names}
    audio: dict[int, list[np.ndarray]] = {rid: [] for rid in ids}
    finished = []
    while engine.has_work():
        for event in engine.step():
            if isinstance(event, AudioChunk):
                audio[event.request_id].append(event.samples)
            elif isinstance(event, RequestFinished):
                finished.append(event.request_id)
            elif isinstance(event, RequestFailed):
                pytest.fail(f"{ids[event.request_id]}: {event.message}")
    assert sorted(finished) == sorted(ids)
    return {ids[rid]: np.concatenate(chunks) for rid, chunks in audio.items()}


def _close(name: str, got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape, name
    assert np.abs(got - want).max() <= 1e-5, name
    if name != "language":  # and so the official infer's float wav
        official = np.load(DATA / f"infer_{name}.npz")["wav"] / PEAK
        assert np.abs(got - official).max() <= 1e-3, name


def test_the_family_names_its_controls(engine: Engine, models: IndexModels) -> None:
    """Speed is its own (no time-stretch), emotion text only with the folder's QwenEmotion."""
    info = engine.info
    assert info.controls == {"reference", "speed", "emotion", "emotion_text", "language"}
    assert info.languages == ("zh", "en", "ja", "ar", "es") and engine.runner.native_speed
    assert not parts_from(dataclasses.replace(models, qwen=None)).emotion_text


@pytest.mark.parametrize("name", CASES)
def test_each_control_alone_equals_the_reference(engine: Engine, expected, name: str) -> None:
    _close(name, run(engine, [name])[name], expected[name])


def test_every_control_in_one_batch_equals_its_reference(engine: Engine, expected) -> None:
    got = run(engine, CASES)
    for name in CASES:
        _close(name, got[name], expected[name])


def test_a_control_it_cannot_honour_is_one_line(tiny_ix: Path, models: IndexModels) -> None:  # noqa: F811
    """A description without QwenEmotion says what to download; a language it does not name is refused."""
    bare = dataclasses.replace(models, qwen=None)
    config = EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", max_num_seqs=2,
                          max_model_len=256)  # fmt: skip
    engine = Engine(config, model=parts_from(bare, PARAMS))
    assert not engine.info.has("emotion_text")
    voice = VoicePrompt(reference_audio=CLIPS["speaker"], sample_rate=RATE)
    text = engine.submit(SynthRequest("你好。", voice=voice, emotion=EmotionControl(text="calm")))
    lang = engine.submit(SynthRequest("Bonjour.", voice=voice, language="fr"))
    failed = {e.request_id: e.message for e in engine.step() if isinstance(e, RequestFailed)}
    assert "QwenEmotion" in failed[text] and "\n" not in failed[text]
    assert failed[lang] == "IndexTTS-2.5 does not speak 'fr': choose one of zh, en, ja, ar, es, or automatic."
    assert not engine.has_work()
