"""The official ``config.json`` of both VoxCPM architectures, as plain dataclasses.

``architecture`` is ``"voxcpm"`` (VoxCPM-0.5B and VoxCPM1.5; the default when the key is
missing, as in the official loader) or ``"voxcpm2"``. Field defaults reproduce the official
pydantic models, including the surprising ``use_mup=True`` when ``lm_config`` omits it.
Unknown keys are ignored, as the official loader does.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import VoxDeskError

ARCHITECTURES = ("voxcpm", "voxcpm2")

_DTYPES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "float16", "fp16": "float16"}
_DTYPES.update({"float32": "float32", "fp32": "float32"})


@dataclass
class RopeScaling:
    type: str
    long_factor: list[float]
    short_factor: list[float]
    original_max_position_embeddings: int


@dataclass
class LMConfig:
    """One MiniCPM4 stack. Derived stacks (residual LM, LocEnc, LocDiT) copy the base LM's."""

    hidden_size: int
    intermediate_size: int
    max_position_embeddings: int
    num_attention_heads: int
    num_hidden_layers: int
    num_key_value_heads: int
    rms_norm_eps: float
    rope_scaling: RopeScaling
    vocab_size: int
    scale_emb: float
    dim_model_base: int
    scale_depth: float
    rope_theta: float
    bos_token_id: int = 1
    eos_token_id: int = 2
    use_mup: bool = True
    kv_channels: int | None = None
    no_rope: bool = False
    qkv_bias: bool = False  # q/k/v projections with bias (Qwen2, reused by CosyVoice; never VoxCPM)

    @property
    def head_dim(self) -> int:
        return self.kv_channels if self.kv_channels else self.hidden_size // self.num_attention_heads

    @property
    def rope_factors(self) -> list[float]:
        """The LongRoPE factors the official code uses for the cos/sin table it builds."""
        long = self.max_position_embeddings > self.rope_scaling.original_max_position_embeddings
        return self.rope_scaling.long_factor if long else self.rope_scaling.short_factor

    @property
    def rope_scale(self) -> float:
        orig = self.rope_scaling.original_max_position_embeddings
        return math.sqrt(1 + math.log(self.max_position_embeddings / orig) / math.log(orig))

    def derive(self, **changes: Any) -> LMConfig:
        """A copy with some fields replaced (how the official code builds the sub-stacks)."""
        return dataclasses.replace(self, **changes)


@dataclass
class StackConfig:
    """``encoder_config`` / ``dit_config`` (full-size defaults, like the official ones)."""

    hidden_dim: int = 1024
    ffn_dim: int = 4096
    num_heads: int = 16
    num_layers: int = 4
    kv_channels: int | None = None


@dataclass
class VoxCPMConfig:
    architecture: str
    lm: LMConfig
    encoder: StackConfig
    dit: StackConfig
    patch_size: int
    feat_dim: int = 64
    residual_lm_num_layers: int = 8
    residual_lm_no_rope: bool = False
    fsq_latent_dim: int = 512
    fsq_scale: int = 9
    audio_vae: dict[str, Any] = field(default_factory=dict)
    max_length: int = 8192
    dtype: str = "bfloat16"
    device: str = "cuda"
    dit_mean_mode: bool = False
    cfm: dict[str, Any] = field(default_factory=dict)

    @property
    def is_v2(self) -> bool:
        return self.architecture == "voxcpm2"

    def residual_lm_config(self) -> LMConfig:
        no_rope = self.residual_lm_no_rope if self.is_v2 else False
        return self.lm.derive(num_hidden_layers=self.residual_lm_num_layers, vocab_size=0, no_rope=no_rope)

    def stack_lm_config(self, stack: StackConfig) -> LMConfig:
        return self.lm.derive(
            hidden_size=stack.hidden_dim,
            intermediate_size=stack.ffn_dim,
            num_attention_heads=stack.num_heads,
            num_hidden_layers=stack.num_layers,
            kv_channels=stack.kv_channels,
            vocab_size=0,
        )

    def to_dict(self) -> dict[str, Any]:
        """The official ``config.json`` layout."""
        lm = {k: v for k, v in dataclasses.asdict(self.lm).items() if v is not None}
        lm.pop("no_rope")
        lm.pop("qkv_bias")

        def stack(s: StackConfig) -> dict[str, Any]:
            return {k: v for k, v in dataclasses.asdict(s).items() if v is not None}

        out: dict[str, Any] = {
            "architecture": self.architecture,
            "lm_config": lm,
            "patch_size": self.patch_size,
            "feat_dim": self.feat_dim,
            "residual_lm_num_layers": self.residual_lm_num_layers,
            "scalar_quantization_latent_dim": self.fsq_latent_dim,
            "scalar_quantization_scale": self.fsq_scale,
            "encoder_config": stack(self.encoder),
            "dit_config": {**stack(self.dit), "cfm_config": dict(self.cfm)},
            "audio_vae_config": dict(self.audio_vae),
            "max_length": self.max_length,
            "device": self.device,
            "dtype": self.dtype,
        }
        if self.is_v2:
            out["residual_lm_no_rope"] = self.residual_lm_no_rope
            out["dit_config"]["dit_mean_mode"] = self.dit_mean_mode
        else:
            out["dit_mean_mode"] = self.dit_mean_mode
        return out


def _pick(cls: type, data: dict[str, Any], what: str) -> Any:
    """Build a dataclass from a dict, ignoring unknown keys and naming missing ones."""
    if not isinstance(data, dict):
        raise VoxDeskError(f"config.json: '{what}' must be an object.")
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in names})
    except TypeError as exc:
        raise VoxDeskError(f"config.json: '{what}' is incomplete ({exc}). Re-download the model.") from None


def parse_config(data: dict[str, Any]) -> VoxCPMConfig:
    """Turn the parsed official ``config.json`` into a :class:`VoxCPMConfig`."""
    if not isinstance(data, dict):
        raise VoxDeskError("config.json must hold a JSON object. Re-download the model.")
    arch = str(data.get("architecture", "voxcpm")).lower()
    if arch not in ARCHITECTURES:
        raise VoxDeskError(
            f"config.json: unknown architecture '{arch}'; VoxDesk runs VoxCPM-0.5B, VoxCPM1.5 and VoxCPM2."
        )
    for key in ("lm_config", "encoder_config", "dit_config"):
        if key not in data:
            raise VoxDeskError(f"config.json: '{key}' is missing. Re-download the model.")
    if not isinstance(data["lm_config"], dict):
        raise VoxDeskError("config.json: 'lm_config' must be an object. Re-download the model.")
    lm_raw = dict(data["lm_config"])
    if "rope_scaling" not in lm_raw:
        raise VoxDeskError("config.json: 'lm_config.rope_scaling' is missing. Re-download the model.")
    lm_raw["rope_scaling"] = _pick(RopeScaling, lm_raw["rope_scaling"], "lm_config.rope_scaling")
    lm = _pick(LMConfig, lm_raw, "lm_config")
    dit_raw = data["dit_config"]
    if not isinstance(dit_raw, dict) or "cfm_config" not in dit_raw:
        raise VoxDeskError("config.json: 'dit_config.cfm_config' is missing. Re-download the model.")
    v2 = arch == "voxcpm2"
    defaults: dict[str, Any] = (
        {"patch_size": 4, "residual_lm_num_layers": 8, "fsq_latent_dim": 512, "max_length": 8192}
        if v2
        else {"patch_size": 2, "residual_lm_num_layers": 6, "fsq_latent_dim": 256, "max_length": 4096}
    )
    renames = {"scalar_quantization_latent_dim": "fsq_latent_dim", "scalar_quantization_scale": "fsq_scale"}
    top = {renames.get(k, k): v for k, v in data.items()}
    keep = ("patch_size", "feat_dim", "residual_lm_num_layers", "fsq_latent_dim", "fsq_scale")
    keep += ("max_length", "dtype", "device")
    values = {**defaults, **{k: top[k] for k in keep if k in top}}
    cfg = VoxCPMConfig(
        architecture=arch,
        lm=lm,
        encoder=_pick(StackConfig, data["encoder_config"], "encoder_config"),
        dit=_pick(StackConfig, dit_raw, "dit_config"),
        residual_lm_no_rope=bool(data.get("residual_lm_no_rope", False)) if v2 else False,
        audio_vae=_object(data.get("audio_vae_config"), "audio_vae_config"),
        dit_mean_mode=bool(dit_raw.get("dit_mean_mode", False) if v2 else data.get("dit_mean_mode", False)),
        cfm=_object(dit_raw["cfm_config"], "dit_config.cfm_config"),
        **values,
    )
    _validate(cfg)
    return cfg


def _object(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise VoxDeskError(f"config.json: '{what}' must be an object. Re-download the model.")
    return dict(value)


# Every number that sizes an allocation or a loop, with the range VoxDesk accepts (the official
# checkpoints sit far inside). Checked before anything is built: a config.json saying 1e9
# positions or 1e5 layers is a damaged file, not a request for 64 GB or an hour of building.
_SIZE, _HEADS, _LAYERS, _POSITIONS = (1, 65536), (1, 1024), (1, 512), (1, 131072)
_LM_INTS = {
    "hidden_size": _SIZE,
    "intermediate_size": _SIZE,
    "max_position_embeddings": _POSITIONS,
    "num_attention_heads": _HEADS,
    "num_hidden_layers": _LAYERS,
    "num_key_value_heads": _HEADS,
    "vocab_size": (105, 1 << 20),
    "dim_model_base": _SIZE,
    "bos_token_id": (0, 1 << 20),
    "eos_token_id": (0, 1 << 20),
}
_LM_FLOATS = {"rms_norm_eps": (1e-12, 1.0), "scale_emb": (0.0, 1e6), "scale_depth": (0.0, 1e6)}
_LM_FLOATS["rope_theta"] = (1.0, 1e12)
_STACK_INTS = {"hidden_dim": _SIZE, "ffn_dim": _SIZE, "num_heads": _HEADS, "num_layers": _LAYERS}
_TOP_INTS = {
    "patch_size": (1, 64),
    "feat_dim": (1, 4096),
    "residual_lm_num_layers": _LAYERS,
    "fsq_latent_dim": _SIZE,
    "fsq_scale": (1, 65536),
    "max_length": _POSITIONS,
}
_RATES = ("sample_rate", "out_sample_rate")
_REDOWNLOAD = "Re-download the model."


def _int(value: Any, name: str, bounds: tuple[int, int]) -> int:
    low, high = bounds
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ok, value = True, int(value)
    if not ok:
        raise VoxDeskError(f"config.json: {name} must be a whole number, not {value!r}. {_REDOWNLOAD}")
    if not low <= value <= high:
        raise VoxDeskError(
            f"config.json: {name} is {value}; VoxDesk accepts {low} to {high}. Re-download the model."
        )
    return value


def _float(value: Any, name: str, bounds: tuple[float, float]) -> float:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise VoxDeskError(f"config.json: {name} must be a number, not {value!r}. Re-download the model.")
    if not (math.isfinite(value) and low <= value <= high):
        raise VoxDeskError(
            f"config.json: {name} is {value}; VoxDesk accepts {low:g} to {high:g}. Re-download the model."
        )
    return float(value)


def _factors(value: Any, name: str) -> None:
    if not isinstance(value, list) or not 1 <= len(value) <= 4096:
        raise VoxDeskError(f"config.json: {name} must be a list of numbers. Re-download the model.")
    for i, factor in enumerate(value):
        _float(factor, f"{name}[{i}]", (1e-6, 1e6))


def _check_bounds(cfg: VoxCPMConfig) -> None:
    """Types and ranges of every field that sizes something (see the table above)."""
    lm = cfg.lm
    for name, bounds in _LM_INTS.items():
        setattr(lm, name, _int(getattr(lm, name), f"lm_config.{name}", bounds))
    for name, bounds in _LM_FLOATS.items():
        setattr(lm, name, _float(getattr(lm, name), f"lm_config.{name}", bounds))
    if lm.kv_channels is not None:
        lm.kv_channels = _int(lm.kv_channels, "lm_config.kv_channels", (1, 4096))
    rope = lm.rope_scaling
    original = "lm_config.rope_scaling.original_max_position_embeddings"
    rope.original_max_position_embeddings = _int(rope.original_max_position_embeddings, original, _POSITIONS)
    _factors(rope.long_factor, "lm_config.rope_scaling.long_factor")
    _factors(rope.short_factor, "lm_config.rope_scaling.short_factor")
    for what, stack in (("encoder_config", cfg.encoder), ("dit_config", cfg.dit)):
        for name, bounds in _STACK_INTS.items():
            setattr(stack, name, _int(getattr(stack, name), f"{what}.{name}", bounds))
        if stack.kv_channels is not None:
            stack.kv_channels = _int(stack.kv_channels, f"{what}.kv_channels", (1, 4096))
    for name, bounds in _TOP_INTS.items():
        setattr(cfg, name, _int(getattr(cfg, name), name, bounds))
    for key, value in cfg.audio_vae.items():
        name = f"audio_vae_config.{key}"
        if isinstance(value, list):
            if len(value) > 32:
                raise VoxDeskError(f"config.json: {name} has {len(value)} entries. Re-download the model.")
            limit = (1, 384_000) if key == "sr_bin_boundaries" else (1, 64)
            cfg.audio_vae[key] = [_int(v, f"{name}[{i}]", limit) for i, v in enumerate(value)]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            cfg.audio_vae[key] = _int(value, name, (1000, 384_000) if key in _RATES else _SIZE)
    for key in ("encoder_rates", "decoder_rates"):
        if math.prod(cfg.audio_vae.get(key, [1])) > 65536:
            raise VoxDeskError(f"config.json: audio_vae_config.{key} multiply to too much. {_REDOWNLOAD}")
    for key, value in cfg.cfm.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            _float(value, f"dit_config.cfm_config.{key}", (-1e6, 1e6))
    for name, sub in (("lm_config", lm), ("encoder_config", cfg.stack_lm_config(cfg.encoder))):
        if not sub.kv_channels and sub.hidden_size % sub.num_attention_heads:
            raise VoxDeskError(f"config.json: {name} hidden size must be a multiple of its heads.")


def _validate(cfg: VoxCPMConfig) -> None:
    _check_bounds(cfg)
    if cfg.dtype not in _DTYPES:
        raise VoxDeskError(f"config.json: unsupported dtype '{cfg.dtype}'.")
    cfg.dtype = _DTYPES[cfg.dtype]
    lm = cfg.lm
    if lm.vocab_size < 105:
        raise VoxDeskError("config.json: vocab_size must be at least 105 (ids 101-104 are audio markers).")
    for name, sub in (
        ("lm", lm),
        ("residual LM", cfg.residual_lm_config()),
        ("encoder", cfg.stack_lm_config(cfg.encoder)),
        ("dit", cfg.stack_lm_config(cfg.dit)),
    ):
        if sub.num_attention_heads % sub.num_key_value_heads:
            raise VoxDeskError(f"config.json: {name} heads must be a multiple of num_key_value_heads.")
        if not sub.no_rope and len(sub.rope_factors) * 2 != sub.head_dim:
            raise VoxDeskError(f"config.json: {name} head size does not match the rope_scaling factors.")
    if cfg.audio_vae.get("latent_dim", cfg.feat_dim) != cfg.feat_dim:
        raise VoxDeskError("config.json: audio_vae_config.latent_dim must equal feat_dim.")


def load_config(model_dir: str | Path) -> VoxCPMConfig:
    path = Path(model_dir) / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise VoxDeskError(f"{path} not found: choose a VoxCPM model folder.") from None
    except OSError as exc:
        raise VoxDeskError(f"Cannot read {path}: {exc.strerror}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VoxDeskError(f"{path} is not valid JSON (line {exc.lineno}). Re-download the model.") from None
    return parse_config(data)


def torch_dtype_name(config_dtype: str, device: str, override: str | None = None) -> str:
    """The dtype a user gets: an explicit override, else fp32 on CPU and the config's on GPU."""
    if override:
        if override not in _DTYPES:
            raise VoxDeskError(f"Unknown dtype '{override}': use float32, bfloat16 or float16.")
        return _DTYPES[override]
    if not device.startswith("cuda"):
        return "float32"
    return _DTYPES.get(config_dtype, "bfloat16")
