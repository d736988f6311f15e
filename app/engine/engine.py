"""The engine: thread-safe submit/cancel, and a ``step()`` that advances every request.

Family-agnostic: the model is a :class:`~app.engine.family.FamilyRunner` chosen by the model
folder (:func:`~app.engine.family.create_runner`). One step admits what fits (prefill), then
decodes one step for every running request and returns the events: an :class:`AudioChunk` per
request per step that made audio, then :class:`RequestFinished`, or :class:`RequestFailed` with
one plain-language line. A take the runner calls a bad case is drawn again from its prompt
(:class:`RequestRetried`); a long text the runner speaks in parts goes back to prefill for each
part without a break in its stream. A request that cannot be prepared, that fails in prefill on
its own, or whose step the runner reports failed, fails alone; the others go on.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app.audio.stretch import RateStretcher
from app.cpu_precision import for_device
from app.engine.adapters import Adapters
from app.engine.attention import PagedKVCache, pick_backend
from app.engine.block_manager import BlockManager
from app.engine.config import EngineConfig, resolve_device
from app.engine.events import AudioChunk, Event, RequestFailed, RequestFinished, RequestRetried
from app.engine.family import FamilyInfo, FamilyRunner, create_runner
from app.engine.request import SynthRequest
from app.engine.scheduler import Scheduler
from app.engine.sequence import Sequence
from app.errors import VoxDeskError

log = logging.getLogger(__name__)
GIB = 1024**3
SHUT_DOWN = "The speech engine was shut down before this request finished."
CUDA_RESERVE = 3 * GIB  # prefill activations, graph pool, VAE scratch


class Engine:
    """``runner``: the loaded family (:class:`FamilyRunner`); ``info``: what it is and which
    controls it honours. What the engine itself does not have is the runner's (a family's own
    parts, e.g. VoxCPM's ``model``/``tokenizer``/``voices``) for that family's tools and tests;
    the faces use ``info`` and ``runner``."""

    def __init__(
        self,
        config: EngineConfig,
        progress: Callable[[float, str], None] | None = None,
        model: Any = None,
    ) -> None:
        t0 = time.perf_counter()
        say = progress or (lambda _f, _s: None)
        self.config = config
        self.device = torch.device(resolve_device(config.device))
        if self.device.type == "cpu" and config.threads:
            torch.set_num_threads(config.threads)
        say(0.05, "Loading the model")
        # None on a GPU; on the CPU the dtype (or int8 weights) and why (app/cpu_precision.py)
        self.precision = for_device(str(self.device), config.cpu_precision, config.dtype)
        dtype = self.precision.dtype if self.precision else config.dtype
        self.runner: FamilyRunner = create_runner(config, self.device, dtype, say, model=model)
        self.info: FamilyInfo = self.runner.info
        self.cpu_int8 = self.precision is not None and self.precision.int8
        self.model_name = Path(config.model_dir).name
        self.sample_rate = self.info.sample_rate
        self.max_model_len = min(config.max_model_len, self.runner.max_model_len)
        say(0.6, "Reserving memory")
        num_blocks = self._plan_blocks()
        self.runner.bind_kv(num_blocks, config.block_size, pick_backend(self.device, config.attention))
        self.scheduler = Scheduler(
            BlockManager(num_blocks, config.block_size), config.max_num_seqs, config.max_num_batched_tokens
        )
        self.adapters = Adapters(config.lora_slots, self.runner.read_lora, self.runner.load_lora)
        self._parked: list[Sequence] = []  # requests whose LoRA waits for a free adapter slot
        if self.device.type == "cuda" and config.cuda_graphs:
            say(0.7, "Preparing the GPU")
            self.runner.capture_graphs(config)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._step_lock = threading.Lock()
        self._next_id = 1
        self._closed = False
        self.ready_s = time.perf_counter() - t0
        say(1.0, "Ready")

    # ---- setup ----------------------------------------------------------------------------
    def _plan_blocks(self) -> int:
        c, r = self.config, self.runner
        per_block = sum(
            PagedKVCache.bytes_per_block(s.num_layers, c.block_size, s.num_kv_heads, s.head_dim, r.dtype)
            for s in r.kv_specs()
        )
        per_seq = math.ceil(self.max_model_len / c.block_size)
        if c.kv_cache_gb is not None:
            blocks = int(c.kv_cache_gb * GIB) // per_block
        else:
            blocks = math.ceil(1.25 * c.max_num_seqs * per_seq)
            if self.device.type == "cuda":
                free, total = torch.cuda.mem_get_info(self.device)
                budget = int(total * c.gpu_memory_utilization) - (total - free) - CUDA_RESERVE
                blocks = min(blocks, max(budget, 0) // per_block)
        if blocks < per_seq:
            raise VoxDeskError(
                "There is not enough memory for the speech cache: lower max_model_len or free GPU memory."
            )
        self.kv_bytes = blocks * per_block
        return blocks

    # ---- thread-safe API ------------------------------------------------------------------
    def submit(self, request: SynthRequest) -> int:
        """Queue ``request``; returns its id. Safe from any thread."""
        with self._lock:
            if self._closed:
                raise VoxDeskError("The speech engine was shut down: load the model again.")
            rid = self._next_id
            self._next_id += 1
        self._inbox.put(("submit", rid, request, time.perf_counter()))
        return rid

    def cancel(self, request_id: int) -> None:  # after shutdown: nothing left to cancel
        """Drop a request at the next step boundary (waiting or decoding); its blocks and stream slot
        are freed and ``step`` reports ``RequestFailed(id, "Cancelled.")``. Safe from any thread."""
        self._inbox.put(("cancel", request_id, None, 0.0))

    def shutdown(self) -> list[Event]:
        """Stop for good: every request still queued or running ends with
        ``RequestFailed(id, "…shut down…")`` (returned here: its one terminal event), its blocks
        are freed, and ``step`` runs nothing afterwards. Safe from any thread."""
        with self._step_lock:  # waits for a step in progress on the engine thread
            with self._lock:
                if self._closed:
                    return []
                self._closed = True
            failed: list[Event] = []
            for seq in list(self.scheduler.running) + list(self.scheduler.waiting) + self._parked:
                self._end(seq)
                failed.append(RequestFailed(seq.id, SHUT_DOWN))
            self._parked = []
            while True:
                try:
                    kind, rid, _request, _t = self._inbox.get_nowait()
                except queue.Empty:
                    break
                if kind == "submit":
                    failed.append(RequestFailed(rid, SHUT_DOWN))
            self.runner.graphs = None
        return failed

    def has_work(self) -> bool:
        if self._closed:
            return False
        return bool(len(self.scheduler) or self._parked) or not self._inbox.empty()

    # ---- the step -------------------------------------------------------------------------
    def step(self) -> list[Event]:
        with self._step_lock:
            return [] if self._closed else self._step()

    def _step(self) -> list[Event]:
        events: list[Event] = []
        self._drain(events)
        sched = self.scheduler
        batch = sched.schedule_prefill()
        if batch:
            self._prefill(batch, events)
        elif sched.waiting and not sched.running:
            self._fail(
                sched.waiting[0], "This text is too long for the memory set aside: split it up.", events
            )
        batch = sched.schedule_decode()
        if batch:
            self._decode(batch, events)
        return events

    def _drain(self, events: list[Event]) -> None:
        parked, self._parked = self._parked, []
        for seq in parked:
            self._admit(seq, events)
        while True:
            try:
                kind, rid, request, t_submit = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "cancel":
                seq = self.scheduler.find(rid) or next((s for s in self._parked if s.id == rid), None)
                if seq is not None:
                    if seq in self._parked:
                        self._parked.remove(seq)
                    self._end(seq)
                    events.append(RequestFailed(rid, "Cancelled."))
                continue
            try:
                seq = self._make_sequence(rid, request)
            except VoxDeskError as exc:
                events.append(RequestFailed(rid, str(exc)))
                continue
            except Exception:  # noqa: BLE001 - one bad request never stops the engine
                log.exception("preparing request %d failed", rid)
                events.append(
                    RequestFailed(rid, "This text could not be prepared for speech: try other text.")
                )
                continue
            seq.t_submit = t_submit
            self._admit(seq, events)

    def _admit(self, seq: Sequence, events: list[Event]) -> None:
        """Queue ``seq``, or park it while its LoRA waits for an adapter slot."""
        if seq.lora is not None and seq.adapter == 0:
            try:
                slot = self.adapters.acquire(seq.lora)
            except Exception:  # noqa: BLE001 - e.g. no memory for the LoRA buffers: this request fails
                log.exception("loading the LoRA of request %d failed", seq.id)
                events.append(
                    RequestFailed(
                        seq.id,
                        "The LoRA could not be loaded on this device: free memory or use fewer LoRA slots.",
                    )
                )
                return
            if slot is None:
                self._parked.append(seq)
                return
            seq.adapter = slot
        self.scheduler.add(seq)

    def _make_sequence(self, rid: int, request: SynthRequest) -> Sequence:
        request.check()
        self.info.refuse(request)
        seq = self.runner.make_sequence(rid, request, self.config.block_size)
        if request.lora:
            seq.lora = self.adapters.read(request.lora)
            seq.salt = seq.lora.digest  # KV computed with a LoRA is its own in the prefix cache
        seq.stretcher = self._stretcher(request)
        return seq

    def _stretcher(self, request: SynthRequest) -> RateStretcher | None:
        """The time-stretcher for ``request.speed``, unless the rate is 1 or the family speaks
        at the asked rate itself (``runner.native_speed``)."""
        if request.speed == 1.0 or self.runner.native_speed:
            return None
        return RateStretcher(self.sample_rate, request.speed)

    def _prefill(self, batch: list[Sequence], events: list[Event]) -> None:
        try:
            self.runner.prefill(batch)
            done = batch
        except Exception:  # noqa: BLE001 - find the request at fault, keep the others
            log.exception("batched prefill failed; retrying one by one")
            done = []
            for seq in batch:
                try:
                    self.runner.prefill([seq])
                    done.append(seq)
                except Exception:  # noqa: BLE001
                    log.exception("prefill of request %d failed", seq.id)
                    self._fail(seq, "This text could not be processed: try shorter or simpler text.", events)
        now = time.perf_counter()
        fresh = [seq for seq in done if not seq.started]
        if fresh:
            self.runner.start(fresh)
        for seq in fresh:
            seq.started = True
            seq.t_start = seq.t_start or now
        for seq in done:
            self.scheduler.blocks.hash_blocks(seq)

    def _decode(self, batch: list[Sequence], events: list[Event]) -> None:
        try:
            out = self.runner.decode(batch)
        except Exception:  # noqa: BLE001
            log.exception("decode step failed")
            for seq in batch:
                self._fail(seq, "Speech generation failed on this device: try again.", events)
            return
        now = time.perf_counter()
        for i, seq in enumerate(batch):
            if out.error[i]:
                self._fail(seq, out.error[i], events)
                continue
            audio = out.audio[i]
            if out.next_part[i]:  # the runner put the next piece of the text in its positions
                self._emit(seq, audio, events, now)
                self.scheduler.requeue(seq)
                continue
            if out.beam_parents[i] is not None:
                self.scheduler.blocks.reorder(seq, out.beam_parents[i])
            self.scheduler.blocks.hash_blocks(seq)
            self._emit(seq, audio, events, now)
            if out.retry[i]:
                # drawn again from the prompt; its generator goes on, as the official one does
                self.scheduler.restart(seq)
                seq.stretcher = self._stretcher(seq.request)
                events.append(RequestRetried(seq.id, seq.take))
            elif out.done[i]:
                if seq.stretcher:
                    self._send(seq, seq.stretcher.flush(), events)
                events.append(RequestFinished(seq.id, seq.steps, seq.seed, self._stats(seq, now)))
                self._end(seq)

    def _end(self, seq: Sequence) -> None:
        """``seq`` leaves the engine: its blocks, stream slot and adapter slot are freed."""
        self.scheduler.finish(seq)
        self.adapters.release(seq.adapter)
        seq.adapter = 0
        self.runner.release(seq)

    def _emit(self, seq: Sequence, audio: np.ndarray, events: list[Event], now: float) -> None:
        """A step's audio, through the request's stretcher when it has one."""
        if len(audio):
            seq.t_first = seq.t_first or now
        self._send(seq, seq.stretcher.push(audio) if seq.stretcher else audio, events)

    @staticmethod
    def _send(seq: Sequence, audio: np.ndarray, events: list[Event]) -> None:
        """One ``AudioChunk``; none while a stretcher is still gathering its first piece."""
        if len(audio):
            events.append(AudioChunk(seq.id, seq.n_chunks, audio))
            seq.n_chunks += 1
            seq.samples_sent += len(audio)

    def _fail(self, seq: Sequence, message: str, events: list[Event]) -> None:
        self._end(seq)
        events.append(RequestFailed(seq.id, message))

    def _stats(self, seq: Sequence, now: float) -> dict[str, float]:
        audio_s = seq.samples_sent / self.sample_rate  # what was sent (stretched, when it was)
        wall = now - seq.t_submit
        return {
            "queue_s": seq.t_start - seq.t_submit,
            "first_chunk_s": seq.t_first - seq.t_submit,
            "wall_s": wall,
            "steps": float(seq.steps),
            "audio_s": audio_s,
            "rtf": wall / audio_s if audio_s else 0.0,
            "prefill_tokens": float(seq.prefill_tokens),
            "cached_tokens": float(seq.num_cached_tokens),
            "takes": float(seq.take),
        }
