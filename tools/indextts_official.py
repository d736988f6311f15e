"""What every IndexTTS golden script needs to run the official code on a VoxDesk tiny folder.

Runs in the official code's venv (tools/indextts_official_requirements.txt), never in VoxDesk's;
the golden scripts (tools/indextts_golden_<part>.py CHECKOUT FOLDER OUT_DIR) import it with
``sys.path.insert(0, str(Path(__file__).parent))``. Nothing here changes a number the official
code computes; three things are arranged so that it runs here and the same way everywhere:

- ``indextts/s2mel/dac/__init__.py`` imports descript-audiotools (training-only, not installed)
  and, through ``dac/nn/__init__.py``, the training losses. The 2.5 path needs only
  ``dac.nn.quantize`` (the length regulator's ``VectorQuantize``) and ``dac.nn.layers``: the two
  packages are registered without running their ``__init__`` so exactly those modules load.
- ``TextNormalizer.load`` takes WeTextProcessing on Linux and ``wetext`` elsewhere
  (``indextts/utils/front.py:116-139``); it runs with ``platform.system()`` answering "Windows"
  so the goldens use ``wetext``, VoxDesk's normaliser (and the behaviour on Windows, our first
  platform).
- ``HF_HUB_OFFLINE=1`` (a folder with every ``hf_cache`` part never downloads; a missing one fails
  instead of reaching the network), ``torch.set_num_threads(2)`` (as the goldens were made).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import platform
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np

COMMIT = "ee40fa7d6c6b8a2c7f06105f9f1e65775b74868c"
_DAC = ("indextts.s2mel.dac", "indextts.s2mel.dac.nn")


def _bare_package(name: str, folder: Path) -> None:
    """Register package ``name`` (its modules in ``folder``) without running its ``__init__``."""
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = [str(folder)]
    sys.modules[name] = module


@contextlib.contextmanager
def _windows() -> Any:
    real = platform.system
    platform.system = lambda: "Windows"
    try:
        yield
    finally:
        platform.system = real


def official_import(checkout: str | Path) -> Path:
    """Make ``import indextts...`` load the checkout at ``checkout``; returns its resolved path."""
    root = Path(checkout).resolve()
    if not (root / "indextts" / "infer_v2_5.py").is_file():
        sys.exit(f"error: {root} is not an index-tts checkout (no indextts/infer_v2_5.py)")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.path.insert(0, str(root))
    import torch

    torch.set_num_threads(2)
    for name in _DAC:
        _bare_package(name, root / Path(*name.split(".")))
    from indextts.utils import front

    load = front.TextNormalizer.load

    def load_wetext(self: Any) -> Any:
        with _windows():
            return load(self)

    front.TextNormalizer.load = load_wetext
    return root


def load_tree(folder: str | Path) -> Any:
    """The folder's ``config.yaml`` as the official code sees it (an OmegaConf ``DictConfig``)."""
    from omegaconf import OmegaConf

    return OmegaConf.load(str(Path(folder) / "config.yaml"))


def save_npz(path: str | Path, **arrays: Any) -> Path:
    """Write ``arrays`` (tensors or arrays; float64 -> float32) as a compressed ``.npz``, atomically."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    plain = {}
    for key, value in arrays.items():
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        value = np.asarray(value)
        plain[key] = value.astype(np.float32) if value.dtype == np.float64 else value
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "wb") as handle:
        np.savez_compressed(handle, **plain)
    os.replace(tmp, out)
    return out
