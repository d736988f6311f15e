"""The official bad-case retry in the batched engine (CPU, tiny models).

A take that reaches 6 patches per text token is drawn again from the prompt, up to three takes,
its noise going on from the request's generator: the engine must give what official
``generate(retry_badcase=True)`` gives, with other requests in the batch, re-prefilling through
the prefix cache, and leaking no KV block or stream slot. Three solver steps a patch (``FAST``)
keep these capped runs quick.
"""

import numpy as np
import pytest
import torch
from official import import_official
from test_engine_batch import _assert_same, _engine, _leak_free, _run, _voices
from tiny import set_stop_head, tone, write_tiny_checkpoint

from app.engine import RequestRetried, SynthRequest
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.models.voxcpm.generate import Synthesizer

LAT_TOL = 1e-4
FAST = 3  # inference timesteps


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def never_dir(tmp_path_factory):
    """A VoxCPM2 checkpoint whose stop head never fires: every take runs to the cap."""
    return set_stop_head(write_tiny_checkpoint(tmp_path_factory.mktemp("never-v2"), "voxcpm2"), "never")


def _official_retry(path, text: str, seed: int, **kwargs):
    """Official ``generate`` with its default retry: (audio, patches of every take)."""
    import_official()
    from voxcpm.model.voxcpm2 import VoxCPM2Model

    off = VoxCPM2Model.from_local(str(path), optimize=False, device="cpu")
    patches = []
    keep = lambda m, i, o: patches.append(o.transpose(1, 2)[0].clone())  # noqa: E731
    hook = off.feat_decoder.register_forward_hook(keep)
    try:
        torch.manual_seed(seed)
        wav = off.generate(target_text=text, retry_badcase=True, inference_timesteps=FAST, **kwargs)
    finally:
        hook.remove()
    return wav.reshape(-1).numpy(), torch.stack(patches).numpy()


def test_retried_request_matches_official_in_a_batch(never_dir, tmp_path):
    import soundfile as sf

    ref = tone(400, freq=180, seed=1)
    sf.write(tmp_path / "ref.wav", ref, 16000, subtype="FLOAT")
    voice = _voices()[0]  # the same reference audio as ref.wav
    plan = [
        (0, SynthRequest("a neighbour", seed=61, inference_timesteps=FAST, retry_badcase=False)),
        (0, SynthRequest("Hi there", voice=voice, seed=60, inference_timesteps=FAST)),  # 3 takes
        (3, SynthRequest("joins later", seed=62, inference_timesteps=FAST, max_len=9)),  # < 6/token
    ]
    engine = _engine(never_dir, max_num_seqs=3)
    got = _run(engine, plan)
    audio, patches = _official_retry(never_dir, "Hi there", 60, reference_wav_path=str(tmp_path / "ref.wav"))
    lat = got[1][1]
    assert got[1][2].stats["takes"] == 3 and len(patches) == 3 * lat.shape[0]
    assert lat.shape[0] == 6 * len(engine.runner.tokenizer("Hi there")) + 10
    np.testing.assert_allclose(lat, patches[-lat.shape[0] :], atol=LAT_TOL, rtol=0)
    np.testing.assert_allclose(got[1][0], audio, atol=1e-3, rtol=0)
    # the take kept was prefilled again from the prefix cache: the reference's blocks were reused
    assert got[1][2].stats["cached_tokens"] > 0
    synth = Synthesizer(engine.runner.model, engine.runner.tokenizer)
    for i in (0, 2):
        req = plan[i][1]
        alone = synth.synthesize(
            req.text, seed=req.seed, timesteps=FAST, max_len=req.max_len, retry_badcase=req.retry_badcase
        )
        _assert_same(got[i], (alone.audio, alone.latents))
        assert got[i][2].stats["takes"] == 1
    _leak_free(engine)


def test_retry_under_memory_pressure(never_dir):
    """Restarts and preemptions interleave with a tight KV budget; nothing leaks."""
    voices = _voices()
    plan = [
        (i, SynthRequest(f"take {i} here", voice=voices[i], seed=80 + i, inference_timesteps=FAST))
        for i in range(3)
    ]
    engine = _engine(never_dir, kv_cache_gb=64 * 6144 / 1024**3)
    got = _run(engine, plan)
    assert engine.scheduler.num_preempted > 0
    synth = Synthesizer(engine.runner.model, engine.runner.tokenizer)
    for i in range(3):
        req = plan[i][1]
        alone = synth.synthesize(req.text, req.voice, seed=req.seed, timesteps=FAST)
        assert alone.takes == 3 and got[i][2].stats["takes"] == 3
        _assert_same(got[i], (alone.audio, alone.latents))
    _leak_free(engine)


def test_cancel_during_a_retry(never_dir):
    engine = _engine(never_dir)
    rid = engine.submit(SynthRequest("Hi", seed=4, inference_timesteps=FAST))
    while not any(isinstance(e, RequestRetried) for e in engine.step()):
        pass
    engine.step()  # the second take is under way
    engine.cancel(rid)
    assert engine.step() == [RequestFailed(rid, "Cancelled.")]
    _leak_free(engine)


def test_chunk_indices_restart_with_each_take(never_dir):
    engine = _engine(never_dir)
    rid = engine.submit(SynthRequest("Hi", seed=3, inference_timesteps=FAST))
    events = []
    while not any(isinstance(e, RequestFinished) for e in events):
        events.extend(engine.step())
    kinds = [type(e).__name__ for e in events]
    n = 6 * len(engine.runner.tokenizer("Hi")) + 10
    assert kinds == (["AudioChunk"] * n + ["RequestRetried"]) * 2 + ["AudioChunk"] * n + ["RequestFinished"]
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    assert [c.index for c in chunks] == list(range(n)) * 3
    assert all(e.request_id == rid for e in events)
    _leak_free(engine)
