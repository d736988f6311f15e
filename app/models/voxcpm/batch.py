"""Runs the network for a whole batch: prefill over paged KV, and the decode step
(DiT with CFG -> stop head -> LocEnc -> base LM -> FSQ -> residual LM -> streaming VAE).

Per-request carry between steps (``lm_h``, ``res_h``, the previous patch) lives in device
buffers indexed by the request's stream slot, the same slot its streaming VAE state uses; one
more row is scratch for padding. A decode step therefore reads and writes only static buffers,
which is what lets :mod:`app.engine.cuda_graphs` capture it whole, the DiT loop included
(``step_core``, ``pad_rows``, ``prefill_inputs`` and ``prefill_core`` are its hooks).
Noise is drawn per request from its own generator before the step, into a static buffer.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass

import numpy as np
import torch

from app.engine.attention import AttnContext, PagedKVCache
from app.engine.cuda_graphs import CudaGraphs
from app.engine.sequence import Sequence
from app.models.voxcpm.audio_vae import AudioVAE
from app.models.voxcpm.lora_bank import LoRABank
from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.streaming_vae import StreamingDecoder


@dataclass
class StepOutput:
    """Host copies of one decode step, row ``i`` for ``seqs[i]``."""

    patches: np.ndarray  # [B, P, D] float32
    stop: np.ndarray  # [B] bool
    finite: np.ndarray  # [B] bool: the patch has no NaN/inf
    audio: np.ndarray  # [B, samples_per_patch] float32


def decoder_in(vae: AudioVAE, dtype: torch.dtype) -> AudioVAE:
    """``vae`` itself when its weights are ``dtype``, else a copy of its decoder half in ``dtype``
    (the encoder, which encodes voices, stays as loaded)."""
    if next(vae.decoder.parameters()).dtype == dtype:
        return vae
    encoder = vae.encoder
    vae.encoder = None
    try:
        copy = deepcopy(vae)
    finally:
        vae.encoder = encoder
    return copy.to(dtype)


class BatchStep:
    """VoxCPM's batched network over the engine's paged KV (the runner's compute half)."""

    model: VoxCPM
    graphs: CudaGraphs | None

    def bind_step(
        self,
        num_blocks: int,
        block_size: int,
        max_num_seqs: int,
        max_model_len: int,
        attention: str = "sdpa",
        overlap_vae: bool = True,
        vae_dtype: torch.dtype | None = None,
    ) -> None:
        """Allocate both paged KV caches (``num_blocks`` each) and the static step buffers."""
        model = self.model
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
        self.vae = StreamingDecoder(decoder_in(model.audio_vae, vae_dtype or torch.float32), rows)
        self.samples = model.samples_per_patch
        self._alloc_static(max_num_seqs)
        self.graphs = None  # set by CudaGraphs.capture
        self.lora: LoRABank | None = None  # set with the first LoRA (the runner's load_lora)
        on_cuda = self.device.type == "cuda"
        self.side = torch.cuda.Stream(self.device) if on_cuda and overlap_vae else None

    def set_attention(self, backend: str) -> None:
        self.base_kv.backend = self.res_kv.backend = backend

    def _alloc_static(self, n: int) -> None:
        """Inputs and outputs of the decode step, sized for ``n`` rows; graphs read slices."""
        dev, long = self.device, torch.long
        self.s_idx = torch.full((n,), self.scratch_slot, dtype=long, device=dev)
        self.s_adapter = torch.zeros(n, dtype=long, device=dev)  # LoRA slot per row, 0: none
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

    def pad_rows(self, n: int, bs: int) -> None:
        """Static rows ``[n:bs]`` become padding: scratch slot, scratch block, position 0."""
        if bs > n:
            self.s_idx[n:bs] = self.scratch_slot
            self.s_adapter[n:bs] = 0
            self.s_slots[n:bs] = self.base_kv.scratch_block * self.block_size
            self.s_pos[n:bs] = 0
            self.s_lens[n:bs] = 1
            self.s_tables[n:bs] = self.base_kv.scratch_block
            self.s_cfg[n:bs] = 0
            self.s_noise[n:bs] = 0

    # ---- prefill --------------------------------------------------------------------------
    @torch.inference_mode()
    def prefill(self, seqs: list[Sequence]) -> None:
        """Compute KV for every position past each sequence's cached prefix, and its carry."""
        need = max(len(s) - s.num_computed for s in seqs)
        graphs = self.graphs
        bucket = graphs.prefill_bucket(len(seqs), need) if graphs is not None else None
        if bucket is not None:
            graphs.prefill(self.prefill_inputs(seqs, bucket[1], self.max_blocks, rows=bucket[0]))
        else:  # widths rounded up so repeated requests reuse the same GEMM shapes
            x = self.prefill_inputs(seqs, -(-need // 16) * 16)
            self.prefill_core({k: v.to(self.device) for k, v in x.items()})
        for seq in seqs:
            seq.num_computed = len(seq)

    def prefill_inputs(
        self, seqs: list[Sequence], width: int, nb: int = 0, rows: int = 0
    ) -> dict[str, torch.Tensor]:
        """Host tensors for :meth:`prefill_core`: rows right-padded to ``width`` positions (pads
        write to the scratch block), block tables ``max(nb, longest)`` wide, and padding rows up
        to ``rows`` that read and write only the scratch block and the scratch state slot."""
        bs, scratch = self.block_size, self.base_kv.scratch_block
        b = max(rows, len(seqs))
        pad = [0] * (b - len(seqs))
        nb = max(nb, 1, *(len(s.block_table) for s in seqs))
        x = {
            "ids": torch.zeros(b, width, dtype=torch.long),
            "feats": torch.zeros(b, width, self.P, self.D, dtype=torch.float32),
            "audio": torch.zeros(b, width, dtype=torch.bool),
            "text": torch.zeros(b, width, dtype=torch.bool),
            "positions": torch.zeros(b, width, dtype=torch.long),
            "slots": torch.full((b, width), scratch * bs, dtype=torch.long),
            "tables": torch.full((b, nb), scratch, dtype=torch.long),
            "starts": torch.tensor([s.num_computed for s in seqs] + pad, dtype=torch.long),
            "lens": torch.tensor([len(s) for s in seqs] + [1] * len(pad), dtype=torch.int32),
            "last": torch.tensor([len(s) - s.num_computed - 1 for s in seqs] + pad, dtype=torch.long),
            "idx": torch.tensor(
                [s.vae_slot for s in seqs] + [self.scratch_slot] * len(pad), dtype=torch.long
            ),
            "adapter": torch.tensor([s.adapter for s in seqs] + pad, dtype=torch.long),
        }
        for row, seq in enumerate(seqs):
            start, n = seq.num_computed, len(seq) - seq.num_computed
            x["ids"][row, :n] = torch.tensor(seq.ids[start:])
            table = torch.tensor(seq.block_table)
            x["tables"][row, : len(table)] = table
            pos = torch.arange(start, start + n)
            x["slots"][row, :n] = table[pos // bs] * bs + pos % bs
            x["text"][row, :n] = True
            for j, patch in enumerate(seq.patches[start:]):
                if patch is not None:
                    x["feats"][row, j] = torch.from_numpy(patch)
                    x["audio"][row, j] = True
                    x["text"][row, j] = False
        x["positions"] = (x["starts"][:, None] + torch.arange(width)).clamp(max=self.max_pos)
        x["slots"] = x["slots"].view(-1)
        return x

    def prefill_core(self, x: dict[str, torch.Tensor]) -> None:
        """Both LMs over the new positions; the last real position's outputs become the carry.
        Reads only ``x`` (device tensors), so it can be captured in a CUDA graph."""
        ctx = AttnContext(x["slots"], x["tables"], x["starts"], x["lens"])
        self.base_kv.context = self.res_kv.context = ctx
        if self.lora is not None:
            self.lora.rows.select(x["adapter"])
        m, feats, text, audio = self.model, x["feats"], x["text"], x["audio"]
        embeds, feat_embed = m.embed_prefill(x["ids"], feats, text, audio)
        lm_seq, res_seq = m.prefill(
            embeds, feat_embed, text, audio, x["positions"], self.base_kv, self.res_kv
        )
        rows, last, idx = torch.arange(feats.shape[0], device=feats.device), x["last"], x["idx"]
        self.lm_h.index_copy_(0, idx, lm_seq[rows, last])
        self.res_h.index_copy_(0, idx, res_seq[rows, last])
        # the DiT's first cond: the last position's patch (zeros after text)
        self.cond.index_copy_(0, idx, feats[rows, last].to(self.dtype))

    def start(self, seqs: list[Sequence]) -> None:
        """Start the streaming VAE slots of ``seqs`` fresh (one reset for all of them: a batch of
        new requests is admitted together), each primed with its ``context`` latents ``[D, n]``."""
        if not seqs:
            return
        self.vae.reset([seq.vae_slot for seq in seqs])
        with torch.inference_mode():
            for seq in seqs:
                if seq.context is not None and seq.context.shape[-1]:
                    self.vae.warm(seq.vae_slot, seq.context.to(self.device))

    # ---- decode ---------------------------------------------------------------------------
    def run_step(self, seqs: list[Sequence]) -> StepOutput:
        """One decode step of ``seqs`` (graphed when a bucket covers it); host copies."""
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
        idx, pos, slots, adapters = [], [], [], []
        for row, seq in enumerate(seqs):
            tables[row, : len(seq.block_table)] = seq.block_table
            p = len(seq)
            idx.append(seq.vae_slot)
            adapters.append(seq.adapter)
            pos.append(p)
            slots.append(seq.block_table[p // bs] * bs + p % bs)
        dev = self.device
        with torch.inference_mode():
            self.s_idx[:n] = torch.tensor(idx, device=dev)
            self.s_adapter[:n] = torch.tensor(adapters, device=dev)
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
        or under graph capture with the full width. Sections are labelled for the profiler."""
        m, rf = self.model, torch.profiler.record_function
        idx = self.s_idx[:n]
        if self.lora is not None:  # the rows' adapter masks: a gather that graphs capture
            self.lora.rows.select(self.s_adapter[:n])
        lm_h, res_h = self.lm_h.index_select(0, idx), self.res_h.index_select(0, idx)
        with rf("step.dit"):
            patch = self._sample(n, steps, lm_h, res_h, self.cond.index_select(0, idx))
        self.s_stop[:n] = m.stop_flags(lm_h)
        self.s_patch[:n] = patch.float()
        side = self.side
        if side is not None:  # the VAE decode overlaps the LM step on a second stream
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side), rf("step.vae"):
                self._vae(n, idx)
        ctx = AttnContext(self.s_slots[:n], self.s_tables[:n, :width], self.s_pos[:n], self.s_lens[:n])
        self.base_kv.context = self.res_kv.context = ctx
        with rf("step.locenc_lms"):
            lm_next, res_next = m.decode_step(patch, self.s_pos[:n], self.base_kv, self.res_kv)
        self.lm_h.index_copy_(0, idx, lm_next)
        self.res_h.index_copy_(0, idx, res_next)
        self.cond.index_copy_(0, idx, patch)
        if side is None:
            with rf("step.vae"):
                self._vae(n, idx)
        else:
            torch.cuda.current_stream().wait_stream(side)

    def _sample(self, n: int, steps: list[int] | int, lm_h, res_h, cond) -> torch.Tensor:
        """The CFM solve with CFG for rows ``[:n]``: one solve per distinct step count."""
        m = self.model
        mu = m.dit_condition(lm_h, res_h)
        noise, cfg = self.s_noise[:n], self.s_cfg[:n]
        if isinstance(steps, int) or len(set(steps)) == 1:
            return m.sample_patch(mu, cond, noise, cfg, steps if isinstance(steps, int) else steps[0])
        patch = torch.empty_like(cond)
        for k in sorted(set(steps)):
            rows = torch.tensor([i for i, s in enumerate(steps) if s == k], device=self.device)
            if self.lora is not None:
                self.lora.rows.select(self.s_adapter[:n][rows])
            patch[rows] = m.sample_patch(mu[rows], cond[rows], noise[rows], cfg[rows], k)
        if self.lora is not None:
            self.lora.rows.select(self.s_adapter[:n])
        return patch

    def _vae(self, n: int, idx: torch.Tensor) -> None:
        self.s_finite[:n] = torch.isfinite(self.s_patch[:n]).flatten(1).all(1)
        self.s_audio[:n] = self.vae.decode(self.s_patch[:n].transpose(1, 2), idx)

    def _collect(self, n: int) -> StepOutput:
        """Fresh host copies (on CPU ``.cpu()`` would alias the static buffers)."""

        def host(t: torch.Tensor) -> np.ndarray:
            return t[:n].to("cpu", copy=True).numpy()

        return StepOutput(host(self.s_patch), host(self.s_stop), host(self.s_finite), host(self.s_audio))
