"""IndexTTS's GPT over the engine's paged KV: the prompt's prefill and the beams' decode step.

One paged cache for the GPT-2 stack. The prefill runs each segment's prompt once, into the first
beam's block table (the others share its blocks), and keeps the prompt's last logits as the first
step's carry. The decode step first copies the blocks the block manager forked
(``Sequence.copies``: one ``index_copy_`` of K and one of V over every layer), then writes each
beam's pending code at its position through the beam's own table and gives every beam's logits.

The step reads and writes static rows (code, mel position, KV position, slot, block table →
logits), one per beam of up to ``max_num_seqs`` requests, so :class:`CudaGraphs` captures it per
bucket of rows on CUDA (``step_core``/``pad_rows`` are its hooks); on the CPU it runs eagerly over
the same rows.
"""

from __future__ import annotations

from typing import Any

import torch

from app.engine.attention import AttnContext, PagedKVCache, batch_context
from app.engine.config import EngineConfig
from app.engine.cuda_graphs import CudaGraphs
from app.engine.family import KVSpec
from app.engine.sequence import Sequence
from app.models.indextts.beam import BeamParams
from app.models.indextts.gpt import UnifiedGPT, mel_position


class GPTStep:
    """The runner's GPT half; the runner supplies ``gpt``, ``params``, ``config``, ``device``,
    ``dtype``, ``max_model_len`` and ``_states`` (per request: ``prompt`` rows, ``carry``,
    ``pending`` codes)."""

    gpt: UnifiedGPT
    params: BeamParams
    config: EngineConfig
    device: torch.device
    dtype: torch.dtype
    max_model_len: int
    graphs: CudaGraphs | None
    _states: dict[int, Any]

    def kv_specs(self) -> list[KVSpec]:
        return [self.gpt.kv_spec()]

    def bind_kv(self, num_blocks: int, block_size: int, attention: str) -> None:
        spec = self.gpt.kv_spec()
        self.block_size = block_size
        self.kv = PagedKVCache(
            spec.num_layers, num_blocks, block_size, spec.num_kv_heads, spec.head_dim,
            self.dtype, self.device, backend=attention,
        )  # fmt: skip
        # the decode step's static rows: one per beam of every request (CUDA graphs read them)
        n, dev, scratch = self.config.max_num_seqs * self.params.num_beams, self.device, self.kv.scratch_block
        self.max_rows = n
        self.max_blocks = -(-self.max_model_len // block_size)
        self.s_code = torch.zeros(n, dtype=torch.long, device=dev)
        self.s_mel = torch.zeros(n, dtype=torch.long, device=dev)  # mel positions (the embedding's)
        self.s_pos = torch.zeros(n, dtype=torch.long, device=dev)  # KV positions
        self.s_slots = torch.full((n,), scratch * block_size, dtype=torch.long, device=dev)
        self.s_tables = torch.full((n, self.max_blocks), scratch, dtype=torch.long, device=dev)
        self.s_lens = torch.ones(n, dtype=torch.int32, device=dev)
        self.s_logits = torch.zeros(n, self.gpt.mel_head.out_features, dtype=torch.float32, device=dev)

    def capture_graphs(self, config: EngineConfig) -> None:
        """The decode step (mel embedding, GPT-2 over the paged KV, the mel head) per bucket of
        rows; the beam search and the block copies stay eager."""
        CudaGraphs(self, self.max_rows, 0, prefill=False).capture()

    def pad_rows(self, n: int, bs: int) -> None:
        """Static rows ``[n:bs]`` read and write only the scratch block (CudaGraphs' hook)."""
        if bs > n:
            scratch = self.kv.scratch_block
            self.s_code[n:bs] = 0
            self.s_mel[n:bs] = 0
            self.s_pos[n:bs] = 0
            self.s_slots[n:bs] = scratch * self.block_size
            self.s_lens[n:bs] = 1
            self.s_tables[n:bs] = scratch

    def step_core(self, n: int, variant: int, width: int) -> None:
        """The GPT over static rows ``[:n]``: each row's code at its position → ``s_logits``."""
        del variant  # one kind of step
        self.kv.context = AttnContext(
            self.s_slots[:n], self.s_tables[:n, :width], self.s_pos[:n], self.s_lens[:n]
        )
        x = self.gpt.mel_embeds(self.s_code[:n], self.s_mel[:n])[:, None].to(self.dtype)
        self.s_logits[:n] = self.gpt.logits(self.gpt(x, self.kv)[:, 0]).float()

    # ---- prefill ----------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, seqs: list[Sequence]) -> None:
        """The prompt's KV past ``num_computed`` into the first table (every beam shares it) and
        the prompt's last logits, the first step's carry."""
        if any(len(s) != s.num_prompt for s in seqs):
            raise RuntimeError("a beamed sequence is prefilled from its prompt only")
        states = [self._states[s.id] for s in seqs]
        starts = [s.num_computed for s in seqs]
        counts = [len(s) - start for s, start in zip(seqs, starts, strict=True)]
        width = max(counts)
        x = torch.zeros(len(seqs), width, self.gpt.dim, dtype=self.dtype, device=self.device)
        for row, (st, start, n) in enumerate(zip(states, starts, counts, strict=True)):
            x[row, :n] = st.prompt[start:]
        self.kv.context, _ = batch_context(
            [s.block_table for s in seqs], starts, counts, width, self.block_size, self.kv.scratch_block,
            self.device,
        )  # fmt: skip
        hidden = self.gpt(x, self.kv)
        logits = self.gpt.logits(hidden[torch.arange(len(seqs)), torch.tensor(counts) - 1]).float()
        for row, (seq, st) in enumerate(zip(seqs, states, strict=True)):
            st.carry = logits[row : row + 1]
            seq.num_computed = len(seq)

    # ---- the step ---------------------------------------------------------------------------
    def copy_blocks(self, seqs: list[Sequence]) -> None:
        """The forks the block manager made: one ``index_copy_`` of K and one of V, all layers."""
        pairs = [pair for s in seqs for pair in s.copies]
        for s in seqs:
            s.copies.clear()
        if pairs:
            src = torch.tensor([p[0] for p in pairs], device=self.device)
            dst = torch.tensor([p[1] for p in pairs], device=self.device)
            self.kv.k.index_copy_(1, dst, self.kv.k.index_select(1, src))
            self.kv.v.index_copy_(1, dst, self.kv.v.index_select(1, src))

    @torch.inference_mode()
    def write_pending(self, seqs: list[Sequence]) -> dict[int, torch.Tensor]:
        """Each beam's pending code at its sequence's newest position, through the beam's own
        table, in one step over every beam of ``seqs``: their logits ``[width, V]`` by id."""
        if not seqs:
            return {}
        bs = self.block_size
        codes, mel, pos, slots = [], [], [], []
        rows = sum(s.width for s in seqs)
        tables = torch.full((rows, self.max_blocks), self.kv.scratch_block, dtype=torch.long)
        row = 0
        for seq in seqs:
            p = len(seq) - 1
            codes += self._states[seq.id].pending
            for table in seq.block_tables:
                tables[row, : len(table)] = torch.tensor(table)
                mel.append(mel_position(p - seq.num_prompt))
                pos.append(p)
                slots.append(table[p // bs] * bs + p % bs)
                row += 1
        n, dev = row, self.device
        width = max(len(t) for s in seqs for t in s.block_tables)
        self.s_code[:n] = torch.tensor(codes, device=dev)
        self.s_mel[:n] = torch.tensor(mel, device=dev)
        self.s_pos[:n] = torch.tensor(pos, device=dev)
        self.s_slots[:n] = torch.tensor(slots, device=dev)
        self.s_lens[:n] = self.s_pos[:n].to(torch.int32) + 1
        self.s_tables[:n] = tables.to(dev)
        if self.graphs is not None and self.graphs.covers(n):
            self.graphs.replay(n)
        else:
            self.step_core(n, 0, width)
        logits = self.s_logits[:n].clone()
        out, row = {}, 0
        for seq in seqs:
            out[seq.id] = logits[row : row + seq.width]
            row += seq.width
            seq.num_computed = len(seq)
        return out
