"""The engine's home in the app: one QObject living in its own QThread.

The window never calls the engine. It emits requests to :class:`EngineClient` (GUI thread), which
forwards them over queued signals to :class:`EngineHost` (engine thread). The host loads the model,
drives ``Engine.step()`` from a zero-interval timer — so queued submits and cancels are handled
between two steps — and answers with signals that carry small immutable payloads: a job tag and a
float32 array, a ``RequestFinished``, or one plain-language line.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot

from ui.cpu_measure import CpuMeasure
from ui.errors import report

log = logging.getLogger(__name__)

NOT_LOADED = "The model is not loaded yet: wait for it, or choose one in Models."


@dataclass(frozen=True)
class Job:
    """One segment to speak. ``tag`` is the window's key for it.

    ``prompt`` is the voice's ``VoicePrompt`` (or None), built on the GUI thread from the library;
    ``voice`` identifies it (voice id and content hash) so missing latents are encoded once per
    batch on the engine thread. ``build(prompt) -> SynthRequest`` runs there too.
    """

    tag: int
    voice: str | None
    prompt: Any
    build: Callable[[Any], Any]


@dataclass(frozen=True)
class ModelInfo:
    """What the window needs to know about the loaded model."""

    name: str  # e.g. "VoxCPM2" (the folder name)
    model_id: str  # identifies the weights: keys cached latents and stored results
    architecture: str  # "voxcpm2" or "voxcpm"
    sample_rate: int  # output audio rate
    encoder_rate: int  # rate of prompt audio (the VAE's input)
    device: str  # status-bar text, e.g. "NVIDIA H200 · 120.3 GB free" or "CPU"
    limits: Any = None  # app.voices.fit.ModelLimits: what fits in the model's positions
    precision: str = ""  # on the CPU "fp32", "bf16" or "int8" (app/cpu_precision.py); else ""
    # the family's controls (FamilyInfo.controls): which fields the window shows; None for a
    # speech server's model (its own settings, as VoxCPM's)
    controls: frozenset[str] | None = None
    label: str = ""  # the family's name for this model (FamilyInfo.label), e.g. "IndexTTS-2.5"
    languages: tuple[str, ...] = ()  # what its "language" control offers (FamilyInfo.languages)

    @property
    def results_key(self) -> str:
        """Keys stored takes: the exact model's, the bf16 one's and the int8 one's are not
        interchangeable (voice latents are: the audio encoder is the same fp32 model in all)."""
        return f"{self.model_id}+{self.precision}" if self.precision in ("bf16", "int8") else self.model_id


def describe_device(device: str, precision: Any = None) -> str:
    """'NVIDIA H200 · 120.3 GB free', 'CPU · bf16: this CPU has AMX', 'CPU · fp32: no native bf16
    on this CPU' or 'CPU · 8-bit weights: chosen in Settings', in the window's language
    (``precision``: the engine's :class:`app.cpu_precision.CpuPrecision`)."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.device(device).index or 0
        free, _total = torch.cuda.mem_get_info(index)
        text = QCoreApplication.translate("EngineHost", "{0} · {1} GB free")
        return text.format(torch.cuda.get_device_name(index), f"{free / 1e9:.1f}")
    if precision is None:
        return QCoreApplication.translate("EngineHost", "CPU")
    return QCoreApplication.translate("EngineHost", "CPU · {0}").format(describe_precision(precision))


def describe_precision(precision: Any) -> str:
    """'bf16: this CPU has AMX', '8-bit weights: chosen in Settings', in the window's language."""
    if precision.int8:
        name = QCoreApplication.translate("EngineHost", "8-bit weights")
    else:
        name = precision.name
    if precision.chosen:
        reason = QCoreApplication.translate("EngineHost", "chosen in Settings")
    elif precision.feature:
        reason = QCoreApplication.translate("EngineHost", "this CPU has {0}").format(precision.feature)
    else:
        reason = QCoreApplication.translate("EngineHost", "no native bf16 on this CPU")
    return QCoreApplication.translate("EngineHost", "{0}: {1}").format(name, reason)


def _needs_encoding(prompt: Any) -> bool:
    if prompt.sample_rate is not None:  # a family other than VoxCPM: its cached features
        return prompt.features is None
    return (prompt.prompt_audio is not None and prompt.prompt_latents is None) or (
        prompt.reference_audio is not None and prompt.reference_latents is None
    )


class EngineHost(QObject):
    """Lives on the engine thread. Only touched through queued signals."""

    stateChanged = Signal(str)  # "loading" | "ready" | "busy" | "failed"
    loadProgress = Signal(int, str)  # percent, stage
    loaded = Signal(object)  # ModelInfo
    loadFailed = Signal(str)
    deviceChanged = Signal(str)
    chunk = Signal(int, object)  # tag, float32 samples
    finished = Signal(int, object)  # tag, RequestFinished
    failed = Signal(int, str)  # tag, message
    retried = Signal(int, int)  # tag, take now starting: drop the audio received for it so far
    latentsEncoded = Signal(str, str, object)  # voice key, role, float32 [n, P, D]
    # the Qt-free host over the loaded engine (the Local API serves through it) and its model,
    # or (None, None) when no local engine is loaded
    sharedChanged = Signal(object, object)
    # what makes speech now, as an app.backends.SpeechBackend: the shared host over the local
    # engine, or the remote server's backend; None while neither is loaded (subtitle dubbing)
    backendChanged = Signal(object)
    _wake = Signal()
    activity = Signal(str)  # "encoding" (a voice's latents) | "generating"

    def __init__(self) -> None:
        super().__init__()
        self._engine: Any = None
        self._device = "cpu"
        self._tags: dict[int, int] = {}  # engine request id (or remote handle) -> job tag
        self._timer: QTimer | None = None
        self._shared: Any = None  # app.engine.host.EngineHost over self._engine
        self._remote: Any = None  # app.backends.remote.RemoteBackend when the engine is a server
        self._remote_lock = threading.Lock()
        self._wake.connect(self._on_wake, Qt.ConnectionType.QueuedConnection)

    # --- slots (engine thread) ------------------------------------------------------------
    @Slot(str, str, str)
    def load(self, model_dir: str, device: str, cpu_precision: str = "auto") -> None:
        from app.engine import Engine, EngineConfig
        from app.engine.config import cpu_threads
        from app.engine.host import EngineHost as SharedHost
        from app.engine.host import model_id

        self._stop_engine()
        self.stateChanged.emit("loading")
        self.loadProgress.emit(1, "Starting")
        try:
            config = EngineConfig(
                model_dir=model_dir,
                device=device,
                threads=cpu_threads(leave=1),
                cpu_precision=cpu_precision,  # applies on the CPU only
            )
            engine = Engine(config, progress=self._progress)
            info = ModelInfo(
                name=engine.model_name,
                model_id=model_id(engine, model_dir),
                architecture=engine.info.architecture,
                sample_rate=int(engine.info.sample_rate),
                encoder_rate=int(engine.info.voice_rate),
                device=describe_device(str(engine.device), engine.precision),
                limits=engine.runner.limits(int(engine.max_model_len)),
                precision=engine.precision.name if engine.precision else "",
                controls=engine.info.controls,
                label=engine.info.label,
                languages=tuple(engine.info.languages),
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes one message
            self.loadFailed.emit(report(exc, "loading the model"))
            self.stateChanged.emit("failed")
            return
        self._engine = engine
        self._device = str(engine.device)
        self._shared = SharedHost(engine, wake=self._wake.emit)
        self.loaded.emit(info)
        self.sharedChanged.emit(self._shared, info)
        self.backendChanged.emit(self._shared)
        self.stateChanged.emit("ready")

    @Slot(str, str)
    def load_remote(self, url: str, api_key: str) -> None:
        """Use a remote OpenAI-compatible speech server instead of a local model."""
        from app.backends.remote import RemoteBackend

        self._stop_engine()
        self.stateChanged.emit("loading")
        self.loadProgress.emit(1, "Connecting")
        try:
            remote = RemoteBackend(url, api_key or None)
            m = remote.connect()
        except Exception as exc:  # noqa: BLE001 - every failure becomes one message
            self.loadFailed.emit(report(exc, "connecting to the speech server"))
            self.stateChanged.emit("failed")
            return
        self._remote = remote
        host = remote.url.split("://", 1)[1]
        info = ModelInfo(m.name, f"remote-{host}-{m.name}", m.architecture, m.sample_rate, m.encoder_rate,
                         f"Server: {host}")  # fmt: skip
        self.loaded.emit(info)
        self.backendChanged.emit(remote)
        self.stateChanged.emit("ready")

    @Slot()
    def _on_wake(self) -> None:
        if self._engine is not None:
            self._ensure_timer()
            self._maybe_idle()

    def _progress(self, fraction: float, stage: str) -> None:
        self.loadProgress.emit(int(100 * max(0.0, min(1.0, fraction))), stage)

    @Slot(object)
    def submit(self, jobs: list[Job]) -> None:
        if self._remote is not None:
            self._submit_remote(jobs)
            return
        if self._engine is None:
            for job in jobs:
                self.failed.emit(job.tag, NOT_LOADED)
            return
        prompts: dict[str | None, Any] = {}
        for job in jobs:
            try:
                if job.voice not in prompts:
                    if job.prompt is not None and _needs_encoding(job.prompt):
                        self.activity.emit("encoding")
                    prompts[job.voice] = self._resolve(job.voice, job.prompt)
                rid = self._engine.submit(job.build(prompts[job.voice]))
            except Exception as exc:  # noqa: BLE001 - one segment fails, the others go on
                self.failed.emit(job.tag, report(exc, "preparing a segment"))
                continue
            self._tags[rid] = job.tag
        if self._tags:
            self.activity.emit("generating")
            self.stateChanged.emit("busy")
            self._ensure_timer().start()

    def _submit_remote(self, jobs: list[Job]) -> None:
        """Each job goes to the server; its events come back on the backend's threads and are
        re-emitted as this host's signals (queued to the window like the engine's)."""
        from app.engine.events import AudioChunk, RequestFailed, RequestFinished

        remote = self._remote

        def sink(event) -> None:
            with self._remote_lock:  # (the handle is registered before its first event is read)
                tag = self._tags.get(-event.request_id)
                if tag is None:
                    return  # cancelled
                if not isinstance(event, AudioChunk):
                    self._tags.pop(-event.request_id, None)
            if isinstance(event, AudioChunk):
                self.chunk.emit(tag, event.samples)
                return
            if isinstance(event, RequestFinished):
                self.finished.emit(tag, event)
            elif isinstance(event, RequestFailed):
                self.failed.emit(tag, event.message)
            if not self._tags:
                self.stateChanged.emit("ready")

        for job in jobs:
            with self._remote_lock:
                try:
                    handle = remote.submit(job.build(job.prompt), sink)
                except Exception as exc:  # noqa: BLE001 - one segment fails, the others go on
                    self.failed.emit(job.tag, report(exc, "preparing a segment"))
                    continue
                self._tags[handle] = job.tag
        if self._tags:
            self.stateChanged.emit("busy")

    def _resolve(self, voice: str | None, prompt: Any) -> Any:
        """Encode the prompt's missing latents once (engine thread) and hand them to the library."""
        if prompt is None:
            return None
        resolved, entries = self._engine.runner.resolve_voice(prompt)
        if voice is not None:  # new entries, or ones replacing an unusable cached entry
            for name, array in entries.items():
                self.latentsEncoded.emit(voice, name, array)
        return resolved

    @Slot(object)
    def cancel(self, tags: list[int]) -> None:
        wanted = set(tags)
        for rid, tag in list(self._tags.items()):
            if tag in wanted and self._remote is not None:
                with self._remote_lock:
                    self._tags.pop(rid, None)
                self._remote.cancel(rid)
            elif tag in wanted and self._engine is not None:
                self._engine.cancel(rid)
                del self._tags[rid]
        if self._remote is not None:
            if not self._tags:
                self.stateChanged.emit("ready")
            return
        self._maybe_idle()

    @Slot()
    def close(self) -> None:
        """Last call on the engine thread: free the model, then hand this object back to the GUI
        thread so it is destroyed where it will be (no timers die on a finished thread)."""
        self._stop_engine()
        if self._timer is not None:
            self._timer.stop()
            self._timer.setParent(None)
            self._timer = None
        app = QCoreApplication.instance()
        if app is not None:
            self.moveToThread(app.thread())

    def _stop_engine(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._remote is not None or self._shared is not None:
            self.backendChanged.emit(None)
        if self._remote is not None:
            self._remote.close()
            self._remote = None
        if self._shared is not None:
            self._shared.close()  # its open API requests fail with a plain line
            self._shared = None
            self.sharedChanged.emit(None, None)
        if self._engine is not None:
            self._engine.shutdown()
            self._engine = None
        self._tags.clear()

    # --- the step loop ----------------------------------------------------------------------
    def _ensure_timer(self) -> QTimer:
        if self._timer is None:
            self._timer = QTimer(self)
            self._timer.setInterval(0)
            self._timer.timeout.connect(self._step)
        return self._timer

    def _step(self) -> None:
        from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried

        if self._engine is None:
            self._maybe_idle()
            return
        try:
            events = self._shared.step()  # the Local API's events go to its requests
        except Exception as exc:  # noqa: BLE001 - the engine failed as a whole: fail every job
            message = report(exc, "generating speech")
            for tag in self._tags.values():
                self.failed.emit(tag, message)
            self._tags.clear()
            self._maybe_idle()
            return
        for event in events:
            tag = self._tags.get(event.request_id)
            if tag is None:
                continue  # cancelled: its late events are dropped
            if isinstance(event, AudioChunk):
                self.chunk.emit(tag, event.samples)
            elif isinstance(event, RequestFinished):
                del self._tags[event.request_id]
                self.finished.emit(tag, event)
            elif isinstance(event, RequestFailed):
                del self._tags[event.request_id]
                self.failed.emit(tag, event.message)
            elif isinstance(event, RequestRetried):
                self.retried.emit(tag, event.attempt)
        self._maybe_idle()

    def _maybe_idle(self) -> None:
        """Stop stepping once every job is done and the engine has dropped cancelled requests
        (their cache blocks are freed at a step)."""
        if self._tags or (self._shared is not None and self._shared.busy()):
            if self._timer is not None and not self._timer.isActive():
                self._timer.start()
            return
        if self._timer is not None and self._timer.isActive():
            self._timer.stop()
            if self._engine is not None:
                self.deviceChanged.emit(describe_device(self._device, self._engine.precision))
                self.stateChanged.emit("ready")


class EngineClient(QObject):
    """GUI-thread handle: owns the thread and the host; every call is a queued signal."""

    _load = Signal(str, str, str)
    _load_remote = Signal(str, str)
    _submit = Signal(object)
    _cancel = Signal(object)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("voxdesk-engine")
        self.host = EngineHost()
        self.host.moveToThread(self.thread)
        self._load.connect(self.host.load)
        self._load_remote.connect(self.host.load_remote)
        self._submit.connect(self.host.submit)
        self._cancel.connect(self.host.cancel)
        self._shutdown.connect(self.host.close, Qt.ConnectionType.BlockingQueuedConnection)
        # Settings › On the CPU › Measure on this computer: runs on this same thread
        self.measure = CpuMeasure(self.thread, self)
        self.thread.start()

    def load(self, model_dir: str, device: str, cpu_precision: str = "auto") -> None:
        self._load.emit(model_dir, device, cpu_precision)

    def load_remote(self, url: str, api_key: str) -> None:
        self._load_remote.emit(url, api_key)

    def submit(self, jobs: list[Job]) -> None:
        self._submit.emit(list(jobs))

    def cancel(self, tags: list[int]) -> None:
        self._cancel.emit(list(tags))

    def close(self, timeout_ms: int = 10_000) -> None:
        """Shut the engine down on its thread, then stop the thread."""
        if not self.thread.isRunning():
            return
        self._shutdown.emit()
        self.thread.quit()
        self.thread.wait(timeout_ms)
