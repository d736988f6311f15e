"""Subtitle cues spoken inside their time slots, through any :class:`app.backends.SpeechBackend`.

Every speakable cue is submitted at once (the engine batches them). When a take comes back it is
measured against its slot (and, with a back-check worker, heard: app/backcheck): a take that
overruns (or is misheard) is drawn again with a new seed (:func:`app.backcheck.takes.take_seed`),
up to ``DubSettings.takes`` takes per cue, the first included (default 3), and the take closest
to the slot is kept (a well-heard one first). The kept take is then fitted (:func:`fit`): sped
up by at most ``max_rate_change`` (default 25 %) with :func:`app.audio.stretch.change_rate`; what
still does not fit is reported as an overrun, never hidden. A take shorter than its slot is left
as it is (placed at the cue's start) unless ``stretch_short`` asks to slow it towards the slot.

:func:`dub` runs on the caller's thread (a worker thread in the window), takes a ``cancel``
event, and reports :class:`DubProgress` with an ETA from the audio made per second so far.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from app.backcheck.score import Score
from app.backcheck.takes import CheckPolicy, take_seed
from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.request import EmotionControl, SynthRequest
from app.errors import VoxDeskError
from app.longform.subtitles import Cue
from app.voices.emotion import EmotionSpec

DEFAULT_MAX_RATE_CHANGE = 0.25
MAX_RATE_CHANGE_LIMIT = 0.5  # change_rate's range is 0.5x-2.0x
DEFAULT_TAKES = 3
MAX_TAKES = 10
TOLERANCE_S = 1e-4  # a take within a tenth of a millisecond of its slot fits (rounding)
REPORT_EVERY_S = 0.5  # progress (and its ETA) at least this often while takes stream


@dataclass(frozen=True)
class DubSettings:
    """How cues are spoken and fitted; invalid values raise :class:`VoxDeskError`."""

    max_rate_change: float = DEFAULT_MAX_RATE_CHANGE  # 0.25: from 0.75x to 1.25x
    takes: int = DEFAULT_TAKES  # most takes per cue, the first included
    seed: int | None = None  # the first take's seed of every cue; None: a new one per cue
    cfg_value: float = 2.0
    inference_timesteps: int = 10
    stretch_short: bool = False  # slow a short take towards its slot (within the bound)
    normalize: bool = False
    min_len: int = 2  # patches, as SynthRequest
    max_len: int = 4096

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_rate_change <= MAX_RATE_CHANGE_LIMIT:
            raise VoxDeskError(
                f"The rate change must be between 0 and {MAX_RATE_CHANGE_LIMIT} "
                f"(0.25 = up to 25 % faster), got {self.max_rate_change}."
            )
        if not 1 <= self.takes <= MAX_TAKES:
            raise VoxDeskError(f"Takes per cue must be between 1 and {MAX_TAKES}, got {self.takes}.")


@dataclass
class CueResult:
    """What became of one cue. ``status``: "pending", "fit", "overrun", "silent" (nothing to
    say), "failed" (``message`` says why) or "cancelled". ``audio`` is the fitted take."""

    cue: Cue
    status: str = "pending"
    audio: np.ndarray | None = field(default=None, repr=False)
    seed: int | None = None
    takes: list[float] = field(default_factory=list)  # each take's length in seconds, in order
    rate: float = 1.0  # the speed-up applied (<1: slowed down)
    spoken: float = 0.0  # seconds of the fitted take
    overrun: float = 0.0  # seconds past the slot's end after fitting
    score: Score | None = None  # the back-check's score of the kept take
    flagged: bool = False  # the back-check scored it above its threshold
    message: str = ""

    @property
    def spoken_end(self) -> float:
        return self.cue.start + self.spoken


@dataclass(frozen=True)
class DubProgress:
    done: int  # cues decided (fitted, failed or silent)
    total: int
    eta: float | None  # seconds; None until a first take has been measured


def fit(
    audio: np.ndarray, sample_rate: int, slot: float, max_rate_change: float, stretch_short: bool = False
) -> tuple[np.ndarray, float, float]:
    """(fitted audio, rate used, overrun in seconds) of one take in a ``slot`` of seconds."""
    from app.audio.stretch import change_rate

    length = len(audio) / sample_rate
    if length > slot + TOLERANCE_S:
        rate = min(length / slot, 1.0 + max_rate_change)
    elif stretch_short and length < slot - TOLERANCE_S and length > 0:
        rate = max(length / slot, 1.0 - max_rate_change)
    else:
        return audio, 1.0, 0.0
    out = change_rate(audio, sample_rate, rate) if rate != 1.0 else audio
    limit = int(round(slot * sample_rate))
    if len(out) <= limit + TOLERANCE_S * sample_rate:
        out = out[:limit]
    overrun = max(0.0, len(out) / sample_rate - slot)
    return out, rate, overrun if overrun > TOLERANCE_S else 0.0


@dataclass
class _Open:
    result: CueResult
    request: SynthRequest
    first_seed: int | None = None
    kept: list[tuple[np.ndarray, int, float, Score | None, bool]] = field(default_factory=list)


def dub(
    backend: Any,
    cues: Sequence[Cue],
    prompt_for: Callable[[str | None], Any],
    sample_rate: int,
    settings: DubSettings = DubSettings(),  # noqa: B008 - frozen
    *,
    checker: Any = None,
    policy: CheckPolicy | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[DubProgress], None] | None = None,
    on_result: Callable[[int, CueResult], None] | None = None,
    emotion_for: Callable[[EmotionSpec], EmotionControl | None] | None = None,
) -> list[CueResult]:
    """Speak and fit every cue; returns one :class:`CueResult` per cue, in order.

    ``prompt_for(voice)`` gives the VoicePrompt of a cue's voice (None: the default voice) or
    raises VoxDeskError (that cue fails with its message). ``checker`` is a
    :class:`app.backcheck.worker.CheckWorker` (or None) judged by ``policy``. ``on_result(i, r)``
    is called as each cue is decided. ``emotion_for(spec)`` gives the request's emotion of a cue's
    ``[Voice|emotion]`` (None, or no ``emotion_for``: a backend whose model has no emotions
    speaks without) or raises VoxDeskError (that cue fails with its message). A cancelled run
    returns what was decided, the rest "cancelled"."""
    return _Run(backend, cues, prompt_for, sample_rate, settings, checker, policy or CheckPolicy(),
                cancel or threading.Event(), progress, on_result, emotion_for).run()  # fmt: skip


class _Run:
    def __init__(self, backend, cues, prompt_for, sample_rate, settings, checker, policy, cancel,
                 progress, on_result, emotion_for) -> None:  # fmt: skip
        self.backend, self.rate, self.settings = backend, int(sample_rate), settings
        self.checker, self.policy, self.cancel = checker, policy, cancel
        self.progress, self.on_result = progress, on_result
        self.results = [CueResult(c) for c in cues]
        self.prompt_for = prompt_for
        self.emotion_for = emotion_for
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.open: dict[int, _Open] = {}
        self.keys = itertools.count()
        self.live: dict[int, tuple[int, int]] = {}  # our key -> (cue index, take)
        self.handles: dict[int, int] = {}  # our key -> the backend's handle
        self.chunks: dict[int, list[np.ndarray]] = {}
        self.started = time.monotonic()
        self.made_s = 0.0  # seconds of audio generated, every take counted
        self.takes_made = 0
        self.done = 0
        self.reported = 0.0

    # ---- the loop ---------------------------------------------------------------------------
    def run(self) -> list[CueResult]:
        if self.checker is not None:
            self.checker.on_result = lambda r: self.inbox.put(("check", r))
        prompts: dict[str | None, Any] = {}
        emotions: dict[EmotionSpec, Any] = {}
        for i, result in enumerate(self.results):
            cue = result.cue
            if not cue.speakable:
                self._decide(i, "silent")
                continue
            key = cue.voice.casefold() if cue.voice else None
            try:
                if key not in prompts:
                    prompts[key] = self.prompt_for(cue.voice)
            except VoxDeskError as exc:
                prompts[key] = exc
            emotion = self._emotion(cue.emotion, emotions)
            failure = next((v for v in (prompts[key], emotion) if isinstance(v, VoxDeskError)), None)
            if failure is not None:
                result.message = str(failure)
                self._decide(i, "failed")
                continue
            s = self.settings
            request = SynthRequest(cue.text, prompts[key], s.seed, s.cfg_value, s.inference_timesteps,
                                   s.min_len, s.max_len, normalize=s.normalize, emotion=emotion)  # fmt: skip
            self.open[i] = _Open(result, request)
            self._submit(i, 1, request)
        self._report()
        while self.open:
            if self.cancel.is_set():
                self._stop()
                break
            if time.monotonic() - self.reported > REPORT_EVERY_S:
                self._report()
            try:
                item = self.inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if item[0] == "check":
                self._heard(item[1])
            else:
                self._event(*item[1:])
        return self.results

    def _emotion(self, spec: EmotionSpec, known: dict[EmotionSpec, Any]) -> Any:
        """A cue's emotion control (or the error that it has none), made once per distinct
        emotion, so a recording is read once."""
        if self.emotion_for is None or spec.is_none():
            return None
        if spec not in known:
            try:
                known[spec] = self.emotion_for(spec)
            except VoxDeskError as exc:
                known[spec] = exc
        return known[spec]

    def _submit(self, index: int, take: int, request: SynthRequest) -> None:
        # events may arrive before submit returns the backend's handle: they carry a key of ours
        key = next(self.keys)
        self.live[key] = (index, take)
        self.chunks[key] = []
        self.handles[key] = self.backend.submit(request, lambda ev: self.inbox.put(("event", key, ev)))

    def _event(self, key: int, ev: Any) -> None:
        where = self.live.get(key)
        if where is None:
            return
        index, take = where
        if isinstance(ev, AudioChunk):
            self.chunks[key].append(ev.samples)
            self.made_s += len(ev.samples) / self.rate
            return
        if isinstance(ev, RequestRetried):  # the engine's own bad-case retry: a new draw
            self.chunks[key] = []
            return
        del self.live[key]
        self.handles.pop(key, None)
        parts = self.chunks.pop(key)
        state = self.open[index]
        if isinstance(ev, RequestFailed):
            if not state.kept:
                state.result.message = ev.message
                self._decide(index, "failed")
            else:
                self._keep_best(index)
            return
        assert isinstance(ev, RequestFinished)
        self.takes_made += 1
        audio = np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)
        if take == 1:  # a server that does not say its seed (-1): the redraws get seeds of their own
            state.first_seed = (
                ev.seed if ev.seed >= 0 else int(np.random.default_rng().integers(0, 2**31 - 1))
            )
        state.kept.append((audio, ev.seed, len(audio) / self.rate, None, False))
        if self.checker is not None and not self.checker.error:
            self.checker.submit((index, take), audio, self.rate, state.request.text)  # judged when heard
        else:
            self._judge(index, take)

    def _heard(self, check: Any) -> None:
        index, take = check.key
        state = self.open.get(index)
        if state is None:
            return
        audio, seed, seconds, _s, _f = state.kept[take - 1]
        state.kept[take - 1] = (audio, seed, seconds, check.score, self.policy.flagged(check.score))
        self._judge(index, take)

    def _judge(self, index: int, take: int) -> None:
        """Draw again while the take overruns (or is misheard) and takes are left; else keep the best."""
        state = self.open[index]
        _audio, _seed, seconds, _score, flagged = state.kept[take - 1]
        good = seconds <= state.result.cue.slot + TOLERANCE_S and not flagged
        if not good and take < self.settings.takes and not self.cancel.is_set():
            seed = take_seed(state.first_seed or 0, take + 1)
            self._submit(index, take + 1, replace(state.request, seed=seed))
            return
        self._keep_best(index)

    def _keep_best(self, index: int) -> None:
        state = self.open[index]
        slot = state.result.cue.slot
        best = min(
            range(len(state.kept)), key=lambda k: (state.kept[k][4], max(0.0, state.kept[k][2] - slot), k)
        )
        audio, seed, _seconds, score, flagged = state.kept[best]
        r = state.result
        r.takes = [k[2] for k in state.kept]
        r.seed, r.score, r.flagged = seed, score, flagged
        s = self.settings
        r.audio, r.rate, r.overrun = fit(audio, self.rate, slot, s.max_rate_change, s.stretch_short)
        r.spoken = len(r.audio) / self.rate
        self._decide(index, "overrun" if r.overrun > 0 else "fit")

    def _decide(self, index: int, status: str) -> None:
        self.results[index].status = status
        self.open.pop(index, None)
        self.done += 1
        if self.on_result is not None:
            self.on_result(index, self.results[index])
        self._report()

    def _stop(self) -> None:
        """Cancel what is being made; a cue with a take already made keeps its best one."""
        for key in list(self.live):
            self.backend.cancel(self.handles[key])
        self.live.clear()
        for index, state in list(self.open.items()):
            if state.kept:
                self._keep_best(index)
                continue
            state.result.status = "cancelled"
            self.open.pop(index)
            if self.on_result is not None:
                self.on_result(index, state.result)

    # ---- progress ----------------------------------------------------------------------------
    def _report(self) -> None:
        self.reported = time.monotonic()
        if self.progress is not None:
            self.progress(DubProgress(self.done, len(self.results), self._eta()))

    def _eta(self) -> float | None:
        """Seconds left: the audio still to make (the open cues' slots, times the takes per cue
        measured so far, less what is already streaming) over the audio made per second."""
        elapsed = time.monotonic() - self.started
        if not self.takes_made or self.made_s <= 0 or elapsed <= 0:
            return None
        decided = max(1, sum(1 for r in self.results if r.takes))
        takes_per_cue = max(1.0, self.takes_made / decided)
        todo = sum(s.result.cue.slot for s in self.open.values()) * takes_per_cue
        streaming = sum(len(c) for parts in self.chunks.values() for c in parts) / self.rate
        return max(0.0, todo - streaming) / (self.made_s / elapsed)
