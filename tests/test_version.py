"""One version, from pyproject.toml: ``voxdesk --version``, the build scripts' installer/version.py
and the window's About box (tests/test_ui_about.py) all show it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app import version as versions
from app.cli import main

ROOT = Path(__file__).resolve().parent.parent
DECLARED = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)


def test_version_option_prints_the_pyproject_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"VoxDesk {DECLARED}"


def test_the_build_scripts_read_the_same_version():
    done = subprocess.run([sys.executable, str(ROOT / "installer" / "version.py")], capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    assert done.stdout == DECLARED + "\n"


def test_without_pyproject_the_installed_metadata_answers(monkeypatch, tmp_path):
    """A wheel or the frozen bundle has no pyproject.toml beside app/: the package metadata says it."""
    from importlib import metadata

    monkeypatch.setattr(versions, "PYPROJECT", tmp_path / "absent.toml")
    assert versions.version() == metadata.version("voxdesk")


def test_a_pyproject_without_a_version_is_not_guessed(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.other]\nversion = "9.9"\n[project]\nname = "x"\n', encoding="utf-8")
    assert versions.from_pyproject(path) is None
    path.write_text('[project]\nname = "x"\nversion = "2.3.4"\n', encoding="utf-8")
    assert versions.from_pyproject(path) == "2.3.4"
