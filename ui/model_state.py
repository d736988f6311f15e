"""What the window knows about the model: which folder, whether it is loaded, and its facts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ui.engine_host import ModelInfo


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
        return self.info.name if self.info else (self.folder.name if self.folder else "")

    @property
    def model_id(self) -> str:
        return self.info.model_id if self.info else ""

    @property
    def architecture(self) -> str:
        return self.info.architecture if self.info else "voxcpm2"

    @property
    def encoder_rate(self) -> int:
        return self.info.encoder_rate if self.info else 16000
