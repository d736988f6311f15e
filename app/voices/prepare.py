"""One-click preparation of a voice's reference recording, each step undoable.

The stored recording is never changed: trimming and gain are metadata on the :class:`Voice`
(see library.py), so undoing a step is restoring the previous :class:`Edit`. :class:`EditHistory`
keeps those per voice for the session.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.audio.prepare import loudness_gain_db, speech_bounds
from app.errors import VoxDeskError
from app.voices.library import MIN_SECONDS, RECOMMENDED_SECONDS, Voice, VoiceLibrary


@dataclass(frozen=True)
class Edit:
    """The part of a voice that preparation changes."""

    trim_start: float
    trim_end: float | None
    gain_db: float
    normalised: bool

    @classmethod
    def of(cls, voice: Voice) -> Edit:
        return cls(voice.trim_start, voice.trim_end, voice.gain_db, voice.normalised)


def restore(library: VoiceLibrary, voice: Voice, edit: Edit) -> Voice:
    """Put a voice's trim and gain back as ``edit`` recorded them."""
    return library.set_preparation(
        voice,
        trim_start=edit.trim_start,
        trim_end=edit.trim_end,
        gain_db=edit.gain_db,
        normalised=edit.normalised,
    )


def trim_silence(library: VoiceLibrary, voice: Voice) -> Voice:
    """Trim the silence before the first and after the last speech in the part in use."""
    current = library.get(voice.id)
    rate = current.sample_rate
    bounds = speech_bounds(library.audio(current), rate)
    if bounds is None:
        raise VoxDeskError("No speech was found in this recording, so there is no silence to trim.")
    start = current.trim_start + bounds[0] / rate
    end = current.trim_start + bounds[1] / rate
    if end - start < MIN_SECONDS:
        end = min(current.raw_duration, start + MIN_SECONDS)
        start = max(0.0, end - MIN_SECONDS)
    stop = None if end >= current.raw_duration - 1e-6 else end
    if abs(start - current.trim_start) < 1e-6 and stop == current.trim_end:
        raise VoxDeskError("There is no silence to trim at the start or end of this recording.")
    return library.trim(current, start, stop)


def normalise_loudness(library: VoiceLibrary, voice: Voice) -> Voice:
    """Set the gain so the speech sits at a standard level (peaks kept below clipping)."""
    current = replace(library.get(voice.id), gain_db=0.0)
    gain = loudness_gain_db(library.audio(current), current.sample_rate)
    if gain is None:
        raise VoxDeskError(
            "This recording is silent, so its loudness cannot be set. Trim it or record again."
        )
    return library.set_preparation(current, gain_db=round(gain, 4), normalised=True)


def too_long(voice: Voice) -> bool:
    """The part in use is longer than the model benefits from (warned about, never refused)."""
    return voice.duration > RECOMMENDED_SECONDS[1]


class EditHistory:
    """Undo for preparation steps: the edits each voice had before each step, newest last."""

    def __init__(self) -> None:
        self._undo: dict[str, list[Edit]] = {}

    def record(self, before: Voice, after: Voice) -> None:
        """Remember ``before``'s state when a step changed it into ``after``."""
        if Edit.of(before) != Edit.of(after):
            self._undo.setdefault(before.id, []).append(Edit.of(before))

    def can_undo(self, voice: Voice | None) -> bool:
        return voice is not None and bool(self._undo.get(voice.id))

    def undo(self, library: VoiceLibrary, voice: Voice) -> Voice:
        """Restore the state before the last step on this voice."""
        stack = self._undo.get(voice.id)
        if not stack:
            raise VoxDeskError("There is nothing to undo for this voice.")
        restored = restore(library, voice, stack[-1])
        stack.pop()
        return restored

    def forget(self, voice_id: str) -> None:
        self._undo.pop(voice_id, None)
