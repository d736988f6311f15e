"""What one request asks CosyVoice's LM for: its mode, its text pieces and each piece's prefix.

The official entries (``inference_zero_shot`` / ``_cross_lingual`` / ``_instruct2``) normalize
and split the text (``text_normalize(split=True)``) and run the LM once per piece. VoxDesk picks
the mode from the request: prompt audio with its transcript is zero-shot, audio without one is
cross-lingual, an instruction is instruct2 (CosyVoice3's system prompt and ``<|endofprompt|>``
forms are added by :func:`.text.request_texts`, as the official examples write them).

A piece's positions in ``Sequence.ids`` are its LM prefix ``[sos, prompt text + text, task_id,
prompt speech tokens]`` in one id space: text ids as they are, speech token ``t`` as
``SPEECH + t``, sos and task_id past those, so the engine's prefix cache hashes them apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.engine.request import SynthRequest
from app.errors import VoxDeskError
from app.models.cosyvoice.sampling import SamplingParams, length_bounds
from app.models.cosyvoice.text import only_punctuation, request_texts

SPEECH = 1 << 24  # Sequence.ids of speech token t: SPEECH + t (text ids stay below)
SOS, TASK = 2 * SPEECH, 2 * SPEECH + 1
DEFAULT_CFG, DEFAULT_STEPS = 2.0, 10  # SynthRequest's defaults: VoxCPM's knobs, not CosyVoice's
NOTHING = "There is nothing to speak in this text: type some words and try again."


@dataclass
class Piece:
    """One LM run: its prefix (LM text ids, LM prompt speech tokens) and length bounds."""

    text_ids: list[int]
    prompt_speech: list[int]
    min_len: int
    max_len: int


def prefix_ids(piece: Piece) -> list[int]:
    return [SOS, *piece.text_ids, TASK, *(SPEECH + t for t in piece.prompt_speech)]


def mode_of(request: SynthRequest) -> str:
    """zero-shot (prompt audio + transcript), instruct2 (an instruction), else cross-lingual."""
    if request.instruction.strip():
        return "instruct2"
    voice = request.voice
    if voice is not None and voice.prompt_audio is not None and voice.prompt_text.strip():
        return "zero_shot"
    return "cross_lingual"


def request_streams(request: SynthRequest) -> bool:
    """The official chunked schedule, unless the request changes the speed (the official
    resamples the whole mel for speed and refuses it while streaming)."""
    return request.stream and request.speed == 1.0


def check_request(request: SynthRequest, label: str) -> None:
    """One plain line for what CosyVoice cannot do (the engine itself refuses a LoRA and an
    instruction for families without them)."""
    if request.cfg_value != DEFAULT_CFG or request.inference_timesteps != DEFAULT_STEPS:
        raise VoxDeskError(
            f"{label} has no guidance or timestep setting: leave cfg and timesteps as they are."
        )
    if only_punctuation("".join(request.text.split())):
        raise VoxDeskError(NOTHING)


def plan_pieces(
    request: SynthRequest,
    family: str,
    encode: Callable[[str], list[int]],
    voice_tokens: list[int],
    params: SamplingParams,
    max_model_len: int,
) -> list[Piece]:
    """The LM runs of ``request``, in order; ``min_len``/``max_len`` count only the spoken
    text's ids (llm.py:469), ``max_len`` also capped so a run fits ``max_model_len``."""
    mode = mode_of(request)
    texts, prompt_text = request_texts(
        family,
        mode,
        request.text,
        prompt_text=request.voice.prompt_text if mode == "zero_shot" else "",
        instruction=request.instruction,
        encode=encode,
    )
    prompt_ids = encode(prompt_text) if prompt_text else []
    lm_speech = voice_tokens if mode == "zero_shot" else []
    pieces = []
    for text in texts:
        ids = encode(text)
        lo, hi = length_bounds(len(ids), params)
        room = max_model_len - (len(prompt_ids) + len(ids) + len(lm_speech) + 2)
        if room < 1:
            raise VoxDeskError("This text or voice prompt is too long for one request: split the text up.")
        pieces.append(Piece(prompt_ids + ids, lm_speech, lo, min(hi, room)))
    if not pieces:
        raise VoxDeskError(NOTHING)
    return pieces
