"""The build scripts' size reports run under ``set -euo pipefail``: a ``sort | head`` there ends
the whole script with 141 (sort killed by SIGPIPE) after every check passed. The report lines are
taken from the scripts themselves and run over a folder large enough for sort to outlive head."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("build_windows_wine.sh", "build_linux.sh")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _largest_files_line(script: str) -> str:
    lines = (ROOT / "installer" / script).read_text(encoding="utf-8").splitlines()
    (line,) = [x for x in lines if x.startswith('find "$BUNDLE" -type f') and "sort -rn" in x]
    return line


@pytest.mark.parametrize("script", SCRIPTS)
def test_largest_files_report_exits_0_under_pipefail(script: str, tmp_path: Path) -> None:
    for i in range(3000):  # sort's output (~150 kB) is far more than one pipe buffer
        (tmp_path / f"file_with_a_fairly_long_name_{i:05d}.bin").write_bytes(b"x" * (i % 97))
    (tmp_path / "biggest.bin").write_bytes(b"x" * 3 * 1048576)
    command = f'set -euo pipefail\nBUNDLE="{tmp_path}"\n{_largest_files_line(script)}\n'
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.splitlines()
    assert 8 <= len(shown) <= 10
    assert shown[0].split() == ["3.0", "MB", "biggest.bin"]


def test_no_head_in_a_pipe_under_pipefail() -> None:
    """``| head`` anywhere pipefail is on is the same trap (``find -print -quit`` takes the first)."""
    for script in (ROOT / "installer").glob("*.sh"):
        pipefail = False
        for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            if "set -euo pipefail" in line or "set -o pipefail" in line:
                pipefail = True
            elif "set +o pipefail" in line:
                pipefail = False
            assert not (pipefail and "| head" in line), f"{script.name}:{number}: {line.strip()}"
