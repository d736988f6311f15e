"""The voice library on disk: one folder per voice, holding its audio and its metadata.

Layout under the library root (default: ``paths.voices_dir()``)::

    <id>/audio.flac     mono, at the rate of the file it came from, exactly as imported/recorded
    <id>/voice.json     metadata (:class:`Voice`), written atomically
    <id>/latents/       cached prompt latents (see app/voices/latents.py)

Edits are non-destructive: trimming and normalising only change the metadata; :meth:`VoiceLibrary.audio`
applies them when the audio is read. A new voice is assembled in a hidden temporary folder and
renamed into place, so a failed import leaves nothing behind. A voice whose metadata is damaged is
skipped when listing and reported in :attr:`VoiceLibrary.problems`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import shutil
import uuid
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from app import atomic
from app.errors import VoxDeskError

META = "voice.json"
AUDIO = "audio.flac"
MAX_SECONDS = 60.0
MIN_SECONDS = 0.5
MAX_NAME = 64
NORMALISE_PEAK_DBFS = -1.0


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
    def from_dict(cls, data: dict[str, Any]) -> Voice:
        """Parse saved metadata; unknown keys are ignored. Raises ValueError/TypeError if damaged."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("id", "name", "audio_sha256", "transcript", "created", "source"):
            if name in values and not isinstance(values[name], str):
                raise ValueError(f"{name} is not text")
        for name in ("sample_rate", "n_samples"):
            values[name] = int(values[name])
        for name in ("trim_start", "gain_db"):
            values[name] = float(values.get(name, 0.0))
        if values.get("trim_end") is not None:
            values["trim_end"] = float(values["trim_end"])
        voice = cls(**values)
        if voice.sample_rate <= 0 or voice.n_samples <= 0:
            raise ValueError("bad sample rate or length")
        return voice


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _seconds(value: float) -> str:
    """A length as people read it: "0.15 s", never "0.0 s"."""
    return f"{value * 1000:.0f} ms" if value < 0.05 else f"{value:.2f} s".replace(".00 s", " s")


def _hash_samples(samples: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()


def _check_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise VoxDeskError("A voice needs a name. Type one and try again.")
    if len(name) > MAX_NAME:
        raise VoxDeskError(f"That voice name is too long. Use at most {MAX_NAME} characters.")
    if "[" in name or "]" in name:
        raise VoxDeskError("A voice name cannot contain [ or ], because scripts use [Name] to pick voices.")
    return name


class VoiceLibrary:
    """The voices in one folder. Not thread-safe: use it from one thread (the GUI's)."""

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            from app.paths import voices_dir

            root = voices_dir()
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.problems: list[str] = []  # from the last list(): voices that could not be read

    # --- reading -------------------------------------------------------------------------

    def folder(self, voice: Voice | str) -> Path:
        """The folder holding a voice (by Voice or id)."""
        return self.root / (voice if isinstance(voice, str) else voice.id)

    def list(self) -> list[Voice]:
        """All readable voices, sorted by name. Damaged ones are skipped and described in ``problems``."""
        voices: list[Voice] = []
        self.problems = []
        for meta in sorted(self.root.glob(f"*/{META}")):
            if meta.parent.name.startswith("."):
                continue
            try:
                voice = Voice.from_dict(json.loads(meta.read_text(encoding="utf-8")))
                if voice.id != meta.parent.name or not (meta.parent / AUDIO).is_file():
                    raise ValueError("id or audio file mismatch")
            except (OSError, ValueError, TypeError, KeyError) as exc:
                self.problems.append(f"The voice in {meta.parent} could not be read ({exc}); it was skipped.")
                continue
            voices.append(voice)
        return sorted(voices, key=lambda v: v.name.casefold())

    def get(self, voice_id: str) -> Voice:
        """The voice with this id; VoxDeskError if it is gone or damaged."""
        meta = self.folder(voice_id) / META
        try:
            return Voice.from_dict(json.loads(meta.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise VoxDeskError("That voice no longer exists. Pick another voice.") from None
        except (OSError, ValueError, TypeError, KeyError):
            raise VoxDeskError(
                f"The voice in {meta.parent} is damaged. Delete it and import the audio again."
            ) from None

    def find(self, name: str) -> Voice | None:
        """The voice with this name (case-insensitive), as scripts' ``[Name]`` tags refer to it."""
        key = " ".join(name.split()).casefold()
        return next((v for v in self.list() if v.name.casefold() == key), None)

    def audio(self, voice: Voice, sample_rate: int | None = None) -> np.ndarray:
        """The voice's audio as used: trimmed, gain applied, mono float32 at ``sample_rate``
        (default: its own rate)."""
        from app.audio.io import load_audio

        rate = sample_rate or voice.sample_rate
        samples = load_audio(self.folder(voice) / AUDIO, rate, reject_silence=False)
        start = int(round(voice.trim_start * rate))
        end = None if voice.trim_end is None else int(round(voice.trim_end * rate))
        samples = samples[start:end]
        if voice.gain_db:
            samples = samples * np.float32(10 ** (voice.gain_db / 20))
        return np.ascontiguousarray(samples, dtype=np.float32)

    # --- creating --------------------------------------------------------------------------

    def unique_name(self, wanted: str, exclude_id: str | None = None) -> str:
        """``wanted``, or ``wanted (2)``, ``(3)``… if a voice already has that name."""
        base = _check_name(wanted)
        taken = {v.name.casefold() for v in self.list() if v.id != exclude_id}
        name, n = base, 2
        while name.casefold() in taken:
            name = f"{base} ({n})"
            n += 1
        return name

    def import_file(
        self,
        path: str | Path,
        name: str | None = None,
        transcript: str = "",
        max_seconds: float = MAX_SECONDS,
    ) -> Voice:
        """Import any audio file as a new voice (mono, at the file's own rate).

        Raises VoxDeskError with a plain message for unreadable, empty or too long files; nothing is
        written to the library in that case.
        """
        from app.audio.io import audio_info, load_audio

        path = Path(path)
        rate = audio_info(path).sample_rate
        samples = load_audio(path, rate, max_seconds=max_seconds)
        return self._add(samples, rate, name or path.stem, transcript, path.name, max_seconds)

    def create_from_samples(
        self,
        samples: np.ndarray,
        sample_rate: int,
        name: str,
        transcript: str = "",
        max_seconds: float = MAX_SECONDS,
    ) -> Voice:
        """Save recorded (or generated) mono float32 samples as a new voice."""
        return self._add(
            np.asarray(samples, dtype=np.float32), sample_rate, name, transcript, "recording", max_seconds
        )

    def _add(
        self, samples: np.ndarray, rate: int, name: str, transcript: str, source: str, max_seconds: float
    ) -> Voice:
        if samples.ndim != 1:
            raise VoxDeskError("VoxDesk expected mono audio for a voice. Record or import one channel.")
        seconds = len(samples) / rate
        if seconds > max_seconds:
            raise _too_long(seconds, max_seconds)
        from app.audio.io import SILENCE_PEAK, write_audio

        if len(samples) == 0:
            raise VoxDeskError("That audio is empty. Use a recording of a few seconds of speech.")
        if float(np.max(np.abs(samples))) < SILENCE_PEAK:
            raise VoxDeskError("That audio is silent. Use a recording in which someone speaks.")
        if seconds < MIN_SECONDS:
            raise VoxDeskError(
                f"That audio is too short ({_seconds(seconds)}). Use a recording of at least "
                f"{_seconds(MIN_SECONDS)} of speech; 3–10 s is best."
            )
        if not np.all(np.isfinite(samples)):
            raise VoxDeskError("That audio contains invalid samples. Export it again from your audio editor.")
        samples = np.clip(samples, -1.0, 1.0)
        voice = Voice(
            id=uuid.uuid4().hex[:12],
            name=self.unique_name(name),
            sample_rate=int(rate),
            n_samples=len(samples),
            audio_sha256=_hash_samples(samples),
            transcript=transcript.strip(),
            created=_now(),
            source=source,
        )
        staging = self.root / f".new-{voice.id}"
        try:
            staging.mkdir()
            write_audio(staging / AUDIO, samples, voice.sample_rate, fmt="FLAC")
            atomic.write_json(staging / META, voice.to_dict())
            staging.rename(self.folder(voice))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return voice

    # --- editing ---------------------------------------------------------------------------

    def _save(self, voice: Voice) -> Voice:
        atomic.write_json(self.folder(voice) / META, voice.to_dict())
        return voice

    def rename(self, voice: Voice, new_name: str) -> Voice:
        """Rename; VoxDeskError if another voice already has that name."""
        name = _check_name(new_name)
        if any(v.name.casefold() == name.casefold() and v.id != voice.id for v in self.list()):
            raise VoxDeskError(f"A voice named “{name}” already exists. Choose another name.")
        return self._save(replace(self.get(voice.id), name=name))

    def set_transcript(self, voice: Voice, transcript: str) -> Voice:
        """Set the words spoken in the voice's (trimmed) audio; enables continuation mode."""
        return self._save(replace(self.get(voice.id), transcript=transcript.strip()))

    def trim(self, voice: Voice, start: float, end: float | None) -> Voice:
        """Use only ``start``–``end`` seconds of the stored audio (``end=None``: to its end).
        The range is absolute, not relative to an earlier trim."""
        current = self.get(voice.id)
        stop = current.raw_duration if end is None else end
        if not (0 <= start < stop <= current.raw_duration + 1e-6):
            raise VoxDeskError(
                f"The trim range {start:.2f}–{stop:.2f} s is outside the recording "
                f"(0–{current.raw_duration:.2f} s). Pick a range inside it."
            )
        if stop - start < MIN_SECONDS:
            raise VoxDeskError(f"Keep at least {MIN_SECONDS} seconds of audio when trimming.")
        trimmed = replace(current, trim_start=float(start), trim_end=None if end is None else float(stop))
        return self._save(trimmed)

    def normalise(self, voice: Voice, peak_dbfs: float = NORMALISE_PEAK_DBFS) -> Voice:
        """Set the gain so the trimmed audio peaks at ``peak_dbfs`` (default -1 dBFS)."""
        current = replace(self.get(voice.id), gain_db=0.0)
        peak = float(np.max(np.abs(self.audio(current)), initial=0.0))
        if peak <= 1e-6:
            raise VoxDeskError(
                "This voice's audio is silent, so it cannot be normalised. Trim it or record again."
            )
        gain = peak_dbfs - 20 * math.log10(peak)
        return self._save(replace(current, gain_db=round(gain, 4), normalised=True))

    def set_preparation(self, voice: Voice, **changes: Any) -> Voice:
        """Set trim and gain fields as given (``trim_start``, ``trim_end``, ``gain_db``,
        ``normalised``): how app/voices/prepare.py applies and undoes its steps."""
        allowed = {"trim_start", "trim_end", "gain_db", "normalised"}
        if not set(changes) <= allowed:
            raise TypeError(f"set_preparation() takes only {sorted(allowed)}")
        return self._save(replace(self.get(voice.id), **changes))

    def reset_gain(self, voice: Voice) -> Voice:
        """Undo normalising."""
        return self._save(replace(self.get(voice.id), gain_db=0.0, normalised=False))

    def delete(self, voice: Voice) -> None:
        """Remove the voice and its cached latents (the UI asks for confirmation first)."""
        folder = self.folder(voice)
        graveyard = self.root / f".deleted-{voice.id}-{uuid.uuid4().hex[:6]}"
        with contextlib.suppress(FileNotFoundError):
            folder.rename(graveyard)  # one atomic step: the voice vanishes from listings at once
        shutil.rmtree(graveyard, ignore_errors=True)


def _too_long(seconds: float, limit: float) -> VoxDeskError:
    return VoxDeskError(
        f"That audio is {seconds:.0f} s long; a voice sample can be at most {limit:.0f} s. "
        "Cut it to a shorter clip (10–20 s of clear speech works best)."
    )
