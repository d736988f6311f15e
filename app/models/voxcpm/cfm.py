"""The flow-matching sampler: Euler steps with sway sampling and CFG-zero*.

Batched: every sample has its own guidance value and its own initial noise (passed in, so
the caller owns the random numbers). Each estimator call runs the conditional half
(``mu``) and the unconditional half (``mu = 0``) as one batch of ``2B``.
"""

from __future__ import annotations

import torch
from torch import nn

from app.models.voxcpm import kernels
from app.models.voxcpm.locdit import LocDiT


def time_grid(n_steps: int, dtype: torch.dtype, device: torch.device, sway: float = 1.0) -> torch.Tensor:
    """``t`` from 1 to 0 with sway: ``t + sway*(cos(pi/2*t) - 1 + t)``, in the model dtype."""
    t = torch.linspace(1, 0, n_steps + 1, device=device, dtype=dtype)
    return t + sway * (torch.cos(torch.pi / 2 * t) - 1 + t)


class CFM(nn.Module):
    """Holds the estimator under the official name ``feat_decoder.estimator``."""

    def __init__(self, estimator: LocDiT, mean_mode: bool = False) -> None:
        super().__init__()
        self.estimator = estimator
        self.mean_mode = mean_mode
        # The time embeddings of the last solve's grid, by step: every patch walks the same
        # grid, so on the CPU (where nothing replays a graph) they are computed once, not
        # 4 Linears x 9 steps per patch. Keyed by what the grid and the shapes depend on.
        self._tembs: tuple[tuple, dict[int, torch.Tensor]] = ((), {})

    def _time_cache(self, x: torch.Tensor, n_steps: int, sway: float) -> dict[int, torch.Tensor] | None:
        if x.device.type != "cpu":
            return None
        key = (x.shape[0], n_steps, sway, x.dtype)
        if self._tembs[0] != key:
            self._tembs = (key, {})
        return self._tembs[1]

    def velocity(
        self,
        x: torch.Tensor,
        mu2: torch.Tensor,
        t: torch.Tensor,
        dt: torch.Tensor,
        cond2: torch.Tensor,
        tembs: dict[int, torch.Tensor] | None = None,
        step: int = 0,
    ) -> torch.Tensor:
        """``[2B, D, P]``: conditional then unconditional velocities at one time (``t``/``dt``
        scalars); ``mu2 = [mu, 0]`` and ``cond2 = [cond, cond]`` are built once per solve.
        ``tembs``: cached time embeddings by ``step``, filled here when missing."""
        n = 2 * x.shape[0]
        ts = t.reshape(1).expand(n)
        dts = dt.reshape(1).expand(n) if self.mean_mode else torch.zeros_like(ts)
        temb = None if tembs is None else tembs.get(step)
        if temb is None and tembs is not None:
            temb = tembs[step] = self.estimator.time_embedding(ts, dts, self.estimator.in_proj.weight.dtype)
        return self.estimator(torch.cat([x, x]), mu2, ts, cond2, dts, temb)

    def solve(
        self,
        noise: torch.Tensor,
        mu: torch.Tensor,
        cond: torch.Tensor,
        cfg: torch.Tensor,
        n_steps: int,
        sway: float = 1.0,
        cfg_zero_star: bool = True,
    ) -> torch.Tensor:
        """``noise [B, D, P]`` (model dtype), ``mu [B, M]``, ``cond [B, D, P]``, ``cfg [B]``
        -> the patch ``[B, D, P]``. The time bookkeeping (``t -= dt``) mirrors the official
        solver's arithmetic so the rounding matches."""
        t_span = time_grid(n_steps, noise.dtype, noise.device, sway)
        x = noise
        t, dt = t_span[0], t_span[0] - t_span[1]
        zero_steps = max(1, int((n_steps + 1) * 0.04))
        g = cfg.to(torch.float32).view(-1, 1, 1)
        mu2, cond2 = torch.cat([mu, torch.zeros_like(mu)]), torch.cat([cond, cond])
        fused = cfg_zero_star and kernels.usable(x)
        tembs = self._time_cache(x, n_steps, sway)
        for step in range(1, n_steps + 1):
            if cfg_zero_star and step <= zero_steps:
                x = x - dt * torch.zeros_like(x)
            elif fused:  # the CFG-zero* update and the Euler step in one kernel
                x = kernels.cfg_euler(x, self.velocity(x, mu2, t, dt, cond2), g, dt)
            else:
                x = x - dt * self.guide(self.velocity(x, mu2, t, dt, cond2, tembs, step), g, cfg_zero_star)
            t = t - dt
            if step < n_steps:
                dt = t - t_span[step + 1]
        return x

    @staticmethod
    def guide(v2: torch.Tensor, g: torch.Tensor, cfg_zero_star: bool) -> torch.Tensor:
        """The guided velocity from ``v2 = [v_cond, v_uncond]`` and guidance ``g [B, 1, 1]``."""
        b = v2.shape[0] // 2
        v_c, v_u = v2[:b], v2[b:]
        if cfg_zero_star:
            pos, neg = v_c.reshape(b, -1), v_u.reshape(b, -1)
            s = (pos * neg).sum(1, keepdim=True) / ((neg**2).sum(1, keepdim=True) + 1e-8)
            s = s.view(-1, 1, 1)
        else:
            s = torch.ones_like(g, dtype=v2.dtype)
        base = v_u * s
        return base + (g * (v_c - base).float()).to(v2.dtype)
