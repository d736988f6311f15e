"""VoxCPM behind the engine's :class:`~app.engine.family.FamilyRunner`.

The runner is VoxCPM's half of the engine: loading (precision, int8 on the CPU), the tokenizer,
the prefill sequence of a request (text ids and prompt-audio patches, :mod:`.prompt`), its
VAE-encoded voices (:mod:`.voice_cache`), its LoRA bank, its CUDA graphs, and the decisions
after each step: stop (the stop head after ``min_len``), the official length cap and the
bad-case retry. The batched network itself is :class:`.batch.BatchStep`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from app.cpu_precision import for_device
from app.engine.config import EngineConfig
from app.engine.cuda_graphs import CudaGraphs
from app.engine.family import FamilyInfo, FamilyRunner, KVSpec, StepResult
from app.engine.request import SynthRequest
from app.engine.sequence import Sequence
from app.engine.voice import VoicePrompt
from app.models.voxcpm.batch import BatchStep
from app.models.voxcpm.lora import LoRA, read_lora
from app.models.voxcpm.lora_bank import LoRABank
from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.prompt import RETRY_TAKES, bad_case_length, model_prefill, normalize_text, patch_budget
from app.models.voxcpm.quantize import quantize_int8
from app.models.voxcpm.tokenizer import TextTokenizer
from app.models.voxcpm.voice_cache import VoiceCache
from app.models.voxcpm.weights import load_model
from app.voices.fit import ModelLimits

log = logging.getLogger(__name__)
INVALID = "The model produced invalid audio: try another seed or guidance value."
_BASE_CONTROLS = {"cfg", "timesteps", "prompt", "lora", "normalize", "stream"}


def family_info(model: VoxCPM) -> FamilyInfo:
    v2 = model.cfg.is_v2
    return FamilyInfo(
        name="voxcpm",
        label="VoxCPM2" if v2 else "VoxCPM",
        architecture=model.cfg.architecture,
        controls=frozenset(_BASE_CONTROLS | ({"reference", "voice_design"} if v2 else set())),
        sample_rate=int(model.output_rate),
        voice_rate=int(model.encode_rate),
    )


class VoxCPMRunner(BatchStep, FamilyRunner):
    def __init__(self, model: VoxCPM, config: EngineConfig) -> None:
        self.model = model
        self.config = config
        self.tokenizer = TextTokenizer(config.model_dir)
        self.info = family_info(model)
        cfg = model.cfg
        self.max_model_len = min(config.max_model_len, cfg.max_length, cfg.lm.max_position_embeddings)
        self.device, self.dtype = model.device, model.dtype
        self.voices = VoiceCache(model, config.voice_cache_size)
        self.graphs: CudaGraphs | None = None
        self.lora: LoRABank | None = None

    @property
    def native_speed(self) -> bool:
        return bool(self.model.native_speed)

    # ---- memory ---------------------------------------------------------------------------
    def kv_specs(self) -> list[KVSpec]:
        """Both LMs advance together: one block table indexes the base and the residual cache."""
        cfg = self.model.cfg
        res = cfg.residual_lm_config()
        return [
            KVSpec(cfg.lm.num_hidden_layers, cfg.lm.num_key_value_heads, cfg.lm.head_dim),
            KVSpec(res.num_hidden_layers, res.num_key_value_heads, res.head_dim),
        ]

    def bind_kv(self, num_blocks: int, block_size: int, attention: str) -> None:
        c = self.config
        self.bind_step(
            num_blocks,
            block_size,
            c.max_num_seqs,
            self.max_model_len,
            attention,
            overlap_vae=c.overlap_vae,
            vae_dtype=getattr(torch, c.vae_dtype),
        )

    def capture_graphs(self, config: EngineConfig) -> None:
        CudaGraphs(self, config.max_num_seqs, config.graph_timesteps, config.prefill_graphs).capture()

    # ---- requests -------------------------------------------------------------------------
    def make_sequence(self, rid: int, request: SynthRequest, block_size: int) -> Sequence:
        m = self.model
        voice = self.voices.resolve(request.voice)
        text = normalize_text(request.text)
        if request.normalize:  # after the whitespace, as official generate(normalize=True) does
            from app.text.normalize import normalize_for_speech

            text = normalize_for_speech(text)
        pre = model_prefill(m, self.tokenizer, text, voice)
        n_max = patch_budget(pre, request.max_len, self.max_model_len)
        feats = pre.feats.numpy()
        patches = [feats[i] if a else None for i, a in enumerate(pre.audio_mask.tolist())]
        seed = secrets.randbelow(2**31) if request.seed is None else request.seed
        seq = Sequence(request, pre.ids.tolist(), patches, n_max, seed, block_size, rid)
        if request.retry_badcase:
            seq.bad_case_at = bad_case_length(pre)
        seq.generator = torch.Generator(self.device).manual_seed(seed)
        # continuation: the streaming decoder starts from the prompt's last patches, which go
        # through the model dtype as in the official loop
        ctx = pre.context.to(m.dtype).float()
        seq.context = ctx.reshape(-1, m.feat_dim).T.contiguous()
        return seq

    def limits(self, max_positions: int) -> ModelLimits:
        m, tokenizer = self.model, self.tokenizer
        return ModelLimits(
            max_positions=max_positions,
            encoder_rate=int(self.info.voice_rate),
            encoder_samples_per_patch=int(m.patch_size * m.audio_vae.chunk_size),
            output_patches_per_second=float(self.info.sample_rate) / m.samples_per_patch,
            count_tokens=lambda text: len(tokenizer(text)) if text else 0,
        )

    def resolve_voice(self, voice: VoicePrompt | None) -> tuple[VoicePrompt | None, dict[str, np.ndarray]]:
        """``voice`` with its audio replaced by (cached) latents, and the latents newly encoded
        (``"prompt"``/``"reference"``), including those that replaced an unusable cached entry."""
        if voice is None:
            return None, {}
        resolved = self.voices.resolve(voice)
        entries = {}
        for role in ("prompt", "reference"):
            before, after = getattr(voice, f"{role}_latents"), getattr(resolved, f"{role}_latents")
            if after is not None and after is not before:
                entries[role] = after
        return resolved, entries

    # ---- the step -------------------------------------------------------------------------
    def decode(self, seqs: list[Sequence]) -> StepResult:
        """One patch per sequence; a request ends at its stop flag (after ``min_len``) or its
        patch budget, and a take that reaches the bad-case length is drawn again from its
        prompt (its generator goes on, as the official one does), up to three takes."""
        out = self.run_step(seqs)
        audio: list[np.ndarray] = []
        done: list[bool] = []
        error: list[str | None] = []
        retry: list[bool] = []
        for i, seq in enumerate(seqs):
            if not out.finite[i]:
                audio.append(np.zeros(0, np.float32))
                done.append(False)
                error.append(INVALID)
                retry.append(False)
                continue
            seq.append_patch(out.patches[i])
            seq.num_computed = len(seq)
            k = seq.num_generated - 1
            end = bool((k > seq.request.min_len and out.stop[i]) or seq.num_generated >= seq.max_patches)
            again = end and seq.num_generated >= seq.bad_case_at and seq.take < RETRY_TAKES
            audio.append(out.audio[i].copy())
            done.append(end and not again)
            error.append(None)
            retry.append(again)
        return StepResult(audio, done, error, retry)

    # ---- LoRA -----------------------------------------------------------------------------
    def read_lora(self, folder: Path) -> LoRA:
        return read_lora(folder, self.model.cfg)  # raises VoxDeskError naming the file

    def load_lora(self, slot: int, lora: LoRA) -> None:
        """Copy ``lora`` into adapter ``slot`` in place; a new layout (the first LoRA, a module or
        a rank no resident one had) reallocates the bank, and graphs are captured anew."""
        bank = self.lora or LoRABank(self.model, self.config.lora_slots)
        if bank.ensure(lora):
            log.info("LoRA layout now %d modules at rank %d", len(bank.names), bank.rank)
            self.lora = bank
            if self.graphs is not None:
                self.graphs = None
                self.capture_graphs(self.config)
        bank.load(slot, lora)


def load(
    config: EngineConfig,
    device: torch.device,
    dtype: str | None,
    progress: Callable[[float, str], None],
    model: VoxCPM | None = None,
) -> VoxCPMRunner:
    """The family's factory (app/models/__init__.py). ``model``: one already loaded (tests)."""
    if model is None:
        model = load_model(config.model_dir, str(device), dtype)
    precision = for_device(str(device), config.cpu_precision, config.dtype)
    if precision is not None and precision.int8:
        model = quantize_int8(model)
    return VoxCPMRunner(model, config)
