"""Engine settings, validated where they are made."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineConfig:
    """``model_dir`` is a VoxCPM folder in the official layout.

    KV memory: ``kv_cache_gb`` when given; otherwise enough for ``max_num_seqs`` requests of
    ``max_model_len`` positions (plus a quarter for the prefix cache), trimmed on CUDA to what
    ``gpu_memory_utilization`` of the card leaves after the weights and a working reserve.
    """

    model_dir: str
    device: str = "auto"
    dtype: str | None = None  # default: fp32 on CPU, the config's dtype on CUDA
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 8192
    max_model_len: int = 4096  # positions per request: prompt plus generated patches
    block_size: int = 16
    kv_cache_gb: float | None = None
    gpu_memory_utilization: float = 0.9
    cuda_graphs: bool = True  # ignored on CPU
    graph_timesteps: int = 10  # the decode graphs cover requests with this many CFM steps
    # Not yet measured on a GPU, so off by default: graph a lone request's prefill (time to first
    # audio), and run the streaming VAE on a second CUDA stream beside the LM step.
    prefill_graphs: bool = False
    overlap_vae: bool = False
    attention: str = "auto"  # auto | sdpa | triton | flash
    voice_cache_size: int = 32  # VAE-encoded voices kept per engine

    def __post_init__(self) -> None:
        if self.max_num_seqs < 1 or self.max_num_batched_tokens < 1 or self.block_size < 1:
            raise ValueError("max_num_seqs, max_num_batched_tokens and block_size must be positive")
        if self.max_model_len < 16:
            raise ValueError("max_model_len must be at least 16")
        if not 0.05 <= self.gpu_memory_utilization <= 1.0:
            raise ValueError("gpu_memory_utilization must be between 0.05 and 1")
