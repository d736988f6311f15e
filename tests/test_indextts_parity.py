"""One whole IndexTTS-2.5 request (app/models/indextts/reference.py) against the official ``infer``.

The goldens (tests/data/indextts/README.md, ``infer.json`` and ``infer_<case>.npz``) are the
official ``IndexTTS2.infer`` on the tiny folder, seeded before each call: the segments' text ids,
the GPT codes of each segment and the float samples before int16. Each control must give the same
ids and codes and samples within 1e-3 of full scale (measured: at most 2.44e-6, two_segments).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts.beam import BeamParams
from app.models.indextts.decoder import PEAK, silence_samples
from app.models.indextts.models import IndexModels
from app.models.indextts.reference import synthesize
from app.models.indextts.voice import Emotion, Voice

DATA = Path(__file__).parent / "data" / "indextts"
GOLD = json.loads((DATA / "infer.json").read_text(encoding="utf-8"))
CLIPS = {k: v.astype(np.float32) / 32768 for k, v in np.load(DATA / "infer_clips.npz").items()}
RATE = GOLD["rate"]
TOL = 1e-3  # of full scale


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def models(tiny_ix: Path) -> IndexModels:  # noqa: F811
    return IndexModels.load(tiny_ix)


@pytest.fixture(scope="module")
def voice(models: IndexModels) -> Voice:
    """The speaker clip's conditions, built once (``synthesize`` draws as for a new voice anyway)."""
    return Voice.from_audio(models, CLIPS["speaker"], RATE)


def check(models: IndexModels, voice: Voice | None, name: str, emotion: Emotion | None = None) -> float:
    """Run case ``name`` of the goldens; assert ids and codes equal, audio close and the generator
    where the official global one was after the call; the max difference."""
    case = GOLD["cases"][name]
    options = case["options"]
    generator = torch.Generator().manual_seed(case["seed"])
    out = synthesize(models, case["text"], case["lang"], CLIPS["speaker"], RATE, emotion=emotion,
                     duration_factor=options.get("duration_factor", 1.0), seed=case["seed"],
                     params=BeamParams(max_mel_tokens=GOLD["max_mel_tokens"]),
                     max_tokens=options.get("max_text_tokens_per_segment", 120), voice=voice,
                     generator=generator)  # fmt: skip
    assert out.segments == case["segments"]
    assert out.codes == case["codes"]
    assert torch.rand(1, generator=generator).item() == case["next_torch"]  # every draw, none more
    want = np.load(DATA / f"infer_{name}.npz")["wav"]
    got = out.wav.numpy()
    assert got.shape == want.shape
    diff = float(np.abs(got - want).max()) / PEAK
    assert diff < TOL, f"{name}: audio differs by {diff:.2e} of full scale"
    print(f"{name}: max difference {diff:.2e} of full scale")
    return diff


def test_plain_clone_matches_official(models: IndexModels) -> None:
    """The whole path, the voice's conditions built from the clip by ``synthesize`` itself."""
    check(models, None, "plain")


def test_emotion_audio_matches_official(models: IndexModels, voice: Voice) -> None:
    alpha = GOLD["cases"]["emotion_audio"]["options"]["emo_alpha"]
    check(models, voice, "emotion_audio", Emotion.from_clip(CLIPS["emotion"], RATE, alpha))


def test_emotion_vector_matches_official(models: IndexModels, voice: Voice) -> None:
    vector = GOLD["cases"]["emotion_vector"]["options"]["emo_vector"]
    check(models, voice, "emotion_vector", Emotion.from_vector(vector))


def test_emotion_text_matches_official(models: IndexModels, voice: Voice) -> None:
    text = GOLD["cases"]["emotion_text"]["options"]["emo_text"]
    check(models, voice, "emotion_text", Emotion.from_text(text))


def test_duration_factor_matches_official(models: IndexModels, voice: Voice) -> None:
    """0.75 and 1.5: the same codes (same seed) stretched to other lengths."""
    short, long = (GOLD["cases"][name] for name in ("duration_075", "duration_150"))
    assert short["codes"] == long["codes"]
    check(models, voice, "duration_075")
    check(models, voice, "duration_150")
    assert short["segment_samples"][0] < long["segment_samples"][0]


def test_two_segments_match_official(models: IndexModels, voice: Voice) -> None:
    """Two segments, each with its own GPT draws and noise, joined by 200 ms of zeros."""
    case = GOLD["cases"]["two_segments"]
    assert len(case["segments"]) == 2
    assert case["silence_samples"] == [silence_samples()]
    check(models, voice, "two_segments")


def test_missing_parts_are_named_in_one_line(tiny_ix: Path, tmp_path: Path,  # noqa: F811
                                             models: IndexModels, voice: Voice) -> None:  # fmt: skip
    """No vocoder: the folder is refused before anything loads; no QwenEmotion or matrices: the
    controls that need them say so, plain cloning is unaffected."""
    for entry in tiny_ix.iterdir():
        if entry.name != "hf_cache":
            (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "hf_cache").mkdir()
    for entry in (tiny_ix / "hf_cache").iterdir():
        if entry.name != "bigvgan":
            (tmp_path / "hf_cache" / entry.name).symlink_to(entry)
    with pytest.raises(VoxDeskError, match="BigVGAN vocoder") as err:
        IndexModels.load(tmp_path)
    assert "\n" not in str(err.value)
    bare = dataclasses.replace(models, qwen=None, matrices=None)
    for emotion, words in ((Emotion.from_text("calm"), "QwenEmotion"),
                           (Emotion.from_vector([0.1] * 8), "emotion matrices")):  # fmt: skip
        with pytest.raises(VoxDeskError, match=words):
            synthesize(bare, "你好", "zh", CLIPS["speaker"], RATE, emotion=emotion, voice=voice)


def test_bad_emotion_vector_is_refused() -> None:
    with pytest.raises(VoxDeskError, match="8 weights"):
        Emotion.from_vector([0.5, 0.5])
    with pytest.raises(VoxDeskError, match="add up to"):
        Emotion.from_vector([0.5] * 8)
