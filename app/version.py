"""VoxDesk's version: kept in one place, pyproject.toml's ``[project] version``.

From a source checkout the file itself is read (an editable install's metadata keeps the version it
was installed with); an installed wheel or the frozen bundle asks the package metadata. No imports
beyond the standard library: ``installer/version.py`` runs this with a bare Python.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def from_pyproject(path: Path = PYPROJECT) -> str | None:
    """The ``[project]`` table's version (a regex: Python 3.10 has no tomllib), or None."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if "[project]" not in text:
        return None
    match = re.search(r'^version\s*=\s*"([^"]+)"', text.split("[project]", 1)[1], re.MULTILINE)
    return match.group(1) if match else None


def version() -> str:
    """``0.1.0``, or ``unknown`` when neither source is there (a damaged installation)."""
    found = from_pyproject(PYPROJECT)
    if found is not None:
        return found
    try:
        return metadata.version("voxdesk")
    except metadata.PackageNotFoundError:
        return "unknown"
