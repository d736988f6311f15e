"""Where VoxDesk keeps its files: data, config, logs and caches.

Every directory comes from platformdirs (app name "VoxDesk") unless the environment variable
``VOXDESK_HOME`` is set; then all of them live under that one folder (tests and portable
installs use it). Directories are created on first use.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "VoxDesk"
HOME_ENV = "VOXDESK_HOME"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def _dir(kind: str) -> Path:
    home = _home()
    if home is not None:
        path = home / kind
    else:
        import platformdirs  # imported lazily: the GPU machine's engine path has no platformdirs

        dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
        path = Path(
            {
                "data": dirs.user_data_dir,
                "config": dirs.user_config_dir,
                "logs": dirs.user_log_dir,
                "cache": dirs.user_cache_dir,
            }[kind]
        )
    path.mkdir(parents=True, exist_ok=True)
    return path


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
