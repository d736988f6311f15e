"""Which take of a segment to keep, and whether to draw another.

A segment's first generation is take 1. After each take is heard and scored, :class:`Takes`
says whether to try again with a new seed (its best score is above the threshold and fewer than
``max_takes`` takes were made) and which take is the best so far (the lowest score; a take that
could not be checked counts as worse than any scored one, and the earliest wins a tie).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app.backcheck.score import Score

DEFAULT_THRESHOLD = 0.2  # errors per unit: one word in five misheard
DEFAULT_MAX_TAKES = 3
MAX_TAKES_LIMIT = 10


@dataclass(frozen=True)
class CheckPolicy:
    """``threshold``: a take scoring above it is flagged; ``max_takes``: most generations per segment
    (the first one included), so ``max_takes=1`` only scores."""

    threshold: float = DEFAULT_THRESHOLD
    max_takes: int = DEFAULT_MAX_TAKES

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.threshold) <= 10.0:
            raise ValueError(f"the check threshold must be between 0 and 10, got {self.threshold}")
        if not 1 <= int(self.max_takes) <= MAX_TAKES_LIMIT:
            raise ValueError(f"takes must be between 1 and {MAX_TAKES_LIMIT}, got {self.max_takes}")

    def flagged(self, score: Score | None) -> bool:
        return score is not None and score.value > self.threshold


@dataclass(frozen=True)
class Take:
    seed: int
    score: Score | None  # None: not checked (no recognizer, or it failed)


def take_seed(first_seed: int, take: int) -> int:
    """The seed of take ``take`` (1-based) of a segment whose first take used ``first_seed``:
    reproducible (the same ``--seed`` gives the same takes) and different for every take."""
    if take <= 1:
        return int(first_seed)
    return int(np.random.default_rng([int(first_seed), int(take)]).integers(0, 2**31 - 1))


@dataclass
class Takes:
    """The takes made so far for one segment."""

    takes: list[Take] = field(default_factory=list)

    def add(self, take: Take) -> None:
        self.takes.append(take)

    def __len__(self) -> int:
        return len(self.takes)

    def best_index(self) -> int:
        def rank(i: int) -> tuple[int, float, int]:
            s = self.takes[i].score
            return (1, 0.0, i) if s is None else (0, s.value, i)

        return min(range(len(self.takes)), key=rank)

    def best(self) -> Take:
        return self.takes[self.best_index()]

    def wants_another(self, policy: CheckPolicy) -> bool:
        return bool(self.takes) and len(self.takes) < policy.max_takes and policy.flagged(self.best().score)
