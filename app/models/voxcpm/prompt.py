"""Who speaks (``VoicePrompt``) and the prefill sequence for every generation mode.

Sequences (``A`` = latent patches, ``tok`` = token ids, 101 = audio start):

| mode                          | sequence                                            |
|-------------------------------|-----------------------------------------------------|
| zero-shot / voice design      | ``tok(text) 101``                                   |
| continuation (v1, v2)         | ``tok(prompt_text + text) 101 A_prompt``            |
| reference (v2)                | ``103 A_ref 104 tok(text) 101``                     |
| reference + continuation (v2) | ``103 A_ref 104 tok(prompt_text + text) 101 A_prompt`` |

Audio is padded to whole patches before encoding: prompts on the left, references on the
right (as the official code does). Text positions carry zero patches; audio positions id 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from app.engine.voice import VoicePrompt
from app.errors import VoxDeskError
from app.models.voxcpm.model import AUDIO_START, REF_END, REF_START, VoxCPM
from app.models.voxcpm.tokenizer import TextTokenizer

LENGTH_RATIO = 6.0  # official cap: 6 patches per target token, plus 10
RETRY_TAKES = 3  # the official retry_badcase_max_times: takes drawn at most, the last one kept


@dataclass
class Prefill:
    """One request's prefill: ``ids/text_mask/audio_mask [T]``, ``feats [T, P, D]`` (fp32)."""

    ids: torch.Tensor
    feats: torch.Tensor
    text_mask: torch.Tensor
    audio_mask: torch.Tensor
    target_tokens: int
    context: torch.Tensor  # [c, P, D]: prompt patches that warm the streaming VAE decoder
    skip_chunks: int = 0  # leading generated chunks the official output leaves out (see below)
    counted_context: int = 0  # context patches the official bad-case test counts as generated (v1)

    @property
    def length(self) -> int:
        return int(self.ids.shape[0])


def normalize_text(text: str) -> str:
    """What ``core.py`` does to the target text: newlines to spaces, whitespace runs collapsed."""
    return re.sub(r"\s+", " ", text.replace("\n", " "))


def design_text(control: str, text: str) -> str:
    """Voice design (VoxCPM2): the description goes in parentheses before the text."""
    return "(" + control + ")" + text


def max_patches(target_tokens: int, max_len: int) -> int:
    """The official length cap, applied even without retries."""
    return min(int(target_tokens * LENGTH_RATIO + 10), max_len)


def bad_case_length(prefill: Prefill) -> int:
    """Generated patches from which a take is a bad case, to be drawn again (the official
    ``retry_badcase``: ``len(pred_audio_feat) >= ratio * len(tokenize(target_text))``).

    VoxCPM1's ``pred_audio_feat`` includes the prompt-context patches it decodes with, so they
    count there; VoxCPM2 counts only the generated ones.
    """
    return math.ceil(prefill.target_tokens * LENGTH_RATIO) - prefill.counted_context


def patch_budget(prefill: Prefill, max_len: int, context: int) -> int:
    """How many patches ``prefill`` may generate in a ``context``-position model, capped by
    ``max_len`` and the official cap. Raises :class:`VoxDeskError` naming what is at fault when
    not even one patch fits: the length limit, the voice recording, or the text."""
    if max_len < 1:
        raise VoxDeskError("The maximum length must be at least 1: raise it and try again.")
    room = context - prefill.length
    if room >= 1:
        return min(max_patches(prefill.target_tokens, max_len), room)
    voice_len = int(prefill.audio_mask.sum())
    if voice_len and prefill.length - voice_len < context:  # the text alone would fit
        raise VoxDeskError(
            "The voice recording is too long for this model: trim it to a few seconds and try again."
        )
    raise VoxDeskError("The text is too long for this model: split it into shorter pieces.")


def check_voice(voice: VoicePrompt | None, v2: bool) -> None:
    if voice is None:
        return
    if voice.has_reference and not v2:
        raise VoxDeskError("Reference audio needs a VoxCPM2 model; use prompt audio with its transcript.")
    if voice.has_prompt and not voice.prompt_text.strip():
        raise VoxDeskError("Prompt audio needs its transcript (prompt text).")
    if voice.prompt_text.strip() and not voice.has_prompt:
        raise VoxDeskError("Prompt text was given without the prompt audio it transcribes.")


def _latents(
    model: VoxCPM, audio: np.ndarray | None, cached: np.ndarray | None, padding: str, what: str
) -> torch.Tensor | None:
    if cached is not None:
        lat = torch.as_tensor(np.asarray(cached, dtype=np.float32))
        if lat.ndim != 3 or lat.shape[1:] != (model.patch_size, model.feat_dim) or lat.shape[0] == 0:
            raise VoxDeskError(f"The cached {what} latents do not fit this model: re-encode the voice.")
        return lat
    if audio is None:
        return None
    wav = np.asarray(audio, dtype=np.float32).reshape(-1)
    if wav.size == 0:
        raise VoxDeskError(f"The {what} audio is empty: choose a recording with speech in it.")
    with torch.inference_mode():
        return model.encode_audio(torch.from_numpy(wav).unsqueeze(0), padding)[0].cpu()


def voice_latents(
    model: VoxCPM, voice: VoicePrompt | None
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``(prompt, reference)`` latent patches ``[n, P, D]``, from the cache or by encoding."""
    if voice is None:
        return None, None
    check_voice(voice, model.cfg.is_v2)
    prompt = _latents(model, voice.prompt_audio, voice.prompt_latents, "left", "prompt")
    ref = _latents(model, voice.reference_audio, voice.reference_latents, "right", "reference")
    return prompt, ref


def model_prefill(model: VoxCPM, tokenizer: TextTokenizer, text: str, voice: VoicePrompt | None) -> Prefill:
    """The prefill of ``text`` (already normalized) spoken by ``voice`` on ``model``."""
    prompt, ref = voice_latents(model, voice)
    return build_prefill(
        tokenizer,
        text,
        patch_size=model.patch_size,
        feat_dim=model.feat_dim,
        v2=model.cfg.is_v2,
        prompt_text=voice.prompt_text if voice is not None else "",
        prompt=prompt,
        reference=ref,
    )


def build_prefill(
    tokenizer: TextTokenizer,
    text: str,
    *,
    patch_size: int,
    feat_dim: int,
    v2: bool,
    prompt_text: str = "",
    prompt: torch.Tensor | None = None,
    reference: torch.Tensor | None = None,
) -> Prefill:
    """The prefill for ``text`` (already normalized) with optional prompt/reference latents."""
    if not text.strip():
        raise VoxDeskError("The text to speak is empty.")
    ids: list[int] = []
    audio: list[torch.Tensor] = []
    is_audio: list[bool] = []

    def add_text(tokens: list[int]) -> None:
        ids.extend(tokens)
        audio.append(torch.zeros(len(tokens), patch_size, feat_dim))
        is_audio.extend([False] * len(tokens))

    def add_audio(patches: torch.Tensor) -> None:
        ids.extend([0] * patches.shape[0])
        audio.append(patches.float())
        is_audio.extend([True] * patches.shape[0])

    if reference is not None:
        add_text([REF_START])
        add_audio(reference)
        add_text([REF_END])
    add_text(tokenizer((prompt_text if prompt is not None else "") + text) + [AUDIO_START])
    if prompt is not None:
        add_audio(prompt)
    feats = torch.cat(audio)
    audio_mask = torch.tensor(is_audio, dtype=torch.int32)
    context = torch.zeros(0, patch_size, feat_dim)
    skip = counted = 0
    if is_audio[-1]:
        # The official loop keeps the last (prefix_len - 1) audio patches as decoding context:
        # prefix_len is 4 for VoxCPM2 and 3 for VoxCPM1.
        n = min(3 if v2 else 2, int(audio_mask.sum()))
        context = feats[audio_mask.nonzero()[-n:, 0]]
        # VoxCPM1 always trims two patches of audio, so a one-patch prompt costs the first
        # generated patch its audio; we do the same to keep the output identical.
        skip = 0 if v2 else 2 - n
        counted = 0 if v2 else n
    return Prefill(
        ids=torch.tensor(ids, dtype=torch.long),
        feats=feats,
        text_mask=1 - audio_mask,
        audio_mask=audio_mask,
        target_tokens=len(tokenizer(text)),
        context=context,
        skip_chunks=skip,
        counted_context=counted,
    )
