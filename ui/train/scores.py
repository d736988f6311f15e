"""Which checkpoint is best, and whether the run has started to overfit (Qt-free).

A checkpoint's validation has two scores in 0..1: the character error rate (CER) of the spoken
validation sentence as the recognizer hears it (lower is better) and its speaker similarity to
the held-out clips (higher is better). They are weighed equally: the best checkpoint has the
highest ``similarity - cer``. A score the run could not measure (no recognizer or no speaker
model installed: NaN) is left out of the sum; with neither there is no best checkpoint.

Overfitting, as the official FAQ describes it, is the training loss still falling while the
voice gets worse on what it was not trained on: the latest validation scores more than
:data:`OVERFIT_MARGIN` below the best one, at a lower training loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

OVERFIT_MARGIN = 0.02


def score(validation: Any) -> float | None:
    """``similarity - cer`` of what was measured; None when nothing was."""
    similarity, cer = float(validation.similarity), float(validation.cer)
    if math.isnan(similarity) and math.isnan(cer):
        return None
    return (0.0 if math.isnan(similarity) else similarity) - (0.0 if math.isnan(cer) else cer)


def _scored(checkpoints: Sequence[Any]) -> list[Any]:
    """The checkpoints with a measured score, in step order."""
    scored = [c for c in checkpoints if c.validation is not None and score(c.validation) is not None]
    return sorted(scored, key=lambda c: c.step)


def best(checkpoints: Sequence[Any]) -> Any | None:
    """The scored checkpoint with the highest score (the earlier one of equals); None if none was."""
    scored = _scored(checkpoints)
    if not scored:
        return None
    return max(scored, key=lambda c: (score(c.validation), -c.step))


def overfitting(checkpoints: Sequence[Any]) -> Any | None:
    """The best checkpoint when a later validation is worse while the loss kept falling, else None."""
    validated = _scored(checkpoints)
    top = best(validated)
    if top is None or validated[-1] is top:
        return None
    latest = validated[-1]
    if score(latest.validation) < score(top.validation) - OVERFIT_MARGIN and latest.loss < top.loss:
        return top
    return None
