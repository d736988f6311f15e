"""Per-module parity with the official classes on the same tiny checkpoints (CPU, fp32).

Covers both LMs (prefill and cached steps; v2's residual LM has no RoPE), LocEnc, the LocDiT
velocity, the CFM solve (also batched with a per-sample guidance value), FSQ and the stop head.
"""

from __future__ import annotations

import copy

import pytest
import torch
from official import import_official

from app.models.voxcpm.generate import DenseKV
from app.models.voxcpm.weights import load_model

TOL = 2e-5


def _official(path, v2: bool):
    import_official()
    if v2:
        from voxcpm.model.voxcpm2 import VoxCPM2Model as cls
    else:
        from voxcpm.model.voxcpm import VoxCPMModel as cls
    return cls.from_local(str(path), optimize=False, device="cpu")


@pytest.fixture(scope="module", params=["v1", "v2"])
def pair(request, tiny_v1, tiny_v2):
    v2 = request.param == "v2"
    path = tiny_v2 if v2 else tiny_v1
    return _official(path, v2), load_model(path, "cpu")


def _mu_width(model) -> int:
    return model.cfg.dit.hidden_dim * (2 if model.cfg.is_v2 else 1)


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = TOL) -> None:
    assert a.shape == b.shape
    assert (a - b).abs().max().item() <= tol


@torch.inference_mode()
@pytest.mark.parametrize("stack", ["base_lm", "residual_lm"])
def test_lm_prefill_and_steps(pair, stack):
    off, ours = pair
    off_lm, our_lm = getattr(off, stack), getattr(ours, stack)
    g = torch.Generator().manual_seed(0)
    h = our_lm.cfg.hidden_size
    x = torch.randn(1, 9, h, generator=g)
    ref, caches = off_lm(x, is_causal=True)
    kv = DenseKV(our_lm, 1, 16)
    _close(our_lm(x, torch.arange(9).unsqueeze(0), kv), ref)
    off_lm.kv_cache.fill_caches(caches)
    for pos in range(9, 13):
        step = torch.randn(1, h, generator=g)
        want = off_lm.forward_step(step, torch.tensor([off_lm.kv_cache.step()]))
        _close(our_lm(step.unsqueeze(1), torch.tensor([[pos]]), kv)[:, 0], want)


@torch.inference_mode()
def test_locenc_fsq_stop_and_condition(pair):
    off, ours = pair
    g = torch.Generator().manual_seed(1)
    patches = torch.randn(2, 5, ours.patch_size, ours.feat_dim, generator=g)
    _close(ours.embed_patches(patches), off.enc_to_lm_proj(off.feat_encoder(patches)))
    h = torch.randn(3, ours.cfg.lm.hidden_size, generator=g)
    _close(ours.fsq_layer(h), off.fsq_layer(h))
    _close(ours.stop_logits(h), off.stop_head(off.stop_actn(off.stop_proj(h))))
    r = torch.randn(3, ours.cfg.lm.hidden_size, generator=g)
    a, b = off.lm_to_dit_proj(h), off.res_to_dit_proj(r)
    _close(ours.dit_condition(h, r), torch.cat((a, b), -1) if ours.cfg.is_v2 else a + b)


@torch.inference_mode()
def test_dit_velocity(pair):
    off, ours = pair
    g = torch.Generator().manual_seed(2)
    n, d, p = 4, ours.feat_dim, ours.patch_size
    mu = torch.randn(
        n, off.feat_decoder.estimator.config.hidden_size * (2 if ours.cfg.is_v2 else 1), generator=g
    )
    x, cond = torch.randn(n, d, p, generator=g), torch.randn(n, d, p, generator=g)
    t, dt = torch.rand(n, generator=g), torch.zeros(n)
    _close(ours.feat_decoder.estimator(x, mu, t, cond, dt), off.feat_decoder.estimator(x, mu, t, cond, dt))


@torch.inference_mode()
def test_cfm_solve_batched_per_sample_cfg(pair):
    off, ours = pair
    d, p = ours.feat_dim, ours.patch_size
    g = torch.Generator().manual_seed(3)
    mu, cond = torch.randn(2, _mu_width(ours), generator=g), torch.randn(2, p, d, generator=g)
    cfgs = [1.5, 2.5]
    noise = torch.stack([torch.randn(d, p, generator=torch.Generator().manual_seed(s)) for s in (10, 11)])
    got = ours.sample_patch(mu, cond, noise, torch.tensor(cfgs), 10)
    for i, seed in enumerate((10, 11)):
        torch.manual_seed(seed)
        want = off.feat_decoder(
            mu=mu[i : i + 1],
            n_timesteps=10,
            patch_size=p,
            cond=cond[i : i + 1].transpose(1, 2).contiguous(),
            cfg_value=cfgs[i],
        )
        _close(got[i : i + 1], want.transpose(1, 2))


@torch.inference_mode()
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cached_time_embeddings_are_bit_equal(pair, dtype):
    """The CPU solve computes the time MLPs once per grid and batch size: every later patch,
    and a batch of another size, gets exactly what computing them afresh gives."""
    _, ours = pair
    cfm = copy.deepcopy(ours.feat_decoder).to(dtype)
    d, p = ours.feat_dim, ours.patch_size
    for b in (2, 2, 3, 2):
        g = torch.Generator().manual_seed(b)
        mu, cond = torch.randn(b, _mu_width(ours), generator=g), torch.randn(b, d, p, generator=g)
        noise, cfg = torch.randn(b, d, p, generator=g), torch.full((b,), 2.0)
        args = (noise.to(dtype), mu.to(dtype), cond.to(dtype), cfg, 10)
        cached = cfm.solve(*args)
        assert cfm._tembs[0][0] == b and len(cfm._tembs[1]) == 9  # steps 2..10 after the zero step
        cfm._time_cache = lambda *a: None  # instance override: no cache for this solve
        fresh = cfm.solve(*args)
        del cfm._time_cache
        assert torch.equal(cached, fresh)


@torch.inference_mode()
def test_bf16_rounding_points_match(tmp_path):
    """In bf16 the stateless parts round exactly where the official ones do (cos/sin, time
    sinusoid, t grid, GEMM inputs): prefill, LocEnc, the DiT and the CFM solve are bit-equal.
    (Cached decode steps differ by bf16 kernel rounding: the official step attends over the
    whole static cache with a mask.)"""
    from tiny import write_tiny_checkpoint

    path = write_tiny_checkpoint(tmp_path / "bf16", "voxcpm2", dtype="bfloat16")
    off, ours = _official(path, True), load_model(path, "cpu", dtype="bfloat16")
    g = torch.Generator().manual_seed(4)
    bf = torch.bfloat16
    x = torch.randn(1, 9, ours.cfg.lm.hidden_size, generator=g).to(bf)
    _close(ours.base_lm(x, torch.arange(9).unsqueeze(0), DenseKV(ours.base_lm, 1, 9)), off.base_lm(x)[0], 0.0)
    patches = torch.randn(2, 3, ours.patch_size, ours.feat_dim, generator=g).to(bf)
    _close(ours.feat_encoder(patches), off.feat_encoder(patches), 0.0)
    mu, cond = torch.randn(1, _mu_width(ours), generator=g).to(bf), torch.randn(1, 4, 8, generator=g).to(bf)
    noise = torch.randn(1, 8, 4, generator=torch.Generator().manual_seed(9), dtype=bf)
    torch.manual_seed(9)
    want = off.feat_decoder(mu=mu, n_timesteps=10, patch_size=4, cond=cond.transpose(1, 2).contiguous())
    _close(ours.sample_patch(mu, cond, noise, torch.tensor([1.0]), 10), want.transpose(1, 2), 0.0)
