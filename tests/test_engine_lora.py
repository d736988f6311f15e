"""Many LoRAs in one batch (app/engine/adapters.py, app/models/voxcpm/lora_bank.py), CPU fp32.

Each request's output, batched with requests that use other LoRAs or none, equals what the
one-request loop gives it alone with its LoRA (the loop itself is held to the official package
in test_generate_parity.py).
"""

import numpy as np
import pytest
import torch
from test_engine_batch import _assert_same, _leak_free, _run
from tiny import tone, write_tiny_checkpoint

from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.events import RequestFailed
from app.models.voxcpm.config import load_config
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.lora import LoRAConfig, write_random_lora
from app.models.voxcpm.minicpm import pack_projections
from app.models.voxcpm.prompt import VoicePrompt
from app.models.voxcpm.weights import load_model

ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny v2 model and three LoRAs of different ranks and modules."""
    root = tmp_path_factory.mktemp("engine-lora")
    model = write_tiny_checkpoint(root / "model", "voxcpm2")
    cfg = load_config(model)
    loras = {
        "a": write_random_lora(root / "a", cfg, LoRAConfig(r=4, alpha=8), seed=1),
        "b": write_random_lora(
            root / "b",
            cfg,
            LoRAConfig(r=8, alpha=8, enable_proj=True, target_modules_lm=(*ATTN, "gate_proj", "down_proj")),
            seed=2,
        ),
        "c": write_random_lora(root / "c", cfg, LoRAConfig(r=2, alpha=4, enable_lm=False), seed=3),
    }
    return model, {k: str(v) for k, v in loras.items()}


def _engine(path, model=None, **kw) -> Engine:
    cfg = EngineConfig(model_dir=str(path), device="cpu", block_size=4, cpu_precision="float32", **kw)
    return Engine(cfg, model=model)


_synths: dict[str, Synthesizer] = {}


def _alone(model_dir, req: SynthRequest):
    synth = _synths.get(str(model_dir)) or _synths.setdefault(
        str(model_dir), Synthesizer.from_dir(model_dir, "cpu")
    )
    synth.use_lora(req.lora)
    s = synth.synthesize(
        req.text, req.voice, seed=req.seed, min_len=req.min_len, max_len=req.max_len, retry_badcase=False
    )
    return s.audio, s.latents


def _req(text, seed, lora=None, voice=None, n=6):
    return SynthRequest(text, voice=voice, seed=seed, min_len=99, max_len=n, retry_badcase=False, lora=lora)


def test_mixed_batch_equals_each_alone(setup):
    """No LoRA and three different LoRAs in the same decode steps, joining at different steps;
    the same text and voice with and without a LoRA do not share prefix-cache KV."""
    model_dir, loras = setup
    voice = VoicePrompt(reference_audio=tone(400, freq=180, seed=1))
    plan = [
        (0, _req("hello world again", 1, voice=voice, n=8)),
        (0, _req("hello world again", 1, loras["a"], voice=voice, n=7)),
        (0, _req("a different line", 2, loras["b"], n=6)),
        (2, _req("hello world again", 1, loras["b"], voice=voice, n=5)),
        (3, _req("third one", 3, loras["c"], n=6)),
        (3, _req("and no lora", 4, n=5)),
    ]
    engine = _engine(model_dir, lora_slots=3)
    got = _run(engine, plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(model_dir, req))
    _leak_free(engine)
    assert not engine.adapters._users or not any(engine.adapters._users.values())
    # the LoRA changed the output: request 1 is request 0's text, voice and seed
    assert np.abs(got[0][1][:7] - got[1][1]).max() > 1e-2


def test_packed_projections_take_the_same_deltas(setup):
    """On CUDA q/k/v and gate/up are packed into one Linear each (pack_projections): the LoRA of
    each official module lands on its own slice of the packed output."""
    model_dir, loras = setup
    packed = load_model(model_dir, "cpu", "float32")
    pack_projections(packed)
    plan = [
        (0, _req("hello there", 5, loras["b"])),
        (0, _req("and here", 6, loras["a"])),
        (1, _req("x y", 7)),
    ]
    got = _run(_engine(model_dir, packed, lora_slots=2), plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(model_dir, req))


def test_more_loras_than_slots_wait_and_evict(setup):
    """One slot: the second LoRA's request waits until the first one's end, then takes the slot
    (the weights are copied in place); both come out as alone."""
    model_dir, loras = setup
    engine = _engine(model_dir, lora_slots=1)
    plan = [
        (0, _req("first", 1, loras["a"], n=4)),
        (0, _req("second", 2, loras["c"], n=4)),
        (0, _req("x", 3)),
    ]
    got = _run(engine, plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(model_dir, req))
    assert engine.adapters.resident() == {1: "c"}
    _leak_free(engine)


def test_a_bad_lora_fails_its_request_alone(setup, tmp_path):
    model_dir, loras = setup
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "lora_weights.safetensors").write_bytes(b"not a safetensors file")
    engine = _engine(model_dir)
    plan = [
        (0, _req("fine", 1, loras["a"], n=3)),
        (0, _req("bad", 2, str(broken))),
        (0, _req("gone", 3, "/no/x")),
    ]
    got = _run(engine, plan)
    _assert_same(got[0], _alone(model_dir, plan[0][1]))
    for i in (1, 2):
        ev = got[i][2]
        assert isinstance(ev, RequestFailed) and "\n" not in ev.message
    assert "lora_weights.safetensors" in got[1][2].message
    assert "does not exist" in got[2][2].message
