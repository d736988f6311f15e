"""The recognizer interface every VoxDesk face uses (window, CLI, back-check), free of Qt.

:class:`Recognizer` owns what is common to any engine: resampling to the model's rate, refusing
silence, cutting long audio into pieces at quiet points, progress and cancel between pieces, and
turning an engine failure into one plain line. An engine subclass implements only
:meth:`Recognizer._decode` for one piece of at most :attr:`Recognizer.max_piece_s` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.errors import VoxDeskError

# Language codes accepted by ``transcribe(language=...)``; "auto" lets the model decide.
LANGUAGE_NAMES = {
    "auto": "automatic",
    "zh": "Chinese",
    "en": "English",
    "ja": "Japanese",
    "ko": "Korean",
    "yue": "Cantonese",
}

SILENCE_RMS = 10 ** (-50 / 20)  # loudest 30 ms frame below -50 dBFS: nothing to hear


class RecognizerError(VoxDeskError):
    """Recognition failed; ``str()`` is one line for the user. Synthesis is unaffected."""


class RecognizerUnavailable(RecognizerError):
    """No usable recognizer: not installed, the package missing, or its model damaged."""


class NoSpeechError(RecognizerError):
    """The audio holds no speech the recognizer could hear."""


class TranscriptionCancelled(RecognizerError):
    """``cancel`` was set; nothing was filled in."""


@dataclass(frozen=True)
class Transcript:
    text: str  # what was heard, with the model's punctuation; never empty
    language: str  # the language heard ("zh", "en", …) or the one asked for; "" when unknown
    audio_seconds: float  # length of the audio
    compute_seconds: float  # wall time spent recognizing

    @property
    def real_time_factor(self) -> float:
        """Audio seconds recognized per second of compute (>1: faster than real time)."""
        return self.audio_seconds / max(self.compute_seconds, 1e-9)


class Recognizer:
    """Speech to text, local. Thread-safe: one transcription runs at a time per recognizer.

    Usage (see :func:`app.asr.load_recognizer` for getting one)::

        t = recognizer.transcribe(audio, sample_rate, "auto", progress=cb, cancel=event)
        t.text, t.language

    ``audio`` is mono float32 in [-1, 1] at any ``sample_rate`` (stereo ``[n, channels]`` is
    mixed down). ``language`` is "auto" or one of :attr:`languages`. ``progress(fraction)`` is
    called from the calling thread after each piece; ``cancel`` is checked between pieces.
    Raises :class:`NoSpeechError` for silence or when nothing was recognized,
    :class:`TranscriptionCancelled`, or :class:`RecognizerError` when the engine fails.
    """

    name = "recognizer"
    sample_rate = 16000
    languages: tuple[str, ...] = ("auto",)
    max_piece_s = 25.0

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def supports(self, language: str) -> bool:
        return language in self.languages

    def transcribe(
        self,
        audio: np.ndarray,
        sample_rate: int,
        language: str = "auto",
        progress: Callable[[float], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Transcript:
        language = (language or "auto").strip().lower()
        if not self.supports(language):
            known = ", ".join(lang for lang in self.languages if lang != "auto")
            raise RecognizerError(
                f"The speech recognizer ({self.name}) does not know the language “{language}”; "
                f"it knows {known}, or use auto."
            )
        samples = self._prepare(audio, sample_rate)
        seconds = len(samples) / self.sample_rate
        if seconds < 0.1 or _loudest_rms(samples, self.sample_rate) < SILENCE_RMS:
            raise NoSpeechError("The recording is silent: there is no speech to recognize.")
        pieces = split_at_quiet_points(samples, self.sample_rate, self.max_piece_s)
        started = time.monotonic()
        texts, heard = [], []
        with self._lock:
            for i, piece in enumerate(pieces):
                if cancel is not None and cancel.is_set():
                    raise TranscriptionCancelled("Speech recognition was cancelled.")
                try:
                    text, lang = self._decode(piece, language)
                except RecognizerError:
                    raise
                except Exception as exc:  # noqa: BLE001 - an engine failure becomes one line
                    raise RecognizerError(
                        f"The speech recognizer failed ({exc.__class__.__name__}: {_first_line(exc)})."
                    ) from exc
                if text:
                    texts.append(text)
                if lang:
                    heard.append(lang)
                if progress is not None:
                    progress((i + 1) / len(pieces))
        text = _join(texts)
        if not text:
            raise NoSpeechError("No speech was heard in this recording.")
        found = max(set(heard), key=heard.count) if heard else ""
        return Transcript(text, found or ("" if language == "auto" else language), seconds,
                          time.monotonic() - started)  # fmt: skip

    def _decode(self, samples: np.ndarray, language: str) -> tuple[str, str]:
        """(text, language heard) of one piece of mono float32 at :attr:`sample_rate`."""
        raise NotImplementedError

    def _prepare(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        a = np.asarray(audio)
        if a.ndim == 2:
            a = a.mean(axis=1) if a.shape[1] <= 8 else a.mean(axis=0)
        if a.ndim != 1 or sample_rate <= 0:
            raise RecognizerError("The recognizer was given something that is not mono or stereo audio.")
        a = np.nan_to_num(a.astype(np.float32, copy=False), nan=0.0, posinf=0.0, neginf=0.0)
        if sample_rate != self.sample_rate and len(a):
            import soxr

            a = soxr.resample(a, sample_rate, self.sample_rate).astype(np.float32, copy=False)
        return np.clip(a, -1.0, 1.0)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "no details"


def _join(texts: list[str]) -> str:
    out = ""
    for t in texts:
        t = t.strip()
        if out and t and out[-1].isascii() and t[0].isascii():
            out += " "
        out += t
    return out


def _frame_rms(samples: np.ndarray, sample_rate: int, frame_s: float = 0.03) -> np.ndarray:
    n = max(1, int(frame_s * sample_rate))
    usable = len(samples) // n * n
    if usable == 0:
        return np.sqrt(np.mean(np.square(samples), keepdims=True)) if len(samples) else np.zeros(1)
    frames = samples[:usable].reshape(-1, n)
    return np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=1))


def _loudest_rms(samples: np.ndarray, sample_rate: int) -> float:
    return float(_frame_rms(samples, sample_rate).max())


def split_at_quiet_points(samples: np.ndarray, sample_rate: int, max_s: float) -> list[np.ndarray]:
    """Pieces of at most ``max_s`` seconds, each cut at the quietest 30 ms of its last fifth."""
    limit = int(max_s * sample_rate)
    pieces, start = [], 0
    frame = int(0.03 * sample_rate)
    while len(samples) - start > limit:
        window = samples[start + limit * 4 // 5 : start + limit]
        rms = _frame_rms(window, sample_rate)
        cut = start + limit * 4 // 5 + int(np.argmin(rms)) * frame + frame // 2
        pieces.append(samples[start:cut])
        start = cut
    pieces.append(samples[start:])
    return pieces
