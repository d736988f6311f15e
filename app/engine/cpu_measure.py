"""Measure on this computer: how fast each CPU precision runs the user's model, and which to use.

Settings › On the CPU › *Measure on this computer*, and ``voxdesk bench --model DIR --measure-cpu``:
for each path this processor can run well — exact fp32, bf16 where it is native
(:func:`app.cpu_precision.native_bf16`), int8 Linear weights — an engine is built on the model
folder, one zero-shot request is warmed up and then timed for a few patches (median step), and the
int8 path's first patches are compared with fp32's (same text and seed) so its cost is shown
beside its gain. Engines are built one after another and dropped, so at most one copy of the model
is held beside the caller's. Qt-free; the window runs it on its engine thread with a cancel flag.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.cpu_precision import SHORT, decide, native_bf16
from app.errors import VoxDeskError

TEXT = "One short sentence, spoken to time this computer."
WARMUP = 2  # steps left out of the timing: the first admits and prefills the request
# int8 is recommended over the best faithful path only when it at least halves the step: below
# that the approximation costs more than the time it saves.
INT8_WORTH = 2.0


class MeasureCancelled(VoxDeskError):
    """The user stopped the measurement."""


@dataclass(frozen=True)
class PathTiming:
    choice: str  # "float32" | "bfloat16" | "int8" (app.cpu_precision.CHOICES)
    ms_per_patch: float
    deviation: float | None  # int8: relative L2 of its first patches against fp32's; else None

    @property
    def name(self) -> str:
        return "int8" if self.choice == "int8" else SHORT[self.choice]


@dataclass(frozen=True)
class Measurement:
    timings: tuple[PathTiming, ...]
    automatic: str  # the choice "auto" makes on this CPU: "float32" or "bfloat16"
    recommended: str  # "auto" when the automatic choice is the one to use, else "int8" or a dtype

    def timing(self, choice: str) -> PathTiming | None:
        return next((t for t in self.timings if t.choice == choice), None)

    def speedup(self, choice: str) -> float:
        """How many times faster ``choice`` ran than the automatic choice."""
        auto, other = self.timing(self.automatic), self.timing(choice)
        return auto.ms_per_patch / other.ms_per_patch if auto and other else float("nan")

    def summary(self) -> str:
        """One English line per path and the recommendation (the CLI's output; the window
        writes its own, translated)."""
        lines = []
        for t in self.timings:
            line = f"{t.name}: {t.ms_per_patch:.0f} ms per patch ({self.speedup(t.choice):.2f}x automatic)"
            if t.deviation is not None:
                line += f", first patches {100 * t.deviation:.1f} % off the exact model"
            lines.append(line)
        lines.append(f"recommended: {self.recommended}")
        return "\n".join(lines)


def paths(caps=None) -> tuple[str, ...]:
    """The paths worth timing here: bf16 only where it is native (emulated, it loses to fp32)."""
    return ("float32", "bfloat16", "int8") if native_bf16(caps) else ("float32", "int8")


def recommend(timings: tuple[PathTiming, ...], automatic: str) -> str:
    """The fastest faithful path ("auto" when that is the automatic choice); int8 when it is at
    least :data:`INT8_WORTH` times faster than that."""
    faithful = min((t for t in timings if t.choice != "int8"), key=lambda t: t.ms_per_patch)
    int8 = next((t for t in timings if t.choice == "int8"), None)
    if int8 is not None and faithful.ms_per_patch >= INT8_WORTH * int8.ms_per_patch:
        return "int8"
    return "auto" if faithful.choice == automatic else faithful.choice


def _time_path(
    model_dir: str, choice: str, patches: int, threads: int | None, cancelled: Callable[[], bool]
) -> tuple[float, np.ndarray]:
    """ms per decode step of one zero-shot request on ``choice``, and its patches' latents."""
    from app.engine.config import EngineConfig
    from app.engine.engine import Engine
    from app.engine.events import RequestFailed
    from app.engine.request import SynthRequest

    engine = Engine(
        EngineConfig(
            model_dir, device="cpu", cpu_precision=choice, max_num_seqs=1, max_model_len=256, threads=threads
        )
    )
    try:
        steps = WARMUP + patches
        rid = engine.submit(SynthRequest(TEXT, seed=7, min_len=steps, max_len=steps, retry_badcase=False))
        seq, times = None, []
        while engine.has_work():
            if cancelled():
                raise MeasureCancelled("The measurement was stopped.")
            seq = seq or next((s for s in engine.scheduler.running if s.id == rid), None)
            start = time.perf_counter()
            events = engine.step()
            times.append(time.perf_counter() - start)
            failed = [e for e in events if isinstance(e, RequestFailed)]
            if failed:
                raise VoxDeskError(f"Measuring {choice} failed: {failed[0].message}")
        latents = np.stack(seq.patches[seq.num_prompt :]) if seq is not None else np.zeros(0)
        return 1e3 * statistics.median(times[WARMUP:] or times), latents
    finally:
        engine.shutdown()


def measure(
    model_dir: str,
    patches: int = 4,
    threads: int | None = None,
    progress: Callable[[float, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    caps=None,
) -> Measurement:
    """Time ``patches`` decode steps of each path on this CPU (see the module docstring).
    ``progress(fraction, path)`` is called before each path; ``cancelled()`` is polled between
    steps and raises :class:`MeasureCancelled`."""
    say = progress or (lambda _f, _s: None)
    stop = cancelled or (lambda: False)
    todo = paths(caps)
    timings: list[PathTiming] = []
    exact: np.ndarray | None = None
    for i, choice in enumerate(todo):
        say(i / len(todo), choice)
        ms, latents = _time_path(model_dir, choice, patches, threads, stop)
        deviation = None
        if choice == "float32":
            exact = latents
        elif choice == "int8" and exact is not None and exact.shape == latents.shape:
            deviation = float(np.linalg.norm(latents - exact) / np.linalg.norm(exact))
        timings.append(PathTiming(choice, ms, deviation))
    say(1.0, "")
    automatic = decide("auto", caps).dtype
    return Measurement(tuple(timings), automatic, recommend(tuple(timings), automatic))
