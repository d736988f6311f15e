"""CUDA graphs of the whole decode step, one per batch-size bucket, and of the prefill, one per
(batch, width) bucket: the time to first audio of a lone request and of requests admitted together.

A graph covers everything :meth:`ModelRunner.step_core` launches: the DiT condition, all CFM
estimator calls with CFG, the stop head, LocEnc, both LMs with paged attention, and the
streaming VAE decode. It reads only the runner's static buffers; a batch smaller than its
bucket fills the spare rows with the scratch slot, scratch KV block and position 0, so the
padding writes land where nobody reads. Graphs are captured with thread-local error checking,
so the engine may capture and replay them on a worker thread (the app's QThread).
"""

from __future__ import annotations

import torch

from app.engine.model_runner import ModelRunner

PREFILL_WIDTHS = (16, 32, 64, 128, 256)  # a lone request's prefill: new positions, rounded up
PREFILL_BATCHES = (2, 4, 8, 16, 32, 64)  # requests admitted together (capped at max_num_seqs)
BATCH_WIDTHS = (32, 128)  # a batch's widths: text over a cached voice, or an uncached prompt
PREFILL_TOKENS = 4096  # no bucket wider than this many positions (batch x width)


def buckets(max_bs: int) -> list[int]:
    sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    return [b for b in sizes if b < max_bs] + [max_bs]


class CudaGraphs:
    def __init__(self, runner: ModelRunner, max_bs: int, timesteps: int, prefill: bool = True) -> None:
        self.runner = runner
        self.timesteps = timesteps
        self.sizes = buckets(max_bs)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.prefill_graphs: dict[tuple[int, int], torch.cuda.CUDAGraph] = {}
        self.prefill_static: dict[tuple[int, int], dict[str, torch.Tensor]] = {}
        self.with_prefill = prefill

    def covers(self, n: int, steps: list[int]) -> bool:
        return n <= self.sizes[-1] and all(s == self.timesteps for s in steps)

    def _pad(self, n: int, bs: int) -> None:
        r = self.runner
        if bs > n:
            r.s_idx[n:bs] = r.scratch_slot
            r.s_adapter[n:bs] = 0
            r.s_slots[n:bs] = r.base_kv.scratch_block * r.block_size
            r.s_pos[n:bs] = 0
            r.s_lens[n:bs] = 1
            r.s_tables[n:bs] = r.base_kv.scratch_block
            r.s_cfg[n:bs] = 0
            r.s_noise[n:bs] = 0

    @torch.inference_mode()
    def capture(self) -> None:
        r = self.runner
        pool = None
        for bs in reversed(self.sizes):
            self._pad(0, bs)
            r.step_core(bs, self.timesteps, r.max_blocks)  # warm-up: compiles kernels, sizes the pool
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool, capture_error_mode="thread_local"):
                r.step_core(bs, self.timesteps, r.max_blocks)
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
        with torch.inference_mode():
            self._pad(n, bs)
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
