"""The engine under a long mixed load, and its shutdown: ≥ 1,000 requests (good ones, cancels at
every moment, bad settings) leave memory flat and every KV block and stream slot back; shutdown
ends every queued or running request with one "shut down" failure and nothing runs after it."""

from __future__ import annotations

import gc
import os
import random

import numpy as np
import pytest
import torch
from tiny import tone, write_tiny_checkpoint

from app.engine import Engine, EngineConfig
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.errors import VoxDeskError
from app.models.voxcpm.prompt import VoicePrompt

N_REQUESTS = 1000


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("soak"), "voxcpm2")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _engine(path) -> Engine:
    return Engine(EngineConfig(model_dir=str(path), device="cpu", block_size=4, max_num_seqs=16))


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _assert_all_back(engine: Engine) -> None:
    bm = engine.scheduler.blocks
    assert len(engine.scheduler) == 0
    assert bm.num_free == len(bm.blocks) and all(b.ref_count == 0 for b in bm.blocks)
    assert sorted(engine.scheduler.free_slots) == list(range(engine.config.max_num_seqs))


def _request(rng: random.Random, voices: list[VoicePrompt]) -> tuple[SynthRequest, str]:
    """A request and what should become of it: "ok", "cancel" or "bad"."""
    kind = rng.choices(["ok", "cancel", "bad"], weights=[4, 3, 3])[0]
    voice = rng.choice([None, *voices])
    if kind == "bad":
        bad = rng.choice(
            [
                SynthRequest("   "),
                SynthRequest("nan guidance", cfg_value=float("nan")),
                SynthRequest("negative seed", seed=-1),
                SynthRequest("no steps", inference_timesteps=0),
                SynthRequest("word " * 300),  # past the model's positions
                SynthRequest("no transcript", voice=VoicePrompt(prompt_audio=tone(100))),
                SynthRequest(
                    "nan voice", voice=VoicePrompt(reference_latents=np.full((3, 4, 8), np.nan, np.float32))
                ),
            ]
        )
        return bad, kind
    text = rng.choice(["hi", "hello there", "a b c", "你好", "one more time"])
    return SynthRequest(
        text, voice=voice, seed=rng.randrange(1000), min_len=1, max_len=rng.choice([1, 2, 3])
    ), kind


def test_soak_a_thousand_mixed_requests_keeps_memory_flat_and_returns_every_block(engine_dir):
    engine = _engine(engine_dir)
    rng = random.Random(7)
    voices = [VoicePrompt(reference_audio=tone(120 + 8 * i, freq=150 + 20 * i, seed=i)) for i in range(4)]
    kinds: dict[int, str] = {}
    cancel_at: dict[int, int] = {}
    final: dict[int, object] = {}
    submitted = steps = 0
    rss: list[float] = []
    while len(final) < N_REQUESTS:
        for _ in range(rng.randrange(0, 12)):
            if submitted < N_REQUESTS:
                request, kind = _request(rng, voices)
                rid = engine.submit(request)
                kinds[rid] = kind
                submitted += 1
                if kind == "cancel":
                    cancel_at[rid] = steps + rng.randrange(0, 4)  # waiting, prefilling or decoding
        for rid, at in list(cancel_at.items()):
            if at <= steps:
                engine.cancel(rid)
                del cancel_at[rid]
        for event in engine.step():
            assert event.request_id not in final, "one terminal event per request"
            if not isinstance(event, AudioChunk):
                final[event.request_id] = event
        steps += 1
        if len(final) in (200, 600) or len(final) >= N_REQUESTS:
            gc.collect()
            rss.append(_rss_mib())
        assert steps < 20 * N_REQUESTS
    assert len(final) == N_REQUESTS == submitted
    for rid, event in final.items():
        if kinds[rid] == "bad":
            assert isinstance(event, RequestFailed) and event.message and "\n" not in event.message
        elif kinds[rid] == "ok":
            assert isinstance(event, RequestFinished), event
    finished = sum(isinstance(e, RequestFinished) for e in final.values())
    cancelled = sum(isinstance(e, RequestFailed) and e.message == "Cancelled." for e in final.values())
    assert finished > 300 and cancelled > 100
    _assert_all_back(engine)
    growth = rss[-1] - rss[0]
    print(f"soak: {N_REQUESTS} requests in {steps} steps; RSS {rss[0]:.0f} → {rss[-1]:.0f} MiB")
    assert growth < 40, f"RSS grew {growth:.0f} MiB after warm-up"


def test_shutdown_fails_every_queued_and_running_request_and_runs_nothing_after(engine_dir):
    engine = _engine(engine_dir)
    running = [engine.submit(SynthRequest(f"long {i}", seed=i, min_len=99, max_len=50)) for i in range(3)]
    for _ in range(3):
        engine.step()
    assert len(engine.scheduler.running) == 3
    queued = [engine.submit(SynthRequest(f"queued {i}", seed=i)) for i in range(2)]  # still in the inbox
    events = engine.shutdown()
    assert sorted(e.request_id for e in events) == sorted(running + queued)
    assert all(isinstance(e, RequestFailed) and "shut down" in e.message for e in events)
    _assert_all_back(engine)
    assert engine.step() == [] and not engine.has_work()
    with pytest.raises(VoxDeskError, match="shut down"):
        engine.submit(SynthRequest("too late"))
    engine.cancel(running[0])
    assert engine.step() == [] and engine.shutdown() == []
