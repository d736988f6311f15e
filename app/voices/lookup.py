"""Which library voice a name means, for ``voxdesk synth --voice`` and the speech server.

A voice is named by its name (case-insensitive, as scripts' ``[Name]`` tags) or by its id. The
server also answers OpenAI's stock voice names (``alloy``, ``echo``, …), which clients often hard-code:
a library voice of that name wins; otherwise the stock name speaks as the configured default voice,
or, with none configured, as ``default`` (the model's own voice).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from app.errors import VoxDeskError
from app.voices.library import Voice, VoiceLibrary

if TYPE_CHECKING:
    from app.models.voxcpm.prompt import VoicePrompt

# openai.types.audio.speech_create_params.Voice (openai 2.x), sorted
STOCK_VOICES = (
    "alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova", "onyx", "sage", "shimmer",
    "verse",
)  # fmt: skip
MODEL_DEFAULT = "default"


class VoiceNotFound(VoxDeskError):
    """No library voice has this name or id; ``name`` is the one asked for."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def _is_id(key: str) -> bool:
    # ids are 12 lowercase hex digits: checked before one names a folder, so no key can point
    # outside the library
    return len(key) == 12 and all(c in "0123456789abcdef" for c in key)


def find_voice(library: VoiceLibrary, key: str) -> Voice | None:
    """The library voice named ``key`` (case-insensitive) or with id ``key``; None if there is none."""
    voice = library.find(key)
    if voice is None and _is_id(key):
        try:
            voice = library.get(key)
        except VoxDeskError:
            voice = None
    return voice


def is_model_default(key: str | None) -> bool:
    return key is None or key.strip().casefold() in ("", MODEL_DEFAULT)


def speaking_voice(library: VoiceLibrary, key: str | None, default_voice: str | None = None) -> Voice | None:
    """The library voice a request's ``voice`` names; None: the model's own voice.

    Raises VoiceNotFound for a name that is neither a library voice, ``default``, nor a stock
    OpenAI name, and for a stock name whose configured ``default_voice`` has left the library.
    """
    if is_model_default(key):
        return None
    voice = find_voice(library, key)
    if voice is not None:
        return voice
    if key.strip().casefold() not in STOCK_VOICES:
        raise VoiceNotFound(key, f"There is no voice named {key!r}.")
    if is_model_default(default_voice):
        return None
    voice = find_voice(library, default_voice)
    if voice is None:
        raise VoiceNotFound(
            default_voice,
            f"{key!r} speaks as the default voice {default_voice!r}, which is not in the voice library "
            "any more: choose another default voice.",
        )
    return voice


def library_prompt(
    key: str,
    root: str | Path | None,
    encoder_rate: int,
    architecture: str,
    model_id: str | None = None,
    controls: Collection[str] | None = None,
) -> VoicePrompt | None:
    """``voxdesk synth --voice KEY [--voices ROOT]``: the prompt of a library voice (None for
    ``default``), with what the library has cached for ``model_id``, in the mode the family's
    ``controls`` give (:func:`app.voices.cloning.modes`); VoxDeskError naming the voices there when
    none matches."""
    from app.voices.cloning import to_voice_prompt

    if is_model_default(key):
        return None
    library = VoiceLibrary(root)
    voice = find_voice(library, key)
    if voice is None:
        names = ", ".join(v.name for v in library.list()) or "none yet: add one in the window"
        raise VoiceNotFound(key, f"There is no voice named {key!r} in {library.root} (voices: {names}).")
    return to_voice_prompt(library, voice, encoder_rate, "auto", architecture, model_id, controls)


def library_lora(key: str | None, root: str | Path | None) -> str | None:
    """The folder of the LoRA attached to library voice ``key`` (None: none, or no such voice)."""
    if is_model_default(key):
        return None
    library = VoiceLibrary(root)
    voice = find_voice(library, key)
    folder = library.lora_folder(voice) if voice is not None else None
    return None if folder is None else str(folder)
