"""From a library voice to the ``VoicePrompt`` the model consumes, and which mode it will use.

Modes (``mode`` argument):

- ``"auto"``: continuation when the voice has a transcript, else VoxCPM2's reference mode.
- ``"continuation"``: the model continues from the recording and its transcript (all models).
- ``"reference"``: VoxCPM2 only; copies the voice without a transcript.
- ``"both"``: VoxCPM2 only; reference audio plus continuation, needs a transcript.

``architecture`` is the ``config.json`` value: ``"voxcpm"`` (VoxCPM-0.5B, VoxCPM1.5) or ``"voxcpm2"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.errors import VoxDeskError
from app.voices import latents
from app.voices.library import Voice, VoiceLibrary

if TYPE_CHECKING:
    from app.models.voxcpm.prompt import VoicePrompt

MODES = ("auto", "continuation", "reference", "both")


def resolve_mode(voice: Voice, architecture: str, mode: str = "auto") -> str:
    """The concrete mode (continuation/reference/both) or VoxDeskError saying why it cannot work."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    v2 = architecture == "voxcpm2"
    has_text = bool(voice.transcript.strip())
    if mode == "auto":
        mode = "continuation" if has_text else "reference"
    if mode in ("reference", "both") and not v2:
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
    """Build the model's ``VoicePrompt`` for ``voice``: audio resampled to ``encoder_rate`` (the
    model's ``audio_vae`` sample rate), plus cached latents for ``model_id`` when present. Whoever
    encodes missing latents stores them with :func:`app.voices.latents.store`."""
    from app.models.voxcpm.prompt import VoicePrompt

    concrete = resolve_mode(voice, architecture, mode)
    audio = library.audio(voice, encoder_rate)

    def cached(role: str):
        return None if model_id is None else latents.load(library, voice, model_id, role)

    kwargs = {}
    if concrete in ("continuation", "both"):
        kwargs.update(prompt_audio=audio, prompt_text=voice.transcript, prompt_latents=cached("prompt"))
    if concrete in ("reference", "both"):
        kwargs.update(reference_audio=audio, reference_latents=cached("reference"))
    return VoicePrompt(**kwargs)
