"""The batched engine against the one-request loop and the official package (CPU, tiny models).

Every request in a batch must get exactly the audio it gets alone: different lengths, modes,
voices, seeds and settings, joining at different steps, through prefix-cache hits,
preemption and cancellation, with bad requests failing alone.
"""

import threading

import numpy as np
import pytest
import torch
from tiny import tone, write_tiny_checkpoint

from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.prompt import VoicePrompt

LAT_TOL = 1e-4


@pytest.fixture(scope="module")
def v2_dir(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("engine-v2"), "voxcpm2")


@pytest.fixture(scope="module")
def v1_dir(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("engine-v1"), "voxcpm")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models gain nothing from intra-op threads, and on a busy CI machine spinning
    OpenMP workers slow these steps down a hundredfold."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _engine(path, **kw) -> Engine:
    kw.setdefault("block_size", 4)
    kw.setdefault("cpu_precision", "float32")  # the exact path, held to the official fp32 loop
    return Engine(EngineConfig(model_dir=str(path), device="cpu", **kw))


def _run(engine: Engine, plan: list[tuple[int, SynthRequest]], cancel: dict[int, int] | None = None):
    """Submit each request at its step, step until all end. Returns per request index:
    (audio, latents, final event); a retried request's audio is its last take's."""
    latents: dict[int, np.ndarray] = {}
    finish = engine.scheduler.finish

    def capture(seq):  # keep the generated patches the sequence held when it ended
        latents[seq.id] = np.stack(seq.patches[seq.num_prompt :]) if seq.num_generated else None
        finish(seq)

    engine.scheduler.finish = capture
    ids: dict[int, int] = {}
    chunks: dict[int, list[np.ndarray]] = {}
    final: dict[int, object] = {}
    step = 0
    while len(final) < len(plan):
        for i, (at, req) in enumerate(plan):
            if at == step:
                ids[engine.submit(req)] = i
        for at, i in (cancel or {}).items():
            if at == step:
                engine.cancel(next(r for r, j in ids.items() if j == i))
        for ev in engine.step():
            i = ids[ev.request_id]
            assert i not in final, "no event after a request ended"
            if isinstance(ev, AudioChunk):
                assert ev.index == len(chunks.setdefault(i, []))
                chunks[i].append(ev.samples)
            elif isinstance(ev, RequestRetried):
                chunks[i] = []  # drop the bad take, as every consumer must
            else:
                final[i] = ev
        step += 1
        assert step < 500
    engine.scheduler.finish = finish
    rid = {i: r for r, i in ids.items()}
    audio = {i: np.concatenate(chunks[i]) if chunks.get(i) else None for i in range(len(plan))}
    return {i: (audio[i], latents.get(rid[i]), final[i]) for i in range(len(plan))}


def _alone(engine: Engine, req: SynthRequest):
    s = Synthesizer(engine.runner.model, engine.runner.tokenizer).synthesize(
        req.text,
        req.voice,
        seed=req.seed,
        cfg=req.cfg_value,
        timesteps=req.inference_timesteps,
        min_len=req.min_len,
        max_len=req.max_len,
        retry_badcase=req.retry_badcase,
    )
    return s.audio, s.latents


def _assert_same(got, want, tol=LAT_TOL):
    audio, lat, ev = got
    assert isinstance(ev, RequestFinished), ev
    assert lat.shape == want[1].shape and ev.n_patches == lat.shape[0]
    np.testing.assert_allclose(lat, want[1], atol=tol, rtol=0)
    np.testing.assert_allclose(audio, want[0], atol=10 * tol, rtol=0)


def _leak_free(engine: Engine):
    bm = engine.scheduler.blocks
    assert len(engine.scheduler) == 0
    assert bm.num_free == len(bm.blocks) and all(b.ref_count == 0 for b in bm.blocks)
    assert sorted(engine.scheduler.free_slots) == list(range(engine.config.max_num_seqs))


def _voices():
    ref_a, ref_b, prompt = tone(400, freq=180, seed=1), tone(352, freq=300, seed=2), tone(200, seed=3)
    return (
        VoicePrompt(reference_audio=ref_a),
        VoicePrompt(reference_audio=ref_b),
        VoicePrompt(prompt_audio=prompt, prompt_text="a prompt"),
        VoicePrompt(reference_audio=ref_a, prompt_audio=prompt, prompt_text="a prompt"),
    )


def test_batch_equals_each_request_alone_v2(v2_dir):
    ref_a, ref_b, cont, both = _voices()
    plan = [
        (0, SynthRequest("hello world", seed=1, min_len=99, max_len=7)),
        (0, SynthRequest("another sentence", voice=ref_a, seed=2, min_len=99, max_len=5)),
        (2, SynthRequest("third line here", voice=cont, seed=3, min_len=99, max_len=9)),
        (3, SynthRequest("both voices", voice=both, seed=4, max_len=30)),  # natural stop
        (
            5,
            SynthRequest("other voice", voice=ref_b, seed=5, cfg_value=1.5, inference_timesteps=6, max_len=6),
        ),
        (5, SynthRequest("same voice again", voice=ref_a, seed=6, min_len=99, max_len=4)),
    ]
    engine = _engine(v2_dir, max_num_seqs=4)
    got = _run(engine, plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(engine, req))
    assert got[5][2].stats["cached_tokens"] > 0  # ref_a's prefix was reused
    _leak_free(engine)


def test_batch_equals_each_request_alone_v1(v1_dir):
    prompt = VoicePrompt(prompt_audio=tone(160, seed=4), prompt_text="some prompt")
    plan = [
        (0, SynthRequest("hello there", seed=11, min_len=99, max_len=8)),
        (1, SynthRequest("continued speech", voice=prompt, seed=12, min_len=99, max_len=5)),
        (1, SynthRequest("a third", seed=13, max_len=20)),
    ]
    engine = _engine(v1_dir)
    got = _run(engine, plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(engine, req))


def test_prefix_cache_hit_equals_miss(v2_dir):
    voice = _voices()[0]
    first, second = (SynthRequest(t, voice=voice, seed=7, min_len=99, max_len=6) for t in ("one text", "two"))
    warm = _engine(v2_dir)
    _run(warm, [(0, first)])
    hit = _run(warm, [(0, second)])[0]
    miss = _run(_engine(v2_dir), [(0, second)])[0]
    assert hit[2].stats["cached_tokens"] >= 24 and miss[2].stats["cached_tokens"] == 0
    np.testing.assert_allclose(hit[1], miss[1], atol=1e-5, rtol=0)
    np.testing.assert_allclose(hit[0], miss[0], atol=1e-4, rtol=0)


def test_preemption_recomputes_exactly_and_leaks_nothing(v2_dir):
    voices = _voices()
    plan = [
        (i // 2, SynthRequest(f"line {i} of text", voice=voices[i % 3], seed=20 + i, min_len=99, max_len=30))
        for i in range(6)
    ]
    # 64 blocks of 4 = one max-length request: six long requests must take turns
    engine = _engine(v2_dir, kv_cache_gb=64 * 6144 / 1024**3)
    assert len(engine.scheduler.blocks.blocks) == 64
    got = _run(engine, plan)
    assert engine.scheduler.num_preempted > 0
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(engine, req))
    _leak_free(engine)


def test_cancel_at_any_moment(v2_dir):
    reqs = [SynthRequest(f"request {i}", seed=30 + i, min_len=99, max_len=12) for i in range(4)]
    engine = _engine(v2_dir, max_num_seqs=2)
    # 0 is cancelled while decoding, 3 while still waiting for a slot
    got = _run(engine, [(0, r) for r in reqs], cancel={3: 0, 4: 3})
    for i in (0, 3):
        assert isinstance(got[i][2], RequestFailed) and got[i][2].message == "Cancelled."
    for i in (1, 2):
        _assert_same(got[i], _alone(engine, reqs[i]))
    _leak_free(engine)


def test_bad_requests_fail_alone(v2_dir):
    bad_latents = np.full((3, 4, 8), np.nan, np.float32)
    plan = [
        (0, SynthRequest("fine", seed=40, min_len=99, max_len=5)),
        (0, SynthRequest("   ")),
        (0, SynthRequest("nan voice", voice=VoicePrompt(reference_latents=bad_latents), seed=41)),
        (0, SynthRequest("no transcript", voice=VoicePrompt(prompt_audio=tone(100)))),
        (0, SynthRequest("word " * 300)),  # longer than the model's 256 positions
        (1, SynthRequest("also fine", seed=42, min_len=99, max_len=4)),
        (0, SynthRequest("nan guidance", cfg_value=float("nan"))),
        (0, SynthRequest("negative seed", seed=-1)),
        (
            0,
            SynthRequest(
                "long voice", voice=VoicePrompt(reference_latents=np.zeros((300, 4, 8), np.float32))
            ),
        ),
    ]
    engine = _engine(v2_dir)
    got = _run(engine, plan)
    for i in (1, 2, 3, 4, 6, 7, 8):
        assert isinstance(got[i][2], RequestFailed), got[i][2]
        assert "\n" not in got[i][2].message and got[i][2].message
    assert "cfg" in got[6][2].message and "seed" in got[7][2].message
    assert "text is too long" in got[4][2].message and "voice recording is too long" in got[8][2].message
    assert not got[6][1] and not got[7][1]  # refused before any step: no audio at all
    for i in (0, 5):
        _assert_same(got[i], _alone(engine, plan[i][1]))
    _leak_free(engine)


def test_submit_from_another_thread(v2_dir):
    engine = _engine(v2_dir)
    reqs = [SynthRequest(f"thread {i}", seed=50 + i, min_len=99, max_len=3) for i in range(3)]
    ids: list[int] = []
    worker = threading.Thread(target=lambda: ids.extend(engine.submit(r) for r in reqs))
    worker.start()
    done = set()
    for _ in range(200):
        done |= {e.request_id for e in engine.step() if isinstance(e, RequestFinished)}
        if len(done) == 3:
            break
    worker.join()
    assert done == set(ids) and len(set(ids)) == 3


@pytest.mark.parametrize("mode", ["zero", "reference", "continuation"])
def test_matches_official_package(v2_dir, tmp_path, mode):
    import soundfile as sf
    from official import import_official

    import_official()
    from voxcpm.model.voxcpm2 import VoxCPM2Model

    ref, prompt = tone(400, freq=180, seed=1), tone(200, seed=3)
    sf.write(tmp_path / "ref.wav", ref, 16000, subtype="FLOAT")
    sf.write(tmp_path / "prompt.wav", prompt, 16000, subtype="FLOAT")
    voice, kwargs = None, {}
    if mode == "reference":
        voice, kwargs = VoicePrompt(reference_audio=ref), {"reference_wav_path": str(tmp_path / "ref.wav")}
    elif mode == "continuation":
        voice = VoicePrompt(prompt_audio=prompt, prompt_text="a prompt")
        kwargs = {"prompt_wav_path": str(tmp_path / "prompt.wav"), "prompt_text": "a prompt"}
    req = SynthRequest("the official words", voice=voice, seed=60, min_len=99, max_len=6)
    other = SynthRequest("a neighbour in the batch", seed=61, max_len=9)
    engine = _engine(v2_dir)
    got = _run(engine, [(0, other), (0, req)])[1]

    official = VoxCPM2Model.from_local(str(v2_dir), optimize=False, device="cpu")
    seen = []
    decode = official.audio_vae.decode
    official.audio_vae.decode = lambda z, *a, **k: seen.append(z.clone()) or decode(z, *a, **k)
    torch.manual_seed(req.seed)
    with torch.no_grad():
        wav = official.generate(target_text=req.text, min_len=99, max_len=6, retry_badcase=False, **kwargs)
    patches = seen[-1][0].T.reshape(-1, 4, 8).numpy()[-got[1].shape[0] :]
    np.testing.assert_allclose(got[1], patches, atol=LAT_TOL, rtol=0)
    np.testing.assert_allclose(got[0], wav.reshape(-1).numpy(), atol=1e-3, rtol=0)


class _Replay:
    """Stands in for a captured CUDA graph on CPU: replays the same work on the same buffers."""

    def __init__(self, work):
        self.work = work
        self.count = 0

    def replay(self):
        self.count += 1
        with torch.inference_mode():
            self.work()


def test_graph_data_flow_pads_to_buckets_without_touching_real_rows(v2_dir):
    """Everything of the graph path but the capture: static buffers, bucket padding to the
    scratch slot and block, prefill width buckets. Results equal each request alone."""
    from app.engine.cuda_graphs import CudaGraphs

    engine = _engine(v2_dir, max_num_seqs=6)
    r = engine.runner
    graphs = CudaGraphs(r, 6, 10)
    for bs in graphs.sizes:
        graphs.graphs[bs] = _Replay(lambda bs=bs: r.step_core(bs, 10, r.max_blocks))
    graphs.prefill_buffers()
    for key, x in graphs.prefill_static.items():
        graphs.prefill_graphs[key] = _Replay(lambda x=x: r.prefill_core(x))
    r.graphs = graphs
    ref_a, _, cont, _ = _voices()
    plan = [  # batches of 1, 2, 3 and 4 rows (buckets 1, 2, 4: padding rows) and a mixed eager one
        (0, SynthRequest("alone first", seed=70, min_len=99, max_len=6)),
        (1, SynthRequest("joins second", voice=ref_a, seed=71, min_len=99, max_len=8)),
        (2, SynthRequest("a third", voice=cont, seed=72, min_len=99, max_len=7)),
        (3, SynthRequest("fourth", seed=73, inference_timesteps=6, min_len=99, max_len=4)),  # eager step
        (3, SynthRequest("fifth one", voice=ref_a, seed=74, min_len=99, max_len=5)),
    ]
    got = _run(engine, plan)
    for i, (_, req) in enumerate(plan):
        _assert_same(got[i], _alone(engine, req))
    _leak_free(engine)
    assert all(graphs.graphs[b].count for b in (1, 2, 4))
    # four prefill calls, all graphed: three lone requests, then two admitted together (padded
    # to a batch bucket of 2 rows)
    assert sum(g.count for g in graphs.prefill_graphs.values()) == 4
    assert sum(g.count for (b, _), g in graphs.prefill_graphs.items() if b == 2) == 1


def test_prefill_buckets_cover_every_admitted_batch(v2_dir):
    """Graphed prefill buckets: every width for one request, batches up to max_num_seqs within
    the position cap; the smallest bucket that holds a batch is chosen; wider ones run eager."""
    from app.engine.cuda_graphs import PREFILL_TOKENS, PREFILL_WIDTHS, CudaGraphs

    engine = _engine(v2_dir, max_num_seqs=64)
    graphs = CudaGraphs(engine.runner, 64, 10)
    keys = graphs.prefill_keys()
    assert {(1, w) for w in PREFILL_WIDTHS} <= set(keys)
    assert all(b * w <= PREFILL_TOKENS for b, w in keys) and max(b for b, _ in keys) == 64
    assert graphs.prefill_bucket(1, 17) == (1, 32)
    assert graphs.prefill_bucket(3, 20) == (4, 32)
    assert graphs.prefill_bucket(40, 30) == (64, 32)
    assert graphs.prefill_bucket(2, 300) is None
    assert CudaGraphs(engine.runner, 64, 10, prefill=False).prefill_bucket(1, 16) is None
    small = CudaGraphs(engine.runner, 6, 10).prefill_keys()
    assert max(b for b, _ in small) == 6


def test_new_requests_get_their_first_chunk_in_the_next_step(v2_dir):
    """First patch first: a request submitted while others decode is prefilled and decoded in
    the very next step (it waits for no running step), alone or several at once."""
    engine = _engine(v2_dir, max_num_seqs=8)
    ref_a, _, cont, _ = _voices()
    plan = {0: 2, 1: 1, 3: 3}  # step -> new requests submitted before it
    first: dict[int, int] = {}
    submitted: dict[int, int] = {}
    step = 0
    while step < 6 or engine.has_work():
        for k in range(plan.get(step, 0)):
            voice = (None, ref_a, cont)[k % 3]
            rid = engine.submit(SynthRequest(f"line {step} {k}", voice=voice, seed=k, min_len=99, max_len=6))
            submitted[rid] = step
        for ev in engine.step():
            if isinstance(ev, AudioChunk):
                first.setdefault(ev.request_id, step)
            assert not isinstance(ev, RequestFailed), ev
        step += 1
        assert step < 50
    assert len(submitted) == 6 and first == submitted
    _leak_free(engine)
