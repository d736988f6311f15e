"""``voxdesk synth --model DIR`` for a family other than VoxCPM (CosyVoice2 / Fun-CosyVoice3, IndexTTS-2.5).

The folder says which family it is (:func:`app.engine.family.detect_family`); every line goes
through the engine, which loads that family's runner. The voice options mean what the family's
modes need, without anything to type beyond the transcript and the instruction:

- zero-shot: ``--prompt-wav W --prompt-text T`` (the recording and the words spoken in it);
- cross-lingual: ``--ref-wav W`` alone (any language, no transcript);
- instruct: ``--ref-wav W --control TEXT`` (``--control`` is the instruction: how to speak;
  for VoxCPM2 it stays the voice design);
- ``--speed F``: the family's own speed where it has one (CosyVoice resamples its mel);
- ``--emotion-wav``/``--emotion-vector``/``--emotion-text`` [``--emotion-weight``], ``--language``:
  IndexTTS-2.5's emotion and language (app/synth_emotion.py); ``--speed`` is its duration factor 1/F;
- ``--seed N``: as the official examples' ``set_all_random_seed`` (Python's, NumPy's and torch's
  generators), and the request's own seed.

An option the loaded family cannot honour is one plain line, before anything is spoken.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from app.errors import VoxDeskError
from app.synth_emotion import check_emotion_options, language

if TYPE_CHECKING:
    from app.engine.family import FamilyInfo
    from app.synth_cli import Job

# VoxCPM's options: (attribute, default, the control that honours it, the flag)
_OPTIONS = (
    ("cfg", 2.0, "cfg", "--cfg"),
    ("timesteps", 10, "timesteps", "--timesteps"),
    ("lora", None, "lora", "--lora"),
)
# VoxCPM's length and retry options, counted in its patches: no other family has them
_VOXCPM_ONLY = (
    ("min_len", 2, "--min-len"),
    ("max_len", 4096, "--max-len"),
    ("no_retry", False, "--no-retry"),
)


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators, as the official examples do before
    a call (``cosyvoice/utils/common.py`` ``set_all_random_seed``; torch's call seeds CUDA too)."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def check_options(args: argparse.Namespace, info: FamilyInfo) -> None:
    """One plain line for the first option ``info``'s family cannot honour."""
    for attr, default, control, flag in _OPTIONS:
        if getattr(args, attr) != default and not info.has(control):
            raise VoxDeskError(f"{flag} is not a setting of {info.label}: leave it out.")
    if info.name != "voxcpm":
        for attr, default, flag in _VOXCPM_ONLY:
            if getattr(args, attr) != default:
                raise VoxDeskError(
                    f"{flag} counts VoxCPM's patches; {info.label} has no such setting: leave it out."
                )
    if (args.control or "").strip() and not info.has("instruction"):
        raise VoxDeskError(
            f"--control (how to speak) needs a model that takes instructions; {info.label} does not."
        )
    if args.ref_wav and not info.has("reference"):
        raise VoxDeskError(f"--ref-wav needs a model that copies a voice without its transcript; "
                           f"{info.label} does not: use --prompt-wav and --prompt-text.")  # fmt: skip
    check_emotion_options(args, info.label, info.controls, info.languages)


def family_voice(args: argparse.Namespace, info: FamilyInfo, model_id: str | None = None) -> Any:
    """The request's ``VoicePrompt``: the recording at its own rate (the family resamples it as
    its frontend needs), or a library voice (``--voice``) with its cached features."""
    from app.audio.io import read_audio
    from app.engine.voice import VoicePrompt

    if args.prompt_wav and not (args.prompt_text or "").strip():
        raise VoxDeskError("--prompt-wav needs --prompt-text (the words spoken in it).")
    if args.prompt_text and not args.prompt_wav:
        raise VoxDeskError("--prompt-text needs --prompt-wav (the recording it transcribes).")
    if args.prompt_wav and args.ref_wav:
        raise VoxDeskError(f"{info.label} takes one recording: --prompt-wav with --prompt-text (zero-shot), "
                           "or --ref-wav alone (cross-lingual, or with --control an instruction).",
                           )  # fmt: skip
    if args.voice is not None:
        if args.prompt_wav or args.ref_wav:
            raise VoxDeskError("--voice cannot be combined with --prompt-wav or --ref-wav: give one voice.")
        from app.voices.lookup import library_prompt

        return library_prompt(args.voice, args.voices, info.voice_rate, info.architecture, model_id,
                              info.controls)  # fmt: skip
    path = args.prompt_wav or args.ref_wav
    if not path:
        return None
    audio, rate = read_audio(path)
    if args.prompt_wav:
        return VoicePrompt(prompt_audio=audio, prompt_text=args.prompt_text, sample_rate=rate)
    return VoicePrompt(reference_audio=audio, sample_rate=rate)


def family_requests(jobs: list[Job], voice: Any, args: argparse.Namespace) -> list:
    from app.engine import SynthRequest

    instruction = (args.control or "").strip()
    extra = {"normalize": args.normalize, "speed": args.speed, "instruction": instruction,
             "emotion": args.emotion, "language": language(args)}  # fmt: skip
    return [SynthRequest(job.text, voice, args.seed, **extra) for job in jobs]


def synth_family(engine: Any, jobs: list[Job], args: argparse.Namespace) -> Iterator[tuple[Job, Any]]:
    """Every line through ``engine`` (loaded with the folder's family) as one batch."""
    from app.engine.host import model_id
    from app.synth_cli import _Rendered, run_batch

    check_options(args, engine.info)
    voice = family_voice(args, engine.info, model_id(engine, args.model))
    requests = family_requests(jobs, voice, args)
    if args.check:  # through the engine, recognition beside it: see app/backcheck
        from app.backcheck.cli import render_checked

        yield from render_checked(jobs, voice, args, requests, engine=engine)
        return
    for job, (audio, finished) in run_batch(engine, jobs, requests):
        yield job, _Rendered(audio, engine.sample_rate, finished.n_patches, finished.seed)
