"""What :meth:`Engine.step` hands back: small immutable payloads safe to pass between threads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AudioChunk:
    """One decoded step of one request: float32 mono samples at the model's output rate."""

    request_id: int
    index: int
    samples: np.ndarray


@dataclass(frozen=True)
class RequestFinished:
    """The request's last chunk has been sent.

    ``stats`` holds ``queue_s`` (submit to first prefill), ``first_chunk_s`` (submit to first
    chunk), ``wall_s`` (submit to finish), ``steps`` (patches made), ``audio_s`` (seconds of
    audio), ``rtf`` (wall time over audio time), ``prefill_tokens`` and ``cached_tokens``.
    """

    request_id: int
    n_patches: int
    seed: int
    stats: dict[str, float]


@dataclass(frozen=True)
class RequestRetried:
    """The take streamed so far was a bad case (the official ``retry_badcase``: it reached
    6 patches per text token) and is being drawn again: drop the audio received for this
    request; chunks start again at index 0. ``attempt`` is the take now starting (2 or 3)."""

    request_id: int
    attempt: int


@dataclass(frozen=True)
class RequestFailed:
    """The request was dropped; ``message`` is one plain-language line for the user."""

    request_id: int
    message: str


Event = AudioChunk | RequestFinished | RequestFailed | RequestRetried
