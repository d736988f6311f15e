"""One engine shared by many callers: per-request event sinks over ``Engine.step()`` (Qt-free).

The server (and the window's Local API) submit requests from any thread with a *sink*, a
callable that receives that request's events (``AudioChunk``, then ``RequestFinished`` or
``RequestFailed``) on the engine thread. Two ways to drive it:

- ``EngineHost(engine).start()``: the host owns a daemon thread that steps while there is work
  and sleeps otherwise (``voxdesk serve``);
- ``EngineHost(engine, wake=callback)``: the owner of the engine thread (the window's QThread)
  calls :meth:`step` itself and is woken through ``wake`` when a request arrives; ``step``
  returns the events that belong to nobody here (the window's own requests).

Voices are prepared on the engine thread by the family (``runner.resolve_voice``: VoxCPM
VAE-encodes them; its cache is not thread-safe); ``on_latents(name, array)`` hands the newly
made cache entries back so the caller can store them.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from app.engine.events import AudioChunk, Event, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.errors import VoxDeskError

log = logging.getLogger(__name__)

Sink = Callable[[Event], None]
LatentsSink = Callable[[str, object], None]


@dataclass
class HostStats:
    """Counters since start; read from any thread (plain ints, updated on the engine thread)."""

    submitted: int = 0
    finished: int = 0
    failed: int = 0
    steps: int = 0
    max_batch: int = 0  # most requests decoded together in one engine step
    last_batch: int = 0


class EngineHost:
    def __init__(self, engine, wake: Callable[[], None] | None = None) -> None:
        self.engine = engine
        self.stats = HostStats()
        self._ids = itertools.count(1)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._sinks: dict[int, tuple[int, Sink]] = {}  # engine request id -> (handle, sink)
        self._by_handle: dict[int, int] = {}  # handle -> engine request id
        self._cancelled: set[int] = set()
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._wake = wake or self._event.set
        self._thread: threading.Thread | None = None
        self._stop = False

    # ---- any thread ---------------------------------------------------------------------
    def submit(self, request: SynthRequest, sink: Sink, on_latents: LatentsSink | None = None) -> int:
        """Queue ``request``; returns a handle for :meth:`cancel`. ``sink`` gets its events."""
        handle = next(self._ids)
        self._inbox.put(("submit", handle, request, sink, on_latents))
        self._wake()
        return handle

    def cancel(self, handle: int) -> None:
        """Drop the request (waiting or decoding); its KV blocks are freed at the next step and
        its sink gets ``RequestFailed(..., "Cancelled.")``."""
        self._inbox.put(("cancel", handle, None, None, None))
        self._wake()

    @property
    def active(self) -> int:
        """Requests submitted here and not yet finished."""
        with self._lock:
            return len(self._sinks) + self._inbox.qsize()

    def kv_blocks(self) -> tuple[int, int]:
        """(free, total) KV cache blocks of the engine."""
        blocks = self.engine.scheduler.blocks
        return blocks.num_free, len(blocks.blocks)

    def busy(self) -> bool:
        return bool(self._sinks) or not self._inbox.empty() or self.engine.has_work()

    # ---- own thread -----------------------------------------------------------------------
    def start(self) -> EngineHost:
        self._thread = threading.Thread(target=self._run, name="voxdesk-engine", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Stop the own thread (if any); requests still open fail with a plain message."""
        self._stop = True
        self._event.set()
        if self._thread is not None:
            self._thread.join(timeout)
        for rid, (_h, sink) in list(self._sinks.items()):
            self._deliver(sink, RequestFailed(rid, "The speech server is shutting down."))
        self._sinks.clear()

    def _run(self) -> None:
        while not self._stop:
            if not self.busy():
                self._event.wait()
                self._event.clear()
                continue
            try:
                self.step()
            except Exception:  # noqa: BLE001 - the engine failed as a whole: fail every open request
                log.exception("engine step failed")
                self._fail_all("Speech generation failed on this device: try again.")

    # ---- engine thread ---------------------------------------------------------------------
    def step(self) -> list[Event]:
        """Admit queued submits, run one engine step, hand each event to its sink; returns the
        events of requests that were not submitted here."""
        self._drain()
        events = self.engine.step()
        batch = sum(isinstance(e, AudioChunk) for e in events)
        s = self.stats
        s.steps += 1
        s.last_batch = batch
        s.max_batch = max(s.max_batch, batch)
        others: list[Event] = []
        for ev in events:
            owner = self._sinks.get(ev.request_id)
            if owner is None:
                others.append(ev)
                continue
            if isinstance(ev, (RequestFinished, RequestFailed)):
                with self._lock:
                    del self._sinks[ev.request_id]
                    self._by_handle.pop(owner[0], None)
                if isinstance(ev, RequestFinished):
                    s.finished += 1
                else:
                    s.failed += 1
            self._deliver(owner[1], ev)
        return others

    def _drain(self) -> None:
        while True:
            try:
                kind, handle, request, sink, on_latents = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "cancel":
                rid = self._by_handle.get(handle)
                if rid is not None:
                    self.engine.cancel(rid)
                else:
                    self._cancelled.add(handle)  # cancelled before it reached the engine
                continue
            if handle in self._cancelled:
                self._cancelled.discard(handle)
                self._deliver(sink, RequestFailed(-handle, "Cancelled."))
                continue
            self.stats.submitted += 1
            try:
                request = self._resolve_voice(request, on_latents)
                rid = self.engine.submit(request)
            except VoxDeskError as exc:
                self.stats.failed += 1
                self._deliver(sink, RequestFailed(-handle, str(exc)))
                continue
            except Exception:  # noqa: BLE001 - one request fails, the others go on
                log.exception("preparing a request failed")
                message = "This voice could not be prepared: try another recording."
                self.stats.failed += 1
                self._deliver(sink, RequestFailed(-handle, message))
                continue
            with self._lock:
                self._sinks[rid] = (handle, sink)
                self._by_handle[handle] = rid

    def _resolve_voice(self, request: SynthRequest, on_latents: LatentsSink | None) -> SynthRequest:
        voice = request.voice
        if voice is None:
            return request
        resolved, entries = self.engine.runner.resolve_voice(voice)
        if on_latents is not None:
            for name, array in entries.items():
                try:
                    on_latents(name, array)
                except Exception:  # noqa: BLE001 - a cache that cannot be written is not fatal
                    log.exception("storing latents failed")
        return dataclasses.replace(request, voice=resolved)

    def _fail_all(self, message: str) -> None:
        with self._lock:
            owners = list(self._sinks.items())
            self._sinks.clear()
            self._by_handle.clear()
        for rid, (_h, sink) in owners:
            self.stats.failed += 1
            self._deliver(sink, RequestFailed(rid, message))

    @staticmethod
    def _deliver(sink: Sink, event: Event) -> None:
        try:
            sink(event)
        except Exception:  # noqa: BLE001 - a broken listener never stops the engine
            log.exception("event sink failed")


def weights_stamp(model_dir: str) -> str:
    """Changes when the weights files change, so cached latents follow the weights."""
    import hashlib
    from pathlib import Path

    stamps = [
        f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}"
        for p in sorted(Path(model_dir).iterdir())
        if p.suffix in (".safetensors", ".pth", ".bin", ".pt")
    ]
    return hashlib.sha1("|".join(stamps).encode()).hexdigest()[:10]


def model_id(engine, model_dir: str) -> str:
    """The key of a model's cached voice latents (the window and the server use the same)."""
    return f"{engine.model_name}-{engine.info.architecture}-{weights_stamp(model_dir)}"
