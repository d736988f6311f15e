"""Which precision a model runs in on the CPU: the one place that decides it, for every family.

The rule (docs/DESIGN.md, "Precision on the CPU"): by default, bf16 where the processor has
native bf16 matrix instructions (AVX512_BF16 or AMX), fp32 elsewhere — on an AVX2-only CPU bf16
is emulated and slower than fp32. A user can name another choice (Settings › On the CPU, ``synth``
and ``serve --dtype``): exact fp32, bf16, or int8 Linear weights (faster, approximate).

The capabilities are read once, as torch's own dispatch sees them (``torch.cpu.get_capabilities``,
which reads cpuinfo; older torch: ``torch.cpu._is_avx512_bf16_supported``/``_is_amx_tile_supported``).
Nothing here depends on a model family: the CLI, the server, the self-test and the window all ask
:func:`decide`, and a family's loader only receives the dtype it names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from app.errors import VoxDeskError

# "1": decide as on a processor without native bf16, whatever this one has. The test suite sets it
# (tests/conftest.py) so that its fp32 equalities hold on every CI machine; a user names a
# precision in Settings or with --dtype instead.
NO_NATIVE_BF16 = "VOXDESK_NO_NATIVE_BF16"
AUTO = "auto"
CHOICES = (AUTO, "float32", "bfloat16", "int8")  # what a user may name
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


@lru_cache(maxsize=1)
def cpu_capabilities() -> Mapping[str, object]:
    """This CPU's instruction-set flags as torch sees them (read once)."""
    import torch

    get = getattr(torch.cpu, "get_capabilities", None)
    if get is not None:
        return dict(get())
    flags = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_tile": "_is_amx_tile_supported"}
    return {key: bool(getattr(torch.cpu, fn, lambda: False)()) for key, fn in flags.items()}


def native_bf16(caps: Mapping[str, object] | None = None) -> str | None:
    """The instructions that give this CPU native bf16 matrix products ("AMX", "AVX512-BF16"),
    or None when bf16 would be emulated. AMX is named first: oneDNN prefers its tiles.
    Without ``caps``, this processor's, unless :data:`NO_NATIVE_BF16` is set."""
    if caps is None:
        if os.environ.get(NO_NATIVE_BF16) == "1":
            return None
        caps = cpu_capabilities()
    if caps.get("amx_bf16") or caps.get("amx_tile"):
        return "AMX"
    if caps.get("avx512_bf16"):
        return "AVX512-BF16"
    return None


@dataclass(frozen=True)
class CpuPrecision:
    """What runs on the CPU and why.

    ``dtype``: the float dtype the model is loaded in ("float32" or "bfloat16"); ``int8``: its
    Linear layers then hold int8 weights (made from the fp32 model); ``chosen``: the user named
    it (else it is the automatic choice); ``feature``: the native bf16 instructions found, if any.
    """

    dtype: str
    int8: bool
    chosen: bool
    feature: str | None

    @property
    def name(self) -> str:
        """The short name shown beside the device: "int8", "bf16" or "fp32"."""
        return "int8" if self.int8 else SHORT.get(self.dtype, self.dtype)  # bench --dtype bf16: as given

    @property
    def reason(self) -> str:
        """Why, in one English line ("this CPU has AMX"); the window translates its own."""
        if self.chosen:
            return "chosen by the user"
        if self.feature:
            return f"this CPU has {self.feature}"
        return "no native bf16 on this CPU"

    def describe(self) -> str:
        """'bf16: this CPU has AMX', 'fp32: no native bf16 on this CPU', 'int8: chosen by the user'."""
        return f"{self.name}: {self.reason}"


def decide(choice: str | None = AUTO, caps: Mapping[str, object] | None = None) -> CpuPrecision:
    """The CPU precision for a user's ``choice`` (one of :data:`CHOICES`; None means automatic)."""
    choice = choice or AUTO
    if choice not in CHOICES:
        raise VoxDeskError(f"Unknown CPU precision '{choice}': use {', '.join(CHOICES)}.")
    feature = native_bf16(caps)
    if choice == AUTO:
        return CpuPrecision("bfloat16" if feature else "float32", False, False, feature)
    if choice == "int8":
        return CpuPrecision("float32", True, True, feature)
    return CpuPrecision(choice, False, True, feature)


def for_device(
    device: str, choice: str | None = AUTO, dtype: str | None = None, caps: Mapping[str, object] | None = None
) -> CpuPrecision | None:
    """The precision of a model on ``device``: None off the CPU (a GPU runs the checkpoint's dtype);
    on the CPU ``choice``'s, where an explicit ``dtype`` (``bench --dtype``, tests) names the float
    dtype instead (int8 on a dtype other than fp32 is refused where the weights are converted)."""
    if not str(device).startswith("cpu"):
        return None
    precision = decide(choice, caps)
    return replace(precision, dtype=dtype, chosen=True) if dtype else precision


def device_line(device: str, precision: CpuPrecision | None) -> str:
    """'cpu · bf16: this CPU has AMX' on the CPU; the device alone elsewhere (``info``, ``/health``,
    the self-test report)."""
    return f"{device} · {precision.describe()}" if precision is not None else device
