"""Write randomly initialised VoxCPM checkpoints in the official file format.

For tests and benchmarks: ``config.json``, ``tokenizer.json`` + ``tokenizer_config.json`` +
``special_tokens_map.json``, ``model.safetensors`` and ``audiovae.pth`` (``{"state_dict": ...}``),
loadable by our loader and by the official ``from_local``. Presets: ``tiny-v1``, ``tiny-v2``
(milliseconds per step on a CPU) and the real shapes of ``voxcpm-0.5b``, ``voxcpm1.5`` and
``voxcpm2`` (their LongRoPE factors are a smooth synthetic ramp between the published end
points; the weights are random, so the audio is noise).

The tokenizer is synthetic too: a small BPE trained on a built-in Chinese/English text, plus
byte-fallback tokens, single characters and reserved entries up to the vocabulary size.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import torch

from app import atomic
from app.atomic import atomic_path
from app.errors import VoxDeskError
from app.models.voxcpm.audio_vae import AudioVAE, AudioVAEConfig
from app.models.voxcpm.config import parse_config
from app.models.voxcpm.model import VoxCPM

_CORPUS = [
    "你好世界，今天天气很好。我们一起去北京吃饭吧！",
    "你好，欢迎使用语音合成。这是一个中文和English混合的测试句子。",
    "Hello world, this is a small test of the VoxCPM speech model, version 2.",
    "The quick brown fox jumps over the lazy dog. 1234567890 times!",
    "我们在上海说English和中文，2024年3月5日，价格是99.5元。",
    "Good morning everyone; how are you today? I'm fine, thanks.",
]


def _ramp(a: float, b: float, n: int) -> list[float]:
    return [a * (b / a) ** (i / (n - 1)) for i in range(n)]


def _lm(
    hidden: int,
    ffn: int,
    layers: int,
    heads: int,
    kv: int,
    vocab: int,
    max_pos: int,
    factors: int,
    kv_channels: int | None,
    lo: float = 1.0,
    hi: float = 1.0,
) -> dict[str, Any]:
    out = {
        "bos_token_id": 1, "eos_token_id": 2, "hidden_size": hidden, "intermediate_size": ffn,
        "max_position_embeddings": max_pos, "num_attention_heads": heads, "num_hidden_layers": layers,
        "num_key_value_heads": kv, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "vocab_size": vocab,
        "use_mup": False, "scale_emb": 12, "dim_model_base": 256, "scale_depth": 1.4,
        "rope_scaling": {"type": "longrope", "long_factor": _ramp(lo, hi, factors),
                         "short_factor": _ramp(lo, hi, factors), "original_max_position_embeddings": max_pos},
    }  # fmt: skip
    if kv_channels:
        out["kv_channels"] = kv_channels
    return out


def _stack(hidden: int, ffn: int, heads: int, layers: int, kv_channels: int | None = None) -> dict[str, Any]:
    out = {"hidden_dim": hidden, "ffn_dim": ffn, "num_heads": heads, "num_layers": layers}
    if kv_channels:
        out["kv_channels"] = kv_channels
    return out


_TINY_VAE = {"encoder_dim": 8, "encoder_rates": [2, 2], "latent_dim": 8, "depthwise": True}
_TINY_VAE["sample_rate"] = 16000
_CFM = {"sigma_min": 1e-06, "solver": "euler", "t_scheduler": "log-norm", "inference_cfg_rate": 2.0}


def preset_config(preset: str) -> dict[str, Any]:
    """The ``config.json`` contents of a preset."""
    if preset == "tiny-v2":
        return {
            "architecture": "voxcpm2", "patch_size": 4, "feat_dim": 8, "residual_lm_num_layers": 1,
            "residual_lm_no_rope": True, "scalar_quantization_latent_dim": 16, "scalar_quantization_scale": 9,
            "max_length": 256, "device": "cuda", "dtype": "float32",
            "lm_config": _lm(64, 128, 2, 4, 2, 512, 512, 16, 32, 1.0, 1.5),
            "encoder_config": _stack(32, 64, 2, 1, 32),
            "dit_config": {**_stack(32, 64, 2, 1, 32), "dit_mean_mode": False, "cfm_config": {}},
            "audio_vae_config": {**_TINY_VAE, "decoder_dim": 32, "decoder_rates": [2, 2, 3],
                                 "out_sample_rate": 48000, "sr_bin_boundaries": [20000, 30000, 40000],
                                 "cond_dim": 8},
        }  # fmt: skip
    if preset == "tiny-v1":
        return {
            "architecture": "voxcpm", "patch_size": 2, "feat_dim": 8, "residual_lm_num_layers": 1,
            "scalar_quantization_latent_dim": 16, "scalar_quantization_scale": 9, "max_length": 256,
            "device": "cuda", "dtype": "float32", "dit_mean_mode": False,
            "lm_config": _lm(64, 128, 2, 4, 2, 512, 512, 8, None, 1.0, 1.5),
            "encoder_config": _stack(32, 64, 2, 1),
            "dit_config": {**_stack(32, 64, 2, 1), "cfm_config": {}},
            "audio_vae_config": {**_TINY_VAE, "decoder_dim": 16, "decoder_rates": [2, 2]},
        }  # fmt: skip
    if preset in ("voxcpm-0.5b", "voxcpm1.5"):
        small = preset == "voxcpm-0.5b"
        layers = (6, 4) if small else (8, 8)
        vae = (
            {"encoder_dim": 128, "encoder_rates": [2, 5, 8, 8], "latent_dim": 64, "decoder_dim": 1536,
             "decoder_rates": [8, 8, 5, 2], "depthwise": True, "sample_rate": 16000}
            if small else
            {"encoder_dim": 64, "encoder_rates": [2, 3, 6, 7, 7], "latent_dim": 64, "decoder_dim": 2048,
             "decoder_rates": [7, 7, 6, 3, 2], "depthwise": True, "sample_rate": 44100}
        )  # fmt: skip
        return {
            "architecture": "voxcpm", "patch_size": 2 if small else 4, "feat_dim": 64,
            "residual_lm_num_layers": layers[0], "scalar_quantization_latent_dim": 256,
            "scalar_quantization_scale": 9, "max_length": 4096 if small else 8192, "device": "cuda",
            "dtype": "bfloat16", "dit_mean_mode": False,
            "lm_config": _lm(1024, 4096, 24, 16, 2, 73448, 32768, 32, None, 1.00044, 49.853),
            "encoder_config": _stack(1024, 4096, 16, layers[1]),
            "dit_config": {**_stack(1024, 4096, 16, layers[1]), "cfm_config": _CFM},
            "audio_vae_config": vae,
        }  # fmt: skip
    if preset == "voxcpm2":
        return {
            "architecture": "voxcpm2", "patch_size": 4, "feat_dim": 64, "residual_lm_num_layers": 8,
            "residual_lm_no_rope": True, "scalar_quantization_latent_dim": 512,
            "scalar_quantization_scale": 9, "max_length": 8192, "device": "cuda", "dtype": "bfloat16",
            "lm_config": _lm(2048, 6144, 28, 16, 2, 73448, 32768, 64, 128, 0.99780, 31.0239),
            "encoder_config": _stack(1024, 4096, 16, 12, 128),
            "dit_config": {**_stack(1024, 4096, 16, 12, 128), "dit_mean_mode": False, "cfm_config": _CFM},
            "audio_vae_config": {"encoder_dim": 128, "encoder_rates": [2, 5, 8, 8], "latent_dim": 64,
                                 "decoder_dim": 2048, "decoder_rates": [8, 6, 5, 2, 2, 2], "depthwise": True,
                                 "sample_rate": 16000, "out_sample_rate": 48000,
                                 "sr_bin_boundaries": [20000, 30000, 40000], "cond_type": "scale_bias",
                                 "cond_dim": 128, "cond_out_layer": False},
        }  # fmt: skip
    raise VoxDeskError(f"Unknown preset '{preset}': use {', '.join(PRESETS)}.")


PRESETS = ("tiny-v1", "tiny-v2", "voxcpm-0.5b", "voxcpm1.5", "voxcpm2")


# ---- tokenizer ------------------------------------------------------------------------------
def tokenizer_json(vocab_size: int) -> dict[str, Any]:
    """A Llama-style (Metaspace, byte-fallback) BPE ``tokenizer.json`` with ``vocab_size`` entries."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    special = ["<unk>", "<s>", "</s>"]
    byte_tokens = [f"<0x{i:02X}>" for i in range(256)]
    chars = [chr(c) for c in range(0x21, 0x7F)] + sorted({c for line in _CORPUS for c in line if c != " "})
    if vocab_size > 40000:
        chars += [chr(c) for c in range(0x4E00, 0x9FA6)]
    budget = vocab_size - len(special) - len(byte_tokens)
    if budget < 64:
        raise VoxDeskError("vocab_size too small for the synthetic tokenizer (needs at least 323).")
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    trainer = trainers.BpeTrainer(vocab_size=min(budget, 400), special_tokens=special, show_progress=False)
    tok.train_from_iterator(_CORPUS * 4, trainer)
    trained = json.loads(tok.to_str())
    learned = sorted(trained["model"]["vocab"], key=trained["model"]["vocab"].get)
    entries = list(special)
    seen = set(entries)
    for t in learned + byte_tokens + chars:
        if t not in seen and len(entries) < vocab_size:
            entries.append(t)
            seen.add(t)
    entries += [f"<reserved_{i}>" for i in range(vocab_size - len(entries))]
    vocab = {t: i for i, t in enumerate(entries)}
    merges = [m for m in trained["model"]["merges"] if "".join(m) in vocab]
    trained["model"]["vocab"] = vocab
    trained["model"]["merges"] = merges
    trained["model"]["unk_token"] = "<unk>"
    return trained


def _tokenizer_files(vocab_size: int) -> dict[str, Any]:
    special = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    config = {
        "tokenizer_class": "LlamaTokenizer",
        "add_bos_token": True,
        "add_eos_token": False,
        "legacy": False,
        "model_max_length": 32768,
        **special,
    }
    return {
        "tokenizer.json": tokenizer_json(vocab_size),
        "tokenizer_config.json": config,
        "special_tokens_map.json": special,
    }


# ---- weights --------------------------------------------------------------------------------
def _init(name: str, shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    """Random values with unit-scale activations; norm/alpha/scale weights perturbed from 1."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "weight" and len(shape) == 1 or leaf in ("alpha", "weight_g") or "scale_embed" in name:
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)
    if leaf == "bias" or "bias_embed" in name:
        return 0.05 * torch.randn(shape, generator=gen)
    if "embed" in name or "special_token" in name:
        return torch.randn(shape, generator=gen)
    fan_in = max(1, shape[1:].numel()) if len(shape) > 1 else 1
    return torch.randn(shape, generator=gen) / fan_in**0.5


_ST_DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int32: "I32",
              torch.int64: "I64"}  # fmt: skip


def _write_safetensors(path: Path, specs: dict[str, tuple[torch.Size, torch.dtype]], make) -> None:
    """Stream tensors into a safetensors file one at a time (``make(name) -> tensor``)."""
    header: dict[str, Any] = {}
    offset = 0
    for name, (shape, dtype) in specs.items():
        size = shape.numel() * torch.empty((), dtype=dtype).element_size()
        header[name] = {"dtype": _ST_DTYPES[dtype], "shape": list(shape)}
        header[name]["data_offsets"] = [offset, offset + size]
        offset += size
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for name, (_, dtype) in specs.items():
            t = make(name).to(dtype).contiguous()
            f.write(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


def write_checkpoint(
    out_dir: str | Path, preset: str = "tiny-v2", seed: int = 0, dtype: str | None = None
) -> Path:
    """Write a random checkpoint of ``preset`` into ``out_dir`` (created); returns the folder.

    ``dtype`` replaces the preset's ``config.json`` dtype (and the dtype of ``model.safetensors``).
    """
    raw = preset_config(preset)
    if dtype is not None:
        raw["dtype"] = dtype
    cfg = parse_config(raw)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise VoxDeskError(f"{out} is a file: give a folder to write the checkpoint into.")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise VoxDeskError(f"Cannot create the folder {out} ({reason}): choose another one.") from None
    dtype = getattr(torch, cfg.dtype)
    for name, content in {"config.json": raw, **_tokenizer_files(cfg.lm.vocab_size)}.items():
        atomic.write_text(out / name, json.dumps(content, ensure_ascii=False, indent=1))
    with torch.device("meta"):
        model = VoxCPM(cfg)
    names = [k for k in model.state_dict() if not k.startswith("audio_vae.")]
    shapes = dict(model.state_dict())
    gens: dict[str, torch.Generator] = {}
    for i, name in enumerate(names):
        gens[name] = torch.Generator().manual_seed(seed * 100003 + i)
    specs = {k: (shapes[k].shape, dtype) for k in names}
    _write_safetensors(out / "model.safetensors", specs, lambda k: _init(k, shapes[k].shape, gens[k]))
    vae = AudioVAE(AudioVAEConfig.from_dict(cfg.audio_vae, 2 if cfg.is_v2 else 1))
    gen = torch.Generator().manual_seed(seed * 100003 + 99991)
    vae_sd = {}
    for k, v in vae.state_dict().items():
        vae_sd[k] = _init(k, v.shape, gen).float() if v.is_floating_point() else v.clone()
    with atomic_path(out / "audiovae.pth") as tmp:
        torch.save({"state_dict": vae_sd}, tmp)
    return out
