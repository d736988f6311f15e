"""The licences of the models VoxDesk downloads, and which ones the user has accepted.

A permissive licence (Apache-2.0) is shown; any other must be accepted before its model is
downloaded, once per model, and the acceptance is kept in ``<models folder>/licenses.json`` (which
licence, its address, when), so the command line and the window ask only once between them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from app import atomic

RECORD = "licenses.json"


@dataclass(frozen=True)
class License:
    name: str
    url: str
    permissive: bool  # True: shown, nothing to accept


APACHE_2 = License("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0", True)
# SenseVoice Small's weights (the model card's "model-license"); the sherpa-onnx export keeps them
FUNASR_MODEL = License(
    "FunASR Model Open Source License Agreement", "https://github.com/modelscope/FunASR/blob/main/MODEL_LICENSE",
    False,
)  # fmt: skip


def _record_path() -> Path:
    from app.paths import models_dir

    return models_dir() / RECORD


def _read() -> dict[str, Any]:
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def accepted(key: str, terms: License) -> bool:
    """Whether ``terms`` need no (further) acceptance for the model ``key``."""
    if terms.permissive:
        return True
    entry = _read().get(key)
    return isinstance(entry, dict) and (entry.get("license"), entry.get("url")) == (terms.name, terms.url)


def record_acceptance(key: str, terms: License) -> None:
    """Remember that the user accepted ``terms`` for the model ``key`` (atomic write)."""
    data = _read()
    data[key] = {
        "license": terms.name,
        "url": terms.url,
        "accepted": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    atomic.write_json(_record_path(), data)
