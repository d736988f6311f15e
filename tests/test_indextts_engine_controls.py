"""IndexTTS-2.5's controls through the engine: each request's audio equals the single-request
reference, alone and in one batch of requests with different controls and seeds.

The controls reach the model through the request: ``emotion`` (a second clip with its weight, 8
weights, a description read by the tiny QwenEmotion), ``speed`` (the official ``duration_factor`` =
1 / speed) and ``language``. For the controls the official goldens cover (tests/data/indextts/
infer.json), the reference run is the golden itself: ``reference.synthesize`` gives those samples
within 2.44e-6 of full scale (tests/test_indextts_parity.py, which runs it), so the engine is held
to them within 1e-5 without running the reference again (the S2Mel + BigVGAN decode is what costs).
A given language has no golden: it is held to a ``reference.synthesize`` run here.
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
from app.models.indextts.runner import CONTROLS as IX
from app.models.indextts.voice import ENTRIES
from app.voices import latents
from app.voices.cloning import to_voice_prompt
from app.voices.library import VoiceLibrary

DATA = Path(__file__).parent / "data" / "indextts"
GOLD = json.loads((DATA / "infer.json").read_text(encoding="utf-8"))
CLIPS = {k: v.astype(np.float32) / 32768 for k, v in np.load(DATA / "infer_clips.npz").items()}
RATE = GOLD["rate"]
PARAMS = BeamParams(max_mel_tokens=GOLD["max_mel_tokens"])
SPANISH = ("Hola, ¿qué tal?", "es", 7)  # the script says "en": only the request's language gives "es"


def _options(name: str) -> dict:
    return GOLD["cases"][name]["options"]


# per golden case: the request's controls (the official options in the request's words)
CONTROLS = {
    "emotion_audio": {"emotion": EmotionControl(clip=CLIPS["emotion"], clip_rate=RATE,
                                                weight=_options("emotion_audio")["emo_alpha"])},
    "emotion_vector": {"emotion": EmotionControl(vector=tuple(_options("emotion_vector")["emo_vector"]))},
    "emotion_text": {"emotion": EmotionControl(text=_options("emotion_text")["emo_text"])},
    "duration_075": {"speed": 1 / _options("duration_075")["duration_factor"]},
    "duration_150": {"speed": 1 / _options("duration_150")["duration_factor"]},
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
    return SynthRequest(text=case["text"], voice=voice, seed=case["seed"], **CONTROLS[name])


@pytest.fixture(scope="module")
def expected(models: IndexModels) -> dict[str, np.ndarray]:
    """Each case's reference samples: the official golden, or for the language a
    ``reference.synthesize`` run."""
    out = {name: np.load(DATA / f"infer_{name}.npz")["wav"] / PEAK for name in CONTROLS}
    text, lang, seed = SPANISH
    out["language"] = synthesize(models, text, lang, CLIPS["speaker"], RATE, seed=seed,
                                 params=PARAMS).wav.numpy() / PEAK  # fmt: skip
    return out


@pytest.fixture(scope="module")
def engine(tiny_ix: Path, models: IndexModels) -> Engine:  # noqa: F811
    config = EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", block_size=4,
                          max_num_seqs=len(CASES), max_model_len=256)  # fmt: skip
    return Engine(config, model=parts_from(models, PARAMS))


def run(engine: Engine, names: list[str], requests: list[SynthRequest] | None = None) -> dict:
    """Submit the cases' requests (or ``requests``, under ``names``) together; each one's audio
    (all must finish)."""
    pairs = zip(names, requests, strict=True) if requests else ((n, _request(n)) for n in names)
    ids = {engine.submit(request): name for name, request in pairs}
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
    diff = float(np.abs(got - want).max())
    assert diff <= 1e-5, f"{name}: {diff:.2e}"
    print(f"{name}: max difference {diff:.2e} of full scale")


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


def test_the_voice_library_keeps_a_voices_conditions(tiny_ix: Path, models: IndexModels,  # noqa: F811
                                                     tmp_path: Path) -> None:  # fmt: skip
    """The speaker clip's conditions are computed once and kept per voice and model (as CosyVoice's
    features); an engine that reads them computes nothing and speaks the same samples as from the
    clip (the golden; the draws a new voice makes are skipped either way), and a damaged entry is
    computed again."""
    assert ENTRIES == latents.INDEXTTS
    lib = VoiceLibrary(tmp_path / "voices")
    voice = lib.create_from_samples(CLIPS["speaker"], RATE, "Anna")
    assert np.array_equal(lib.audio(voice), CLIPS["speaker"])  # the same clip as the golden's

    def prompt():
        return to_voice_prompt(lib, voice, 16000, architecture="indextts25", model_id="ix", controls=IX)

    def engine() -> Engine:
        config = EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", block_size=4,
                              max_num_seqs=1, max_model_len=256)  # fmt: skip
        return Engine(config, model=parts_from(models, PARAMS))

    first = engine()
    bare = prompt()
    assert bare.features is None
    resolved, entries = first.runner.resolve_voice(bare)
    assert sorted(entries) == sorted(ENTRIES) and sorted(resolved.features) == sorted(ENTRIES)
    for name, array in entries.items():
        latents.store(lib, voice, "ix", name, array)
    cached = prompt()
    assert sorted(cached.features) == sorted(ENTRIES)
    second = engine()
    assert second.runner.resolve_voice(cached) == (cached, {})  # nothing computed
    request = dataclasses.replace(_request("duration_075"), voice=cached)
    want = np.load(DATA / "infer_duration_075.npz")["wav"] / PEAK
    _close("cached voice", run(second, ["x"], [request])["x"], want)

    path = latents._file(lib, voice, "ix", "ix_ref_mel")
    path.write_bytes(b"not an array")
    damaged = prompt()
    assert "ix_ref_mel" not in damaged.features and not path.exists()
    assert sorted(engine().runner.resolve_voice(damaged)[1]) == sorted(ENTRIES)  # computed again
