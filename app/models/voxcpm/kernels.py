"""Fused Triton kernels for the elementwise work of every transformer layer (CUDA only).

One VoxCPM2 decode step runs ~156 transformer-layer passes (9 DiT calls x 12 layers, 28 + 8 LM
layers, 12 LocEnc layers). Written as plain PyTorch, each pass launches ~40 kernels, most of them
tiny elementwise ops of RMSNorm and RoPE done in fp32; inside a CUDA graph those launches, not
the GEMMs, dominate the step. These kernels do RMSNorm, RoPE and SiLU-gating in one pass each,
with the same rounding points as the module code they replace (fp32 statistics and rotation,
results rounded to the model dtype where PyTorch rounds them), so they differ from it only by
the order of the fp32 sum in RMSNorm.

They are used only for CUDA tensors when Triton is importable and ``VOXDESK_FUSED=0`` is not
set; everything else (CPU, the parity tests) runs the plain PyTorch path.
"""

from __future__ import annotations

import os

import torch

try:  # Triton is optional: absent on most CPU installs and on some Windows ones
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the installation
    triton = None


def usable(x: torch.Tensor) -> bool:
    """Whether the fused path applies to ``x``."""
    if triton is None or os.environ.get("VOXDESK_FUSED", "1") == "0":
        return False
    if x.requires_grad and torch.is_grad_enabled():  # training: the kernels have no backward
        return False
    return x.is_cuda or os.environ.get("TRITON_INTERPRET") == "1"


if triton is not None:

    @triton.jit
    def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        y = (x * inv).to(out_ptr.dtype.element_ty).to(tl.float32)  # rounded like .to(x.dtype)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (y * w).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _rope_kernel(
        x_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, x_row_stride, HALF: tl.constexpr, BLOCK: tl.constexpr
    ):
        # one program per (token, head); cos/sin are [tokens, 2*HALF], x rows may be strided
        pid = tl.program_id(0).to(tl.int64)
        tok = pid // n_heads
        head = pid % n_heads
        i = tl.arange(0, BLOCK)
        mask = i < HALF
        src = x_ptr + tok * x_row_stride + head * (2 * HALF)
        x1 = tl.load(src + i, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(src + HALF + i, mask=mask, other=0.0).to(tl.float32)
        c1 = tl.load(cos_ptr + tok * 2 * HALF + i, mask=mask, other=0.0).to(tl.float32)
        c2 = tl.load(cos_ptr + tok * 2 * HALF + HALF + i, mask=mask, other=0.0).to(tl.float32)
        s1 = tl.load(sin_ptr + tok * 2 * HALF + i, mask=mask, other=0.0).to(tl.float32)
        s2 = tl.load(sin_ptr + tok * 2 * HALF + HALF + i, mask=mask, other=0.0).to(tl.float32)
        dst = out_ptr + pid * (2 * HALF)
        ty = out_ptr.dtype.element_ty
        tl.store(dst + i, (x1 * c1 - x2 * s1).to(ty), mask=mask)
        tl.store(dst + HALF + i, (x2 * c2 + x1 * s2).to(ty), mask=mask)

    @triton.jit
    def _silu_mul_kernel(gu_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        g = tl.load(gu_ptr + row * 2 * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(gu_ptr + row * 2 * n_cols + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        ty = out_ptr.dtype.element_ty
        act = (g / (1.0 + tl.exp(-g))).to(ty).to(tl.float32)  # F.silu rounds to the dtype first
        tl.store(out_ptr + row * n_cols + cols, (act * u).to(ty), mask=mask)

    @triton.jit
    def _cfg_euler_kernel(x_ptr, v_ptr, g_ptr, dt_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
        # one program per sample: CFG-zero* scale, guided velocity and the Euler step in one pass
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        ty = out_ptr.dtype.element_ty
        vc = tl.load(v_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        vu = tl.load(v_ptr + (row + n_rows) * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        dot = tl.sum((vc * vu).to(ty).to(tl.float32), axis=0).to(ty).to(tl.float32)
        sq = tl.sum((vu * vu).to(ty).to(tl.float32), axis=0).to(ty).to(tl.float32)
        s = (dot / (sq + 1e-8).to(ty).to(tl.float32)).to(ty).to(tl.float32)
        base = (vu * s).to(ty).to(tl.float32)
        g = tl.load(g_ptr + row)
        v = (base + (g * (vc - base).to(ty).to(tl.float32)).to(ty).to(tl.float32)).to(ty).to(tl.float32)
        dt = tl.load(dt_ptr).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (x - (dt * v).to(ty).to(tl.float32)).to(ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """``(x * rsqrt(mean(x.float()**2) + eps)).to(x.dtype) * weight`` in one kernel."""
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(x2)
    n = x2.shape[-1]
    _rms_norm_kernel[(x2.shape[0],)](x2, weight, out, n, eps, BLOCK=triton.next_power_of_2(n), num_warps=4)
    return out.view(x.shape)


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """NeoX rotation of ``x [B, L, H, d]`` with ``cos/sin [B, L, 1, d]``, computed in fp32."""
    b, n, h, d = x.shape
    if x.stride(-1) != 1 or x.stride(2) != d or x.stride(0) != n * x.stride(1):
        x = x.contiguous()
    cos2 = cos.reshape(b * n, d).contiguous()
    sin2 = sin.reshape(b * n, d).contiguous()
    out = torch.empty((b, n, h, d), dtype=x.dtype, device=x.device)
    half = d // 2
    _rope_kernel[(b * n * h,)](
        x, cos2, sin2, out, h, x.stride(1), HALF=half, BLOCK=triton.next_power_of_2(half), num_warps=1
    )
    return out


def silu_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """``silu(gate) * up`` where ``gate_up`` is ``[..., 2I]`` with the gate half first."""
    gu = gate_up.reshape(-1, gate_up.shape[-1]).contiguous()
    n = gu.shape[-1] // 2
    out = torch.empty((gu.shape[0], n), dtype=gu.dtype, device=gu.device)
    block = 1024
    _silu_mul_kernel[(gu.shape[0], triton.cdiv(n, block))](gu, out, n, BLOCK=block, num_warps=4)
    return out.view(*gate_up.shape[:-1], n)


def cfg_euler(x: torch.Tensor, v: torch.Tensor, g: torch.Tensor, dt: torch.Tensor) -> torch.Tensor:
    """One guided Euler step of the CFM solve: ``x [B, ...]``, velocities ``v [2B, ...]``
    (conditional half first), guidance ``g [B]`` fp32, step ``dt`` (0-d, x's dtype). Equals
    ``CFM.solve``'s CFG-zero* update, rounded at the same points, up to the order of the sums."""
    b = x.shape[0]
    x2, v2 = x.reshape(b, -1).contiguous(), v.reshape(2 * b, -1).contiguous()
    out = torch.empty_like(x2)
    n = x2.shape[1]
    _cfg_euler_kernel[(b,)](
        x2, v2, g.reshape(b).to(torch.float32).contiguous(), dt.reshape(1), out, b, n,
        BLOCK=triton.next_power_of_2(n), num_warps=4,
    )  # fmt: skip
    return out.view(x.shape)
