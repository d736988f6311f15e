"""CUDA graphs of the whole decode step, one per batch-size bucket, and of a single
request's prefill, one per width bucket (the time to first audio of a lone request).

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

PREFILL_WIDTHS = (16, 32, 64, 128, 256)
WIDE = ("ids", "feats", "audio", "text", "positions")  # prefill inputs with a width dimension


def buckets(max_bs: int) -> list[int]:
    sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    return [b for b in sizes if b < max_bs] + [max_bs]


class CudaGraphs:
    def __init__(self, runner: ModelRunner, max_bs: int, timesteps: int, prefill: bool = True) -> None:
        self.runner = runner
        self.timesteps = timesteps
        self.sizes = buckets(max_bs)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.prefill_graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.prefill_static: dict[str, torch.Tensor] = {}
        self.with_prefill = prefill

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

    def _capture_prefill(self, pool) -> None:
        """One graph per width for a batch of one; inputs at rest write only scratch rows."""
        r = self.runner
        self.prefill_buffers()
        for w in reversed(PREFILL_WIDTHS):
            view = self._view(w)
            r.prefill_core(view)  # warm-up
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool, capture_error_mode="thread_local"):
                r.prefill_core(view)
            torch.cuda.synchronize()
            self.prefill_graphs[w] = graph

    def prefill_buffers(self) -> None:
        """The static prefill inputs, at rest: a batch of one that touches only scratch rows."""
        r = self.runner
        w_max, long = PREFILL_WIDTHS[-1], torch.long
        x = {
            "ids": torch.zeros(1, w_max, dtype=long),
            "feats": torch.zeros(1, w_max, r.P, r.D),
            "audio": torch.zeros(1, w_max, dtype=torch.bool),
            "text": torch.zeros(1, w_max, dtype=torch.bool),
            "positions": torch.zeros(1, w_max, dtype=long),
            "slots": torch.full((w_max,), r.base_kv.scratch_block * r.block_size, dtype=long),
            "tables": torch.full((1, r.max_blocks), r.base_kv.scratch_block, dtype=long),
            "starts": torch.zeros(1, dtype=long),
            "lens": torch.ones(1, dtype=torch.int32),
            "last": torch.zeros(1, dtype=long),
            "idx": torch.full((1,), r.scratch_slot, dtype=long),
        }
        self.prefill_static = {k: v.to(r.device) for k, v in x.items()}

    def _view(self, w: int) -> dict[str, torch.Tensor]:
        """The static prefill inputs cut to width ``w``."""
        out = {}
        for k, v in self.prefill_static.items():
            out[k] = v[:w] if k == "slots" else v[:, :w] if k in WIDE else v
        return out

    def covers_prefill(self, batch: int, width: int) -> bool:
        return self.with_prefill and batch == 1 and width <= PREFILL_WIDTHS[-1]

    def prefill_width(self, width: int) -> int:
        return next(w for w in PREFILL_WIDTHS if w >= width)

    def prefill(self, x: dict[str, torch.Tensor]) -> None:
        """Copy one request's inputs (built ``prefill_width`` wide) in and replay."""
        w = x["ids"].shape[1]
        view = self._view(w)
        with torch.inference_mode():
            for k, v in x.items():
                view[k].copy_(v, non_blocking=True)
        self.prefill_graphs[w].replay()
