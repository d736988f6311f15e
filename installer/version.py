"""Print VoxDesk's version (``app/version.py``: pyproject.toml is the one place it is kept).

The build scripts pass it to Inno Setup and into artefact names. Any Python the project supports
can run it: ``app/version.py`` needs only the standard library.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.version import PYPROJECT, from_pyproject  # noqa: E402


def version() -> str:
    found = from_pyproject()
    if found is None:
        raise SystemExit(f"no version in the [project] table of {PYPROJECT}")
    return found


if __name__ == "__main__":
    sys.stdout.write(version() + "\n")
