"""What a model family gives the engine: one runner behind one small interface.

The engine (scheduler, block manager, paged KV, CUDA graphs, the step loop, events, the host
thread) knows nothing of a model. A family lives in ``app/models/<family>/`` and supplies a
:class:`FamilyRunner`; :func:`register` names it with a cheap folder test, the way vLLM
registers model classes, so adding a family adds a folder and one ``register`` line in
``app/models/__init__.py``, never a branch in the engine.

A request's positions (``Sequence.ids``/``Sequence.patches``) are the family's own: VoxCPM puts
text ids and prompt-audio patches there, CosyVoice text ids then speech tokens (offset into one
id space). The engine only counts them, pages their KV and hashes them for the prefix cache.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from app.errors import VoxDeskError

if TYPE_CHECKING:
    import torch

    from app.engine.config import EngineConfig
    from app.engine.request import SynthRequest
    from app.engine.sequence import Sequence

# The controls a family may honour; the faces show, send or refuse (HTTP 400) by this list.
CONTROLS = frozenset(
    {
        "cfg",  # SynthRequest.cfg_value
        "timesteps",  # SynthRequest.inference_timesteps
        "speed",  # natively (``native_speed``); other families get the engine's time-stretch
        "instruction",  # SynthRequest.instruction: how to speak (CosyVoice instruct2)
        "voice_design",  # a described voice without audio (VoxCPM2)
        "prompt",  # prompt audio + its transcript (continuation / zero-shot)
        "reference",  # audio without transcript (VoxCPM2 reference, CosyVoice cross-lingual)
        "lora",
        "normalize",
        "stream",
        "emotion",  # SynthRequest.emotion from a clip or 8 weights (IndexTTS-2.5)
        "emotion_text",  # SynthRequest.emotion from a description (IndexTTS with its QwenEmotion folder)
        "language",  # SynthRequest.language: one of FamilyInfo.languages instead of the family's guess
    }
)


@dataclass(frozen=True)
class FamilyInfo:
    """What the faces need to know about a loaded family (never how it computes)."""

    name: str  # "voxcpm", "cosyvoice"
    label: str  # shown in the window: "VoxCPM2", "Fun-CosyVoice3"
    architecture: str  # "voxcpm2", "cosyvoice3", ... (cache keys, the server's model list)
    controls: frozenset[str]
    sample_rate: int  # of the audio it returns
    voice_rate: int  # the rate voice audio is handed to it at (it resamples further itself)
    languages: tuple[str, ...] = ()  # codes SynthRequest.language may name (the "language" control)

    def __post_init__(self) -> None:
        unknown = self.controls - CONTROLS
        if unknown:
            raise ValueError(f"unknown controls {sorted(unknown)}")

    def has(self, control: str) -> bool:
        return control in self.controls

    def refuse(self, request: SynthRequest) -> None:
        """:class:`VoxDeskError` (one line saying what to do) for a control of ``request`` this
        family lacks: an instruction, an emotion, a language it does not name. A text emotion on a
        family with "emotion" but not "emotion_text" is left to the family (its line says what to
        download)."""
        if request.instruction.strip() and not self.has("instruction"):
            raise VoxDeskError(f"{self.label} does not take an instruction (how to speak): leave it empty.")
        if request.emotion is not None and not self.has("emotion"):
            raise VoxDeskError(f"{self.label} does not take an emotion: leave it on the voice's own.")
        if request.language:
            if not self.has("language"):
                raise VoxDeskError(f"{self.label} does not take a language (it reads the text as it is): "
                                   "leave it on automatic.")  # fmt: skip
            if request.language not in self.languages:
                raise VoxDeskError(f"{self.label} does not speak '{request.language}': choose one of "
                                   f"{', '.join(self.languages)}, or automatic.")  # fmt: skip


@dataclass(frozen=True)
class KVSpec:
    """One paged KV cache the family's transformer stack writes (one per LM: VoxCPM has two)."""

    num_layers: int
    num_kv_heads: int
    head_dim: int


@dataclass
class StepResult:
    """Host results of one decode step, entry ``i`` for ``seqs[i]``.

    ``audio[i]``: samples made this step (empty when the family is still gathering a chunk).
    ``done[i]``: the request ended; its last audio is in ``audio[i]``.
    ``error[i]``: a plain line when this request failed (e.g. non-finite output); the others go on.
    ``retry[i]``: the take is a bad case and starts again from its prompt (VoxCPM's retry).
    ``beam_parents[i]``: for a request decoded as several beams (``Sequence.width``), which beam
    each new beam continues; the engine re-points the beams' block tables
    (:meth:`~app.engine.block_manager.BlockManager.reorder`). ``None``: one beam, or unchanged.
    ``next_part[i]``: the runner has replaced the sequence's positions with the next piece of a
    long text (:meth:`Sequence.next_part`; CosyVoice speaks long text as several LM runs): the
    engine frees its KV blocks and prefills it again, as a retry does, but its audio stream,
    chunk numbering and stats go on and no ``RequestRetried`` is sent. Not ``done``.
    """

    audio: list[np.ndarray]
    done: list[bool]
    error: list[str | None] = field(default_factory=list)
    retry: list[bool] = field(default_factory=list)
    next_part: list[bool] = field(default_factory=list)
    beam_parents: list[list[int] | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.audio)
        self.error = self.error or [None] * n
        self.retry = self.retry or [False] * n
        self.next_part = self.next_part or [False] * n
        self.beam_parents = self.beam_parents or [None] * n


class FamilyRunner(ABC):
    """A loaded model of one family, driven by the engine over a batch of sequences.

    Life of a request: :meth:`make_sequence` (engine thread, may raise :class:`VoxDeskError`
    with one plain line) → :meth:`prefill` (KV for its new positions; may run again after a
    preemption, a retry or a next part) → :meth:`start` once before its first decode (again
    after a retry or the preemption of a request with several beams, not after another
    preemption or a next part: ``Sequence.started``) →
    :meth:`decode` once per engine step until ``done`` → :meth:`release` when it leaves
    (finished, failed or cancelled). All calls come from the engine thread.

    The engine owns a sequence's blocks (``block_tables``, one per beam, allocated for every
    position plus the one the coming decode writes; before writing, the runner copies the KV
    blocks listed in ``Sequence.copies`` and clears it), its stream slot (``vae_slot``: the row
    of the runner's per-request state), its adapter slot (``adapter``) and its ``stretcher``.
    The runner owns its positions (``ids``/``patches``) and ``num_computed`` (positions whose KV is in the
    cache: full blocks up to it are registered in the prefix cache after each step).
    """

    info: FamilyInfo
    max_model_len: int  # positions per request the model allows (the engine takes the minimum)
    device: torch.device
    dtype: torch.dtype  # of its KV caches (the engine plans their memory with it)
    graphs: Any = None  # the family's captured CUDA graphs, or None (eager)

    @property
    def native_speed(self) -> bool:
        """Whether it speaks at ``request.speed`` itself; otherwise the engine time-stretches."""
        return self.info.has("speed")

    @abstractmethod
    def kv_specs(self) -> list[KVSpec]:
        """The paged caches to plan memory for; :meth:`bind_kv` receives them allocated."""

    @abstractmethod
    def bind_kv(self, num_blocks: int, block_size: int, attention: str) -> None:
        """Allocate ``num_blocks`` KV blocks per cache and the static step buffers."""

    @abstractmethod
    def make_sequence(self, rid: int, request: SynthRequest, block_size: int) -> Sequence:
        """Frontend work for one request (text, voice, per-request generator seeded with
        ``request.seed`` or a fresh one): a WAITING sequence."""

    @abstractmethod
    def prefill(self, seqs: list[Sequence]) -> None:
        """KV (and carry) for every position past each sequence's ``num_computed``."""

    @abstractmethod
    def start(self, seqs: list[Sequence]) -> None:
        """Fresh per-request decoding state (streaming decoders) for requests about to decode."""

    @abstractmethod
    def decode(self, seqs: list[Sequence]) -> StepResult:
        """One step for every sequence of the batch: appends its new position(s) to each and
        sets ``num_computed``; the decisions (done, retry, next part, error) come back in the
        :class:`StepResult`. A raised exception fails the whole batch (one plain line each)."""

    def read_lora(self, folder: Path) -> Any:
        """The checked LoRA in ``folder`` (an object with ``digest`` and ``name``), or
        :class:`VoxDeskError` with one line; families with the "lora" control override it."""
        raise VoxDeskError(f"{self.info.label} does not take a LoRA: speak without one.")

    def load_lora(self, slot: int, lora: Any) -> None:
        """Put ``lora`` (from :meth:`read_lora`) into adapter slot ``slot`` (1..lora_slots)."""
        raise NotImplementedError

    def release(self, seq: Sequence) -> None:  # noqa: B027 - optional: most state is per slot
        """``seq`` left the engine: drop anything kept for it outside its stream slot."""

    def capture_graphs(self, config: EngineConfig) -> None:  # noqa: B027 - optional
        """Capture CUDA graphs of the step (called on CUDA when ``config.cuda_graphs``)."""

    def resolve_voice(self, voice: Any) -> tuple[Any, dict[str, np.ndarray]]:
        """``voice`` with its audio turned into what this family conditions on (cached per
        engine), and the new per-family cache entries (name → array) the caller may store
        beside the voice so the work is not repeated. Default: nothing to do."""
        return voice, {}

    def limits(self, max_positions: int) -> Any:
        """What fits in ``max_positions`` (the engine's limit) for this family, as an
        :class:`app.voices.fit.ModelLimits` (the voice panel's guide and the window's checks before
        speaking), or None when the family gives none (the window then checks nothing ahead)."""
        return None

    def samples_to_seconds(self, samples: int) -> float:
        return samples / self.info.sample_rate


@dataclass(frozen=True)
class _Entry:
    name: str
    detect: Callable[[Path], bool]
    factory: str  # "module:function" returning a FamilyRunner: imported only when used


_FAMILIES: list[_Entry] = []


def register(name: str, detect: Callable[[Path], bool], factory: str) -> None:
    """Add a family: ``detect(folder)`` must be cheap (file names, a small json), never load."""
    if any(e.name == name for e in _FAMILIES):
        raise ValueError(f"family {name!r} is registered twice")
    _FAMILIES.append(_Entry(name, detect, factory))


def families() -> list[str]:
    return [e.name for e in _FAMILIES]


def detect_family(model_dir: str | Path) -> str:
    """The family whose folder layout ``model_dir`` has; one plain line when none matches."""
    import app.models  # noqa: F401 - registers the families

    folder = Path(model_dir)
    if not folder.is_dir():
        raise VoxDeskError(f"The model folder {folder} does not exist.")
    for entry in _FAMILIES:
        if entry.detect(folder):
            return entry.name
    raise VoxDeskError(f"{folder} is not a model folder VoxDesk knows (looked for: {', '.join(families())}).")


def create_runner(
    config: EngineConfig,
    device: torch.device,
    dtype: str | None,
    progress: Callable[[float, str], None],
    model: Any = None,
) -> FamilyRunner:
    """Load ``config.model_dir`` with its family's factory; ``model``, a network of that family
    already loaded (tests), is handed to the factory as ``model=``."""
    name = detect_family(config.model_dir)
    entry = next(e for e in _FAMILIES if e.name == name)
    module, func = entry.factory.split(":")
    factory = getattr(importlib.import_module(module), func)
    extra = {"model": model} if model is not None else {}
    return factory(config, device, dtype, progress, **extra)
