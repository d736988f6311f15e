"""Print VoxDesk's version, read from pyproject.toml (the one place it is kept).

The build scripts pass it to Inno Setup and into artefact names. A regex, not tomllib, so that
any Python the project supports (3.10 has no tomllib) can run it.
"""

import re
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def version() -> str:
    project = PYPROJECT.read_text(encoding="utf-8").split("[project]", 1)[1]
    match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    if match is None:
        raise SystemExit(f"no version in the [project] table of {PYPROJECT}")
    return match.group(1)


if __name__ == "__main__":
    sys.stdout.write(version() + "\n")
