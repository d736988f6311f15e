"""The engine applies ``SynthRequest.speed`` to the stream of a family without its own control."""

import numpy as np
import pytest
import torch
from tiny import set_stop_head, write_tiny_checkpoint

from app.audio.stretch import RateStretcher, change_rate
from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.errors import VoxDeskError


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    path = set_stop_head(write_tiny_checkpoint(tmp_path_factory.mktemp("rate-v2"), "voxcpm2"), "never")
    yield Engine(EngineConfig(model_dir=str(path), device="cpu", block_size=4, cpu_precision="float32"))
    torch.set_num_threads(before)


def _speak(engine: Engine, request: SynthRequest) -> tuple[list[AudioChunk], RequestFinished]:
    rid = engine.submit(request)
    chunks: list[AudioChunk] = []
    while True:
        for ev in engine.step():
            assert ev.request_id == rid
            if isinstance(ev, RequestFailed):
                raise AssertionError(ev.message)
            if isinstance(ev, RequestFinished):
                return chunks, ev
            chunks.append(ev)


def test_speed_stretches_the_stream(engine):
    base = SynthRequest("hello there " * 4, seed=7, min_len=2, max_len=100, retry_badcase=False)
    plain, done = _speak(engine, base)
    fast, fast_done = _speak(engine, SynthRequest(**{**base.__dict__, "speed": 1.6}))
    audio = np.concatenate([c.samples for c in plain])
    streamed = np.concatenate([c.samples for c in fast])
    assert fast_done.n_patches == done.n_patches == 100  # the same take, then stretched
    assert len(streamed) == len(change_rate(audio, engine.sample_rate, 1.6)) == round(len(audio) / 1.6)
    # exactly what a RateStretcher makes of the chunks as they came (tests/test_stretch.py shows
    # that it gives audio back long before the end of a longer stream)
    st = RateStretcher(engine.sample_rate, 1.6)
    pieces = [p for p in [*(st.push(c.samples) for c in plain), st.flush()] if len(p)]
    assert len(fast) == len(pieces)
    assert all(np.array_equal(a.samples, b) for a, b in zip(fast, pieces, strict=True))
    assert [c.index for c in fast] == list(range(len(fast)))
    assert fast_done.stats["audio_s"] == pytest.approx(len(streamed) / engine.sample_rate, rel=0.01)


def test_family_with_its_own_control_is_not_stretched(engine, monkeypatch):
    base = SynthRequest("hello there", seed=7, min_len=2, max_len=12, retry_badcase=False)
    plain, _ = _speak(engine, base)
    monkeypatch.setattr(type(engine.runner.model), "native_speed", True)
    native, _ = _speak(engine, SynthRequest(**{**base.__dict__, "speed": 1.6}))
    joined = [np.concatenate([c.samples for c in chunks]) for chunks in (plain, native)]
    assert np.array_equal(*joined)


def test_speed_out_of_range_is_one_plain_line():
    for bad in (0.3, 2.5):
        with pytest.raises(VoxDeskError, match="speaking rate"):
            SynthRequest("hi", speed=bad).check()
