"""``scores.json``: what the back-check heard in each written file, kept next to the files.

One document per folder, keyed by file name, so several ``voxdesk synth --check`` runs into the
same folder add up; an unreadable old document is replaced (it only ever held scores).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app import atomic
from app.backcheck.run import Checked
from app.backcheck.takes import CheckPolicy

SCORES = "scores.json"
FORMAT = "voxdesk-scores"


def entry(checked: Checked, text: str, policy: CheckPolicy) -> dict[str, Any]:
    """One file's record: the kept take's score and what was heard, and every take's score."""
    best = checked.takes.best()
    score = best.score
    return {
        "text": text,
        "heard": score.heard if score else None,
        "metric": score.metric if score else None,
        "score": round(score.value, 4) if score else None,
        "flagged": policy.flagged(score),
        "takes": len(checked.takes),
        "seed": checked.seed,
        "take_scores": [round(t.score.value, 4) if t.score else None for t in checked.takes.takes],
        "take_seeds": [t.seed for t in checked.takes.takes],
        **({"error": checked.error} if checked.error else {}),
    }


def read_scores(folder: Path) -> dict[str, Any]:
    """The folder's file records (empty when there are none, or the file is unreadable)."""
    try:
        data = json.loads((folder / SCORES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) and data.get("format") == FORMAT else None
    return dict(files) if isinstance(files, dict) else {}


def write_scores(folder: Path, entries: dict[str, dict[str, Any]], policy: CheckPolicy) -> Path:
    """Merge ``entries`` (file name -> record) into the folder's ``scores.json``, atomically."""
    files = {**read_scores(folder), **entries}
    path = folder / SCORES
    atomic.write_json(
        path,
        {
            "format": FORMAT,
            "version": 1,
            "threshold": policy.threshold,
            "max_takes": policy.max_takes,
            "files": dict(sorted(files.items())),
        },
    )
    return path
