"""Safe, strict loading of a VoxCPM model folder.

Tensors come from ``model.safetensors`` (else ``pytorch_model.bin``) and
``audiovae.safetensors`` (else ``audiovae.pth``). Pickles are only ever read with
``torch.load(weights_only=True)``, which refuses to run code. Unlike the official loader,
every missing, unexpected or mis-shaped tensor is an error that names the file and the key.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path

import torch

from app.engine.config import resolve_device
from app.errors import VoxDeskError
from app.models.voxcpm.config import VoxCPMConfig, load_config, torch_dtype_name
from app.models.voxcpm.minicpm import LongRoPE, pack_projections
from app.models.voxcpm.model import VoxCPM

VAE_PREFIX = "audio_vae."


def _damaged(path: Path, why: str) -> VoxDeskError:
    return VoxDeskError(f"{path.name} in {path.parent} is damaged or incomplete ({why}). Re-download it.")


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """All tensors of one weights file, on the CPU. ``{"state_dict": {...}}`` is unwrapped."""
    path = Path(path)
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            data = load_file(str(path), device="cpu")
        except (SafetensorError, OSError, ValueError) as exc:
            raise _damaged(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    else:
        try:
            data = torch.load(str(path), map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            raise _damaged(path, "it holds objects other than tensors, which VoxDesk will not load") from None
        except (RuntimeError, EOFError, OSError, ValueError) as exc:
            raise _damaged(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if isinstance(data, Mapping) and isinstance(data.get("state_dict"), Mapping):
        data = data["state_dict"]
    if not isinstance(data, Mapping):
        raise _damaged(path, "it does not hold a table of named tensors")
    for key, value in data.items():
        if not isinstance(value, torch.Tensor):
            raise _damaged(path, f"entry '{key}' is not a tensor")
    return dict(data)


def read_shapes(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of one weights file as shape-only (meta) tensors, for checks that load nothing.

    A safetensors file is checked from its header (which also catches a truncated file); other
    formats have no header to read, so they are loaded with :func:`read_tensors`."""
    path = Path(path)
    if path.suffix != ".safetensors":
        return {k: v.to("meta") for k, v in read_tensors(path).items()}
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), "pt") as f:
            return {k: torch.empty(f.get_slice(k).get_shape(), device="meta") for k in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError) as exc:
        raise _damaged(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def check_model_files(model_dir: str | Path, cfg: VoxCPMConfig) -> list[Path]:
    """Check that the weight files exist, are intact and match ``cfg`` without loading the model;
    returns the files checked. Raises :class:`VoxDeskError` naming the damaged file."""
    model_dir = Path(model_dir)
    main_path = _first(model_dir, ("model.safetensors", "pytorch_model.bin"))
    vae_path = _first(model_dir, ("audiovae.safetensors", "audiovae.pth"))
    with torch.device("meta"):
        expected = {k: v.shape for k, v in VoxCPM(cfg).state_dict().items()}
    main = {k: s for k, s in expected.items() if not k.startswith(VAE_PREFIX)}
    check_tensors(main, read_shapes(main_path), main_path)
    vae = {k[len(VAE_PREFIX) :]: s for k, s in expected.items() if k.startswith(VAE_PREFIX)}
    check_tensors(vae, read_shapes(vae_path), vae_path)
    return [main_path, vae_path]


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def check_tensors(expected: Mapping[str, torch.Size], got: Mapping[str, torch.Tensor], path: Path) -> None:
    """Raise a VoxDeskError naming the file and the keys if the tensors do not match exactly."""
    missing = sorted(k for k in expected if k not in got)
    if missing:
        raise VoxDeskError(f"{path.name} lacks tensor(s) {_listing(missing)}. Re-download the model.")
    extra = sorted(k for k in got if k not in expected)
    if extra:
        raise VoxDeskError(
            f"{path.name} has unexpected tensor(s) {_listing(extra)}: it does not match config.json."
        )
    for key, shape in expected.items():
        if tuple(got[key].shape) != tuple(shape):
            raise VoxDeskError(
                f"{path.name}: tensor '{key}' has shape {tuple(got[key].shape)}, "
                f"config.json needs {tuple(shape)}. The files do not belong together."
            )


def _first(model_dir: Path, names: tuple[str, ...]) -> Path:
    for name in names:
        if (model_dir / name).is_file():
            return model_dir / name
    raise VoxDeskError(f"{model_dir} has no {' or '.join(names)}: choose a complete VoxCPM model folder.")


def load_model(
    model_dir: str | Path,
    device: str = "auto",
    dtype: str | None = None,
    config: VoxCPMConfig | None = None,
) -> VoxCPM:
    """Build the network from ``config.json`` and load its weights, strictly.

    ``dtype`` overrides the default: fp32 on CPU, the config's dtype (bf16 for releases) on CUDA.
    The AudioVAE is kept in fp32.
    """
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise VoxDeskError(f"Model folder {model_dir} does not exist.")
    cfg = config or load_config(model_dir)
    device = resolve_device(device)
    torch_dtype = getattr(torch, torch_dtype_name(cfg.dtype, device, dtype))
    main_path = _first(model_dir, ("model.safetensors", "pytorch_model.bin"))
    vae_path = _first(model_dir, ("audiovae.safetensors", "audiovae.pth"))
    with torch.device("meta"):
        model = VoxCPM(cfg)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    main_sd = read_tensors(main_path)
    check_tensors({k: s for k, s in expected.items() if not k.startswith(VAE_PREFIX)}, main_sd, main_path)
    vae_sd = read_tensors(vae_path)
    vae_expected = {k[len(VAE_PREFIX) :]: s for k, s in expected.items() if k.startswith(VAE_PREFIX)}
    check_tensors(vae_expected, vae_sd, vae_path)
    state = {k: v.to(torch_dtype) if v.is_floating_point() else v for k, v in main_sd.items()}
    del main_sd
    state.update({VAE_PREFIX + k: v.float() if v.is_floating_point() else v for k, v in vae_sd.items()})
    model.load_state_dict(state, assign=True)
    for module in model.modules():
        if isinstance(module, LongRoPE):
            module.build(torch.device("cpu"), torch_dtype)
    leftover = [name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if leftover:
        raise VoxDeskError(f"Internal error: {_listing(leftover)} were not loaded.")
    model.audio_vae.fold_weight_norm()  # same weights, computed once instead of per call
    model = model.to(device).eval()
    if torch.device(device).type == "cuda":  # fewer, larger GEMMs; CPU keeps the official path
        pack_projections(model)
    return model
