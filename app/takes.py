"""Takes: what a finished take was made with, and where a self-contained project keeps them.

A take stays with its segment when a setting changes; :class:`Made` (stored with it) and
:func:`take_changes` say whether it is current, and if not, what it was made with ("CFG 2.0").
A self-contained project keeps its takes in ``<name>_takes/`` beside its file and refers to them
by relative paths; names read from a file are accepted only as a take's exact name inside that
folder (see docs/DESIGN.md, "Scripts").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import atomic

if TYPE_CHECKING:
    from app.project import SegmentJob

# "<name>_takes" (a plain folder name) and "<key>-<fingerprint>-<seed>.wav" (Project.audio_path).
FOLDER = re.compile(r"[^/\\:*?\"<>|]{1,200}_takes")
NAME = re.compile(r"[0-9a-f]{12}-[0-9]{1,6}-[0-9a-f]{16}-[0-9]{1,20}\.wav")


# the values of Made compared with a job's now (the context, voice and instruction apart)
_COMPARED = ("cfg_value", "inference_timesteps", "text", "normalize", "rate", "emotion", "language")


@dataclass(frozen=True)
class Made:
    """What a take was made with: the job's values that decide the audio (the seed apart)."""

    text: str = ""
    cfg_value: float = 0.0
    inference_timesteps: int = 0
    normalize: bool = False
    context: str = ""  # the model it was made with (see SegmentJob.fingerprint)
    voice: str | None = None  # the voice it was spoken in ("": the model's own; None: not recorded)
    rate: float = 1.0  # the speaking rate it was made at
    emotion: str = ""  # the emotion it was made with (EmotionSpec.label(); "": none)
    instruction: str | None = None  # CosyVoice's instruction (None: a take from before it was recorded)
    language: str = ""  # the language it was read in ("": detected from the text)

    def __post_init__(self) -> None:
        if self.voice is not None:
            object.__setattr__(self, "voice", str(self.voice))
        object.__setattr__(self, "text", str(self.text))
        object.__setattr__(self, "cfg_value", round(float(self.cfg_value), 4))
        object.__setattr__(self, "inference_timesteps", int(self.inference_timesteps))
        object.__setattr__(self, "normalize", bool(self.normalize))
        object.__setattr__(self, "context", str(self.context))
        object.__setattr__(self, "rate", round(float(self.rate), 4))
        object.__setattr__(self, "emotion", str(self.emotion))
        object.__setattr__(self, "language", str(self.language))
        if self.instruction is not None:
            object.__setattr__(self, "instruction", str(self.instruction))

    @classmethod
    def of(cls, job: SegmentJob, context: str = "") -> Made:
        voice = job.voice or ""
        return cls(
            job.text, job.cfg_value, job.inference_timesteps, job.normalize, context, voice, job.rate,
            job.emotion.label(), job.instruction, job.language,
        )  # fmt: skip

    def changes(self, job: SegmentJob, context: str = "") -> dict[str, Any]:
        """The values that differ from ``job`` now, as they were ({}: made with these settings).
        The model counts only once one is loaded (``context`` not empty)."""
        now = Made.of(job, context)
        out = {name: getattr(self, name) for name in _COMPARED if getattr(self, name) != getattr(now, name)}
        if context and self.context != context:
            out["context"] = self.context
        if self.voice is not None and self.voice.casefold() != (job.voice or "").casefold():
            out["voice"] = self.voice  # another default voice, or a cast that maps the tag elsewhere
        if self.instruction is not None and self.instruction != job.instruction:
            out["instruction"] = self.instruction
        return out


def take_changes(made: Made | None, seed: int | None, job: SegmentJob, context: str = "") -> dict[str, Any]:
    """What a finished take was made with that differs from ``job`` now ({}: it is current).
    ``{"settings": None}``: a take from an older file that did not record what it was made with."""
    out = {"settings": None} if made is None else made.changes(job, context)
    if job.seed is not None and seed != job.seed:
        out["seed"] = seed
    return out


def folder(path: Path) -> Path:
    """Where a self-contained project saved at ``path`` keeps its takes."""
    return path.with_name(f"{path.stem}_takes")


def inside(path: Path, parent: Path) -> bool:
    """Whether ``path`` (links resolved) is directly in ``parent``."""
    try:
        return path.resolve().parent == parent.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def bundle(name: Any, base: Path | None) -> Path | None:
    """The takes folder a project file names (its ``"takes"``), in ``base`` (the file's folder);
    None when there is none or the name is not a plain ``*_takes`` folder name."""
    if base is None or not isinstance(name, str) or not FOLDER.fullmatch(name) or not name.strip(". "):
        return None
    return base / name


def in_bundle(audio: str, takes: Path) -> Path | None:
    """The take a project file refers to as ``"<folder>/<name>"``, when it is one in ``takes``."""
    prefix = f"{takes.name}/"
    name = audio[len(prefix) :] if audio.startswith(prefix) else ""
    return takes / name if NAME.fullmatch(name) and inside(takes / name, takes) else None


def copy_into(source: Path, takes: Path) -> Path:
    """A take copied into a self-contained project's folder (once: names are unique per content
    and seed); the take itself when it is already there or its file is gone."""
    copy = takes / source.name
    if inside(source, takes) or not source.is_file():
        return source
    takes.mkdir(parents=True, exist_ok=True)
    if not copy.is_file() or copy.stat().st_size != source.stat().st_size:
        atomic.write_bytes(copy, source.read_bytes())
    return copy
