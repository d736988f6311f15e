"""CUDA graphs of a family's decode step, one per batch-size bucket, and of its prefill, one per
(batch, width) bucket: the time to first audio of a lone request and of requests admitted together.

Family-agnostic: the runner owns static buffers that its step reads and writes, and this class
captures and replays its step functions over them. The hooks a runner provides:

- ``step_core(n, variant, width)``: the whole decode step on static rows ``[:n]``, block tables
  ``width`` wide; it reads and writes only static buffers (captured with ``width =
  runner.max_blocks``). ``variant`` is the per-row setting the graphs are captured for
  (VoxCPM: the CFM step count; a family whose step has none passes 0 here and calls
  :meth:`CudaGraphs.covers` with ``variants=()``).
- ``pad_rows(n, bs)``: make static rows ``[n:bs]`` padding that reads and writes only scratch
  (the scratch stream slot, the scratch KV block, position 0), so a batch smaller than its
  bucket changes nothing anybody reads.
- ``max_blocks`` (block-table width) and ``device``.
- With prefill graphs: ``prefill_inputs([], width, nb, rows=b)`` (host tensors of a bucket at
  rest, a dict holding at least ``"ids"`` ``[rows, width]``) and ``prefill_core(x)`` (the
  prefill over device tensors ``x`` only). The runner builds a batch's inputs at a bucket's
  shape and calls :meth:`CudaGraphs.prefill`.

The runner calls :meth:`covers` / :meth:`replay` in its decode and :meth:`prefill_bucket` /
:meth:`prefill` in its prefill, and sets ``runner.graphs`` (done by :meth:`capture`). Graphs are
captured with thread-local error checking, so the engine may capture and replay them on a
worker thread (the app's QThread).
"""

from __future__ import annotations

from typing import Any

import torch

PREFILL_WIDTHS = (16, 32, 64, 128, 256)  # a lone request's prefill: new positions, rounded up
PREFILL_BATCHES = (2, 4, 8, 16, 32, 64)  # requests admitted together (capped at max_num_seqs)
BATCH_WIDTHS = (32, 128)  # a batch's widths: text over a cached voice, or an uncached prompt
PREFILL_TOKENS = 4096  # no bucket wider than this many positions (batch x width)


def buckets(max_bs: int) -> list[int]:
    sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    return [b for b in sizes if b < max_bs] + [max_bs]


class CudaGraphs:
    def __init__(self, runner: Any, max_bs: int, variant: int, prefill: bool = True) -> None:
        self.runner = runner
        self.variant = variant
        self.sizes = buckets(max_bs)
        self.graphs: dict[int, Any] = {}
        self.prefill_graphs: dict[tuple[int, int], Any] = {}
        self.prefill_static: dict[tuple[int, int], dict[str, torch.Tensor]] = {}
        self.with_prefill = prefill

    def covers(self, n: int, variants: list[int] | tuple[int, ...] = ()) -> bool:
        """Whether a batch of ``n`` rows with these per-row variants has a graph."""
        return n <= self.sizes[-1] and all(v == self.variant for v in variants)

    @torch.inference_mode()
    def capture(self) -> None:
        r = self.runner
        pool = None
        for bs in reversed(self.sizes):
            r.pad_rows(0, bs)
            r.step_core(bs, self.variant, r.max_blocks)  # warm-up: compiles kernels, sizes the pool
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool, capture_error_mode="thread_local"):
                r.step_core(bs, self.variant, r.max_blocks)
            torch.cuda.synchronize()
            pool = graph.pool()
            self.graphs[bs] = graph
        if self.with_prefill:
            self._capture_prefill(pool)
        r.graphs = self

    def replay(self, n: int) -> None:
        """Run the decode step for the first ``n`` rows of the static buffers (filled by the
        runner) in the smallest bucket that holds them; spare rows become padding."""
        bs = next(b for b in self.sizes if b >= n)
        if bs > n:
            with torch.inference_mode():
                self.runner.pad_rows(n, bs)
        self.graphs[bs].replay()

    def prefill_keys(self) -> list[tuple[int, int]]:
        """The (batch, width) buckets graphed: every width for a lone request (its first chunk),
        two widths for batches (new requests admitted together, usually over a cached voice)."""
        keys = [(1, w) for w in PREFILL_WIDTHS]
        for b in PREFILL_BATCHES:
            b = min(b, self.sizes[-1])
            keys += [(b, w) for w in BATCH_WIDTHS if b > 1 and b * w <= PREFILL_TOKENS]
        return sorted(set(keys))

    def _capture_prefill(self, pool) -> None:
        """One graph per (batch, width) bucket; inputs at rest write only scratch rows."""
        r = self.runner
        self.prefill_buffers()
        for key in sorted(self.prefill_static, key=lambda k: -k[0] * k[1]):
            x = self.prefill_static[key]
            r.prefill_core(x)  # warm-up
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool, capture_error_mode="thread_local"):
                r.prefill_core(x)
            torch.cuda.synchronize()
            self.prefill_graphs[key] = graph

    def prefill_buffers(self) -> None:
        """The static prefill inputs of every bucket, at rest: rows that touch only scratch."""
        r = self.runner
        self.prefill_static = {
            (b, w): {k: v.to(r.device) for k, v in r.prefill_inputs([], w, r.max_blocks, rows=b).items()}
            for b, w in self.prefill_keys()
        }

    def prefill_bucket(self, batch: int, width: int) -> tuple[int, int] | None:
        """The smallest graphed bucket (fewest positions) that holds ``batch`` rows of ``width``."""
        if not self.with_prefill:
            return None
        fits = [k for k in self.prefill_keys() if k[0] >= batch and k[1] >= width]
        return min(fits, key=lambda k: (k[0] * k[1], k[0])) if fits else None

    def prefill(self, x: dict[str, torch.Tensor]) -> None:
        """Copy a batch's inputs (built at a bucket's shape) in and replay that bucket."""
        key = (x["ids"].shape[0], x["ids"].shape[1])
        static = self.prefill_static[key]
        with torch.inference_mode():
            for k, v in x.items():
                static[k].copy_(v, non_blocking=True)
        self.prefill_graphs[key].replay()
