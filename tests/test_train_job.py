"""The training job on the tiny model (CPU): checkpoints, exact resume, cancel, validation, the voice."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import soundfile as sf
import torch
from safetensors.torch import load_file
from tiny_asr import tone_words

from app.asr import load_recognizer
from app.train.clips import Clip, DataSet
from app.train.job import TrainConfig, TrainJob
from app.train.lora import read_config
from app.train.plan import plan_training
from app.train.speaker import SpeakerModel
from app.train.validate import Validator
from app.voices.library import VoiceLibrary

TEXTS = ["hello world", "voice desk", "good morning", "the quick brown fox", "yes or no", "hello voice"]


def tiny_dataset(folder, n: int = 6) -> DataSet:
    """Clips short enough for the tiny model (its VAE makes 1000 patches a second)."""
    ds = DataSet.create(folder)
    rng = np.random.default_rng(0)
    clips = []
    for i in range(n):
        path = folder / "clips" / f"c{i}.wav"
        held_out = i == n - 1  # never trained on, so it may be as long as a real clip
        audio = tone_words([0, 1]) if held_out else (0.2 * rng.standard_normal(1200)).astype(np.float32)
        sf.write(path, audio, 16000)
        clips.append(
            Clip(f"c{i}", path, len(audio) / 16000, TEXTS[i % len(TEXTS)], 1.0, None, held_out=held_out)
        )
    ds.clips = clips
    ds.save()
    return ds


def _run(job: TrainJob, stop_at: int | None = None, **kw):
    seen = []

    def should_stop():
        return "pause" if stop_at is not None and seen and seen[-1].step >= stop_at else None

    end = job.run(seen.append, should_stop, **kw)
    return end, seen


def _lora(job: TrainJob) -> dict[str, torch.Tensor]:
    return load_file(str(job.checkpoints()[-1].folder / "lora_weights.safetensors"))


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_v2):
    ds = tiny_dataset(tmp_path_factory.mktemp("data"))
    plan = replace(plan_training(tiny_v2, "cpu", None), batch_size=2, grad_accum=2)  # small steps
    cfg = TrainConfig(steps=4, lr=1e-3, r=4, alpha=8, save_every=2, validate_every=100, seed=5)
    return ds, plan, cfg


@pytest.fixture(scope="module")
def straight(tmp_path_factory, tiny_v2, setup):
    """A run that was never interrupted, and its progress reports."""
    ds, plan, cfg = setup
    job = TrainJob.create(tmp_path_factory.mktemp("straight"), tiny_v2, ds, cfg, plan)
    end, seen = _run(job)
    assert end.phase == "done"
    return job, seen


def test_pause_and_resume_take_the_same_steps(tmp_path, tiny_v2, setup, straight):
    ds, plan, cfg = setup
    straight, seen = straight
    assert [c.step for c in straight.checkpoints()] == [2, 4]
    assert [p.step for p in seen if p.phase == "training"] == [1, 2, 3, 4]
    assert all(p.eta_seconds is not None and p.loss is not None for p in seen if p.phase == "training")
    assert [s for s, _ in straight.losses()] == [1, 2, 3, 4]

    paused = TrainJob.create(tmp_path / "b", tiny_v2, ds, cfg, plan)
    end, _ = _run(paused, stop_at=3)
    assert (end.phase, end.step) == ("paused", 3) and [c.step for c in paused.checkpoints()] == [2, 3]
    end, seen = _run(TrainJob.open(tmp_path / "b"))  # as after a restart
    assert end.phase == "done" and seen[1].step == 4
    a, b = _lora(straight), _lora(paused)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert paused.losses() == straight.losses()

    # The folder is the official LoRA format.
    info = json.loads((straight.checkpoints()[-1].folder / "lora_config.json").read_text())
    assert info["base_model"] == str(tiny_v2.resolve())
    assert read_config(straight.checkpoints()[-1].folder) | {"r": 4} == info["lora_config"]
    assert info["lora_config"]["enable_lm"] and info["lora_config"]["enable_dit"]
    assert any(k.startswith("feat_decoder.estimator.decoder.layers.0.self_attn.q_proj.lora_A") for k in a)


def test_a_crash_resumes_from_the_last_checkpoint(tmp_path, tiny_v2, setup, straight):
    ds, plan, cfg = setup
    straight = straight[0]
    crashed = TrainJob.create(tmp_path / "b", tiny_v2, ds, cfg, plan)
    seen = []

    def crash():
        if seen and seen[-1].step == 3 and seen[-1].phase == "training":
            raise KeyboardInterrupt  # killed between steps: step 3 is in losses.jsonl, not saved
        return None

    with pytest.raises(KeyboardInterrupt):
        crashed.run(seen.append, crash)
    assert [c.step for c in crashed.checkpoints()] == [2] and crashed.losses()[-1][0] == 3
    end, _ = _run(TrainJob.open(tmp_path / "b"))
    assert end.phase == "done"
    a, b = _lora(straight), _lora(crashed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert crashed.losses() == straight.losses()


def test_cancel_and_validation_and_voice(tmp_path, tiny_v2, tiny_asr, tiny_speaker, setup):
    ds, plan, cfg = setup
    cfg = replace(cfg, steps=2, validate_every=1, validation_text="hello world")
    job = TrainJob.create(tmp_path / "job", tiny_v2, ds, cfg, plan)
    end = job.run(lambda p: None, lambda: "cancel")
    assert (end.phase, end.step, job.checkpoints()) == ("cancelled", 0, [])
    rec, spk = load_recognizer(tiny_asr, num_threads=1), SpeakerModel(tiny_speaker)
    end, seen = _run(job, recognizer=rec, speaker=spk)
    assert end.phase == "done", end.message
    scores = [p.validation for p in seen if p.phase == "training" and p.validation]
    assert [s.step for s in scores][-1] == 1  # step 2's score arrives with "saving"/"done"
    last = job.checkpoints()[-1]
    assert last.validation.step == 2 and last.validation.audio.exists()
    assert 0.0 <= last.validation.cer <= 1.0  # the tiny model speaks noise: the recognizer hears ~nothing

    library = VoiceLibrary(tmp_path / "voices")
    voice = job.make_voice(last, "Trained", library)
    assert voice.name == "Trained" and library.get(voice.id).transcript == TEXTS[-1 % len(TEXTS)]
    folder = library.folder(voice) / "lora"
    assert sorted(p.name for p in folder.iterdir()) == ["lora_config.json", "lora_weights.safetensors"]
    # attached, not only copied: the voice names its LoRA, so synthesis (window, synth, serve) uses it
    assert voice.lora and library.lora_folder(library.get(voice.id)) == folder


def test_similarity_prefers_the_same_voice(tmp_path, tiny_speaker):
    """The validator's speaker score: same tones close to 1, other tones far."""
    refs = []
    for i in range(2):
        path = tmp_path / f"r{i}.wav"
        sf.write(path, tone_words([0, 1, 2]), 16000)
        refs.append(Clip(f"r{i}", path, 2.0, "x", 1.0, None, held_out=True))
    v = Validator(tmp_path, None, None, "", refs, object(), SpeakerModel(tiny_speaker), 0)
    same = v._similarity(tone_words([2, 1, 0]), 16000)
    other = v._similarity(tone_words([7, 8, 9]), 16000)
    assert same > 0.9 and other < 0.5 and not math.isnan(other)
