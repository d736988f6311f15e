"""From a library voice to the ``VoicePrompt`` the model consumes, and which mode it will use.

Modes (``mode`` argument):

- ``"auto"``: continuation when the voice has a transcript and the family takes one, else
  reference mode.
- ``"continuation"``: the model continues from the recording and its transcript (families with
  the "prompt" control: VoxCPM, CosyVoice's zero-shot).
- ``"reference"``: the voice from the recording alone (the "reference" control: VoxCPM2, CosyVoice's
  cross-lingual and instruct modes, IndexTTS-2.5, which takes nothing else).
- ``"both"``: reference audio plus continuation, needs a transcript: a VoxCPM2 family (both
  controls on VAE latents).

Which modes a family takes comes from its controls (``FamilyInfo.controls``, given as
``controls``). ``architecture`` (``FamilyInfo.architecture``) says only how the audio is handed
over: VoxCPM's (``"voxcpm"``, ``"voxcpm2"``) as VAE latents at its encoder rate, every other family's
at the voice's own rate with its cached features. Callers that do not know the controls (the book
and dub command lines read a VoxCPM config alone) leave them out: :func:`modes` says what then.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from app.errors import VoxDeskError
from app.voices import latents
from app.voices.library import Voice, VoiceLibrary

if TYPE_CHECKING:
    from app.engine.voice import VoicePrompt

MODES = ("auto", "continuation", "reference", "both")
VOXCPM = ("voxcpm", "voxcpm2")  # the architectures conditioned on VAE latents of 16/48 kHz audio


def modes(architecture: str, controls: Collection[str] | None = None) -> frozenset[str]:
    """The concrete modes a family takes: continuation with "prompt", reference with "reference",
    both with the two on VoxCPM's latents. ``controls`` None (not known: a VoxCPM config read
    alone, a remote server's model): a VoxCPM architecture's own (VoxCPM2 has both controls, VoxCPM1
    only "prompt"), for another family both (continuation with a transcript, else reference)."""
    if controls is None:
        controls = {"prompt"} if architecture == "voxcpm" else {"prompt", "reference"}
    out = {m for m, c in (("continuation", "prompt"), ("reference", "reference")) if c in controls}
    if len(out) == 2 and architecture in VOXCPM:
        out.add("both")
    return frozenset(out)


def resolve_mode(voice: Voice, architecture: str, mode: str = "auto",
                 controls: Collection[str] | None = None) -> str:  # fmt: skip
    """The concrete mode (continuation/reference/both) or VoxDeskError saying why it cannot work."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    takes = modes(architecture, controls)
    has_text = bool(voice.transcript.strip())
    if mode == "auto":
        mode = "continuation" if has_text and "continuation" in takes else "reference"
    if mode in takes - {"continuation", "both"} or (mode in takes and has_text):
        return mode
    if "reference" not in takes:  # continuation only (VoxCPM1)
        if not has_text:
            raise VoxDeskError(
                f"The voice “{voice.name}” has no transcript, and VoxCPM1.5 / VoxCPM-0.5B need the words "
                "spoken in the recording to copy a voice. Add its transcript, or switch to VoxCPM2."
            )
        raise VoxDeskError("Reference mode needs VoxCPM2. Switch the model to VoxCPM2, or use continuation "
                           "mode.")  # fmt: skip
    if mode == "both" and "both" not in takes:
        if "continuation" not in takes:
            raise VoxDeskError("This model copies a voice from the recording alone: use reference mode.")
        raise VoxDeskError(
            "Reference + continuation needs VoxCPM2: with CosyVoice use the transcript (zero-shot) or "
            "the recording alone (cross-lingual)."
        )
    if "continuation" not in takes:
        raise VoxDeskError("This model copies a voice from the recording alone, without its transcript: "
                           "use reference mode.")  # fmt: skip
    raise VoxDeskError(
        f"The voice “{voice.name}” has no transcript; continuation mode needs the exact words spoken "
        "in the recording. Add the transcript, or use reference mode."
    )


def mode_hint(voice: Voice, architecture: str, mode: str = "auto",
              controls: Collection[str] | None = None) -> str:  # fmt: skip
    """One line for the UI: how this voice will be used with this model, or why it cannot be."""
    try:
        concrete = resolve_mode(voice, architecture, mode, controls)
    except VoxDeskError as err:
        return str(err)
    takes = modes(architecture, controls)
    if "continuation" not in takes:
        return "Reference: the model copies the voice from the recording alone (it reads no transcript)."
    if architecture not in VOXCPM:
        return {
            "continuation": "Zero-shot: the model carries on from the recording and its transcript.",
            "reference": "Cross-lingual: the model copies the voice from the recording alone (no "
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
    controls: Collection[str] | None = None,
) -> VoicePrompt:
    """Build the model's ``VoicePrompt`` for ``voice``, with the entries cached for ``model_id``
    when present. VoxCPM: audio resampled to ``encoder_rate`` (the model's ``audio_vae`` sample
    rate) and its latents. Other families resample themselves: the audio at the voice's own rate
    (``VoicePrompt.sample_rate``) and their cached ``features`` (CosyVoice: speech tokens, speaker
    embedding, prompt mel; IndexTTS: the speaker clip's conditions). Whoever encodes missing entries
    stores them with :func:`app.voices.latents.store`."""
    from app.engine.voice import VoicePrompt

    concrete = resolve_mode(voice, architecture, mode, controls)
    if architecture not in VOXCPM:
        audio = library.audio(voice)
        features = {} if model_id is None else latents.load_named(library, voice, model_id, latents.FEATURES)
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
