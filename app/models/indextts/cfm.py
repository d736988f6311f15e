"""IndexTTS's S2Mel flow-matching solver (official ``CFM.inference`` / ``solve_euler``).

Written from ``indextts/s2mel/modules/flow_matching.py`` (index-tts at ee40fa7), as ``infer_v2_5.py``
calls it (25 steps, guidance 0.7, temperature 1):

- the noise is ``randn([1, 80, T])``, drawn from the request's generator (the official draws it from
  torch's global one, right after the segment's GPT decode);
- the first ``Tp`` frames (the prompt's) of the noise are zeroed, and given instead, as the
  prompt's mel, in ``prompt_x`` (zero past ``Tp``);
- Euler over ``linspace(0, 1, steps + 1)``, with ``t`` carried (``t += dt``) as the official loop
  carries it, each step's ``dt`` from the grid;
- classifier-free guidance: the estimator sees the conditioned rows stacked over rows whose
  ``prompt_x``, ``style`` and ``cond`` are zero, and ``v = (1 + r)·v_cond − r·v_uncond``;
- after every step the prompt frames are zeroed again: the result keeps them at zero, and the
  caller cuts them (``mel[:, :, Tp:]``).

:func:`euler` runs ``B`` requests at once: rows padded at the end to the longest, each with its
own length and prompt length, each giving what it gives alone.
"""

from __future__ import annotations

from typing import Protocol

import torch


class Estimator(Protocol):
    def __call__(
        self,
        x: torch.Tensor,
        prompt_x: torch.Tensor,
        x_lens: torch.Tensor | None,
        t: torch.Tensor,
        style: torch.Tensor,
        cond: torch.Tensor,
    ) -> torch.Tensor: ...


@torch.inference_mode()
def solve(
    estimator: Estimator,
    cond: torch.Tensor,
    prompt_mel: torch.Tensor,
    style: torch.Tensor,
    steps: int = 25,
    cfg_rate: float = 0.7,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One request: ``cond`` [1, T, C] (the prompt's condition then the text's), ``prompt_mel``
    [1, 80, Tp], ``style`` [1, 192], all in the estimator's dtype → the mel [1, 80, T], its first
    ``Tp`` frames zero.

    The noise comes from ``generator`` (torch's global generator of ``cond``'s device when None)."""
    noise = torch.randn([1, prompt_mel.shape[1], cond.shape[1]], generator=generator, device=cond.device)
    noise = noise.to(cond.dtype)  # drawn in float32 as the official draws it, whatever the model's dtype
    return euler(estimator, noise, cond, prompt_mel, style, steps=steps, cfg_rate=cfg_rate)


@torch.inference_mode()
def euler(
    estimator: Estimator,
    noise: torch.Tensor,
    cond: torch.Tensor,
    prompt_mel: torch.Tensor,
    style: torch.Tensor,
    lengths: torch.Tensor | None = None,
    prompt_lens: torch.Tensor | None = None,
    steps: int = 25,
    cfg_rate: float = 0.7,
) -> torch.Tensor:
    """``B`` requests: ``noise`` [B, 80, T], ``cond`` [B, T, C], ``prompt_mel`` [B, 80, Tp],
    ``style`` [B, 192]; ``lengths`` [B] (frames of each row, None: all T) and ``prompt_lens`` [B]
    (prompt frames of each row, None: all Tp) → the mels [B, 80, T] (each row's prompt frames zero;
    frames past a row's length are padding)."""
    b, _, frames = noise.shape
    pos = torch.arange(frames, device=noise.device)
    if prompt_lens is None:
        prompt_lens = torch.full((b,), prompt_mel.shape[-1], device=noise.device)
    in_prompt = (pos[None, :] < prompt_lens[:, None]).unsqueeze(1)
    prompt_x = torch.zeros_like(noise)
    prompt_x[..., : prompt_mel.shape[-1]] = prompt_mel
    prompt_x = prompt_x.masked_fill(~in_prompt, 0.0)
    x = noise.masked_fill(in_prompt, 0.0)
    if cfg_rate > 0:  # conditioned rows, then the same rows unconditioned
        prompt_x = torch.cat([prompt_x, torch.zeros_like(prompt_x)])
        style = torch.cat([style, torch.zeros_like(style)])
        cond = torch.cat([cond, torch.zeros_like(cond)])
        lengths = None if lengths is None else torch.cat([lengths, lengths])
    t_span = torch.linspace(0, 1, steps + 1, device=noise.device, dtype=noise.dtype)
    t = t_span[0]
    for step in range(1, steps + 1):
        dt = t_span[step] - t_span[step - 1]
        if cfg_rate > 0:
            v_cond, v_uncond = estimator(
                torch.cat([x, x]), prompt_x, lengths, t.expand(2 * b), style, cond
            ).chunk(2)
            v = (1.0 + cfg_rate) * v_cond - cfg_rate * v_uncond
        else:
            v = estimator(x, prompt_x, lengths, t.expand(b), style, cond)
        x = (x + dt * v).masked_fill(in_prompt, 0.0)
        t = t + dt
    return x
