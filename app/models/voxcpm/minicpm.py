"""The MiniCPM4 transformer every VoxCPM stack is made of (base LM, residual LM, LocEnc, LocDiT).

Pre-norm layers with RMSNorm, GQA attention with NeoX-style LongRoPE, and a SiLU-gated MLP.
With ``qkv_bias``, LongRoPE factors of 1 and no muP it is also Qwen2 (CosyVoice's LM).
Parameter names follow the official checkpoints. Attention goes through a KV backend
(``kv.attend(layer_idx, q, k, v)``, see docs/DESIGN.md); ``kv=None`` is a non-causal stack.
"""

from __future__ import annotations

import math
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from app.models.voxcpm import kernels
from app.models.voxcpm.config import LMConfig


class KVBackend(Protocol):
    """Owns the cache of one causal stack; ``attend`` returns ``[B, L, n_heads, d]``."""

    def attend(self, layer_idx: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor: ...


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if kernels.usable(x):
            return kernels.rms_norm(x, self.weight, self.eps)
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class LongRoPE(nn.Module):
    """cos/sin tables for every position, kept as buffers so ``model.to(dtype)`` rounds them
    exactly where the official code does (they are cast to the model dtype)."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.register_buffer("cos", torch.empty(0), persistent=False)
        self.register_buffer("sin", torch.empty(0), persistent=False)
        self.build(torch.device("cpu"), torch.float32)

    def build(self, device: torch.device, dtype: torch.dtype) -> None:
        """(Re)compute the tables in fp32 and store them in ``dtype`` (after a meta-device load)."""
        cfg, d = self.cfg, self.cfg.head_dim
        inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, d, 2, device=device).float() / d))
        pos = torch.arange(cfg.max_position_embeddings, dtype=torch.float32, device=device)
        ext = torch.tensor(cfg.rope_factors, dtype=torch.float32, device=device)
        emb = torch.outer(pos, 1.0 / ext) * inv_freq
        emb = torch.cat((emb, emb), dim=-1)
        self.cos = (emb.cos() * cfg.rope_scale).to(dtype)
        self.sin = (emb.sin() * cfg.rope_scale).to(dtype)

    def forward(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """positions ``[B, L]`` -> cos, sin ``[B, L, 1, d]`` (broadcast over heads)."""
        return self.cos[positions].unsqueeze(2), self.sin[positions].unsqueeze(2)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    if kernels.usable(x):
        return kernels.rope(x, cos, sin)
    xf = x.float()
    x1, x2 = xf.chunk(2, dim=-1)
    return (xf * cos + torch.cat((-x2, x1), dim=-1) * sin).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: LMConfig, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.head_dim = cfg.head_dim
        h, d = cfg.hidden_size, cfg.head_dim
        self.q_proj = nn.Linear(h, self.n_heads * d, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(h, self.n_kv * d, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(h, self.n_kv * d, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(self.n_heads * d, h, bias=False)
        self.qkv_proj: nn.Module | None = None  # set by pack_projections

    def pack(self) -> None:
        """One Linear for q/k/v (the three weights become views of its weight), so one GEMM
        computes all three projections."""
        self.qkv_proj = _pack(self.q_proj, self.k_proj, self.v_proj)

    def _project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.qkv_proj is None:
            return self.q_proj(x), self.k_proj(x), self.v_proj(x)
        kv_dim = self.n_kv * self.head_dim
        return self.qkv_proj(x).split([self.n_heads * self.head_dim, kv_dim, kv_dim], dim=-1)

    def forward(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor] | None,
        kv: KVBackend | None,
    ) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self._project(x)
        q = q.unflatten(-1, (self.n_heads, self.head_dim))
        k = k.unflatten(-1, (self.n_kv, self.head_dim))
        v = v.unflatten(-1, (self.n_kv, self.head_dim))
        if rope is not None:
            q, k = _rotate(q, *rope), _rotate(k, *rope)
        if kv is None:
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), enable_gqa=True
            ).transpose(1, 2)
        else:
            out = kv.attend(self.layer_idx, q, k, v)
        return self.o_proj(out.reshape(b, n, self.n_heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.gate_up_proj: nn.Module | None = None  # set by pack_projections

    def pack(self) -> None:
        """One Linear for gate and up (their weights become views of its weight)."""
        self.gate_up_proj = _pack(self.gate_proj, self.up_proj)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gate_up_proj is None:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        gate_up = self.gate_up_proj(x)
        if kernels.usable(gate_up):
            return self.down_proj(kernels.silu_mul(gate_up))
        gate, up = gate_up.chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


def _pack(*linears: nn.Linear) -> nn.Linear:
    """One Linear whose weight (and bias, when they have one) is the given ones stacked along the
    outputs; each original becomes a view of it, so packing costs no memory and ``state_dict``
    keeps the official names with their values (the packed tensors are added beside them)."""
    biased = linears[0].bias is not None
    packed = torch.cat([lin.weight.detach() for lin in linears])
    packed_bias = torch.cat([lin.bias.detach() for lin in linears]) if biased else None
    start = 0
    for lin in linears:
        rows = lin.weight.shape[0]
        lin.weight.data = packed[start : start + rows]
        if packed_bias is not None:
            lin.bias.data = packed_bias[start : start + rows]
        start += rows
    joined = nn.Linear(packed.shape[1], packed.shape[0], bias=biased, device="meta")
    joined.weight = nn.Parameter(packed, requires_grad=False)
    if packed_bias is not None:
        joined.bias = nn.Parameter(packed_bias, requires_grad=False)
    return joined


def pack_projections(model: nn.Module) -> None:
    """Pack q/k/v and gate/up of every transformer layer in ``model`` (done once after loading,
    on the device the model runs on)."""
    for module in model.modules():
        if isinstance(module, (Attention, MLP)):
            module.pack()


class DecoderLayer(nn.Module):
    def __init__(self, cfg: LMConfig, layer_idx: int) -> None:
        super().__init__()
        self.self_attn = Attention(cfg, layer_idx)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        # muP scales each residual branch by scale_depth / sqrt(layers of this stack).
        self.branch_scale = cfg.scale_depth / math.sqrt(cfg.num_hidden_layers) if cfg.use_mup else None

    def _add(self, x: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
        return x + (branch if self.branch_scale is None else branch * self.branch_scale)

    def forward(self, x: torch.Tensor, rope, kv: KVBackend | None) -> torch.Tensor:
        x = self._add(x, self.self_attn(self.input_layernorm(x), rope, kv))
        return self._add(x, self.mlp(self.post_attention_layernorm(x)))


class MiniCPM(nn.Module):
    """One stack. ``embed_tokens`` exists only when ``vocab_size > 0`` (the base LM)."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        if cfg.vocab_size > 0:
            self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rope = None if cfg.no_rope else LongRoPE(cfg)
        self.checkpointing = False  # training: recompute each layer in the backward pass

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Text embeddings (times ``scale_emb`` under muP, as the official loop does)."""
        emb = self.embed_tokens(ids)
        return emb * self.cfg.scale_emb if self.cfg.use_mup else emb

    def forward(
        self,
        x: torch.Tensor,
        positions: torch.Tensor | None = None,
        kv: KVBackend | None = None,
    ) -> torch.Tensor:
        """``x [B, L, H]``, ``positions [B, L]`` (default ``0..L-1``) -> ``[B, L, H]``.

        With ``kv=None`` attention is non-causal over the ``L`` tokens (LocEnc, LocDiT).
        """
        rope = None
        if self.rope is not None:
            if positions is None:
                positions = torch.arange(x.shape[1], device=x.device).expand(x.shape[0], -1)
            rope = self.rope(positions)
        for layer in self.layers:
            if self.checkpointing and torch.is_grad_enabled():
                x = checkpoint(layer, x, rope, kv, use_reentrant=False)
            else:
                x = layer(x, rope, kv)
        return self.norm(x)
