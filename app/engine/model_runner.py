"""Runs the network for a whole batch: prefill over paged KV, and the decode step
(DiT with CFG -> stop head -> LocEnc -> base LM -> FSQ -> residual LM -> streaming VAE).

Per-request carry between steps (``lm_h``, ``res_h``, the previous patch) lives in device
buffers indexed by the request's stream slot, the same slot its streaming VAE state uses; one
more row is scratch for padding. A decode step therefore reads and writes only static buffers,
which is what lets :mod:`app.engine.cuda_graphs` capture it whole, the DiT loop included.
Noise is drawn per request from its own generator before the step, into a static buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from app.engine.attention import AttnContext, PagedKVCache
from app.engine.sequence import Sequence
from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.streaming_vae import StreamingDecoder


@dataclass
class StepOutput:
    """Host copies of one decode step, row ``i`` for ``seqs[i]``."""

    patches: np.ndarray  # [B, P, D] float32
    stop: np.ndarray  # [B] bool
    finite: np.ndarray  # [B] bool: the patch has no NaN/inf
    audio: np.ndarray  # [B, samples_per_patch] float32


class ModelRunner:
    def __init__(
        self,
        model: VoxCPM,
        num_blocks: int,
        block_size: int,
        max_num_seqs: int,
        max_model_len: int,
        attention: str = "sdpa",
    ) -> None:
        self.model = model
        cfg = model.cfg
        self.device, self.dtype = model.device, model.dtype
        self.block_size = block_size
        self.max_blocks = (max_model_len + block_size - 1) // block_size
        self.max_pos = cfg.lm.max_position_embeddings - 1
        self.P, self.D = cfg.patch_size, cfg.feat_dim
        res_cfg = cfg.residual_lm_config()
        kv = dict(num_blocks=num_blocks, block_size=block_size, dtype=self.dtype, device=self.device)
        self.base_kv = PagedKVCache(
            cfg.lm.num_hidden_layers, num_kv_heads=cfg.lm.num_key_value_heads, head_dim=cfg.lm.head_dim, **kv
        )
        self.res_kv = PagedKVCache(
            res_cfg.num_hidden_layers,
            num_kv_heads=res_cfg.num_key_value_heads,
            head_dim=res_cfg.head_dim,
            **kv,
        )
        self.set_attention(attention)
        self.scratch_slot = max_num_seqs  # the extra state row that padding rows use
        rows = max_num_seqs + 1
        hidden = cfg.lm.hidden_size
        self.lm_h = torch.zeros(rows, hidden, dtype=self.dtype, device=self.device)
        self.res_h = torch.zeros(rows, hidden, dtype=self.dtype, device=self.device)
        self.cond = torch.zeros(rows, self.P, self.D, dtype=self.dtype, device=self.device)
        self.vae = StreamingDecoder(model.audio_vae, rows)
        self.samples = model.samples_per_patch
        self._alloc_static(max_num_seqs)
        self.graphs = None  # set by CudaGraphs.capture

    def set_attention(self, backend: str) -> None:
        self.base_kv.backend = self.res_kv.backend = backend

    def _alloc_static(self, n: int) -> None:
        """Inputs and outputs of the decode step, sized for ``n`` rows; graphs read slices."""
        dev, long = self.device, torch.long
        self.s_idx = torch.full((n,), self.scratch_slot, dtype=long, device=dev)
        self.s_pos = torch.zeros(n, dtype=long, device=dev)
        self.s_slots = torch.zeros(n, dtype=long, device=dev)
        self.s_tables = torch.full((n, self.max_blocks), self.base_kv.scratch_block, dtype=long, device=dev)
        self.s_lens = torch.ones(n, dtype=torch.int32, device=dev)
        self.s_noise = torch.zeros(n, self.D, self.P, dtype=self.dtype, device=dev)
        self.s_cfg = torch.zeros(n, dtype=torch.float32, device=dev)
        self.s_patch = torch.zeros(n, self.P, self.D, dtype=torch.float32, device=dev)
        self.s_stop = torch.zeros(n, dtype=torch.bool, device=dev)
        self.s_finite = torch.zeros(n, dtype=torch.bool, device=dev)
        self.s_audio = torch.zeros(n, self.samples, dtype=torch.float32, device=dev)

    # ---- prefill --------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, seqs: list[Sequence]) -> None:
        """Compute KV for every position past each sequence's cached prefix, and its carry."""
        dev, bs = self.device, self.block_size
        starts = [s.num_computed for s in seqs]
        news = [len(s) - st for s, st in zip(seqs, starts, strict=True)]
        width = max(news)
        b = len(seqs)
        ids = torch.zeros(b, width, dtype=torch.long)
        feats = torch.zeros(b, width, self.P, self.D, dtype=torch.float32)
        audio = torch.zeros(b, width, dtype=torch.bool)
        real = torch.zeros(b, width, dtype=torch.bool)
        slots = torch.full((b, width), self.base_kv.scratch_block * bs, dtype=torch.long)
        nb = max(len(s.block_table) for s in seqs)
        tables = torch.full((b, nb), self.base_kv.scratch_block, dtype=torch.long)
        for row, (seq, start, n) in enumerate(zip(seqs, starts, news, strict=True)):
            ids[row, :n] = torch.tensor(seq.ids[start:])
            table = torch.tensor(seq.block_table)
            tables[row, : len(table)] = table
            pos = torch.arange(start, start + n)
            slots[row, :n] = table[pos // bs] * bs + pos % bs
            real[row, :n] = True
            for j, patch in enumerate(seq.patches[start:]):
                if patch is not None:
                    feats[row, j] = torch.from_numpy(patch)
                    audio[row, j] = True
        text = real & ~audio
        positions = (torch.tensor(starts)[:, None] + torch.arange(width)).clamp(max=self.max_pos)
        ctx = AttnContext(
            slot_mapping=slots.view(-1).to(dev),
            block_tables=tables.to(dev),
            q_start=torch.tensor(starts, device=dev),
            context_lens=torch.tensor([len(s) for s in seqs], dtype=torch.int32, device=dev),
        )
        self.base_kv.context = self.res_kv.context = ctx
        m = self.model
        feats, text, audio = feats.to(dev), text.to(dev), audio.to(dev)
        embeds, feat_embed = m.embed_prefill(ids.to(dev), feats, text, audio)
        lm_seq, res_seq = m.prefill(
            embeds, feat_embed, text, audio, positions.to(dev), self.base_kv, self.res_kv
        )
        rows = torch.arange(b, device=dev)
        last = torch.tensor(news, device=dev) - 1
        idx = torch.tensor([s.vae_slot for s in seqs], device=dev)
        self.lm_h.index_copy_(0, idx, lm_seq[rows, last])
        self.res_h.index_copy_(0, idx, res_seq[rows, last])
        # the DiT's first cond: the last position's patch (zeros after text)
        self.cond.index_copy_(0, idx, feats[rows, last].to(self.dtype))
        for seq in seqs:
            seq.num_computed = len(seq)
            seq.state = seq.vae_slot

    def reset_stream(self, seq: Sequence, context: torch.Tensor | None) -> None:
        """Start ``seq``'s streaming VAE slot fresh, primed with ``context`` latents ``[D, n]``."""
        self.vae.reset([seq.vae_slot])
        if context is not None and context.shape[-1]:
            with torch.inference_mode():
                self.vae.warm(seq.vae_slot, context.to(self.device))

    # ---- decode ---------------------------------------------------------------------------
    def decode(self, seqs: list[Sequence]) -> StepOutput:
        n = len(seqs)
        self._fill(seqs)
        steps = [s.request.inference_timesteps for s in seqs]
        graphs = self.graphs
        if graphs is not None and graphs.covers(n, steps):
            graphs.replay(n)
        else:
            with torch.inference_mode():
                self.step_core(n, steps, self._width)
        return self._collect(n)

    def _fill(self, seqs: list[Sequence]) -> None:
        """Copy the batch into the static inputs (rows past ``len(seqs)`` stay scratch)."""
        n, bs = len(seqs), self.block_size
        width = max(len(s.block_table) for s in seqs)
        tables = np.full((n, width), self.base_kv.scratch_block, dtype=np.int64)
        idx, pos, slots = [], [], []
        for row, seq in enumerate(seqs):
            tables[row, : len(seq.block_table)] = seq.block_table
            p = len(seq)
            idx.append(seq.vae_slot)
            pos.append(p)
            slots.append(seq.block_table[p // bs] * bs + p % bs)
        dev = self.device
        with torch.inference_mode():
            self.s_idx[:n] = torch.tensor(idx, device=dev)
            self.s_pos[:n] = torch.tensor(pos, device=dev)
            self.s_slots[:n] = torch.tensor(slots, device=dev)
            self.s_lens[:n] = self.s_pos[:n].to(torch.int32) + 1
            self.s_tables[:n, :width] = torch.from_numpy(tables).to(dev)
            self.s_tables[:n, width:] = self.base_kv.scratch_block
            self.s_cfg[:n] = torch.tensor([s.request.cfg_value for s in seqs], device=dev)
            noise = [
                torch.randn((1, self.D, self.P), generator=s.generator, dtype=self.dtype, device=dev)
                for s in seqs
            ]
            self.s_noise[:n] = torch.cat(noise)
        self._width = width

    def step_core(self, n: int, steps: list[int] | int, width: int) -> None:
        """The decode step on static rows ``[:n]`` with block tables ``width`` wide; run eagerly,
        or under graph capture with the full width."""
        m = self.model
        idx = self.s_idx[:n]
        lm_h, res_h = self.lm_h.index_select(0, idx), self.res_h.index_select(0, idx)
        cond = self.cond.index_select(0, idx)
        mu = m.dit_condition(lm_h, res_h)
        noise, cfg = self.s_noise[:n], self.s_cfg[:n]
        if isinstance(steps, int) or len(set(steps)) == 1:
            patch = m.sample_patch(mu, cond, noise, cfg, steps if isinstance(steps, int) else steps[0])
        else:  # mixed quality settings in one batch: one CFM solve per setting
            patch = torch.empty_like(cond)
            for k in sorted(set(steps)):
                rows = torch.tensor([i for i, s in enumerate(steps) if s == k], device=self.device)
                patch[rows] = m.sample_patch(mu[rows], cond[rows], noise[rows], cfg[rows], k)
        self.s_stop[:n] = m.stop_flags(lm_h)
        ctx = AttnContext(self.s_slots[:n], self.s_tables[:n, :width], self.s_pos[:n], self.s_lens[:n])
        self.base_kv.context = self.res_kv.context = ctx
        lm_next, res_next = m.decode_step(patch, self.s_pos[:n], self.base_kv, self.res_kv)
        self.lm_h.index_copy_(0, idx, lm_next)
        self.res_h.index_copy_(0, idx, res_next)
        self.cond.index_copy_(0, idx, patch)
        self.s_patch[:n] = patch.float()
        self.s_finite[:n] = torch.isfinite(self.s_patch[:n]).flatten(1).all(1)
        self.s_audio[:n] = self.vae.decode(self.s_patch[:n].transpose(1, 2), idx)

    def _collect(self, n: int) -> StepOutput:
        """Fresh host copies (on CPU ``.cpu()`` would alias the static buffers)."""

        def host(t: torch.Tensor) -> np.ndarray:
            return t[:n].to("cpu", copy=True).numpy()

        return StepOutput(host(self.s_patch), host(self.s_stop), host(self.s_finite), host(self.s_audio))
