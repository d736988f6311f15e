"""The conditional flow-matching solver both CosyVoice flows use (``CausalConditionalCFM``).

As the official code (FunAudioLLM/CosyVoice ``cosyvoice/flow/flow_matching.py`` at ace7c47)
does, and not as the paper says:

- the starting noise is a fixed table, ``randn(1, 80, 15000)`` drawn right after
  ``manual_seed(0)`` when the model is built (:func:`noise_table`), cut to the mel's length;
  the caller's seed never reaches it;
- the time grid is ``1 - cos(linspace(0, 1, n + 1) * pi / 2)``; Euler steps;
- classifier-free guidance doubles the batch: the conditioned rows and rows whose ``mu``,
  ``spks`` and ``cond`` are zero, combined as ``(1 + r) * v_cond - r * v_uncond`` (r = 0.7).

The official solver runs one utterance ([2, 80, T]); this one runs ``B`` (rows padded to the
longest and masked), which is what lets the engine batch the flow.
"""

from __future__ import annotations

from typing import Protocol

import torch

NOISE_FRAMES = 50 * 300
MEL_BINS = 80  # hard-coded in the official solver, whatever the yaml says


class Estimator(Protocol):
    def __call__(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        mu: torch.Tensor,
        t: torch.Tensor,
        spks: torch.Tensor,
        cond: torch.Tensor,
        streaming: bool = False,
    ) -> torch.Tensor: ...


def noise_table() -> torch.Tensor:
    """The official ``rand_noise`` [1, 80, 15000]: drawn from a CPU generator seeded with 0,
    exactly as ``set_all_random_seed(0); torch.randn([1, 80, 50 * 300])`` draws it. Its own
    generator here, so building a model never disturbs the caller's global one."""
    gen = torch.Generator().manual_seed(0)
    return torch.randn([1, MEL_BINS, NOISE_FRAMES], generator=gen)


def time_grid(n_timesteps: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    t = torch.linspace(0, 1, n_timesteps + 1, device=device, dtype=dtype)
    return 1 - torch.cos(t * 0.5 * torch.pi)


@torch.inference_mode()
def solve(
    estimator: Estimator,
    noise: torch.Tensor,
    mu: torch.Tensor,
    mask: torch.Tensor,
    spks: torch.Tensor,
    cond: torch.Tensor,
    n_timesteps: int = 10,
    cfg_rate: float = 0.7,
    streaming: bool = False,
) -> torch.Tensor:
    """Euler over the cosine grid with CFG. ``noise``/``mu``/``cond`` [B, 80, T], ``mask``
    [B, 1, T], ``spks`` [B, 80] → the mel [B, 80, T] in float32.

    ``noise`` is ``noise_table()[:, :, :T]`` (expanded to B rows) for the official behaviour.
    The arithmetic follows the official loop step for step (``t`` and ``dt`` carried, not
    recomputed from the grid), so fp32 results agree to rounding.
    """
    b, _, frames = mu.shape
    dtype = spks.dtype
    t_span = time_grid(n_timesteps, mu.device, mu.dtype)
    t, dt = t_span[0].unsqueeze(0), t_span[1] - t_span[0]
    x = noise.to(mu.device, mu.dtype)
    x_in = torch.zeros([2 * b, MEL_BINS, frames], device=mu.device, dtype=dtype)
    mask_in = torch.zeros([2 * b, 1, frames], device=mu.device, dtype=dtype)
    mu_in = torch.zeros([2 * b, MEL_BINS, frames], device=mu.device, dtype=dtype)
    t_in = torch.zeros([2 * b], device=mu.device, dtype=dtype)
    spks_in = torch.zeros([2 * b, MEL_BINS], device=mu.device, dtype=dtype)
    cond_in = torch.zeros([2 * b, MEL_BINS, frames], device=mu.device, dtype=dtype)
    for step in range(1, len(t_span)):
        x_in[:b], x_in[b:] = x, x
        mask_in[:b], mask_in[b:] = mask, mask
        mu_in[:b] = mu
        t_in[:] = t
        spks_in[:b] = spks
        cond_in[:b] = cond
        v = estimator(x_in, mask_in, mu_in, t_in, spks_in, cond_in, streaming=streaming)
        v_cond, v_uncond = torch.split(v, [b, b], dim=0)
        x = x + dt * ((1.0 + cfg_rate) * v_cond - cfg_rate * v_uncond)
        t = t + dt
        if step < len(t_span) - 1:
            dt = t_span[step + 1] - t
    return x.float()
