"""Where VoxDesk keeps its files: data, config, logs and caches.

Every directory comes from platformdirs (app name "VoxDesk") unless the environment variable
``VOXDESK_HOME`` is set; then all of them live under that one folder (tests and portable
installs use it). Directories are created on first use.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

APP_NAME = "VoxDesk"
HOME_ENV = "VOXDESK_HOME"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def _dir(kind: str) -> Path:
    path = _path(kind)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _path(kind: str) -> Path:
    home = _home()
    if home is not None:
        return home / kind
    import platformdirs  # imported lazily: the GPU machine's engine path has no platformdirs

    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    return Path(
        {
            "data": dirs.user_data_dir,
            "config": dirs.user_config_dir,
            "logs": dirs.user_log_dir,
            "cache": dirs.user_cache_dir,
        }[kind]
    )


def data_dir() -> Path:
    """User data: voices, models, projects."""
    return _dir("data")


def config_dir() -> Path:
    """Settings files."""
    return _dir("config")


def log_dir() -> Path:
    """Log files (tracebacks go here, not to the user)."""
    return _dir("logs")


def cache_dir() -> Path:
    """Rebuildable files: segment audio, prompt latents."""
    return _dir("cache")


def voices_dir() -> Path:
    """The voice library (one folder per voice)."""
    path = data_dir() / "voices"
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    """Downloaded model checkpoints (one folder per model)."""
    path = data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_writable(folders: Iterable[str | os.PathLike[str]] | None = None) -> None:
    """Fail with one plain line unless VoxDesk can create each folder and write a file in it (a
    read-only data folder, a full disk). Default: the data folder, its voices folder, the settings
    and cache folders. The window and ``voxdesk serve`` call it at start, before anything else
    writes."""
    from app.errors import VoxDeskError

    if folders is None:
        folders = [_path("data"), _path("data") / "voices", _path("config"), _path("cache")]
    for folder in map(Path, folders):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # A name app.quarantine recognises as a crash leftover, should this process die here.
            fd, probe = tempfile.mkstemp(prefix=".write-check.tmp-", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise VoxDeskError(
                f"VoxDesk cannot write to its folder {folder} ({exc.strerror or exc}). Make it writable, "
                f"or set {HOME_ENV} to a folder you can write to."
            ) from None
