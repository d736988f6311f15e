"""Which checkpoint is best, and whether the run has started to overfit (Qt-free).

A checkpoint's validation has two scores in 0..1: the character error rate (CER) of the spoken
validation sentence as the recognizer hears it (lower is better) and its speaker similarity to
the held-out clips (higher is better). They are weighed equally: the best checkpoint has the
highest ``similarity - cer``.

Overfitting, as the official FAQ describes it, is the training loss still falling while the
voice gets worse on what it was not trained on: the latest validation scores more than
:data:`OVERFIT_MARGIN` below the best one, at a lower training loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

OVERFIT_MARGIN = 0.02


def score(validation: Any) -> float:
    return float(validation.similarity) - float(validation.cer)


def best(checkpoints: Sequence[Any]) -> Any | None:
    """The validated checkpoint with the highest score (the earlier one of equals); None if none
    was validated."""
    validated = [c for c in checkpoints if c.validation is not None]
    if not validated:
        return None
    return max(validated, key=lambda c: (score(c.validation), -c.step))


def overfitting(checkpoints: Sequence[Any]) -> Any | None:
    """The best checkpoint when a later validation is worse while the loss kept falling, else None."""
    validated = sorted((c for c in checkpoints if c.validation is not None), key=lambda c: c.step)
    top = best(validated)
    if top is None or validated[-1] is top:
        return None
    latest = validated[-1]
    if score(latest.validation) < score(top.validation) - OVERFIT_MARGIN and latest.loss < top.loss:
        return top
    return None
