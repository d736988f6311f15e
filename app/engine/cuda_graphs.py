"""CUDA graphs of the whole decode step, one per batch-size bucket.

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


def buckets(max_bs: int) -> list[int]:
    sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    return [b for b in sizes if b < max_bs] + [max_bs]


class CudaGraphs:
    def __init__(self, runner: ModelRunner, max_bs: int, timesteps: int) -> None:
        self.runner = runner
        self.timesteps = timesteps
        self.sizes = buckets(max_bs)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}

    def covers(self, n: int, steps: list[int]) -> bool:
        return n <= self.sizes[-1] and all(s == self.timesteps for s in steps)

    def _pad(self, n: int, bs: int) -> None:
        r = self.runner
        if bs > n:
            r.s_idx[n:bs] = r.scratch_slot
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
        r.graphs = self

    def replay(self, n: int) -> None:
        bs = next(b for b in self.sizes if b >= n)
        with torch.inference_mode():
            self._pad(n, bs)
        self.graphs[bs].replay()
