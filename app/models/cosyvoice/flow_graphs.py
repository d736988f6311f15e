"""CUDA graphs of CosyVoice3's flow estimator (the DiT), one per (rows, frames) bucket.

A streamed request's first audio waits for one flow call: ten DiT forwards over the prompt's
frames and the first chunk's. Run eagerly with one request, each forward is bound by the host
launching its ~900 kernels (16 ms on an H100, against 10.6 ms of GPU work: docs/benchmarks.md,
"The first streamed chunk"); replayed as a graph it costs its GPU time.

The DiT's inputs vary in rows (2 per request: classifier-free guidance) and frames, so each call
is padded to a bucket: rows to a power of two, frames to a multiple of :data:`FRAME_STEP`.
Padding changes nothing in the valid frames: padded frames are masked as attention keys (and,
streaming, every chunk sees only earlier frames), the position convolution is causal, and
padded rows are wholly masked. A bucket's graph is captured the first time it is needed (one
warm-up forward and one captured: about two eager forwards), all of them in one memory pool;
buckets past :data:`MAX_FRAMES` rows x frames run eagerly, where the GPU, not the host, is the
bound. The caller uses each output before the next call (the Euler step), as the pool requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from app.models.cosyvoice.dit import TAPS_MAX_FRAMES

FRAME_STEP = 64
# rows x frames of the largest graphed bucket (one request: 4096 frames, 82 s): every graphed pass
# runs the position convolution as taps, so no graph captures cuDNN's FFT choice and its workspace
MAX_FRAMES = TAPS_MAX_FRAMES
NAMES = ("x", "mask", "mu", "t", "spks", "cond")


def bucket(rows: int, frames: int) -> tuple[int, int] | None:
    """The (rows, frames) bucket of a call, or None when it runs eagerly."""
    r = 1 << max(rows - 1, 0).bit_length()
    f = -(-frames // FRAME_STEP) * FRAME_STEP
    return (r, f) if r * f <= MAX_FRAMES else None


def static_inputs(rows: int, frames: int, like: torch.Tensor) -> dict[str, torch.Tensor]:
    """Zeroed input buffers of a bucket (``x``/``mu``/``cond`` [R, 80, F], ``mask`` [R, 1, F],
    ``t`` [R], ``spks`` [R, 80])."""
    z = {"dtype": like.dtype, "device": like.device}
    bins = like.shape[1]
    return {
        "x": torch.zeros(rows, bins, frames, **z),
        "mask": torch.zeros(rows, 1, frames, **z),
        "mu": torch.zeros(rows, bins, frames, **z),
        "t": torch.zeros(rows, **z),
        "spks": torch.zeros(rows, bins, **z),
        "cond": torch.zeros(rows, bins, frames, **z),
    }


def fill(static: dict[str, torch.Tensor], args: tuple[torch.Tensor, ...]) -> None:
    """Copy a call's inputs into the top-left corner of a bucket's buffers; the rest is zero
    (padded frames and rows are masked)."""
    for name, value in zip(NAMES, args, strict=True):
        buf = static[name]
        buf.zero_()
        if name == "t" and value.ndim == 0:
            value = value.expand(args[0].shape[0])
        buf[tuple(slice(0, n) for n in value.shape)].copy_(value)


@dataclass
class _Graph:
    graph: Any
    inputs: dict[str, torch.Tensor]
    out: torch.Tensor


class GraphedEstimator:
    """Calls ``estimator(x, mask, mu, t, spks, cond, streaming)`` through per-bucket graphs."""

    def __init__(self, estimator: nn.Module) -> None:
        self.estimator = estimator
        self._graphs: dict[tuple[int, int, bool], _Graph] = {}
        self._pool: Any = None

    def __call__(self, *inputs: torch.Tensor, streaming: bool = False) -> torch.Tensor:
        """``inputs`` as :class:`app.models.cosyvoice.cfm.Estimator` takes them (:data:`NAMES`)."""
        x = inputs[0]
        rows, _, frames = x.shape
        size = bucket(rows, frames) if x.is_cuda else None
        if size is None:
            return self.estimator(*inputs, streaming=streaming)
        key = (*size, streaming)
        entry = self._graphs.get(key) or self._capture(key, x)
        fill(entry.inputs, inputs)
        entry.graph.replay()
        return entry.out[:rows, :, :frames]

    @torch.inference_mode()
    def _capture(self, key: tuple[int, int, bool], like: torch.Tensor) -> _Graph:
        rows, frames, streaming = key
        static = static_inputs(rows, frames, like)
        static["mask"].fill_(1.0)

        def forward() -> torch.Tensor:
            return self.estimator(*(static[n] for n in NAMES), streaming=streaming)

        forward()  # warm-up: kernels chosen and loaded outside the capture
        torch.cuda.synchronize(like.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool, capture_error_mode="thread_local"):
            out = forward()
        self._pool = graph.pool()
        entry = _Graph(graph, static, out)
        self._graphs[key] = entry
        return entry
