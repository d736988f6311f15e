"""From a library voice to the ``VoicePrompt`` the model consumes, and which mode it will use.

Modes (``mode`` argument):

- ``"auto"``: continuation when the voice has a transcript, else reference mode.
- ``"continuation"``: the model continues from the recording and its transcript (all models;
  CosyVoice's zero-shot).
- ``"reference"``: VoxCPM2 and CosyVoice; copies the voice without a transcript (CosyVoice's
  cross-lingual, and its instruct mode when the request carries an instruction).
- ``"both"``: VoxCPM2 only; reference audio plus continuation, needs a transcript.

``architecture`` is the loaded model's (``FamilyInfo.architecture``): ``"voxcpm"`` (VoxCPM-0.5B,
VoxCPM1.5), ``"voxcpm2"``, ``"cosyvoice2"`` or ``"cosyvoice3"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.errors import VoxDeskError
from app.voices import latents
from app.voices.library import Voice, VoiceLibrary

if TYPE_CHECKING:
    from app.engine.voice import VoicePrompt

MODES = ("auto", "continuation", "reference", "both")
VOXCPM = ("voxcpm", "voxcpm2")  # the architectures conditioned on VAE latents of 16/48 kHz audio


def is_cosyvoice(architecture: str) -> bool:
    return architecture.startswith("cosyvoice")


def resolve_mode(voice: Voice, architecture: str, mode: str = "auto") -> str:
    """The concrete mode (continuation/reference/both) or VoxDeskError saying why it cannot work."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    v2 = architecture == "voxcpm2"
    has_text = bool(voice.transcript.strip())
    if mode == "auto":
        mode = "continuation" if has_text else "reference"
    if is_cosyvoice(architecture) and mode == "both":
        raise VoxDeskError(
            "Reference + continuation needs VoxCPM2: with CosyVoice use the transcript (zero-shot) or "
            "the recording alone (cross-lingual)."
        )
    if mode in ("reference", "both") and not v2 and not is_cosyvoice(architecture):
        if mode == "reference" and not has_text:
            raise VoxDeskError(
                f"The voice “{voice.name}” has no transcript, and VoxCPM1.5 / VoxCPM-0.5B need the words "
                "spoken in the recording to copy a voice. Add its transcript, or switch to VoxCPM2."
            )
        raise VoxDeskError(
            "Reference mode needs VoxCPM2. Switch the model to VoxCPM2, or use continuation mode."
        )
    if mode in ("continuation", "both") and not has_text:
        raise VoxDeskError(
            f"The voice “{voice.name}” has no transcript; continuation mode needs the exact words spoken "
            "in the recording. Add the transcript, or use reference mode (VoxCPM2)."
        )
    return mode


def mode_hint(voice: Voice, architecture: str, mode: str = "auto") -> str:
    """One line for the UI: how this voice will be used with this model, or why it cannot be."""
    try:
        concrete = resolve_mode(voice, architecture, mode)
    except VoxDeskError as err:
        return str(err)
    if is_cosyvoice(architecture):
        return {
            "continuation": "Zero-shot: CosyVoice carries on from the recording and its transcript.",
            "reference": "Cross-lingual: CosyVoice copies the voice from the recording alone (no "
            "transcript needed; an instruction, if given, says how to speak).",
        }[concrete]
    return {
        "continuation": "Continuation: the model carries on from the recording and its transcript "
        "(closest match to the recording's style and pace).",
        "reference": "Reference: VoxCPM2 copies the voice from the recording alone (no transcript needed).",
        "both": "Reference + continuation: VoxCPM2 uses the recording both as reference and as a "
        "prompt with its transcript.",
    }[concrete]


def to_voice_prompt(
    library: VoiceLibrary,
    voice: Voice,
    encoder_rate: int,
    mode: str = "auto",
    architecture: str = "voxcpm2",
    model_id: str | None = None,
) -> VoicePrompt:
    """Build the model's ``VoicePrompt`` for ``voice``, with the entries cached for ``model_id``
    when present. VoxCPM: audio resampled to ``encoder_rate`` (the model's ``audio_vae`` sample
    rate) and its latents. Other families resample themselves: the audio at the voice's own rate
    (``VoicePrompt.sample_rate``) and their cached ``features`` (CosyVoice: speech tokens, speaker
    embedding, prompt mel). Whoever encodes missing entries stores them with
    :func:`app.voices.latents.store`."""
    from app.engine.voice import VoicePrompt

    concrete = resolve_mode(voice, architecture, mode)
    if architecture not in VOXCPM:
        audio = library.audio(voice)
        features = {} if model_id is None else latents.load_named(library, voice, model_id, latents.COSYVOICE)
        if concrete == "continuation":
            kwargs = {"prompt_audio": audio, "prompt_text": voice.transcript}
        else:
            kwargs = {"reference_audio": audio}
        return VoicePrompt(**kwargs, sample_rate=voice.sample_rate, features=features or None)
    audio = library.audio(voice, encoder_rate)

    def cached(role: str):
        return None if model_id is None else latents.load(library, voice, model_id, role)

    kwargs = {}
    if concrete in ("continuation", "both"):
        kwargs.update(prompt_audio=audio, prompt_text=voice.transcript, prompt_latents=cached("prompt"))
    if concrete in ("reference", "both"):
        kwargs.update(reference_audio=audio, reference_latents=cached("reference"))
    return VoicePrompt(**kwargs)
