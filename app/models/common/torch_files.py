"""Read PyTorch checkpoint files (``.pt`` / ``.pth`` / ``.bin``) as untrusted input.

``torch.load(weights_only=True)`` refuses to build objects other than tensors and plain
containers, so a pickle that would run code when loaded is refused before anything of it runs.
Every failure is one line naming the file (:class:`VoxDeskError`).
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch

from app.errors import VoxDeskError


def bad_file(path: Path, why: str) -> VoxDeskError:
    """The one-line error for a model file that cannot be used."""
    return VoxDeskError(f"{path.name} in {path.parent} {why}: download the model folder again.")


def load_torch(path: str | Path) -> Any:
    """What a checkpoint file holds (tensors, dicts, lists, numbers), on the CPU.

    Memory-mapped when the file is in torch.save's zip format. Refused with one line naming the
    file: a missing file, one that is not a PyTorch checkpoint or is cut short, one whose pickle
    names anything but tensors and plain containers (loading it could run code; nothing of it is
    run)."""
    path = Path(path)
    if not path.is_file():
        raise VoxDeskError(f"{path.name} is missing from {path.parent}: download the model folder again.")
    try:
        # torch.save's zip format can be mapped instead of read; the legacy format cannot.
        mmap = zipfile.is_zipfile(path)
        return torch.load(str(path), map_location="cpu", weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as exc:
        if "Weights only load failed" in str(exc) and "GLOBAL" in str(exc):
            raise bad_file(path, "holds Python objects other than tensors (loading it could run code; "
                           "nothing of it was run)") from None  # fmt: skip
        raise bad_file(path, "is damaged or incomplete, or not a PyTorch checkpoint") from None
    except Exception:  # noqa: BLE001 - garbage makes the unpickler fail in many ways (KeyError, EOFError...)
        raise bad_file(path, "is damaged or incomplete, or not a PyTorch checkpoint") from None
