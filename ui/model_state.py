"""What the window knows about the model: which folder, whether it is loaded, and its facts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.models.download import KNOWN_MODELS
from ui.engine_host import ModelInfo


def model_title(folder_name: str, architecture: str, sample_rate: int, label: str = "") -> str:
    """The model's real name, not its folder's: a catalog model's key when the folder is named
    so, else the catalog model of this architecture and output rate, else the family's label
    (``FamilyInfo.label``: a folder called "model" that holds VoxCPM2 is "VoxCPM2")."""
    for known in KNOWN_MODELS:
        if known.key.casefold() == folder_name.casefold():
            return known.key
    for known in KNOWN_MODELS:
        if known.architecture == architecture and known.output_rate == sample_rate:
            return known.key
    return label or folder_name


@dataclass
class ModelState:
    folder: Path | None = None
    state: str = "none"  # none | loading | ready | busy | failed
    progress: tuple[int, str] = (0, "")
    info: ModelInfo | None = None
    device: str = ""

    @property
    def ready(self) -> bool:
        return self.info is not None and self.state in ("ready", "busy")

    def set_info(self, info: ModelInfo) -> None:
        self.info = info
        self.device = info.device
        self.state = "ready"

    @property
    def name(self) -> str:
        """What the window calls the model: its real name once loaded (a speech server's model
        keeps the name the server gives it), the folder's while loading."""
        if self.info is None:
            return self.folder.name if self.folder else ""
        if self.folder is None:
            return self.info.name
        return model_title(self.info.name, self.info.architecture, self.info.sample_rate, self.info.label)

    @property
    def model_id(self) -> str:
        return self.info.model_id if self.info else ""

    @property
    def architecture(self) -> str:
        return self.info.architecture if self.info else "voxcpm2"

    @property
    def controls(self) -> frozenset[str] | None:
        """What the loaded family honours (app/engine/family.py); None: not known (no model yet,
        or a speech server's), treated as VoxCPM's."""
        return self.info.controls if self.info else None

    @property
    def languages(self) -> tuple[str, ...]:
        """The loaded family's languages (its "language" control), () when it has none."""
        return self.info.languages if self.info else ()

    @property
    def encoder_rate(self) -> int:
        return self.info.encoder_rate if self.info else 16000
