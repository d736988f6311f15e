"""The fused Triton kernels compute what the plain PyTorch layers compute.

They run on CUDA; here they run too when Triton's interpreter is on (``TRITON_INTERPRET=1``,
CPU tensors). Without Triton (the CI machine) these tests are skipped: the fused path is then
never taken, which ``test_cpu_path_never_fused`` pins.
"""

import pytest
import torch

from app.models.voxcpm import kernels
from app.models.voxcpm.config import LMConfig, RopeScaling
from app.models.voxcpm.minicpm import MiniCPM, pack_projections

needs_fused = pytest.mark.skipif(
    kernels.triton is None or not (torch.cuda.is_available() or kernels.usable(torch.zeros(1))),
    reason="needs Triton with CUDA or TRITON_INTERPRET=1",
)


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _plain(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setenv("VOXDESK_FUSED", "0")
        return fn()


@needs_fused
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_rope_silu_match_plain(monkeypatch, dtype):
    g = torch.Generator().manual_seed(0)
    dev = _device()
    x = torch.randn(3, 5, 96, generator=g).to(dev, dtype)
    w = (1 + 0.1 * torch.randn(96, generator=g)).to(dev, dtype)
    var = x.float().pow(2).mean(-1, keepdim=True)
    ref = (x * torch.rsqrt(var + 1e-5)).to(dtype) * w
    tol = 1e-6 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(kernels.rms_norm(x, w, 1e-5), ref, atol=tol, rtol=tol)

    q = torch.randn(2, 4, 6, 32, generator=g).to(dev, dtype)
    cos = torch.randn(2, 4, 1, 32, generator=g).to(dev, dtype)
    sin = torch.randn(2, 4, 1, 32, generator=g).to(dev, dtype)
    qf = q.float()
    x1, x2 = qf.chunk(2, dim=-1)
    ref = (qf * cos + torch.cat((-x2, x1), dim=-1) * sin).to(dtype)
    torch.testing.assert_close(kernels.rope(q, cos, sin), ref, atol=tol, rtol=tol)
    strided = torch.randn(2, 4, 10 * 32, generator=g).to(dev, dtype)[..., : 6 * 32].unflatten(-1, (6, 32))
    sf = strided.float()
    y1, y2 = sf.chunk(2, dim=-1)
    ref = (sf * cos + torch.cat((-y2, y1), dim=-1) * sin).to(dtype)
    torch.testing.assert_close(kernels.rope(strided, cos, sin), ref, atol=tol, rtol=tol)

    gu = torch.randn(7, 2 * 40, generator=g).to(dev, dtype)
    gate, up = gu.chunk(2, dim=-1)
    torch.testing.assert_close(kernels.silu_mul(gu), torch.nn.functional.silu(gate) * up, atol=tol, rtol=tol)


def _stack() -> MiniCPM:
    cfg = LMConfig(
        hidden_size=64,
        intermediate_size=96,
        max_position_embeddings=64,
        num_attention_heads=4,
        num_hidden_layers=2,
        num_key_value_heads=2,
        rms_norm_eps=1e-5,
        rope_scaling=RopeScaling("longrope", [1.0] * 8, [1.0 + i / 8 for i in range(8)], 64),
        vocab_size=0,
        scale_emb=12,
        dim_model_base=256,
        scale_depth=1.4,
        rope_theta=10000.0,
        use_mup=False,
    )
    torch.manual_seed(0)
    stack = MiniCPM(cfg)
    for p in stack.parameters():
        torch.nn.init.normal_(p, std=0.2)
    return stack


@needs_fused
def test_packed_fused_stack_matches_plain(monkeypatch):
    stack = _stack().to(_device())
    x = torch.randn(2, 7, 64, device=_device())
    ref = _plain(monkeypatch, lambda: stack(x))
    before = {k: v.clone() for k, v in stack.state_dict().items()}
    pack_projections(stack)
    after = stack.state_dict()
    # the official names keep their values (views of the packed weights); only these are added
    assert {k.rsplit(".", 2)[-2] for k in after.keys() - before.keys()} == {"qkv_proj", "gate_up_proj"}
    assert all(torch.equal(before[k], after[k]) for k in before)
    torch.testing.assert_close(stack(x), ref, atol=1e-5, rtol=1e-5)


def test_packed_stack_matches_plain_on_cpu():
    """The int8 CPU path packs q/k/v and gate/up as the GPU does (no fused kernels here)."""
    stack = _stack()
    x = torch.randn(2, 7, 64)
    with torch.no_grad():
        ref = stack(x)
        pack_projections(stack)
        torch.testing.assert_close(stack(x), ref, atol=1e-5, rtol=1e-5)


@needs_fused
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_cfg_euler_matches_plain(dtype):
    """The fused CFG-zero* + Euler update against ``CFM.guide`` then ``x - dt * v``: fp32 to
    1e-5, bf16 within 2 bf16 ulps of |x| (the sums run in another order and in fp32)."""
    from app.models.voxcpm.cfm import CFM

    dev = _device()
    for seed, (b, d, p) in enumerate([(1, 64, 4), (5, 64, 4), (3, 8, 3)]):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(b, d, p, generator=g).to(dev, dtype)
        v2 = torch.randn(2 * b, d, p, generator=g).to(dev, dtype)
        cfg = (1 + 2 * torch.rand(b, generator=g)).to(dev).view(-1, 1, 1)
        dt = torch.tensor(0.137, dtype=dtype, device=dev)
        want = x - dt * CFM.guide(v2, cfg, True)
        got = kernels.cfg_euler(x, v2, cfg, dt)
        tol = 1e-5 if dtype == torch.float32 else 2e-2
        torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol)


def test_cpu_path_never_fused(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert not kernels.usable(torch.zeros(2))
