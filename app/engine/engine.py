"""The engine: thread-safe submit/cancel, and a ``step()`` that advances every request.

One step admits what fits (prefill), then decodes one patch for every running request and
returns the events: an :class:`AudioChunk` per request per step, then :class:`RequestFinished`,
or :class:`RequestFailed` with one plain-language line. A take that reaches the official
bad-case length is drawn again from its prompt (:class:`RequestRetried`), up to three takes.
A request that cannot be prepared, that fails in prefill on its own, or whose patch comes out
non-finite fails alone; the others go on.
"""

from __future__ import annotations

import logging
import math
import queue
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

from app.audio.stretch import RateStretcher
from app.cpu_precision import for_device
from app.engine.adapters import Adapters
from app.engine.attention import PagedKVCache, pick_backend
from app.engine.block_manager import BlockManager
from app.engine.config import EngineConfig
from app.engine.events import AudioChunk, Event, RequestFailed, RequestFinished, RequestRetried
from app.engine.model_runner import ModelRunner
from app.engine.request import SynthRequest
from app.engine.scheduler import Scheduler
from app.engine.sequence import Sequence
from app.engine.voice_cache import VoiceCache
from app.errors import VoxDeskError
from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.prompt import (
    RETRY_TAKES,
    bad_case_length,
    model_prefill,
    normalize_text,
    patch_budget,
)
from app.models.voxcpm.quantize import quantize_int8
from app.models.voxcpm.tokenizer import TextTokenizer
from app.models.voxcpm.weights import load_model, resolve_device

log = logging.getLogger(__name__)
GIB = 1024**3
SHUT_DOWN = "The speech engine was shut down before this request finished."
CUDA_RESERVE = 3 * GIB  # prefill activations, graph pool, VAE scratch


class Engine:
    def __init__(
        self,
        config: EngineConfig,
        progress: Callable[[float, str], None] | None = None,
        model: VoxCPM | None = None,
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
        self.model = model if model is not None else load_model(config.model_dir, str(self.device), dtype)
        self.cpu_int8 = self.precision is not None and self.precision.int8
        if self.cpu_int8:
            self.model = quantize_int8(self.model)
        self.tokenizer = TextTokenizer(config.model_dir)
        self.model_name = Path(config.model_dir).name
        self.sample_rate = self.model.output_rate
        cfg = self.model.cfg
        self.max_model_len = min(config.max_model_len, cfg.max_length, cfg.lm.max_position_embeddings)
        say(0.6, "Reserving memory")
        num_blocks = self._plan_blocks()
        backend = pick_backend(self.device, config.attention)
        self.runner = ModelRunner(
            self.model,
            num_blocks,
            config.block_size,
            config.max_num_seqs,
            self.max_model_len,
            backend,
            overlap_vae=config.overlap_vae,
            vae_dtype=getattr(torch, config.vae_dtype),
        )
        self.scheduler = Scheduler(
            BlockManager(num_blocks, config.block_size), config.max_num_seqs, config.max_num_batched_tokens
        )
        self.voices = VoiceCache(self.model, config.voice_cache_size)
        self.adapters = Adapters(self.model, config.lora_slots, self._new_lora_layout)
        self._parked: list[Sequence] = []  # requests whose LoRA waits for a free adapter slot
        if self.device.type == "cuda" and config.cuda_graphs:
            say(0.7, "Preparing the GPU")
            self._capture()
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._step_lock = threading.Lock()
        self._next_id = 1
        self._closed = False
        self.ready_s = time.perf_counter() - t0
        say(1.0, "Ready")

    # ---- setup ----------------------------------------------------------------------------
    def _capture(self) -> None:
        from app.engine.cuda_graphs import CudaGraphs

        c = self.config
        CudaGraphs(self.runner, c.max_num_seqs, c.graph_timesteps, c.prefill_graphs).capture()

    def _new_lora_layout(self, bank) -> None:
        """The LoRA buffers were (re)allocated: the runner uses them, graphs are captured anew."""
        self.runner.lora = bank
        if self.runner.graphs is not None:
            self.runner.graphs = None
            self._capture()

    def _plan_blocks(self) -> int:
        c, cfg = self.config, self.model.cfg
        res = cfg.residual_lm_config()
        per_block = PagedKVCache.bytes_per_block(
            cfg.lm.num_hidden_layers,
            c.block_size,
            cfg.lm.num_key_value_heads,
            cfg.lm.head_dim,
            self.model.dtype,
        ) + PagedKVCache.bytes_per_block(
            res.num_hidden_layers, c.block_size, res.num_key_value_heads, res.head_dim, self.model.dtype
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
        m = self.model
        voice = self.voices.resolve(request.voice)
        text = normalize_text(request.text)
        if request.normalize:  # after the whitespace, as official generate(normalize=True) does
            from app.text.normalize import normalize_for_speech

            text = normalize_for_speech(text)
        pre = model_prefill(m, self.tokenizer, text, voice)
        n_max = patch_budget(pre, request.max_len, self.max_model_len)
        feats = pre.feats.numpy()
        patches = [feats[i] if a else None for i, a in enumerate(pre.audio_mask.tolist())]
        seed = secrets.randbelow(2**31) if request.seed is None else request.seed
        lora = self.adapters.read(request.lora) if request.lora else None
        salt = lora.digest if lora is not None else b""
        seq = Sequence(request, pre.ids.tolist(), patches, n_max, seed, self.config.block_size, rid, salt)
        seq.lora = lora
        if request.retry_badcase:
            seq.bad_case_at = bad_case_length(pre)
        seq.generator = torch.Generator(self.device).manual_seed(seed)
        seq.stretcher = self._stretcher(request)
        # continuation: the streaming decoder starts from the prompt's last patches, which go
        # through the model dtype as in the official loop
        ctx = pre.context.to(m.dtype).float()
        seq.context = ctx.reshape(-1, m.feat_dim).T.contiguous()
        return seq

    def _stretcher(self, request: SynthRequest) -> RateStretcher | None:
        """The time-stretcher for ``request.speed``, unless the rate is 1 or the family speaks
        at the asked rate itself (``native_speed``: it reads ``request.speed`` in its prefill)."""
        if request.speed == 1.0 or getattr(self.model, "native_speed", False):
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
        fresh = [seq for seq in done if seq.num_generated == 0]
        self.runner.reset_streams(fresh)
        for seq in fresh:
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
            if not out.finite[i]:
                self._fail(
                    seq, "The model produced invalid audio: try another seed or guidance value.", events
                )
                continue
            seq.append_patch(out.patches[i])
            seq.num_computed = len(seq)
            self.scheduler.blocks.hash_blocks(seq)
            audio = out.audio[i].copy()
            self._emit(seq, seq.stretcher.push(audio) if seq.stretcher else audio, events)
            seq.t_first = seq.t_first or now
            k = seq.num_generated - 1
            if (k > seq.request.min_len and out.stop[i]) or seq.num_generated >= seq.max_patches:
                if seq.num_generated >= seq.bad_case_at and seq.take < RETRY_TAKES:
                    # drawn again from the prompt; its generator goes on, as the official one does
                    self.scheduler.restart(seq)
                    seq.stretcher = self._stretcher(seq.request)
                    events.append(RequestRetried(seq.id, seq.take))
                    continue
                if seq.stretcher:
                    self._emit(seq, seq.stretcher.flush(), events)
                events.append(RequestFinished(seq.id, seq.num_generated, seq.seed, self._stats(seq, now)))
                self._end(seq)

    def _end(self, seq: Sequence) -> None:
        """``seq`` leaves the engine: its blocks, stream slot and adapter slot are freed."""
        self.scheduler.finish(seq)
        self.adapters.release(seq.adapter)
        seq.adapter = 0

    @staticmethod
    def _emit(seq: Sequence, audio, events: list[Event]) -> None:
        """One ``AudioChunk``; none while a stretcher is still gathering its first piece."""
        if len(audio):
            events.append(AudioChunk(seq.id, seq.n_chunks, audio))
            seq.n_chunks += 1

    def _fail(self, seq: Sequence, message: str, events: list[Event]) -> None:
        self._end(seq)
        events.append(RequestFailed(seq.id, message))

    def _stats(self, seq: Sequence, now: float) -> dict[str, float]:
        audio_s = seq.num_generated * self.model.samples_per_patch / self.sample_rate
        if seq.stretcher:
            audio_s /= seq.request.speed  # what was sent: the stretched stream
        wall = now - seq.t_submit
        return {
            "queue_s": seq.t_start - seq.t_submit,
            "first_chunk_s": seq.t_first - seq.t_submit,
            "wall_s": wall,
            "steps": float(seq.num_generated),
            "audio_s": audio_s,
            "rtf": wall / audio_s if audio_s else 0.0,
            "prefill_tokens": float(seq.prefill_tokens),
            "cached_tokens": float(seq.num_cached_tokens),
            "takes": float(seq.take),
        }
