"""installer/rthook_wine.py: torch's OpenMP affinity is turned off under Wine and nowhere else.

The hook's effect under Wine itself is shown by installer/build_windows_wine.sh (the frozen
self-test aborts with OMP Error #179 without it); here its decision is checked with a stand-in
ntdll, since this machine is not Windows.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import types
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parent.parent / "installer" / "rthook_wine.py"


def run_hook(monkeypatch: pytest.MonkeyPatch, os_name: str, ntdll: object | None) -> str | None:
    monkeypatch.delenv("KMP_AFFINITY", raising=False)
    if ntdll is not None:
        monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(ntdll=ntdll), raising=False)
    monkeypatch.setattr(os, "name", os_name)  # restored at teardown, before the environment
    runpy.run_path(str(HOOK))
    return os.environ.get("KMP_AFFINITY")


def test_under_wine_affinity_is_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    wine_ntdll = types.SimpleNamespace(wine_get_version=lambda: b"8.0")
    assert run_hook(monkeypatch, "nt", wine_ntdll) == "disabled"


def test_on_windows_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_hook(monkeypatch, "nt", types.SimpleNamespace()) is None


def test_on_linux_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_hook(monkeypatch, "posix", None) is None


def test_a_users_own_choice_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    wine_ntdll = types.SimpleNamespace(wine_get_version=lambda: b"8.0")
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(ntdll=wine_ntdll), raising=False)
    monkeypatch.setattr(os, "name", "nt")
    monkeypatch.setenv("KMP_AFFINITY", "compact")
    runpy.run_path(str(HOOK))
    assert os.environ["KMP_AFFINITY"] == "compact"
