"""On a CUDA machine: CUDA graphs vs eager, every attention path, and graphs captured and
replayed on a worker thread all give the same audio. Skipped without CUDA."""

import threading

import numpy as np
import pytest
import torch
from test_engine_batch import _run, _voices
from tiny import write_tiny_checkpoint

from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.attention import AttnContext, available_backends, paged_decode_triton, sdpa_paged

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.fixture(scope="module")
def v2_dir(tmp_path_factory):
    torch.backends.cudnn.allow_tf32 = False  # fp32 comparisons need true fp32 convolutions
    torch.backends.cuda.matmul.allow_tf32 = False
    return write_tiny_checkpoint(tmp_path_factory.mktemp("gpu-v2"), "voxcpm2")


def _plan():
    ref_a, _, cont, _ = _voices()
    return [
        (0, SynthRequest("hello world", seed=1, min_len=99, max_len=9)),
        (0, SynthRequest("another sentence", voice=ref_a, seed=2, min_len=99, max_len=6)),
        (2, SynthRequest("third line here", voice=cont, seed=3, max_len=20)),
        (3, SynthRequest("a fourth", voice=ref_a, seed=4, min_len=99, max_len=5)),
    ]


def _latents(v2_dir, **kw):
    engine = Engine(EngineConfig(model_dir=str(v2_dir), device="cuda", max_num_seqs=8, block_size=16, **kw))
    got = _run(engine, _plan())
    return [got[i][1] for i in range(len(got))], [got[i][0] for i in range(len(got))], engine


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("batch", [1, 3, 70])
def test_triton_decode_matches_sdpa(dtype, batch):
    torch.manual_seed(batch)
    heads, kv_heads, dim, bs, nblocks = 16, 2, 128, 16, 400
    kc = torch.randn(nblocks + 1, bs, kv_heads, dim, device="cuda", dtype=dtype)
    vc = torch.randn_like(kc)
    lens = torch.randint(1, 300, (batch,), device="cuda")
    width = int((lens.max() + bs - 1) // bs)
    tables = torch.stack([torch.randperm(nblocks, device="cuda")[:width] for _ in range(batch)])
    q = torch.randn(batch, 1, heads, dim, device="cuda", dtype=dtype)
    ctx = AttnContext(torch.zeros(batch, dtype=torch.long), tables, lens - 1, lens.to(torch.int32))
    want = sdpa_paged(q.float(), kc.float(), vc.float(), ctx)
    got = paged_decode_triton(q, kc, vc, tables, lens.to(torch.int32))
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(got.float(), want, atol=tol, rtol=tol)


def test_graphs_eager_and_attention_paths_agree(v2_dir):
    ref, ref_audio, _ = _latents(v2_dir, cuda_graphs=False, attention="sdpa")
    for backend in available_backends(torch.device("cuda")):
        for graphs, extra in ((False, {}), (True, {}), (True, dict(prefill_graphs=True, overlap_vae=True))):
            lat, audio, engine = _latents(v2_dir, cuda_graphs=graphs, attention=backend, **extra)
            assert (engine.runner.graphs is not None) == graphs
            for a, b, x, y in zip(lat, ref, audio, ref_audio, strict=True):
                assert a.shape == b.shape, (backend, graphs)
                np.testing.assert_allclose(a, b, atol=1e-4, rtol=0, err_msg=f"{backend} {graphs} {extra}")
                np.testing.assert_allclose(x, y, atol=1e-3, rtol=0, err_msg=f"{backend} {graphs} {extra}")


def test_graphs_captured_and_replayed_on_a_worker_thread(v2_dir):
    ref, _, _ = _latents(v2_dir, cuda_graphs=False)
    box = {}

    def work():
        box["result"] = _latents(v2_dir, cuda_graphs=True, prefill_graphs=True, overlap_vae=True)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    lat, _, engine = box["result"]
    assert engine.runner.graphs is not None
    for a, b in zip(lat, ref, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=0)


def test_prefill_graph_buckets_equal_eager_prefill(v2_dir):
    """Requests admitted together replay a batched prefill graph (padding rows included) and
    get the latents and audio of the eager prefill."""
    plan = [(0, SynthRequest(f"line number {i}", seed=20 + i, min_len=99, max_len=5)) for i in range(3)]
    outs = []
    for prefill in (False, True):
        engine = Engine(
            EngineConfig(model_dir=str(v2_dir), device="cuda", max_num_seqs=8, prefill_graphs=prefill)
        )
        outs.append(_run(engine, plan))
    assert any(b > 1 for b, _ in engine.runner.graphs.prefill_graphs)
    for i in range(len(plan)):
        np.testing.assert_allclose(outs[1][i][1], outs[0][i][1], atol=1e-4, rtol=0)
        np.testing.assert_allclose(outs[1][i][0], outs[0][i][0], atol=1e-3, rtol=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_vae_decoder_setting(v2_dir, dtype):
    """``vae_dtype`` bf16/fp16 decodes with a half copy of the decoder (the encoder stays fp32)
    and tracks the fp32 decoder. Random weights drive the output into its +-1 clamp, which
    amplifies rounding: relative L2 error measured 0.04 (fp16, H200) and 0.17 (bf16, CPU) on
    these weights, 0.14 / 0.23 on the real-shape random model (docs/benchmarks.md); the bound is
    0.3, far under the ~1.4 of unrelated audio. fp32 stays the default."""
    from app.models.voxcpm.batch import decoder_in
    from app.models.voxcpm.streaming_vae import StreamingDecoder
    from app.models.voxcpm.weights import load_model

    model = load_model(str(v2_dir), "cuda", "float32")
    fp32 = StreamingDecoder(model.audio_vae, 2)
    copy = decoder_in(model.audio_vae, dtype)
    half = StreamingDecoder(copy, 2)
    assert next(model.audio_vae.parameters()).dtype == torch.float32  # the original is untouched
    assert copy.encoder is None and next(copy.parameters()).dtype == dtype
    gen = torch.Generator("cuda").manual_seed(0)
    z = torch.randn(2, model.feat_dim, 12 * model.patch_size, device="cuda", generator=gen)
    want, got = [], []
    for j in range(12):
        chunk = z[..., j * model.patch_size : (j + 1) * model.patch_size]
        want.append(fp32.decode(chunk, [0, 1]))
        got.append(half.decode(chunk, [0, 1]).float())
    want, got = torch.cat(want, -1), torch.cat(got, -1)
    assert torch.isfinite(got).all()
    rel = float((got - want).norm() / want.norm())
    assert rel < 0.3, rel
    engine = Engine(
        EngineConfig(model_dir=str(v2_dir), device="cuda", max_num_seqs=2, vae_dtype=str(dtype)[6:])
    )
    assert next(engine.runner.vae.vae.parameters()).dtype == dtype


def test_lora_mix_under_graphs_equals_eager(v2_dir, tmp_path):
    """Mixed LoRAs (and none) in captured graphs (packed q/k/v and gate/up on CUDA): the first
    LoRA recaptures the graphs once; a LoRA loaded into a slot later (one slot, evicting) is
    copied in place and the graphs see it; every request as under eager execution."""
    from app.models.voxcpm.config import load_config
    from app.models.voxcpm.lora import LoRAConfig, write_random_lora

    cfg = load_config(v2_dir)
    a = str(write_random_lora(tmp_path / "a", cfg, LoRAConfig(r=4, alpha=8), seed=1))
    b = str(write_random_lora(tmp_path / "b", cfg, LoRAConfig(r=4, alpha=8, enable_proj=True), seed=2))
    plan = [
        (0, SynthRequest("hello world", seed=1, min_len=99, max_len=6, lora=a)),
        (0, SynthRequest("hello world", seed=1, min_len=99, max_len=6)),
        (0, SynthRequest("another one", seed=2, min_len=99, max_len=5, lora=b)),
        (1, SynthRequest("a third", seed=3, min_len=99, max_len=5, lora=a)),
    ]
    outs = []
    for graphs in (False, True):
        engine = Engine(
            EngineConfig(
                model_dir=str(v2_dir), device="cuda", max_num_seqs=8, lora_slots=1, cuda_graphs=graphs
            )
        )
        outs.append(_run(engine, plan))
        assert (engine.runner.graphs is not None) == graphs
    for i in range(len(plan)):
        np.testing.assert_allclose(outs[1][i][1], outs[0][i][1], atol=1e-4, rtol=0)
    assert np.abs(outs[1][0][1] - outs[1][1][1]).max() > 1e-2  # the LoRA changed the output
