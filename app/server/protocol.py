"""The request and error shapes of ``POST /v1/audio/speech``: OpenAI's fields plus VoxCPM's
extras under vLLM-Omni's names (``ref_audio``, ``ref_text``, ``seed``, ``max_new_tokens``) or
VoxCPM's own (``cfg_value``, ``inference_timesteps``, ``normalize``, ``min_new_tokens``), and
IndexTTS-2.5's emotion and language (``emotion_audio``, ``emotion_voice``, ``emotion_vector``,
``emotion_text``, ``emotion_weight``, ``language``).

Every check raises :class:`ApiError`, which the app turns into OpenAI's JSON error body.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.audio.stretch import MAX_RATE, MIN_RATE
from app.server.formats import STREAMABLE, supported_formats

MAX_INPUT_CHARS = 4096  # OpenAI's limit for `input`
MAX_INSTRUCTIONS_CHARS = 1000
MAX_REF_AUDIO_BYTES = 10 * 1024 * 1024
MAX_REF_SECONDS = 60.0
# the names OpenAI's own TTS models go by: programs written for OpenAI send them unchanged
OPENAI_MODEL_ALIASES = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")

MAX_LANGUAGE_CHARS = 16
# the fields an emotion may come from (one per request): a recording sent, a library voice's
# recording, 8 weights, a description
EMOTION_SOURCES = ("emotion_audio", "emotion_voice", "emotion_vector", "emotion_text")
_FIELDS = {
    "model", "input", "voice", "response_format", "speed", "instructions", "stream_format", "stream",
    "ref_audio", "ref_text", "seed", "cfg_value", "inference_timesteps", "max_new_tokens",
    "min_new_tokens", "normalize", "language", *EMOTION_SOURCES, "emotion_weight",
}  # fmt: skip


class ApiError(Exception):
    """An HTTP error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
             413: "invalid_request_error", 429: "rate_limit_error", 500: "server_error",
             503: "server_error"}  # fmt: skip

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        kind = self.TYPES.get(self.status, "invalid_request_error")
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class SpeechParams:
    """A checked speech request (defaults as OpenAI's and VoxCPM's)."""

    input: str
    model: str | None = None
    voice: str | None = None
    response_format: str = "mp3"
    instructions: str | None = None
    stream: str | None = None  # None | "audio" | "sse"
    ref_audio: bytes | None = None  # the audio file itself (decoded apart: app.server.app._decode)
    ref_text: str = ""
    seed: int | None = None
    cfg_value: float = 2.0
    inference_timesteps: int = 10
    max_new_tokens: int = 4096
    min_new_tokens: int = 2
    normalize: bool = False
    speed: float = 1.0  # the speaking rate (app/audio/stretch.py for families without their own)
    language: str = ""  # "" = the model guesses from the text
    # the emotion (IndexTTS-2.5): at most one source; ``emotion_weight`` None = not given (1.0)
    emotion_audio: bytes | None = None  # an audio file (decoded apart, as ``ref_audio``)
    emotion_voice: str | None = None
    emotion_vector: tuple[float, ...] | None = None
    emotion_text: str | None = None  # "" = read the input itself
    emotion_weight: float | None = None

    @property
    def emotion_source(self) -> str | None:
        """The field the emotion comes from, or None."""
        return next((name for name in EMOTION_SOURCES if getattr(self, name) is not None), None)


def _bad(message: str, param: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)


def _shown(name: str) -> str:
    text = ascii(name)[1:-1]
    return text if len(text) <= 40 else text[:39] + "…"


def _int(body: dict, name: str, lo: int, hi: int, default: int | None) -> int | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"'{name}' must be a whole number.", name, "invalid_type")
    if not lo <= value <= hi:
        raise _bad(f"'{name}' must be between {lo} and {hi}.", name)
    return value


def _number(body: dict, name: str, lo: float, hi: float, default: float) -> float:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(f"'{name}' must be a number.", name, "invalid_type")
    if not lo <= value <= hi:
        raise _bad(f"'{name}' must be between {lo:g} and {hi:g}.", name)
    return float(value)


def _text(body: dict, name: str, limit: int, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, f"'{name}' is required.", param=name, code="missing_required_parameter")
        return None
    if not isinstance(value, str):
        raise _bad(f"'{name}' must be a string.", name, "invalid_type")
    if len(value) > limit:
        raise _bad(f"'{name}' is {len(value)} characters long; the limit is {limit}.", name, "too_long")
    return value


def decode_audio_bytes(data: bytes, param: str) -> tuple[np.ndarray, int]:
    """Mono float32 samples and their rate from an audio file's bytes (anything libsndfile reads),
    bounded by what they cost before they are decoded (``app.audio.io.read_audio``: the header's
    rate, channels and length are checked first, then the file is decoded in blocks). Stored and
    encoded at most at 48 kHz, as the voice library keeps its recordings."""
    from app.audio.io import read_audio
    from app.errors import VoxDeskError

    try:
        return read_audio(data, max_seconds=MAX_REF_SECONDS, name=f"'{param}'", max_rate=48_000)
    except VoxDeskError as exc:
        raise _bad(str(exc), param, "invalid_audio") from None


_DATA_URI = re.compile(r"^data:[\w.+-]+/[\w.+-]+(;[\w.+-]+=[\w.+-]+)*;base64,", re.ASCII)


_URL = re.compile(r"^([A-Za-z][\w+.-]*://|file:)")  # (":" is not a base64 digit)
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_NOT_A_PATH = ("'{}' must carry the audio itself (base64 or a data: URI); URLs and file paths are not "
               "accepted.")  # fmt: skip


def decode_ref_audio(value: Any, param: str = "ref_audio") -> bytes:
    """The audio file's bytes from ``ref_audio`` (or ``param``: ``emotion_audio``), base64 or a
    ``data:`` URI (never a URL or a file path); :func:`decode_audio_bytes` reads them."""
    if not isinstance(value, str) or not value:
        raise _bad(f"'{param}' must be base64-encoded audio or a data: URI.", param, "invalid_type")
    if value.startswith("data:"):
        match = _DATA_URI.match(value)
        if match is None:
            raise _bad(f"'{param}' is a data: URI without base64 audio in it.", param)
        value = value[match.end() :]
    elif _URL.match(value):
        raise _bad(_NOT_A_PATH.format(param), param)
    if len(value) > MAX_REF_AUDIO_BYTES * 4 // 3 + 4:
        raise ApiError(413, f"'{param}' is larger than 10 MB.", param=param, code="too_large")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        # "/" is a base64 digit (every MP3 without an ID3 tag starts "//"): a value is taken for
        # a file path only once it is not base64
        if value.startswith(("/", ".", "~", "\\")) or _DRIVE.match(value):
            raise _bad(_NOT_A_PATH.format(param), param) from None
        raise _bad(f"'{param}' is not valid base64.", param) from None
    if not data:
        raise _bad(f"'{param}' is empty: send a recording of speech.", param, "invalid_audio")
    return data


def _vector(body: dict) -> tuple[float, ...] | None:
    """``emotion_vector``: 8 numbers, checked by the engine's own rule (``check_vector``)."""
    from app.engine.request import EMOTIONS, check_vector
    from app.errors import VoxDeskError

    value = body.get("emotion_vector")
    if value is None:
        return None
    numbers = isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    )
    if not numbers:
        raise _bad(f"'emotion_vector' must be a list of {len(EMOTIONS)} numbers ({', '.join(EMOTIONS)}).",
                   "emotion_vector", "invalid_type")  # fmt: skip
    # (an integer past float's range is out of range, not a 500)
    floats = [v if isinstance(v, float) or abs(v) <= 2**53 else math.inf for v in value]
    try:
        return tuple(check_vector(floats))
    except VoxDeskError as exc:
        raise _bad(str(exc), "emotion_vector") from None


def _emotion(body: dict) -> dict[str, Any]:
    """The emotion fields of a body, checked: at most one source; a weight only with one."""
    voice = body.get("emotion_voice")
    if voice is not None and (not isinstance(voice, str) or not voice.strip() or len(voice) > 200):
        raise _bad("'emotion_voice' must be a library voice's name or id.", "emotion_voice", "invalid_type")
    audio = body.get("emotion_audio")
    fields = {
        "emotion_audio": None if audio is None else decode_ref_audio(audio, "emotion_audio"),
        "emotion_voice": voice,
        "emotion_vector": _vector(body),
        "emotion_text": _text(body, "emotion_text", MAX_INSTRUCTIONS_CHARS),
    }
    given = [name for name in EMOTION_SOURCES if fields[name] is not None]
    if len(given) > 1:
        raise _bad(f"'{given[0]}' and '{given[1]}' are two emotions: send one of "
                   f"{', '.join(EMOTION_SOURCES)}.", given[1], "conflicting_parameters")  # fmt: skip
    if body.get("emotion_weight") is not None:
        if not given:
            raise _bad(f"'emotion_weight' needs an emotion: send one of {', '.join(EMOTION_SOURCES)}.",
                       "emotion_weight")  # fmt: skip
        fields["emotion_weight"] = _number(body, "emotion_weight", 0.0, 1.0, 1.0)
    return fields


def parse_speech(body: Any) -> SpeechParams:
    """Check a decoded JSON body; raise :class:`ApiError` (400/413) naming the field at fault."""
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object.", code="invalid_json")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:  # (quoted, shortened: a name may be megabytes long or hold unprintable characters)
        names = [_shown(name) for name in unknown[:5]] + (["…"] if len(unknown) > 5 else [])
        raise _bad(f"Unknown field(s): {', '.join(names)}.", _shown(unknown[0]), "unknown_parameter")
    text = _text(body, "input", MAX_INPUT_CHARS, required=True) or ""
    if not text.strip():
        raise _bad("'input' is empty: send the text to speak.", "input")
    fmt = body.get("response_format", "mp3")
    if fmt not in supported_formats():
        raise _bad(
            f"response_format {fmt!r} is not supported; use one of: {', '.join(supported_formats())}.",
            "response_format",
            "unsupported_format",
        )
    speed = _number(body, "speed", 0.25, 4.0, 1.0)  # OpenAI's range is accepted as a number...
    if not MIN_RATE <= speed <= MAX_RATE:  # ...but this server speaks from half to twice as fast
        raise _bad(f"'speed' must be between {MIN_RATE:g} and {MAX_RATE:g} here.", "speed", "unsupported")
    stream_format = body.get("stream_format")
    if stream_format not in (None, "audio", "sse"):
        raise _bad("'stream_format' must be 'audio' or 'sse'.", "stream_format")
    stream_flag = body.get("stream", False)
    if not isinstance(stream_flag, bool):
        raise _bad("'stream' must be true or false.", "stream", "invalid_type")
    # vLLM-Omni's rule: stream=true alone means SSE; stream_format='audio' streams raw bytes
    stream = stream_format or ("sse" if stream_flag else None)
    if stream is not None and fmt not in STREAMABLE:
        raise _bad(
            f"Streaming needs response_format 'wav' or 'pcm' (got {fmt!r}).", "response_format", "unsupported"
        )
    voice = body.get("voice")
    if isinstance(voice, dict):  # OpenAI's newer {"id": ...} form
        voice = voice.get("id")
    if voice is not None and (not isinstance(voice, str) or len(voice) > 200):
        raise _bad("'voice' must be a voice name or id.", "voice", "invalid_type")
    normalize = body.get("normalize", False)
    if not isinstance(normalize, bool):
        raise _bad("'normalize' must be true or false.", "normalize", "invalid_type")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise _bad("'model' must be a string.", "model", "invalid_type")
    ref_audio = decode_ref_audio(body["ref_audio"]) if body.get("ref_audio") is not None else None
    ref_text = _text(body, "ref_text", MAX_INPUT_CHARS) or ""
    if ref_text.strip() and ref_audio is None and not voice:
        raise _bad("'ref_text' needs 'ref_audio' (the recording it transcribes).", "ref_text")
    language = (_text(body, "language", MAX_LANGUAGE_CHARS) or "").strip().lower()
    language = "" if language == "auto" else language
    max_new = _int(body, "max_new_tokens", 1, 4096, 4096)
    min_new = _int(body, "min_new_tokens", 0, 4096, 2)
    return SpeechParams(
        input=text,
        model=model,
        voice=voice,
        response_format=fmt,
        instructions=_text(body, "instructions", MAX_INSTRUCTIONS_CHARS),
        stream=stream,
        ref_audio=ref_audio,
        ref_text=ref_text,
        seed=_int(body, "seed", 0, 2**63 - 1, None),
        cfg_value=_number(body, "cfg_value", 0.0, 10.0, 2.0),
        inference_timesteps=_int(body, "inference_timesteps", 1, 100, 10) or 10,
        max_new_tokens=max_new or 4096,
        min_new_tokens=min_new if min_new is not None else 2,
        normalize=normalize,
        speed=speed,
        language=language,
        **_emotion(body),
    )
