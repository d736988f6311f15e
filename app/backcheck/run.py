"""Synthesis with a back-check, through the engine: the loop ``voxdesk synth --check`` (and the
back-check benchmark) runs.

All texts go into the engine at once. A finished take goes to the :class:`CheckWorker` and the
engine steps on while it is recognized; a take scored above the threshold is drawn again with a
new seed (:func:`take_seed`) until the policy is satisfied, and the best take is kept. With no
worker, or after the recognizer failed, a take is kept unchecked.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from app.backcheck.takes import CheckPolicy, Take, Takes, take_seed
from app.backcheck.worker import CheckResult, CheckWorker
from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.request import SynthRequest
from app.errors import VoxDeskError


@dataclass
class Checked:
    """One text's outcome: the kept take's audio and seed, and every take's score."""

    index: int
    audio: np.ndarray = field(repr=False)
    seed: int
    n_patches: int
    takes: Takes
    error: str = ""  # why it was not checked (the recognizer failed), or ""

    @property
    def score(self):
        return self.takes.best().score


@dataclass
class _Segment:
    request: SynthRequest
    takes: Takes = field(default_factory=Takes)
    first_seed: int | None = None
    best: tuple[np.ndarray, int, int] | None = None  # audio, seed, patches of the best take so far
    error: str = ""


def synth_checked(
    engine, requests: Sequence[SynthRequest], worker: CheckWorker | None, policy: CheckPolicy
) -> Iterator[Checked]:
    """Yield each text's :class:`Checked` as soon as its last take is decided (not in order).
    A text whose first take fails raises :class:`VoxDeskError` naming its line; a later take
    that fails just ends that text's takes."""
    segs = [_Segment(r) for r in requests]
    live: dict[int, tuple[int, int]] = {}  # engine request id -> (segment index, take number)
    chunks: dict[int, list[np.ndarray]] = {}
    held: dict[tuple[int, int], tuple[np.ndarray, int, int]] = {}  # takes being recognized
    open_ = set(range(len(segs)))

    def submit(index: int, take: int, request: SynthRequest) -> None:
        rid = engine.submit(request)
        live[rid] = (index, take)
        chunks[rid] = []

    def decide(index: int, take: int, audio, seed: int, patches: int, result: CheckResult | None):
        seg = segs[index]
        seg.takes.add(Take(seed, result.score if result else None))
        if result is not None and result.error:
            seg.error = result.error
        if seg.takes.best_index() == len(seg.takes) - 1:
            seg.best = (audio, seed, patches)
        if worker is not None and not worker.error and seg.takes.wants_another(policy):
            submit(index, take + 1, replace(seg.request, seed=take_seed(seg.first_seed, take + 1)))
            return None
        open_.discard(index)
        audio, seed, patches = seg.best
        return Checked(index, audio, seed, patches, seg.takes, seg.error)

    for i, seg in enumerate(segs):
        submit(i, 1, seg.request)
    while open_:
        finished = []
        if engine.has_work():
            for ev in engine.step():
                where = live.get(ev.request_id)
                if where is None:
                    continue
                if isinstance(ev, AudioChunk):
                    chunks[ev.request_id].append(ev.samples)
                    continue
                if isinstance(ev, RequestRetried):  # the engine's bad-case retry: a new draw
                    chunks[ev.request_id] = []
                    continue
                del live[ev.request_id]
                parts = chunks.pop(ev.request_id)
                index, take = where
                if isinstance(ev, RequestFailed):
                    if take == 1:
                        raise VoxDeskError(f"Line {index + 1}: {ev.message}")
                    open_.discard(index)  # keep the best take made so far
                    audio, seed, patches = segs[index].best
                    finished.append(
                        Checked(index, audio, seed, patches, segs[index].takes, segs[index].error)
                    )
                    continue
                assert isinstance(ev, RequestFinished)
                audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
                if take == 1:
                    segs[index].first_seed = ev.seed
                if worker is None or worker.error:
                    finished.append(decide(index, take, audio, ev.seed, ev.n_patches, None))
                else:
                    held[(index, take)] = (audio, ev.seed, ev.n_patches)
                    worker.submit((index, take), audio, engine.sample_rate, segs[index].request.text)
        results = []
        if worker is not None:
            if not engine.has_work() and held:
                results.append(worker.results.get())  # nothing to generate: wait for the recognizer
            while True:
                try:
                    results.append(worker.results.get_nowait())
                except queue.Empty:
                    break
        for result in results:
            index, take = result.key
            audio, seed, patches = held.pop((index, take))
            finished.append(decide(index, take, audio, seed, patches, result))
        yield from (c for c in finished if c is not None)
