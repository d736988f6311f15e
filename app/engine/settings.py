"""The one check of sampling settings, shared by the engine (``SynthRequest.check``) and the
one-request loop (``Synthesizer.synthesize``), so every path accepts and refuses the same values."""

from __future__ import annotations

import math

from app.errors import VoxDeskError

MAX_CFG = 10.0  # the range a project accepts (app/project.py)
MAX_TIMESTEPS = 100
SEED_LIMIT = 2**63  # seeds are 0 .. 2**63-1; negative seeds are refused everywhere


def check_settings(*, cfg: float, timesteps: int, min_len: int, max_len: int, seed: int | None) -> None:
    """Raise :class:`VoxDeskError` for settings no model can honour (``seed=None``: random)."""
    if not (math.isfinite(cfg) and 0.0 <= cfg <= MAX_CFG):
        raise VoxDeskError(
            f"Guidance (cfg) must be a number from 0 to {MAX_CFG:g}: pick a value in that range."
        )
    if not 1 <= timesteps <= MAX_TIMESTEPS:
        raise VoxDeskError(
            f"Quality steps must be between 1 and {MAX_TIMESTEPS}: pick a value in that range."
        )
    if min_len < 0 or max_len < 1:
        raise VoxDeskError("The length limits are invalid: use a minimum of 0 or more and a maximum of 1+.")
    if seed is not None and not 0 <= seed < SEED_LIMIT:
        raise VoxDeskError("The seed must be a whole number from 0 to 2**63-1: pick another seed.")
