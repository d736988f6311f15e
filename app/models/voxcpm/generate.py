"""The one-request reference loop: prefill, then one patch per step, streamed as audio.

It uses the same ``VoxCPM`` step functions as the batched engine, with a dense per-request
KV cache (:class:`DenseKV`). Noise comes from the request's own ``torch.Generator`` seeded
with ``seed``: the numbers the official loop draws after ``torch.manual_seed(seed)``.
Each patch is decoded as soon as it exists by the streaming VAE decoder, warmed with the
prompt context the official non-streaming decode uses, so the concatenated chunks equal the
official non-streaming waveform.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from app.engine.settings import check_settings
from app.errors import VoxDeskError
from app.models.voxcpm.lora import read_lora
from app.models.voxcpm.lora_bank import LoRABank
from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.prompt import (
    RETRY_TAKES,
    Prefill,
    VoicePrompt,
    bad_case_length,
    model_prefill,
    patch_budget,
)
from app.models.voxcpm.streaming_vae import StreamingDecoder
from app.models.voxcpm.tokenizer import TextTokenizer


class DenseKV:
    """A contiguous KV cache for one causal stack of one request (or a batch of equal length).

    ``attend`` appends the new keys/values of ``layer_idx`` and attends causally over everything
    cached; the write position advances after the stack's last layer.
    """

    def __init__(self, model_stack: torch.nn.Module, batch: int, capacity: int) -> None:
        cfg = model_stack.cfg
        p = model_stack.norm.weight
        shape = (cfg.num_hidden_layers, batch, capacity, cfg.num_key_value_heads, cfg.head_dim)
        self.k = torch.zeros(shape, dtype=p.dtype, device=p.device)
        self.v = torch.zeros_like(self.k)
        self.n_layers, self.capacity, self.length = cfg.num_hidden_layers, capacity, 0

    def attend(self, layer_idx: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n, start = q.shape[1], self.length
        end = start + n
        if end > self.capacity:
            raise VoxDeskError("The text is too long for this model: split it into shorter pieces.")
        self.k[layer_idx, :, start:end] = k
        self.v[layer_idx, :, start:end] = v
        keys = self.k[layer_idx, :, :end].transpose(1, 2)
        vals = self.v[layer_idx, :, :end].transpose(1, 2)
        mask, causal = None, False
        if n > 1 and start == 0:
            causal = True
        elif n > 1:
            q_pos = torch.arange(start, end, device=q.device).unsqueeze(1)
            mask = torch.arange(end, device=q.device).unsqueeze(0) <= q_pos
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), keys, vals, attn_mask=mask, is_causal=causal, enable_gqa=True
        )
        if layer_idx == self.n_layers - 1:
            self.length = end
        return out.transpose(1, 2)


@dataclass
class Synthesis:
    """What one request produced (``latents``: the generated patches ``[n, P, D]`` of the take kept)."""

    audio: np.ndarray
    sample_rate: int
    latents: np.ndarray
    token_ids: list[int]
    seed: int
    chunks: list[np.ndarray] = field(default_factory=list, repr=False)
    takes: int = 1  # 2 or 3 when bad takes were drawn again

    @property
    def n_patches(self) -> int:
        return int(self.latents.shape[0])


class Synthesizer:
    """``model`` + ``tokenizer``; :meth:`stream` yields float32 audio, one chunk per patch."""

    def __init__(self, model: VoxCPM, tokenizer: TextTokenizer) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.decoder = StreamingDecoder(model.audio_vae, max_slots=1)
        self.lora_bank: LoRABank | None = None

    def use_lora(self, folder: str | Path | None) -> None:
        """Speak with the official-format LoRA in ``folder`` from now on (None: without one)."""
        if folder is None:
            if self.lora_bank is not None:
                self.lora_bank.rows.uniform(0)
            return
        lora = read_lora(folder, self.model.cfg)
        if self.lora_bank is None:
            self.lora_bank = LoRABank(self.model, 1)
        self.lora_bank.ensure(lora)
        self.lora_bank.load(1, lora)
        self.lora_bank.rows.uniform(1)

    @classmethod
    def from_dir(
        cls,
        model_dir: str | Path,
        device: str = "auto",
        dtype: str | None = None,
        cpu_precision: str = "float32",
        lora: str | Path | None = None,
    ) -> Synthesizer:
        """On the CPU, ``cpu_precision`` (app/cpu_precision.py) picks the dtype or int8 weights;
        the default is the exact fp32 path, the one the parity tests hold to the official loop."""
        from app.cpu_precision import for_device
        from app.models.voxcpm.quantize import quantize_int8
        from app.models.voxcpm.weights import load_model, resolve_device

        device = resolve_device(device)
        precision = for_device(device, cpu_precision, dtype)
        model = load_model(model_dir, device, precision.dtype if precision else dtype)
        if precision is not None and precision.int8:
            model = quantize_int8(model)
        synth = cls(model, TextTokenizer(model_dir))
        synth.use_lora(lora)
        return synth

    @property
    def sample_rate(self) -> int:
        return self.model.output_rate

    def prefill_for(self, text: str, voice: VoicePrompt | None = None) -> Prefill:
        """The prefill sequence of ``text`` (already normalized) spoken by ``voice``."""
        return model_prefill(self.model, self.tokenizer, text, voice)

    @torch.inference_mode()
    def stream(
        self,
        prefill: Prefill,
        *,
        seed: int,
        cfg: float = 2.0,
        timesteps: int = 10,
        min_len: int = 2,
        max_len: int = 4096,
        latents: list[torch.Tensor] | None = None,
        retry_badcase: bool = True,
        on_retry: Callable[[int], None] | None = None,
    ) -> Iterator[np.ndarray]:
        """Yield one float32 chunk (``samples_per_patch`` samples) per generated patch
        (except ``prefill.skip_chunks`` leading ones, a VoxCPM1 quirk kept for parity).

        A take stops after patch ``i`` when ``i > min_len`` and the stop head says so, or after
        ``min(6*target_tokens + 10, max_len)`` patches. With ``retry_badcase`` (the official
        default) a take of :func:`bad_case_length` patches or more is drawn again, up to
        ``RETRY_TAKES`` takes (the last is kept whatever its length), the noise continuing from
        the same generator as the official loop's global one does. ``on_retry(take)`` is called
        before the first chunk of take 2, 3: the caller drops what it has of the previous take.
        Generated patches of the current take are in ``latents`` when given.
        """
        m, dev, dtype = self.model, self.model.device, self.model.dtype
        limit = min(m.cfg.max_length, m.cfg.lm.max_position_embeddings)
        n_max = patch_budget(prefill, max_len, limit)
        bad_at = bad_case_length(prefill) if retry_badcase else n_max + 1
        base_kv = DenseKV(m.base_lm, 1, prefill.length + n_max)
        res_kv = DenseKV(m.residual_lm, 1, prefill.length + n_max)
        feats = prefill.feats.to(dev, dtype).unsqueeze(0)
        tm, am = prefill.text_mask.to(dev).unsqueeze(0), prefill.audio_mask.to(dev).unsqueeze(0)
        embeds, feat_embed = m.embed_prefill(prefill.ids.to(dev).unsqueeze(0), feats, tm, am)
        positions = torch.arange(prefill.length, device=dev).unsqueeze(0)
        lm_seq, res_seq = m.prefill(embeds, feat_embed, tm, am, positions, base_kv, res_kv)
        gen = torch.Generator(dev).manual_seed(seed)
        guidance = torch.full((1,), float(cfg), device=dev)
        # Context patches go through the model dtype, as in the official loop.
        ctx = prefill.context.to(dtype).float().reshape(-1, m.feat_dim).T.to(dev)
        for take in range(1, RETRY_TAKES + 1):
            if take > 1:
                # the prefill's KV stays: the new take overwrites the generated positions
                base_kv.length = res_kv.length = prefill.length
                if latents is not None:
                    latents.clear()
                if on_retry is not None:
                    on_retry(take)
            lm_h, res_h, cond = lm_seq[:, -1], res_seq[:, -1], feats[:, -1]
            self.decoder.reset(0)
            self.decoder.warm(0, ctx)
            n = 0
            for i in range(n_max):
                noise = torch.randn((1, m.feat_dim, m.patch_size), generator=gen, dtype=dtype, device=dev)
                patch = m.sample_patch(m.dit_condition(lm_h, res_h), cond, noise, guidance, timesteps)
                n += 1
                if latents is not None:
                    latents.append(patch[0].float().cpu())
                audio = self.decoder.decode(patch.float().transpose(1, 2), [0])
                if i >= prefill.skip_chunks:
                    yield audio[0].cpu().numpy().astype(np.float32)
                if i > min_len and bool(m.stop_flags(lm_h)[0]):
                    break
                if i + 1 < n_max:
                    pos = torch.full((1,), prefill.length + i, device=dev)
                    lm_h, res_h = m.decode_step(patch, pos, base_kv, res_kv)
                    cond = patch
            if n < bad_at:
                return

    def synthesize(
        self,
        text: str,
        voice: VoicePrompt | None = None,
        *,
        seed: int | None = None,
        cfg: float = 2.0,
        timesteps: int = 10,
        min_len: int = 2,
        max_len: int = 4096,
        retry_badcase: bool = True,
    ) -> Synthesis:
        """Run one request to the end (text already normalized); a bad take is drawn again
        (see :meth:`stream`) unless ``retry_badcase`` is off."""
        check_settings(cfg=cfg, timesteps=timesteps, min_len=min_len, max_len=max_len, seed=seed)
        seed = secrets.randbelow(2**31) if seed is None else seed
        prefill = self.prefill_for(text, voice)
        lat: list[torch.Tensor] = []
        chunks: list[np.ndarray] = []
        takes = [1]

        def restart(take: int) -> None:
            chunks.clear()
            takes.append(take)

        settings = dict(cfg=cfg, timesteps=timesteps, min_len=min_len, max_len=max_len)
        for chunk in self.stream(
            prefill, seed=seed, **settings, latents=lat, retry_badcase=retry_badcase, on_retry=restart
        ):
            chunks.append(chunk)
        return Synthesis(
            audio=np.concatenate(chunks) if chunks else np.zeros(0, np.float32),
            sample_rate=self.sample_rate,
            latents=torch.stack(lat).numpy(),
            token_ids=prefill.ids.tolist(),
            seed=seed,
            chunks=chunks,
            takes=takes[-1],
        )
