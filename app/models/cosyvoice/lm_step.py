"""CosyVoice's LM over the engine's paged KV: the prefill and the decode step of a batch.

One paged cache for the Qwen2 stack. The prefill embeds each sequence's new positions (a
piece's prefix rows, then speech tokens) and keeps the next token's log-probabilities as the
request's carry. The decode step (speech embedding → Qwen2 → head) reads and writes static rows
(token, position, slot, block table → log-probabilities), so :class:`CudaGraphs` captures it per
batch bucket on CUDA (``step_core``/``pad_rows`` are its hooks); on the CPU it runs eagerly.
"""

from __future__ import annotations

from typing import Any

import torch

from app.engine.attention import AttnContext, PagedKVCache, batch_context
from app.engine.config import EngineConfig
from app.engine.cuda_graphs import CudaGraphs
from app.engine.family import KVSpec
from app.engine.sequence import Sequence
from app.models.cosyvoice.lm import CosyLM
from app.models.cosyvoice.plan import SPEECH


class LMStep:
    """The runner's LM half; the runner supplies ``lm``, ``config``, ``device``, ``dtype``,
    ``max_model_len`` and ``_states`` (per request: ``prefix`` rows and the ``logp`` carry)."""

    lm: CosyLM
    config: EngineConfig
    device: torch.device
    dtype: torch.dtype
    max_model_len: int
    graphs: CudaGraphs | None
    _states: dict[int, Any]

    def kv_specs(self) -> list[KVSpec]:
        return [self.lm.kv_spec()]

    def bind_kv(self, num_blocks: int, block_size: int, attention: str) -> None:
        spec = self.lm.kv_spec()
        self.block_size = block_size
        self.kv = PagedKVCache(
            spec.num_layers, num_blocks, block_size, spec.num_kv_heads, spec.head_dim,
            self.dtype, self.device, backend=attention,
        )  # fmt: skip
        # the decode step's static inputs and output, one row per request (CUDA graphs read them)
        n, dev, scratch = self.config.max_num_seqs, self.device, self.kv.scratch_block
        self.max_blocks = -(-self.max_model_len // block_size)
        self.s_tok = torch.zeros(n, dtype=torch.long, device=dev)
        self.s_pos = torch.zeros(n, dtype=torch.long, device=dev)
        self.s_slots = torch.full((n,), scratch * block_size, dtype=torch.long, device=dev)
        self.s_tables = torch.full((n, self.max_blocks), scratch, dtype=torch.long, device=dev)
        self.s_lens = torch.ones(n, dtype=torch.int32, device=dev)
        self.s_logp = torch.zeros(n, self.lm.llm_decoder.out_features, dtype=torch.float32, device=dev)

    def capture_graphs(self, config: EngineConfig) -> None:
        """The LM decode step (speech embedding, Qwen2 over the paged KV, the head) per batch
        bucket; sampling and the flow stay eager."""
        CudaGraphs(self, config.max_num_seqs, 0, prefill=False).capture()

    def pad_rows(self, n: int, bs: int) -> None:
        """Static rows ``[n:bs]`` read and write only the scratch block (CudaGraphs' hook)."""
        if bs > n:
            scratch = self.kv.scratch_block
            self.s_tok[n:bs] = 0
            self.s_pos[n:bs] = 0
            self.s_slots[n:bs] = scratch * self.block_size
            self.s_lens[n:bs] = 1
            self.s_tables[n:bs] = scratch

    def step_core(self, n: int, variant: int, width: int) -> None:
        """The LM over static rows ``[:n]``: each row's token at its position → ``s_logp``."""
        del variant  # one kind of step: no per-row setting changes the graph
        self.kv.context = AttnContext(
            self.s_slots[:n], self.s_tables[:n, :width], self.s_pos[:n], self.s_lens[:n]
        )
        e = self.lm.speech_embeds(self.s_tok[:n])[:, None].to(self.dtype)
        h = self.lm.forward(e, self.s_pos[:n, None], self.kv)
        self.s_logp[:n] = self.lm.logp(h[:, 0])

    def _embeds(self, seq: Sequence, state: Any, start: int) -> torch.Tensor:
        """Input embeddings ``[len(seq) - start, H]`` of positions ``start..``."""
        n_pre = seq.num_prompt
        parts = []
        if start < n_pre:
            parts.append(state.prefix[start:])
        gen = [i - SPEECH for i in seq.ids[max(start, n_pre) :]]
        if gen:
            parts.append(self.lm.speech_embeds(torch.tensor(gen, dtype=torch.long, device=self.device)))
        return torch.cat(parts).to(self.dtype)

    @torch.inference_mode()
    def prefill(self, seqs: list[Sequence]) -> None:
        """KV for each sequence's new positions; the next token's log-probabilities are its carry."""
        starts = [s.num_computed for s in seqs]
        news = [len(s) - st for s, st in zip(seqs, starts, strict=True)]
        width = max(news)
        embeds = []
        for seq, start in zip(seqs, starts, strict=True):
            e = self._embeds(seq, self._states[seq.id], start)
            embeds.append(torch.nn.functional.pad(e, (0, 0, 0, width - e.shape[0])))
        h = self._run_lm(seqs, starts, news, torch.stack(embeds))
        logp = self.lm.logp(h[torch.arange(len(seqs)), torch.tensor(news) - 1])
        for row, seq in enumerate(seqs):
            self._states[seq.id].logp = logp[row]
            seq.num_computed = len(seq)

    def _run_lm(
        self, seqs: list[Sequence], starts: list[int], counts: list[int], embeds: torch.Tensor
    ) -> torch.Tensor:
        """The Qwen2 stack over ``embeds [B, L, H]``: row ``b`` adds ``counts[b]`` positions from
        ``starts[b]`` to its paged KV."""
        ctx, positions = batch_context(
            [s.block_table for s in seqs], starts, counts, embeds.shape[1], self.block_size,
            self.kv.scratch_block, self.device,
        )  # fmt: skip
        self.kv.context = ctx
        return self.lm.forward(embeds, positions, self.kv)

    @torch.inference_mode()
    def _advance(self, seqs: list[Sequence], tokens: list[int]) -> None:
        """The LM over each sequence's newest position (its sampled token): the static rows are
        filled, then the captured graph of the step replays, or the step runs eagerly."""
        n, bs = len(seqs), self.block_size
        width = max(len(s.block_table) for s in seqs)
        tables = torch.full((n, width), self.kv.scratch_block, dtype=torch.long)
        pos = [len(s) - 1 for s in seqs]
        for row, seq in enumerate(seqs):
            tables[row, : len(seq.block_table)] = torch.tensor(seq.block_table)
        dev = self.device
        self.s_tok[:n] = torch.tensor(tokens, device=dev)
        self.s_pos[:n] = torch.tensor(pos, device=dev)
        self.s_slots[:n] = torch.tensor(
            [s.block_table[p // bs] * bs + p % bs for s, p in zip(seqs, pos, strict=True)], device=dev
        )
        self.s_lens[:n] = self.s_pos[:n].to(torch.int32) + 1
        self.s_tables[:n, :width] = tables.to(dev)
        self.s_tables[:n, width:] = self.kv.scratch_block
        if self.graphs is not None and self.graphs.covers(n):
            self.graphs.replay(n)
        else:
            self.step_core(n, 0, width)
        logp = self.s_logp[:n].clone()
        for row, seq in enumerate(seqs):
            self._states[seq.id].logp = logp[row]
            seq.num_computed = len(seq)
