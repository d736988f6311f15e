"""Local speech recognition (optional): reference transcripts and the back-check.

The interface, free of Qt (the window, the CLI and the back-check all use it)::

    from app.asr import load_recognizer, Transcript, RecognizerError, NoSpeechError

    rec = load_recognizer()             # the installed recognizer; RecognizerUnavailable if none
    rec = load_recognizer(folder)       # or a given model folder
    t: Transcript = rec.transcribe(audio, sample_rate, language="auto",
                                   progress=lambda fraction: ..., cancel=threading.Event())
    t.text                              # "今天天气不错。" — with punctuation, never empty
    t.language                          # "zh" (heard) — "" when unknown
    t.audio_seconds, t.compute_seconds, t.real_time_factor

- ``audio``: mono (or ``[n, channels]``) float samples in [-1, 1] at any ``sample_rate``;
  resampled to 16 kHz inside. Long audio is cut at quiet points into pieces of at most 25 s;
  ``progress`` is called after each piece, ``cancel`` checked before each.
- ``language``: "auto" or one of ``rec.languages`` (SenseVoice: zh, en, ja, ko, yue);
  ``rec.supports(code)`` tells. Another code raises RecognizerError.
- Thread-safe; one call runs at a time per recognizer (a lock). Load once, reuse: loading
  takes about a second for the real model.
- Errors are :class:`RecognizerError` subclasses with a one-line ``str()`` (they are
  :class:`app.errors.VoxDeskError`): :class:`RecognizerUnavailable` (none installed, package
  missing, model damaged or incomplete), :class:`NoSpeechError` (silence, nothing heard),
  :class:`TranscriptionCancelled`, and RecognizerError itself for a failure mid-run.

Nothing here downloads anything; :mod:`app.asr.catalog` fetches a model when the user asks.
Tests build a tiny recognizer in the real SenseVoice format: ``tests/tiny_asr.py``.
"""

from __future__ import annotations

from pathlib import Path

from app.asr.base import (
    LANGUAGE_NAMES,
    NoSpeechError,
    Recognizer,
    RecognizerError,
    RecognizerUnavailable,
    Transcript,
    TranscriptionCancelled,
)

__all__ = [
    "LANGUAGE_NAMES",
    "NoSpeechError",
    "Recognizer",
    "RecognizerError",
    "RecognizerUnavailable",
    "Transcript",
    "TranscriptionCancelled",
    "load_recognizer",
]

NOT_INSTALLED = (
    "No speech recognizer is installed. Download one in the model manager (Models… → "
    "Speech recognition) to fill transcripts and check what was spoken."
)


def load_recognizer(folder: str | Path | None = None, num_threads: int | None = None) -> Recognizer:
    """The recognizer in ``folder`` (default: the one downloaded from the model manager)."""
    from app.asr.catalog import find_recognizer
    from app.asr.sensevoice import SenseVoiceRecognizer

    found = Path(folder) if folder else find_recognizer()
    if found is None:
        raise RecognizerUnavailable(NOT_INSTALLED)
    if not found.exists():
        raise RecognizerUnavailable(f"There is no speech recognizer at {found}.")
    return SenseVoiceRecognizer(found, num_threads)
