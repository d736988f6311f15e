"""Official-format LoRA folders: read, checked against the model, nothing executed.

The official trainer (``scripts/train_voxcpm_finetune.py``) writes a folder with
``lora_weights.safetensors`` (or ``lora_weights.ckpt``, a ``{"state_dict": ...}`` pickle) holding
``<module>.lora_A [r, in]`` and ``<module>.lora_B [out, r]`` for every adapted Linear, and
``lora_config.json``: ``{"base_model": ..., "lora_config": {enable_lm, enable_dit, enable_proj,
r, alpha, dropout, target_modules_lm, target_modules_dit, target_proj_modules}}``. Which Linears
are adapted follows the official ``_apply_lora``: in ``base_lm`` and ``residual_lm`` (LM), in
``feat_decoder.estimator`` (DiT) every ``nn.Linear`` whose attribute name is a target, and the
named projections of the model itself. The delta is ``B @ A @ x * alpha / r``.

A folder without ``lora_config.json`` gets the defaults ``VoxCPM(lora_weights_path=...)``
assumes (LM + DiT, r 8, alpha 16).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from app.errors import VoxDeskError
from app.models.voxcpm.config import VoxCPMConfig
from app.models.voxcpm.model import VoxCPM

WEIGHT_FILES = ("lora_weights.safetensors", "lora_weights.ckpt")
CONFIG_FILE = "lora_config.json"
ATTENTION = ["q_proj", "v_proj", "k_proj", "o_proj"]
LM_ROOTS, DIT_ROOT = ("base_lm.", "residual_lm."), "feat_decoder.estimator."
PROJECTIONS = ["enc_to_lm_proj", "lm_to_dit_proj", "res_to_dit_proj", "fusion_concat_proj"]


@dataclass(frozen=True)
class LoRAConfig:
    """The official ``LoRAConfig`` fields that inference needs (dropout is training only)."""

    enable_lm: bool = True
    enable_dit: bool = True
    enable_proj: bool = False
    r: int = 8
    alpha: float = 16.0
    target_modules_lm: tuple[str, ...] = tuple(ATTENTION)
    target_modules_dit: tuple[str, ...] = tuple(ATTENTION)
    target_proj_modules: tuple[str, ...] = tuple(PROJECTIONS)

    def __post_init__(self) -> None:
        if self.r < 1 or self.r > 1024:
            raise ValueError(f"rank r must be between 1 and 1024, not {self.r}")

    @property
    def scale(self) -> float:
        return self.alpha / self.r

    @classmethod
    def from_json(cls, data: dict) -> LoRAConfig:
        """From ``lora_config.json`` (its ``lora_config`` entry); unknown keys are ignored."""
        cfg = data.get("lora_config", data)
        if not isinstance(cfg, dict):
            raise ValueError("'lora_config' is not a table")
        kw: dict = {}
        for key in ("enable_lm", "enable_dit", "enable_proj"):
            if key in cfg:
                kw[key] = bool(cfg[key])
        if "r" in cfg:
            kw["r"] = int(cfg["r"])
        if "alpha" in cfg:
            kw["alpha"] = float(cfg["alpha"])
        for key in ("target_modules_lm", "target_modules_dit", "target_proj_modules"):
            if key in cfg:
                names = cfg[key]
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise ValueError(f"'{key}' is not a list of names")
                kw[key] = tuple(names)
        return cls(**kw)


def linears(cfg: VoxCPMConfig) -> dict[str, tuple[int, int]]:
    """``{official name: (in, out)}`` of every ``nn.Linear`` of a model of ``cfg`` (built on meta)."""
    with torch.device("meta"):
        ref = VoxCPM(cfg)
    return {n: (m.in_features, m.out_features) for n, m in ref.named_modules() if isinstance(m, nn.Linear)}


def sites(cfg: VoxCPMConfig, lora: LoRAConfig) -> dict[str, tuple[int, int]]:
    """``{module name: (in, out)}`` of every Linear the official ``_apply_lora`` would adapt."""
    found: dict[str, tuple[int, int]] = {}
    for name, shape in linears(cfg).items():
        short = name.rpartition(".")[2]
        lm = lora.enable_lm and name.startswith(LM_ROOTS) and short in lora.target_modules_lm
        dit = lora.enable_dit and name.startswith(DIT_ROOT) and short in lora.target_modules_dit
        proj = lora.enable_proj and name in lora.target_proj_modules
        if lm or dit or proj:
            found[name] = shape
    return found


@dataclass
class LoRA:
    """One adapter: ``weights[site] = (A [r, in], B [out, r])`` in fp32 on the CPU."""

    name: str
    config: LoRAConfig
    weights: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(repr=False)
    digest: bytes = b""  # content hash: keys the prefix cache and tells two adapters apart

    @property
    def rank(self) -> int:
        return self.config.r


def weights_file(folder: Path) -> Path | None:
    """The folder's weights file, safetensors first as the official loader does."""
    return next((folder / n for n in WEIGHT_FILES if (folder / n).is_file()), None)


def _read_config(folder: Path) -> LoRAConfig:
    path = folder / CONFIG_FILE
    if not path.is_file():
        return LoRAConfig()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("it is not a JSON table")
        return LoRAConfig.from_json(data)
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
        raise VoxDeskError(
            f"{path.name} in {folder} cannot be read ({exc}): choose another LoRA folder."
        ) from None


def _strip(key: str) -> str:
    """The parameter name without ``torch.compile``'s ``_orig_mod`` level."""
    return key.replace("._orig_mod.", ".").removeprefix("_orig_mod.")


def check_lora_folder(folder: str | Path, model_dir: str | Path | None = None) -> LoRAConfig:
    """Check a LoRA folder: against the model in ``model_dir`` when given, else on its own (every
    tensor an ``A [r, in]``/``B [out, r]`` pair of the config's rank, finite). VoxDeskError names
    the file."""
    from app.models.voxcpm.config import load_config

    if model_dir is not None:
        return read_lora(folder, load_config(model_dir)).config
    folder, path, config, tensors = _read(folder)
    shapes: dict[str, tuple[int, int]] = {}
    for key, t in tensors.items():
        site, _, part = key.rpartition(".")
        ok = part in ("lora_A", "lora_B") and t.dim() == 2 and t.is_floating_point()
        ok = ok and t.shape[0 if part == "lora_A" else 1] == config.r and bool(torch.isfinite(t).all())
        if not ok:
            raise VoxDeskError(
                f"{path.name} in {folder}: '{key}' is not a finite LoRA matrix of rank {config.r}: "
                "choose the folder the trainer wrote."
            )
        shapes.setdefault(site, (0, 0))
    for site in shapes:
        if f"{site}.lora_A" not in tensors or f"{site}.lora_B" not in tensors:
            raise VoxDeskError(f"{path.name} in {folder} lacks half of '{site}': it is incomplete.")
    if not tensors:
        raise VoxDeskError(
            f"{path.name} in {folder} holds no LoRA weights: choose the folder the trainer wrote."
        )
    return config


def _read(folder: str | Path) -> tuple[Path, Path, LoRAConfig, dict[str, torch.Tensor]]:
    """The folder, its weights file, its config and its tensors (names without ``_orig_mod``)."""
    from app.models.voxcpm.weights import read_tensors

    folder = Path(folder)
    if not folder.is_dir():
        raise VoxDeskError(f"LoRA folder {folder} does not exist: choose the folder the trainer wrote.")
    path = weights_file(folder)
    if path is None:
        raise VoxDeskError(
            f"{folder} has no lora_weights.safetensors or lora_weights.ckpt: it is not a LoRA folder."
        )
    config = _read_config(folder)
    try:
        tensors = {_strip(k): v for k, v in read_tensors(path).items()}
    except VoxDeskError as exc:
        raise VoxDeskError(str(exc).replace("Re-download it.", "Choose another LoRA folder.")) from None
    return folder, path, config, tensors


def read_lora(folder: str | Path, cfg: VoxCPMConfig) -> LoRA:
    """Read and check an official LoRA folder for a model of ``cfg``; raises :class:`VoxDeskError`
    with one line naming the file for a missing, damaged or mismatched one."""
    folder, path, config, tensors = _read(folder)
    expected = sites(cfg, config)
    weights: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for key in tensors:
        site, _, part = key.rpartition(".")
        if part not in ("lora_A", "lora_B") or site not in expected:
            raise VoxDeskError(
                f"{path.name} in {folder} holds '{key}', which {CONFIG_FILE} does not adapt on this model: "
                "the LoRA was made for another model or its config does not match."
            )
    for site, (n_in, n_out) in expected.items():
        a, b = tensors.get(f"{site}.lora_A"), tensors.get(f"{site}.lora_B")
        if a is None and b is None:
            continue  # as in the official loader, a module left out keeps a zero delta
        want = {"lora_A": (config.r, n_in), "lora_B": (n_out, config.r)}
        for part, t in (("lora_A", a), ("lora_B", b)):
            if t is None or tuple(t.shape) != want[part] or not t.is_floating_point():
                got = "missing" if t is None else f"shape {tuple(t.shape)} {t.dtype}"
                raise VoxDeskError(
                    f"{path.name} in {folder}: '{site}.{part}' is {got}, this model needs {want[part]} "
                    f"(r {config.r}): the LoRA was made for another model."
                )
        if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
            raise VoxDeskError(
                f"{path.name} in {folder}: '{site}' holds NaN or infinite values: it is damaged."
            )
        weights[site] = (a.float().contiguous(), b.float().contiguous())
    if not weights:
        raise VoxDeskError(
            f"{path.name} in {folder} holds no LoRA weights: choose the folder the trainer wrote."
        )
    h = hashlib.blake2b(repr(config).encode(), digest_size=16)
    for site in sorted(weights):
        h.update(site.encode())
        for t in weights[site]:
            h.update(t.numpy().tobytes())
    return LoRA(folder.name, config, weights, h.digest())


def write_random_lora(
    folder: str | Path,
    cfg: VoxCPMConfig,
    lora: LoRAConfig,
    seed: int = 0,
    ckpt: bool = False,
    std: float = 0.05,
) -> Path:
    """An official-format LoRA folder with random, non-zero A and B for a model of ``cfg`` (tests
    and benchmarks; a trained one comes from the trainer). ``ckpt``: the pickle format."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for site, (n_in, n_out) in sites(cfg, lora).items():
        state[f"{site}.lora_A"] = torch.randn(lora.r, n_in, generator=gen) / n_in**0.5
        state[f"{site}.lora_B"] = torch.randn(n_out, lora.r, generator=gen) * std
    if ckpt:
        torch.save({"state_dict": state}, folder / WEIGHT_FILES[1])
    else:
        from safetensors.torch import save_file

        save_file(state, str(folder / WEIGHT_FILES[0]))
    info = {"base_model": None, "lora_config": {**asdict(lora), "dropout": 0.0}}
    info["lora_config"] = {k: list(v) if isinstance(v, tuple) else v for k, v in info["lora_config"].items()}
    (folder / CONFIG_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
    return folder
