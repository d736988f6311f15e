"""Speech recognition of finished segments on a thread of its own, beside synthesis.

The engine (or its QThread in the window) never waits for recognition: finished audio is handed
to :meth:`CheckWorker.submit`, which returns at once; one worker thread transcribes and scores the
items in order and delivers each :class:`CheckResult` to ``on_result`` (called on the worker
thread) and to :attr:`CheckWorker.results` (a queue, for loops that poll).

A take in which nothing is heard (:class:`app.asr.NoSpeechError`) scores 1.0: it is as bad as
a take can be. Any other failure of the recognizer stops checking for the rest of the run: that
item and every later one come back with ``score=None`` and the same one-line
:attr:`CheckWorker.error`, and synthesis goes on unchecked.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from app.backcheck.score import Score, guess_language, score, spoken_text
from app.errors import VoxDeskError

log = logging.getLogger(__name__)


class Recognizer(Protocol):
    """What the back-check needs of :class:`app.asr.Recognizer`: the :class:`app.asr.Transcript`
    heard in mono float32 ``audio`` at ``sample_rate``; ``language`` is a code or "auto"."""

    def supports(self, language: str) -> bool: ...

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str = "auto") -> Any: ...


@dataclass(frozen=True)
class CheckResult:
    key: Hashable  # the caller's: which segment and take
    score: Score | None
    error: str = ""


class CheckWorker:
    """One recognition thread; ``submit`` never blocks. ``recognizer`` may be a function that
    loads one: it is then called on the worker thread before the first item (loading a real model
    takes about a second), and a failure to load stops checking like a failure to recognize."""

    def __init__(
        self,
        recognizer: Recognizer | Callable[[], Recognizer],
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> None:
        loaded = hasattr(recognizer, "transcribe")
        self.recognizer: Recognizer | None = recognizer if loaded else None  # type: ignore[assignment]
        self._load = None if loaded else recognizer
        self.on_result = on_result
        self.results: queue.SimpleQueue[CheckResult] = queue.SimpleQueue()
        self.error = ""
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._pending = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="voxdesk-backcheck", daemon=True)
        self._thread.start()

    def submit(self, key: Hashable, audio: np.ndarray, sample_rate: int, text: str) -> None:
        """Queue one take: ``text`` is what the model was asked to say (a voice-design prefix is
        dropped before scoring)."""
        with self._lock:
            self._pending += 1
        self._inbox.put((key, np.asarray(audio, np.float32), int(sample_rate), text))

    def pending(self) -> int:
        """Items submitted whose result has not been delivered yet."""
        with self._lock:
            return self._pending

    def close(self) -> None:
        """Stop after the items already queued (does not wait for them)."""
        self._inbox.put(None)

    def _run(self) -> None:
        while True:
            item = self._inbox.get()
            if item is None:
                return
            key, audio, rate, text = item
            result = self._check(key, audio, rate, text)
            with self._lock:
                self._pending -= 1
            self.results.put(result)
            if self.on_result is not None:
                try:
                    self.on_result(result)
                except Exception:  # noqa: BLE001 - a receiver's bug must not kill the thread
                    log.exception("back-check result handler failed")

    def _check(self, key: Hashable, audio: np.ndarray, rate: int, text: str) -> CheckResult:
        if self.error:
            return CheckResult(key, None, self.error)
        from app.asr import NoSpeechError

        expected = spoken_text(text)
        language = guess_language(expected)
        try:
            if self.recognizer is None:
                self.recognizer = self._load()
            if not self.recognizer.supports(language):
                language = "auto"
            heard = self.recognizer.transcribe(audio, rate, language).text
        except NoSpeechError:
            heard = ""
        except Exception as exc:  # noqa: BLE001 - any failure of the recognizer: one line, stop checking
            log.exception("speech recognition failed")
            if isinstance(exc, VoxDeskError):
                reason = str(exc).rstrip(".")
            else:
                reason = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
            self.error = f"The back-check stopped ({reason}); the remaining segments are made without it."
            return CheckResult(key, None, self.error)
        return CheckResult(key, score(expected, heard))
