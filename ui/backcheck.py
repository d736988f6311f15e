"""The back-check in the window: finished segments are heard and scored beside synthesis, and
flagged ones are drawn again with new seeds (see app/backcheck/).

A :class:`CheckWorker` hears the takes on a thread of its own (its recognizer is loaded there, on
the first take); a feeder thread hands it each take with the text the model was given (read from
the cache, normalized in the normalizer's child, when need be), and results come back to the GUI
thread through a queued signal. A new take is an ordinary engine job with a tag the
:class:`SpeakSession` does not know, so the segment keeps its audio (and playback is untouched)
until the new take has been heard and scored better than the kept one; then it becomes the
segment's audio (:meth:`SpeakSession.replace_take`: cache and export) and a pinned seed follows
it. A recognizer that fails stops checking until the next run, with one line in the status bar.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QSizePolicy

from app import project as projects
from app.backcheck.score import Score
from app.backcheck.takes import CheckPolicy, Take, Takes, take_seed
from app.backcheck.worker import CheckResult, CheckWorker
from app.text import normalize
from ui.engine_host import Job
from ui.errors import report
from ui.speak_session import Builder, SegmentAudio, new_tag, read_wav
from ui.views.segment_table import CheckCell

if TYPE_CHECKING:
    from ui.main_window import MainWindow

NORMALIZE_TIMEOUT_S = 120.0  # as for the model: a first text waits for the grammars to load


@dataclass(eq=False)
class _Check:
    """One segment's takes, for one text and settings (``fingerprint``) of its job ``key``."""

    key: str
    fingerprint: str
    first_seed: int
    limit: int  # most takes to make: auto max_takes; Fix flagged: the takes so far + max_takes - 1
    takes: Takes = field(default_factory=Takes)
    hearing: tuple[int, np.ndarray | None, int] | None = None  # take, its audio (None: take 1), seed
    tag: int | None = None  # the engine job drawing the next take
    chunks: list[np.ndarray] = field(default_factory=list)

    @property
    def busy(self) -> bool:
        return self.hearing is not None or self.tag is not None

    def kept_seed(self) -> int:
        return self.takes.best().seed if self.takes else self.first_seed

    def score(self) -> Score | None:
        """The kept take's score (None: not scored)."""
        return self.takes.best().score if self.takes else None


class BackCheck(QObject):
    """Owns the Check all / Fix flagged / auto actions and every segment's takes."""

    changed = Signal(int)  # a segment's Check cell or takes changed
    _heard = Signal(object)  # CheckResult, from the worker or feeder thread

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self._checks: dict[str, _Check] = {}  # by segment key
        self._by_tag: dict[int, _Check] = {}
        self._worker: CheckWorker | None = None
        self._feeder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voxdesk-check-feed")
        self._available = window.transcriber.available
        self._heard.connect(self._on_heard)
        self.check_all_action = QAction(self.tr("Check all"), window)
        self.check_all_action.triggered.connect(lambda _checked=False: self.check_all())
        self.fix_action = QAction(self.tr("Fix flagged"), window)
        self.fix_action.triggered.connect(lambda _checked=False: self.fix_flagged())
        self.auto_action = QAction(self.tr("Check each segment as it finishes"), window)
        self.auto_action.setCheckable(True)
        self.auto_action.setChecked(window.settings.check_auto)
        self.auto_action.toggled.connect(self._set_auto)
        self.stopped = QLabel()  # status bar: why checking stopped
        self.stopped.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.stopped.hide()
        window.statusBar().addPermanentWidget(self.stopped, 1)
        host = window.client.host
        host.chunk.connect(self._on_chunk)
        host.retried.connect(self._on_retried)
        host.finished.connect(self._on_finished)
        host.failed.connect(self._on_failed)
        window.session.segmentDone.connect(self._segment_done)
        window.session.progressChanged.connect(lambda _fraction, _eta: self.update_actions())
        self.update_actions()

    # --- state ------------------------------------------------------------------------------
    def actions(self) -> list[QAction]:
        return [self.check_all_action, self.fix_action, self.auto_action]

    def auto(self) -> bool:
        return self._available and self.w.settings.check_auto

    def policy(self) -> CheckPolicy:
        return CheckPolicy(self.w.settings.check_threshold, self.w.settings.check_takes)

    def busy(self) -> bool:
        """A take is being heard or drawn."""
        return any(c.busy for c in self._checks.values())

    def cell(self, seg: SegmentAudio) -> tuple[CheckCell, int, int]:
        """The segment's Check cell, takes made and kept take (0: the back-check drew no other)."""
        check = self._current(seg)
        if check is None:
            return CheckCell(), seg.takes, 0
        score = check.score()
        cell = CheckCell(
            score=score.value if score else None,
            flagged=self.policy().flagged(score),
            heard=score.heard if score else "",
            busy=check.busy,
        )
        if len(check.takes) > 1:
            return cell, len(check.takes), check.takes.best_index() + 1
        return cell, seg.takes, 0

    def _current(self, seg: SegmentAudio) -> _Check | None:
        """The segment's takes, when its audio is still the kept one of them."""
        check = self._checks.get(seg.job.key)
        if check is None or seg.status != "done" or seg.tag is not None or seg.seed != check.kept_seed():
            return None
        return check if check.fingerprint == self._fingerprint(seg) else None

    def _fingerprint(self, seg: SegmentAudio) -> str:
        return seg.job.fingerprint(self.w.session.context)

    def _index(self, check: _Check) -> int | None:
        for i, seg in enumerate(self.w.session.segments):
            if seg.job.key == check.key:
                return i if self._current(seg) is check else None
        return None

    def _unscored(self, seg: SegmentAudio) -> bool:
        if seg.status != "done" or seg.tag is not None or seg.seed is None:
            return False
        check = self._current(seg)
        return check is None or (not check.busy and check.score() is None)

    def _flagged(self, seg: SegmentAudio) -> bool:
        check = self._current(seg)
        return check is not None and not check.busy and self.policy().flagged(check.score())

    def update_actions(self) -> None:
        segments = self.w.session.segments
        why = self.tr(
            "Needs a speech recognizer (Tools › Models…): it hears each segment, scores it against "
            "its text and draws the garbled ones again."
        )
        for action, tip in (
            (self.check_all_action, self.tr("Hear and score every finished segment not checked yet.")),
            (self.fix_action, self.tr("Draw the flagged segments again and keep the best take of each.")),
            (self.auto_action, self.tr("Hear each segment as it finishes; draw it again while flagged.")),
        ):
            action.setToolTip(tip if self._available else why)
            action.setStatusTip(action.toolTip())
        self.auto_action.setEnabled(self._available)
        self.check_all_action.setEnabled(self._available and any(map(self._unscored, segments)))
        more = self.w.settings.check_takes > 1
        self.fix_action.setEnabled(self._available and more and any(map(self._flagged, segments)))

    def recognizer_changed(self) -> None:
        """A recognizer was installed or chosen: the next take loads it."""
        self._available = self.w.transcriber.available
        self._close_worker()
        self.update_actions()

    def _set_auto(self, on: bool) -> None:
        self.w.settings.check_auto = on

    # --- commands ---------------------------------------------------------------------------
    def new_run(self) -> None:
        """Speak, Check all or Fix flagged: a recognizer that failed before is loaded again."""
        if self._worker is not None and self._worker.error:
            self._close_worker()
        self.stopped.hide()

    def check_all(self) -> None:
        """Score every finished segment not scored yet; nothing is drawn again."""
        self.new_run()
        for index, seg in enumerate(self.w.session.segments):
            if self._unscored(seg):
                self._start(index, limit=1)
        self.update_actions()

    def fix_flagged(self) -> None:
        """Draw every flagged segment again, up to max_takes - 1 more takes each."""
        if not self.w.can_speak():
            return
        self.new_run()
        build = self.w.job_builder()
        more = self.policy().max_takes - 1
        for index, seg in enumerate(self.w.session.segments):
            if self._flagged(seg):
                check = self._checks[seg.job.key]
                check.limit = len(check.takes) + more
                self._draw(check, index, build)
        self.update_actions()

    def stop(self) -> None:
        """Stop drawing takes; what is being heard is still scored."""
        if self._by_tag:
            self.w.client.cancel(list(self._by_tag))
        for check in self._by_tag.values():
            check.tag, check.chunks = None, []
        self._by_tag.clear()
        for check in self._checks.values():
            check.limit = len(check.takes) + (check.hearing is not None)
        self.refresh()

    def prune(self) -> None:
        """After the script changed: forget (and stop) the takes of segments that are gone."""
        live = {seg.job.key: seg for seg in self.w.session.segments}
        for key, check in list(self._checks.items()):
            seg = live.get(key)
            if seg is None or check.fingerprint != self._fingerprint(seg):
                self._drop(check)

    def close(self) -> None:
        self._close_worker()
        self._feeder.shutdown(wait=False, cancel_futures=True)

    # --- takes ------------------------------------------------------------------------------
    def _segment_done(self, index: int) -> None:
        """A generation of the session finished: its takes start again from this one."""
        seg = self.w.session.segments[index]
        old = self._checks.get(seg.job.key)
        if old is not None:
            self._drop(old)
        stopped = self._worker is not None and bool(self._worker.error)
        if self.auto() and not stopped and seg.seed is not None:
            self._start(index, self.policy().max_takes)

    def _start(self, index: int, limit: int) -> None:
        seg = self.w.session.segments[index]
        check = _Check(seg.job.key, self._fingerprint(seg), int(seg.seed), limit)
        self._checks[check.key] = check
        self._hear(check, 1, seg.samples() if seg.chunks else seg.file, int(seg.seed), seg.job)
        self.changed.emit(index)

    def _hear(
        self, check: _Check, take: int, audio: np.ndarray | Path | None, seed: int, job: projects.SegmentJob
    ) -> None:
        check.hearing = (take, audio if take > 1 else None, seed)
        if self._worker is None:
            from app.asr import load_recognizer

            folder = self.w.transcriber.folder()
            self._worker = CheckWorker(lambda: load_recognizer(folder), self._heard.emit)
        self._feeder.submit(self._feed, self._worker, (check, take), audio, self.w.session.sample_rate, job)

    def _feed(
        self,
        worker: CheckWorker,
        key: tuple[_Check, int],
        audio: np.ndarray | Path | None,
        rate: int,
        job: projects.SegmentJob,
    ) -> None:
        """Feeder thread: the take's audio (read from the cache when it is only there) and the text
        the model was given (normalized as for the model) go to the recognizer's queue."""
        try:
            samples = read_wav(audio) if isinstance(audio, Path) else audio
            if samples is None:
                raise ValueError("the segment has no audio")
            text = job.text
            if job.normalize:
                text = normalize.background.submit(job.text).result(timeout=NORMALIZE_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - this take goes unchecked, the others do not
            self._heard.emit(CheckResult(key, None, report(exc, "preparing a take for the back-check")))
            return
        worker.submit(key, samples, rate, text)

    def _on_heard(self, result: CheckResult) -> None:
        check, take = result.key
        if self._checks.get(check.key) is not check or check.hearing is None or check.hearing[0] != take:
            return  # dropped meanwhile
        index = self._index(check)
        _take, audio, seed = check.hearing
        check.hearing = None
        if index is None:  # the segment was generated again or edited meanwhile
            self._drop(check)
            return
        if self._worker is not None and self._worker.error:
            self.stopped.setText(self._worker.error)
            self.stopped.setToolTip(self._worker.error)
            self.stopped.show()
        check.takes.add(Take(seed, result.score))
        if audio is not None and check.takes.best_index() == len(check.takes) - 1:
            self._keep(index, audio, seed)
        if self._wants_another(check):
            self._draw(check, index, self.w.job_builder())
        self.changed.emit(index)
        self.update_actions()

    def _wants_another(self, check: _Check) -> bool:
        checking = self._worker is not None and not self._worker.error
        return checking and len(check.takes) < check.limit and self.policy().flagged(check.score())

    def _keep(self, index: int, audio: np.ndarray, seed: int) -> None:
        """A take heard better than the kept one replaces the segment's audio; a pinned seed follows."""
        job = self.w.session.segments[index].job
        self.w.session.replace_take(index, audio, seed)
        if job.seed is not None:
            over = self.w.project.overrides.get(job.key, projects.SegmentOverride())
            self.w.project.set_override(job.key, replace(over, seed=seed))
            self.w.refresh_and_save()

    def _draw(self, check: _Check, index: int, build: Builder) -> None:
        """Submit the next take: the segment's job with the take's own seed."""
        seg = self.w.session.segments[index]
        job = replace(seg.job, seed=take_seed(check.first_seed, len(check.takes) + 1))
        try:
            voice, prompt, make = build(job)
        except Exception as exc:  # noqa: BLE001 - e.g. its voice was deleted: keep the takes made
            self.w.statusBar().showMessage(report(exc, "drawing a new take"), 15_000)
            check.limit = len(check.takes)
            return
        check.tag, check.chunks = new_tag(), []
        self._by_tag[check.tag] = check
        self.w.client.submit([Job(check.tag, voice, prompt, make)])

    def _drop(self, check: _Check) -> None:
        if self._checks.get(check.key) is check:
            del self._checks[check.key]
        if check.tag is not None:
            self.w.client.cancel([check.tag])
            self._by_tag.pop(check.tag, None)
        check.tag, check.hearing, check.chunks = None, None, []

    def _close_worker(self) -> None:
        if self._worker is not None:
            self._worker.on_result = None
            self._worker.close()
            self._worker = None

    def refresh(self) -> None:
        """Redraw every row's Check cell (the threshold may have changed)."""
        for index in range(len(self.w.session.segments)):
            self.changed.emit(index)
        self.update_actions()

    # --- engine events for the takes' own tags ----------------------------------------------
    def _on_chunk(self, tag: int, samples: np.ndarray) -> None:
        check = self._by_tag.get(tag)
        if check is not None:
            check.chunks.append(samples)

    def _on_retried(self, tag: int, _take: int) -> None:
        check = self._by_tag.get(tag)
        if check is not None:
            check.chunks = []  # the engine's bad-case retry: only the new draw counts

    def _on_finished(self, tag: int, event: Any) -> None:
        check = self._by_tag.pop(tag, None)
        if check is None:
            return
        index = self._index(check)
        audio = np.concatenate(check.chunks) if check.chunks else np.zeros(0, np.float32)
        check.tag, check.chunks = None, []
        if index is None:
            self._drop(check)
            return
        self._hear(check, len(check.takes) + 1, audio, int(event.seed), self.w.session.segments[index].job)

    def _on_failed(self, tag: int, _message: str) -> None:
        check = self._by_tag.pop(tag, None)
        if check is None:
            return
        check.tag, check.chunks, check.limit = None, [], len(check.takes)  # keep the best take made
        index = self._index(check)
        if index is not None:
            self.changed.emit(index)
        self.update_actions()
