"""LocDiT: the velocity estimator of the flow-matching head (v1 and v2 token layouts).

Tokens fed to the non-causal MiniCPM stack:
- v1: ``[mu + t_emb, cond_proj(prev_patch) x P, in_proj(x) x P]``
- v2: ``[mu_0, mu_1, t_emb, cond_proj(prev_patch) x P, in_proj(x) x P]``
The velocity is ``out_proj`` of the last ``P`` outputs. The time sinusoid is computed in the
dtype of ``t`` (the model dtype), which is where the official code rounds.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from app.models.voxcpm.config import LMConfig
from app.models.voxcpm.minicpm import MiniCPM


def time_sinusoid(t: torch.Tensor, dim: int, scale: float = 1000.0) -> torch.Tensor:
    """``[N] -> [N, dim]``: ``[sin(scale*t*f_k), cos(scale*t*f_k)]``, all in ``t.dtype``."""
    half = dim // 2
    freqs = torch.exp(torch.arange(half, dtype=t.dtype, device=t.device) * -(math.log(10000) / (half - 1)))
    arg = scale * t.unsqueeze(1) * freqs.unsqueeze(0)
    return torch.cat((arg.sin(), arg.cos()), dim=-1)


class TimeMLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(dim, dim)
        self.linear_2 = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_2(F.silu(self.linear_1(x)))


class LocDiT(nn.Module):
    def __init__(self, cfg: LMConfig, feat_dim: int, v2: bool) -> None:
        super().__init__()
        h = cfg.hidden_size
        self.v2 = v2
        self.hidden = h
        self.in_proj = nn.Linear(feat_dim, h)
        self.cond_proj = nn.Linear(feat_dim, h)
        self.out_proj = nn.Linear(h, feat_dim)
        self.time_mlp = TimeMLP(h)
        self.delta_time_mlp = TimeMLP(h)
        self.decoder = MiniCPM(cfg)

    def time_embedding(self, t: torch.Tensor, dt: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """``t, dt [N]`` -> ``[N, H]`` in ``dtype``: the two time MLPs' sum."""
        temb = self.time_mlp(time_sinusoid(t, self.hidden).to(dtype))
        return temb + self.delta_time_mlp(time_sinusoid(dt, self.hidden).to(dtype))

    def forward(
        self,
        x: torch.Tensor,
        mu: torch.Tensor,
        t: torch.Tensor,
        cond: torch.Tensor,
        dt: torch.Tensor,
        temb: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``x [N, D, P]``, ``mu [N, H]`` (v2: ``[N, 2H]``), ``t, dt [N]``, ``cond [N, D, P']``
        -> velocity ``[N, D, P]``. ``temb``: :meth:`time_embedding` of ``t, dt``, when the
        caller already has it."""
        # Contiguous inputs: the GEMM path (and so the bf16 rounding) then matches the official one.
        xs = self.in_proj(x.transpose(1, 2).contiguous())
        cs = self.cond_proj(cond.transpose(1, 2).contiguous())
        if temb is None:
            temb = self.time_embedding(t, dt, xs.dtype)
        if self.v2:
            head = torch.cat([mu.view(xs.shape[0], -1, self.hidden), temb.unsqueeze(1)], dim=1)
        else:
            head = (mu + temb).unsqueeze(1)
        out = self.decoder(torch.cat([head, cs, xs], dim=1))
        return self.out_proj(out[:, -xs.shape[1] :]).transpose(1, 2)
