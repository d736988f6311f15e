"""Where the window keeps its training runs (Qt-free).

One folder per run under the data folder's ``training/``: ``data/`` (the clips, an
``app.train.clips.DataSet``), ``job/`` (an ``app.train.job.TrainJob``) and ``run.json``, which
says which voice the run trains and how far the wizard got. A run whose stage is still
"training" was left by a pause, a close, a quit or a crash: the next start offers to resume it.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from app import atomic, paths

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
# "data": clips being prepared; "training": a job exists and has not ended (running, paused or
# interrupted); "trained" / "cancelled": the job ended (its checkpoints stay usable); "kept": a
# voice was made from an ended run (it is not offered again).
STAGES = ("data", "training", "trained", "cancelled", "kept")


@dataclass(frozen=True)
class Run:
    folder: Path
    voice_id: str  # the library voice the run started from
    voice_name: str
    stage: str = "data"
    step: int = 0  # the last step seen saved (for the resume question; the job has the truth)
    total_steps: int = 0

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def job_dir(self) -> Path:
        return self.folder / "job"

    @property
    def unfinished(self) -> bool:
        return self.stage == "training" and self.job_dir.is_dir()


def root() -> Path:
    return paths.data_dir() / "training"


def new_run(voice_id: str, voice_name: str) -> Run:
    """A new, empty run folder for the voice (named by the voice and the time: never reused)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = root() / f"{voice_id}-{stamp}"
    n = 1
    while folder.exists():
        n += 1
        folder = root() / f"{voice_id}-{stamp}-{n}"
    folder.mkdir(parents=True)
    return save(Run(folder, voice_id, voice_name))


def save(run: Run) -> Run:
    record = asdict(run)
    del record["folder"]
    atomic.write_json(run.folder / RUN_FILE, record)
    return run


def update(run: Run, **changes: object) -> Run:
    """Save ``run`` with ``changes`` (stage, step, total_steps)."""
    if changes.get("stage", run.stage) not in STAGES:
        raise ValueError(f"unknown stage {changes['stage']!r}")
    return save(replace(run, **changes))  # type: ignore[arg-type]


def load(folder: Path) -> Run | None:
    """The run in ``folder``; None (logged) when its record is missing or damaged."""
    try:
        record = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        run = Run(
            folder,
            str(record["voice_id"]),
            str(record["voice_name"]),
            str(record["stage"]),
            int(record.get("step", 0)),
            int(record.get("total_steps", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("training run %s not readable: %s", folder, exc)
        return None
    return run if run.stage in STAGES else None


def _all() -> list[Run]:
    """Every readable run, the most recently saved first."""
    base = root()
    if not base.is_dir():
        return []
    records = [folder / RUN_FILE for folder in base.iterdir() if (folder / RUN_FILE).is_file()]
    records.sort(key=lambda record: record.stat().st_mtime, reverse=True)
    return [run for run in map(load, (record.parent for record in records)) if run is not None]


def unfinished() -> list[Run]:
    """Runs left in the "training" stage, the most recent first."""
    return [run for run in _all() if run.unfinished]


def open_for(voice_id: str) -> Run | None:
    """The voice's most recent run still in preparation or training, or ended with checkpoints no
    voice was kept from (None: none)."""
    for run in _all():
        if run.voice_id != voice_id or run.stage == "kept":
            continue
        if run.stage in ("data", "training") or run.step > 0:
            return run
    return None
