"""How a take made with other settings is described in its row ("made with CFG 2.0")."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication


def _tr(text: str) -> str:
    return QCoreApplication.translate("StaleTakes", text)


def describe_changes(changes: dict[str, Any]) -> str:
    """What a stale take was made with, e.g. "CFG 2.0, 10 steps" ("" when it is current).
    ``changes`` is :func:`app.project.take_changes`'s answer."""
    parts = []
    for name, value in changes.items():
        if name == "cfg_value":
            parts.append(_tr("CFG {0}").format(f"{value:.1f}"))
        elif name == "inference_timesteps":
            parts.append(_tr("{0} steps").format(value))
        elif name == "text":
            parts.append(_tr("other pronunciation or voice design"))
        elif name == "normalize":
            parts.append(_tr("numbers read as words") if value else _tr("numbers as written"))
        elif name == "context":
            parts.append(_tr("another model"))
        elif name == "seed":
            parts.append(_tr("seed {0}").format(value))
        else:
            parts.append(_tr("other settings"))
    return ", ".join(parts)
