"""Engine settings, validated where they are made."""

from __future__ import annotations

import os
from dataclasses import dataclass

from app.cpu_precision import CHOICES
from app.errors import VoxDeskError


@dataclass
class EngineConfig:
    """``model_dir`` is a VoxCPM folder in the official layout.

    KV memory: ``kv_cache_gb`` when given; otherwise enough for ``max_num_seqs`` requests of
    ``max_model_len`` positions (plus a quarter for the prefix cache), trimmed on CUDA to what
    ``gpu_memory_utilization`` of the card leaves after the weights and a working reserve.
    """

    model_dir: str
    device: str = "auto"
    # An explicit dtype for the model on any device (bench, tests); None: on the CPU the one
    # ``cpu_precision`` gives, on CUDA the config's.
    dtype: str | None = None
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 8192
    max_model_len: int = 4096  # positions per request: prompt plus generated patches
    block_size: int = 16
    kv_cache_gb: float | None = None
    gpu_memory_utilization: float = 0.9
    cuda_graphs: bool = True  # ignored on CPU
    graph_timesteps: int = 10  # the decode graphs cover requests with this many CFM steps
    # Graph the prefill in (batch, width) buckets: the time to first audio (docs/benchmarks.md).
    prefill_graphs: bool = True
    # Run the streaming VAE on a second CUDA stream beside the LM step (3-4 % faster, measured).
    overlap_vae: bool = True
    # The streaming VAE decoder's dtype. bfloat16/float16 are ~15 % faster at 64 requests on CUDA,
    # but on random real-shape weights their audio is 14-23 % (relative L2) off fp32
    # (docs/benchmarks.md), so fp32 stays the default until a real checkpoint says otherwise.
    vae_dtype: str = "float32"  # float32 | bfloat16 | float16
    # CPU only (app/cpu_precision.py): "auto" is bf16 where the CPU has native bf16 (AVX512_BF16
    # or AMX), else fp32; "float32" is the exact (parity) path; "bfloat16"; "int8" runs the
    # transformer stacks' Linear layers with int8 weights (dynamic quantization; error against
    # fp32 in docs/benchmarks.md).
    cpu_precision: str = "auto"
    # CPU threads for the model's math (torch.set_num_threads) when set; None leaves the process's
    # setting. The CLI passes cpu_threads() unless told otherwise.
    threads: int | None = None
    attention: str = "auto"  # auto | sdpa | triton | flash
    voice_cache_size: int = 32  # VAE-encoded voices kept per engine
    # LoRAs resident at once (app/engine/adapters.py): requests with up to this many different
    # LoRAs share a decode step; one more waits until a slot's requests end. Each slot costs its
    # share of every adapted Linear's low-rank GEMMs, used or not.
    lora_slots: int = 8

    def __post_init__(self) -> None:
        if self.max_num_seqs < 1 or self.max_num_batched_tokens < 1 or self.block_size < 1:
            raise ValueError("max_num_seqs, max_num_batched_tokens and block_size must be positive")
        if self.max_model_len < 16:
            raise ValueError("max_model_len must be at least 16")
        if self.vae_dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError("vae_dtype must be float32, bfloat16 or float16")
        if self.cpu_precision not in CHOICES:
            raise ValueError(f"cpu_precision must be one of {', '.join(CHOICES)}")
        if not 1 <= self.lora_slots <= 64:
            raise ValueError("lora_slots must be between 1 and 64")
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be at least 1")
        if not 0.05 <= self.gpu_memory_utilization <= 1.0:
            raise ValueError("gpu_memory_utilization must be between 0.05 and 1")


def cpu_threads(leave: int = 0) -> int:
    """The cores this process may run on (its affinity mask, which containers and ``taskset``
    narrow), which is what intra-op threads should match, less ``leave`` kept free (at least
    one thread). The window leaves one core: torch's OpenMP workers spin between operations,
    and with both cores of a 2-core CI machine theirs a GUI timer fired up to 170 ms late."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # Windows, macOS
        cores = os.cpu_count() or 1
    return max(1, cores - leave)


def resolve_device(device: str = "auto") -> str:
    """The device to run on: ``auto`` is CUDA when a usable GPU is there; one plain line for an
    impossible one."""
    import torch

    device = (device or "auto").lower()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise VoxDeskError("CUDA was requested but no usable NVIDIA GPU was found: use --device cpu.")
        return device
    if device == "cpu":
        return device
    raise VoxDeskError(f"Unknown device '{device}': use auto, cpu or cuda.")
