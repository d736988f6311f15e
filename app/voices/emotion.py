"""The saved emotion choice (IndexTTS-2.5): what projects, settings and script tags store.

An :class:`EmotionSpec` is plain data (JSON-safe, no audio): the request's
:class:`~app.engine.request.EmotionControl` is built from it only when a segment is spoken
(:func:`to_control`), so a clip spec names a library voice instead of holding samples.

The script tag form (the part after ``|`` in ``[Anna|…]``, read by :func:`parse_emotion`):

- ``angry`` (one emotion at 0.8), ``angry 0.6``, ``happy 0.5, surprised 0.3``: a vector of the 8
  emotions (English names, or the official Chinese keys 高兴 愤怒 悲伤 恐惧 反感 低落 惊讶 自然),
  each weight 0..1, adding up to at most 1;
- ``@Bob`` (``@Bob 0.6``): the emotion of voice Bob's recording, at weight 0.6;
- ``"a quiet, frightened whisper"`` (``“…” 0.6``): a description, read by QwenEmotion;
  ``""`` reads the line itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.engine.request import EMOTIONS, EmotionControl, check_vector
from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.voices.library import VoiceLibrary

KINDS = ("none", "clip", "vector", "text")
# The official Chinese keys (QwenEmotion's reply, the official web UI), in EMOTIONS' order.
CN_NAMES = ("高兴", "愤怒", "悲伤", "恐惧", "反感", "低落", "惊讶", "自然")
SINGLE_WEIGHT = 0.8  # ``[Anna|angry]``: one emotion named without a number
MAX_TEXT = 500  # characters of a description; more is a damaged file, not a description
MAX_VOICE = 64  # a voice name, as a ``[tag]`` can hold it (app/voices/names.py)
_NAMES = {**{n: i for i, n in enumerate(EMOTIONS)}, **{n: i for i, n in enumerate(CN_NAMES)}}
_NUMBER = r"(?:\d{1,3}(?:\.\d{0,6})?|\.\d{1,6})"
_ITEM = re.compile(rf"\s*([^\s\d.:=,，、]+)\s*(?:[:=：]?\s*({_NUMBER}))?\s*")
_LIST = re.compile(r"[,，、]")
_QUOTED = re.compile(rf'\s*(?:"([^"]*)"|“([^“”]*)”|「([^「」]*)」)\s*({_NUMBER})?\s*')
# (a clip's weight is a number from 0 to 1, so "@Track 2" names the voice "Track 2")
_CLIP = re.compile(r"\s*@\s*(.+?)(?:\s+(0(?:\.\d{0,6})?|1(?:\.0{0,6})?|\.\d{1,6}))?\s*")
NAMES_HINT = ", ".join(EMOTIONS[:-1]) + f" or {EMOTIONS[-1]}"


@dataclass(frozen=True)
class EmotionSpec:
    """An emotion as projects, settings and script tags store it (JSON-safe).

    Fields that do not belong to ``kind`` are cleared, so two specs that speak alike are equal;
    bad values raise :class:`VoxDeskError` with one plain line."""

    kind: str = "none"  # "none" | "clip" | "vector" | "text"
    voice: str = ""  # "clip": the library voice (its name, as in [tags]) whose recording carries the emotion
    vector: tuple[float, ...] = ()  # "vector": 8 weights, EMOTIONS order
    text: str = ""  # "text": the sentence ("" = read the line itself)
    weight: float = 1.0  # 0..1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise VoxDeskError(f"“{self.kind}” is not a kind of emotion: use one of {', '.join(KINDS)}.")
        weight = _number(self.weight, "The emotion weight")
        set_ = object.__setattr__
        set_(self, "weight", 1.0 if self.kind == "none" else weight)
        set_(self, "voice", _voice(self.voice) if self.kind == "clip" else "")
        set_(self, "vector", _vector(self.vector) if self.kind == "vector" else ())
        set_(self, "text", _text(self.text) if self.kind == "text" else "")

    def is_none(self) -> bool:
        return self.kind == "none"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the kind and only the fields it uses."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "clip":
            out["voice"] = self.voice
        elif self.kind == "vector":
            out["vector"] = list(self.vector)
        elif self.kind == "text":
            out["text"] = self.text
        if self.kind != "none":
            out["weight"] = self.weight
        return out

    @classmethod
    def from_dict(cls, data: Any) -> EmotionSpec:
        """A spec read from a file; VoxDeskError for anything that is not one (the caller sets the
        file aside). Unknown keys are ignored, missing ones take their defaults."""
        if not isinstance(data, dict):
            raise VoxDeskError("An emotion in this file is not an object: the file is damaged.")
        kind = data.get("kind", "none")
        if not isinstance(kind, str):
            raise VoxDeskError("An emotion's kind in this file is not a word: the file is damaged.")
        values = {k: data[k] for k in ("voice", "vector", "text", "weight") if k in data}
        return cls(kind, **values)

    def key(self) -> str:
        """A stable text of what decides the audio (for take fingerprints); "" for none."""
        return "" if self.is_none() else json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)

    def tag(self) -> str:
        """The script tag form that :func:`parse_emotion` reads back as this spec ("" for none), to
        write a line's emotion into a file. A vector at a weight below 1 is written as its weights
        times that weight (truncated to 4 places, as the request applies it)."""
        if self.kind == "vector":
            scale = self.weight
            values = [v if scale == 1.0 else int(v * scale * 10000) / 10000 for v in self.vector]
            named = [f"{name} {_plain(value)}" for name, value in zip(EMOTIONS, values, strict=True) if value]
            return ", ".join(named) or f"{EMOTIONS[-1]} 0"
        strength = "" if self.weight == 1.0 else f" {_plain(self.weight)}"
        if self.kind == "clip":
            return f"@{self.voice}{strength}"
        if self.kind == "text":
            text = " ".join(self.text.replace("[", "(").replace("]", ")").split())
            quoted = next(
                (f"{a}{text}{b}" for a, b in ('""', "“”", "「」") if a not in text and b not in text), None
            )
            return (quoted or f'"{text.replace(chr(34), "")}"') + strength
        return ""

    def label(self) -> str:
        """Short, for the window: "angry 0.8", "like Bob's recording", "“whispering”" (""=none)."""
        if self.kind == "vector":
            named = [f"{name} {value:g}" for name, value in zip(EMOTIONS, self.vector, strict=True) if value]
            base = ", ".join(named) or "the voice's own emotion"
        elif self.kind == "clip":
            base = f"like {self.voice}'s recording"
        elif self.kind == "text":
            base = f"“{self.text}”" if self.text else "as the line reads"
        else:
            return ""
        return base if self.weight == 1.0 else f"{base} ×{self.weight:g}"


def parse_emotion(tag: str) -> EmotionSpec:
    """The part after '|' in a script tag: "angry" (one emotion, 0.8), "angry 0.6",
    "happy 0.5, surprised 0.3", "@Bob" (Bob's recording's emotion), '"a quiet, frightened whisper"'
    (a description, read by QwenEmotion); "" is none. VoxDeskError, one line, for anything else."""
    if not tag.strip():
        return EmotionSpec()
    quoted = _QUOTED.fullmatch(tag)
    if quoted is not None:
        text = next(g for g in quoted.groups()[:3] if g is not None)
        return EmotionSpec("text", text=" ".join(text.split()), weight=_weight(quoted.group(4)))
    clip = _CLIP.fullmatch(tag)
    if clip is not None:
        return EmotionSpec("clip", voice=clip.group(1), weight=_weight(clip.group(2)))
    if any(q in tag for q in '"“”「」'):
        raise VoxDeskError(f'[…|{tag.strip()}]: put the whole description in quotes, e.g. "a whisper".')
    items = _LIST.split(tag)
    vector = [0.0] * len(EMOTIONS)
    named: set[int] = set()
    for item in items:
        match = _ITEM.fullmatch(item)
        index = _NAMES.get(match.group(1).lower()) if match is not None else None
        if match is None or index is None:
            word = item.strip() or "(nothing)"
            raise VoxDeskError(f"“{word}” is not an emotion: use {NAMES_HINT}.")
        if match.group(2) is None and len(items) > 1:
            raise VoxDeskError(f"Give each emotion its weight when naming several, e.g. "
                               f"happy 0.5, surprised 0.3 (“{item.strip()}” has none).")  # fmt: skip
        if index in named:
            raise VoxDeskError(f"{EMOTIONS[index]} is named twice in [{tag.strip()}]: name it once.")
        named.add(index)
        vector[index] = SINGLE_WEIGHT if match.group(2) is None else float(match.group(2))
    return EmotionSpec("vector", vector=tuple(vector))


def to_control(spec: EmotionSpec, library: VoiceLibrary) -> EmotionControl | None:
    """The request's control: None for "none"; a clip spec reads the named voice's recording (a
    library name, or an id; VoxDeskError if there is none)."""
    from app.voices.lookup import find_voice

    if spec.kind == "none":
        return None
    if spec.kind == "vector":
        control = EmotionControl(vector=spec.vector, weight=spec.weight)
    elif spec.kind == "text":
        control = EmotionControl(text=spec.text, weight=spec.weight)
    else:
        voice = find_voice(library, spec.voice)
        if voice is None:
            raise VoxDeskError(
                f"No voice is named “{spec.voice}”, whose recording should carry the emotion "
                f"(@{spec.voice}): import one by that name or pick another."
            )
        control = EmotionControl(clip=library.audio(voice), clip_rate=voice.sample_rate, weight=spec.weight)
    control.check()
    return control


def _plain(value: float) -> str:
    """A weight as the tag form reads it: up to 6 places, never an exponent (1e-06)."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def _weight(text: str | None) -> float:
    return 1.0 if text is None else float(text)


def _number(value: Any, what: str) -> float:
    """A number from 0 to 1 (not a bool, not NaN); else one line."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise VoxDeskError(f"{what} is {value!r}: use a number from 0 to 1.")
    return float(value)


def _vector(values: Any) -> tuple[float, ...]:
    """8 weights (check_vector's rule); a file's weights must be numbers, not text that reads as one."""
    if isinstance(values, list | tuple) and not all(isinstance(v, int | float) for v in values):
        raise VoxDeskError(f"An emotion vector holds {len(EMOTIONS)} numbers from 0 to 1 ({NAMES_HINT}).")
    return tuple(check_vector(values if isinstance(values, list | tuple) else "x"))


def _voice(value: Any) -> str:
    name = " ".join(value.split()) if isinstance(value, str) else ""
    if not name or len(name) > MAX_VOICE or any(c in "[]" or not c.isprintable() for c in name):
        raise VoxDeskError(f"{value!r} is not a voice's name: name the voice whose recording carries "
                           "the emotion, e.g. @Bob.")  # fmt: skip
    return name


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise VoxDeskError(f"An emotion's description must be text of at most {MAX_TEXT} characters.")
    return value
