"""How a take made with other settings is described in its row ("made with CFG 2.0")."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication


def describe_changes(changes: dict[str, Any]) -> str:
    """What a stale take was made with, e.g. "CFG 2.0, 10 steps" ("" when it is current).
    ``changes`` is :func:`app.project.take_changes`'s answer."""
    parts = []
    for name, value in changes.items():
        if name == "cfg_value":
            parts.append(QCoreApplication.translate("StaleTakes", "CFG {0}").format(f"{value:.1f}"))
        elif name == "inference_timesteps":
            parts.append(QCoreApplication.translate("StaleTakes", "{0} steps").format(value))
        elif name == "text":
            parts.append(QCoreApplication.translate("StaleTakes", "other pronunciation or voice design"))
        elif name == "normalize" and value:
            parts.append(QCoreApplication.translate("StaleTakes", "numbers read as words"))
        elif name == "normalize":
            parts.append(QCoreApplication.translate("StaleTakes", "numbers as written"))
        elif name == "context":
            parts.append(QCoreApplication.translate("StaleTakes", "another model"))
        elif name == "voice" and value:
            parts.append(QCoreApplication.translate("StaleTakes", "voice {0}").format(value))
        elif name == "voice":
            parts.append(QCoreApplication.translate("StaleTakes", "the model's own voice"))
        elif name == "rate":
            parts.append(QCoreApplication.translate("StaleTakes", "rate {0}×").format(f"{value:.2f}"))
        elif name == "instruction" and value:
            parts.append(QCoreApplication.translate("StaleTakes", "instruction “{0}”").format(value))
        elif name == "instruction":
            parts.append(QCoreApplication.translate("StaleTakes", "no instruction"))
        elif name == "emotion" and value:
            parts.append(QCoreApplication.translate("StaleTakes", "emotion {0}").format(value))
        elif name == "emotion":
            parts.append(QCoreApplication.translate("StaleTakes", "no emotion"))
        elif name == "language" and value:
            parts.append(QCoreApplication.translate("StaleTakes", "language {0}").format(value))
        elif name == "language":
            parts.append(QCoreApplication.translate("StaleTakes", "language detected from the text"))
        elif name == "seed":
            parts.append(QCoreApplication.translate("StaleTakes", "seed {0}").format(value))
        else:
            parts.append(QCoreApplication.translate("StaleTakes", "other settings"))
    return ", ".join(parts)
