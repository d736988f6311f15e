"""The files of a CosyVoice2 / CosyVoice3 folder, checked and read as untrusted input.

:func:`check_folder` finds every file inference needs (one line naming the first missing one);
:func:`load_pt` reads ``llm.pt`` / ``flow.pt`` / ``hift.pt`` with ``torch.load(weights_only=True)``,
which refuses to build objects other than tensors, so a pickle that would run code when loaded
is refused before anything of it runs. The ``.onnx`` files are checked when
:mod:`app.models.cosyvoice.frontend` opens them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from app.errors import VoxDeskError
from app.models.common.torch_files import bad_file, load_torch

YAMLS = {"cosyvoice2": "cosyvoice2.yaml", "cosyvoice3": "cosyvoice3.yaml"}
SPEECH_TOKENIZERS = {"cosyvoice2": "speech_tokenizer_v2.onnx", "cosyvoice3": "speech_tokenizer_v3.onnx"}
TOKENIZER_DIR = "CosyVoice-BlankEN"  # the yaml's qwen_pretrain_path, as the official loader sets it
TOKENIZER_FILES = ("vocab.json", "merges.txt")


@dataclass(frozen=True)
class CosyFolder:
    """The paths of one model folder's files (all checked to exist)."""

    family: str
    yaml: Path
    llm: Path
    flow: Path
    hift: Path
    campplus: Path
    speech_tokenizer: Path
    tokenizer_dir: Path


def check_folder(model_dir: str | Path) -> CosyFolder:
    """The files of a CosyVoice2/3 folder; :class:`VoxDeskError` naming the first one missing.

    The family is the one whose yaml the folder holds, as the official ``AutoModel`` decides."""
    root = Path(model_dir)
    if not root.is_dir():
        raise VoxDeskError(f"Model folder {root} does not exist: choose a CosyVoice2 or CosyVoice3 folder.")
    family = next((f for f, name in YAMLS.items() if (root / name).is_file()), None)
    if family is None:
        raise VoxDeskError(f"{root} has no cosyvoice2.yaml or cosyvoice3.yaml: choose a CosyVoice2 or "
                           "CosyVoice3 model folder.")  # fmt: skip
    files = {name: root / name for name in ("llm.pt", "flow.pt", "hift.pt", "campplus.onnx")}
    files["tokenizer"] = root / SPEECH_TOKENIZERS[family]
    for path in files.values():
        if not path.is_file():
            raise VoxDeskError(f"{path.name} is missing from {root}: download the complete model "
                               "folder again.")  # fmt: skip
    tokenizer_dir = root / TOKENIZER_DIR
    for name in TOKENIZER_FILES:
        if not (tokenizer_dir / name).is_file():
            raise VoxDeskError(f"{TOKENIZER_DIR}/{name} is missing from {root}: download the complete "
                               "model folder again.")  # fmt: skip
    return CosyFolder(family, root / YAMLS[family], files["llm.pt"], files["flow.pt"], files["hift.pt"],
                      files["campplus.onnx"], files["tokenizer"], tokenizer_dir)  # fmt: skip


def load_pt(path: str | Path) -> dict[str, torch.Tensor]:
    """The named tensors of a ``.pt`` file on the CPU (memory-mapped when the file allows it).

    Refused with one line naming the file: what :func:`load_torch` refuses (a missing, damaged or
    code-carrying file), and one that does not hold a table of named tensors."""
    path = Path(path)
    data = load_torch(path)
    if not isinstance(data, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in data.items()
    ):
        raise bad_file(path, "does not hold a table of named tensors")
    return dict(data)
