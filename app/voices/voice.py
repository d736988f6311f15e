"""A voice's metadata (``voice.json``): the :class:`Voice` record and its bounded parsing.

Every value read from a file is checked against the bounds here before anything uses it, so a
damaged or hostile ``voice.json`` is a ValueError, never an allocation or a path outside the
library (ids are plain folder names). The library on disk is :mod:`app.voices.library`.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from app.errors import VoxDeskError
from app.voices.names import check_name

# Bounds on what voice.json may hold (anything outside is a damaged file, never an allocation).
MIN_RATE, MAX_RATE = 1000, 384_000
MAX_STORED_SECONDS = 3600.0
MAX_GAIN_DB = 240.0  # loudness normalising a very quiet recording, or a deliberate mute (-200 dB), stay valid
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Voice:
    """A voice's metadata. Times are seconds in the stored audio; ``trim_end=None`` means its end."""

    id: str
    name: str
    sample_rate: int
    n_samples: int
    audio_sha256: str
    transcript: str = ""
    created: str = ""
    source: str = ""  # the file it was imported from, or "recording"
    trim_start: float = 0.0
    trim_end: float | None = None
    gain_db: float = 0.0
    normalised: bool = False
    transcript_recognized: bool = False  # filled in by speech recognition, not edited since
    rate: float | None = None  # this voice's speaking rate in scripts (None: the script's rate)
    lora: str = ""  # the name of the LoRA attached (its files in <id>/lora/); "" for none

    @property
    def raw_duration(self) -> float:
        return self.n_samples / self.sample_rate

    @property
    def duration(self) -> float:
        """Seconds of audio after trimming."""
        end = self.raw_duration if self.trim_end is None else self.trim_end
        return max(0.0, end - self.trim_start)

    @property
    def content_hash(self) -> str:
        """Identifies the audio as used (stored samples + trim + gain); keys the latent cache."""
        key = f"{self.audio_sha256}|{self.trim_start:.6f}|{self.trim_end}|{self.gain_db:.6f}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Voice:
        """Parse saved metadata; unknown keys are ignored. Raises ValueError naming the first bad
        field (every value is bounded, so a damaged file can never reach the audio code)."""
        if not isinstance(data, dict):
            raise ValueError(f"expected an object, found {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("id", "name", "audio_sha256"):
            if name not in values:
                raise ValueError(f"{name} is missing")
        for name in ("id", "name", "audio_sha256", "transcript", "created", "source", "lora"):
            if name in values and not isinstance(values[name], str):
                raise ValueError(f"{name} is not text")
        if not is_safe_id(values["id"]):
            raise ValueError(f"id {values['id'][:40]!r} is not a voice id")
        try:
            values["name"] = check_name(values["name"])
        except VoxDeskError as err:
            raise ValueError(f"name: {err}") from None
        values["sample_rate"] = _bounded_int(values, "sample_rate", MIN_RATE, MAX_RATE)
        values["n_samples"] = _bounded_int(values, "n_samples", 1, int(MAX_STORED_SECONDS * MAX_RATE))
        raw = values["n_samples"] / values["sample_rate"]
        if raw > MAX_STORED_SECONDS:
            raise ValueError(f"n_samples {values['n_samples']} is more than {MAX_STORED_SECONDS:.0f} s")
        values["trim_start"] = _bounded_float(values, "trim_start", 0.0, raw, 0.0)
        if values.get("trim_end") is not None:
            values["trim_end"] = _bounded_float(values, "trim_end", values["trim_start"], raw + 1e-6, None)
        values["gain_db"] = _bounded_float(values, "gain_db", -MAX_GAIN_DB, MAX_GAIN_DB, 0.0)
        values["normalised"] = bool(values.get("normalised", False))
        values["transcript_recognized"] = values.get("transcript_recognized") is True
        if values.get("rate") is not None:
            values["rate"] = _bounded_float(values, "rate", 0.5, 2.0, None)
        if len(values.get("lora", "")) > 200:
            raise ValueError("lora is longer than 200 characters")
        return cls(**values)


def _bounded_int(values: dict[str, Any], name: str, low: int, high: int) -> int:
    value = values.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} is missing or not a number")
    if not (math.isfinite(value) and value == int(value) and low <= value <= high):
        raise ValueError(f"{name} is {value}, expected a whole number from {low} to {high}")
    return int(value)


def _bounded_float(values: dict[str, Any], name: str, low: float, high: float, default: Any) -> Any:
    value = values.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} is not a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name} is {value}, expected {low:g} to {high:g}")
    return float(value)


def is_safe_id(value: object) -> bool:
    """True for an id that can be a folder name: letters, digits, ``_`` and ``-`` only."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None
