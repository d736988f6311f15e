"""Before the window: the libraries Qt's xcb platform plugin needs are checked, and a missing one is
named in the terminal and in voxdesk.log with the apt-get line that installs it (Qt itself would
abort with exit 134 and name libxcb-cursor0 whatever is missing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ui.qt_check import PACKAGES, apt_packages, check_window_libraries, message, uses_xcb, xcb_plugin

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = xcb_plugin()
BASE = ("libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "libpthread.so", "libdl.so", "librt.so",
        "ld-linux", "linux-vdso", "libQt6")  # fmt: skip

needs_plugin = pytest.mark.skipif(
    PLUGIN is None or shutil.which("ldd") is None, reason="needs Linux, ldd and PySide6's xcb plugin"
)


def _needed(library: Path) -> list[str]:
    done = subprocess.run(["objdump", "-p", str(library)], capture_output=True, text=True, check=True)
    return re.findall(r"NEEDED\s+(\S+)", done.stdout)


def _broken_plugin(tmp_path: Path) -> Path:
    """A copy of the xcb plugin whose libxcb-icccm.so.4 is renamed to a library no system has
    (same length, so the ELF string table keeps its layout); Qt's libraries stay reachable
    through the plugin's $ORIGIN/../../lib RUNPATH."""
    qt = tmp_path / "Qt"
    (qt / "plugins" / "platforms").mkdir(parents=True)
    (qt / "lib").symlink_to(PLUGIN.parent.parent.parent / "lib")
    data = PLUGIN.read_bytes()
    assert data.count(b"libxcb-icccm.so.4\0") == 1
    copy = qt / "plugins" / "platforms" / "libqxcb.so"
    copy.write_bytes(data.replace(b"libxcb-icccm.so.4\0", b"libxcb-icccm.so.9\0"))
    return copy


@needs_plugin
def test_every_library_the_plugin_needs_has_its_package():
    """ldd over the real plugin: each library in its tree (but glibc's and Qt's own) is in the table."""
    done = subprocess.run(["ldd", str(PLUGIN)], capture_output=True, text=True, check=True)
    names = {line.split()[0] for line in done.stdout.splitlines() if "=>" in line}
    names = {Path(n).name for n in names if not n.startswith(BASE)}
    assert names, done.stdout
    # the tree of this machine's libraries, beyond what Qt links directly, varies by distribution
    direct = set()
    qt_lib = PLUGIN.parent.parent.parent / "lib"
    qt_libs = ("XcbQpa", "Gui", "Widgets", "DBus", "Core")
    for library in (PLUGIN, *(qt_lib / f"libQt6{name}.so.6" for name in qt_libs)):
        direct |= {n for n in _needed(library) if not n.startswith(BASE) and not n.startswith("libicu")}
    assert direct - set(PACKAGES) == set()


@needs_plugin
def test_readme_and_ci_install_what_qt_links():
    """README's apt line (and .ci/run, which installs it on the clean CI machine) holds the package
    of every library Qt's xcb plugin and Qt's GUI libraries link directly."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = re.search(r"apt-get install ([^`\n]+)`", readme).group(1).split()
    qt_lib = PLUGIN.parent.parent.parent / "lib"
    wanted = set()
    qt_libs = ("XcbQpa", "Gui", "Widgets", "DBus")
    for library in (PLUGIN, *(qt_lib / f"libQt6{name}.so.6" for name in qt_libs)):
        wanted |= {PACKAGES[n] for n in _needed(library) if n in PACKAGES}
    wanted -= {"zlib1g"}  # dpkg itself depends on it: every Debian system has it
    assert wanted - set(line) == set()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (extract,) = [x.strip() for x in ci.splitlines() if x.strip().startswith("README_APT=")]
    done = subprocess.run(["bash", "-c", f'set -euo pipefail\n{extract}\necho "$README_APT"'], cwd=ROOT,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == line


def test_message_names_the_libraries_and_the_apt_line():
    text = message(["libxcb-icccm.so.4", "libxcb-keysyms.so.1"], has_apt=True)
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in text
    assert "\n    sudo apt-get install libxcb-icccm4 libxcb-keysyms1\n" in text
    assert "libxcb-cursor0" not in text
    no_apt = message(["libxcb-icccm.so.4"], has_apt=False)
    assert "provide libxcb-icccm.so.4 with your system's package manager" in no_apt
    assert apt_packages(["libglib-2.0.so.0", "libgthread-2.0.so.0"], t64=True) == (["libglib2.0-0t64"], [])


def test_which_platform_needs_the_check():
    assert uses_xcb({}) and uses_xcb({"QT_QPA_PLATFORM": "xcb"})
    assert not uses_xcb({"WAYLAND_DISPLAY": "wayland-0"})  # Qt takes its wayland plugin
    assert uses_xcb({"WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "xcb"})
    assert not uses_xcb({"QT_QPA_PLATFORM": "offscreen"})


@needs_plugin
def test_a_missing_library_is_found_and_the_window_is_not_attempted(tmp_path):
    broken = _broken_plugin(tmp_path)
    assert check_window_libraries({"QT_QPA_PLATFORM": "offscreen"}, broken) is None
    text = check_window_libraries({"QT_QPA_PLATFORM": "xcb"}, broken)
    assert text is not None and "libxcb-icccm.so.9" in text and "apt-file search" in text
    assert check_window_libraries({"QT_QPA_PLATFORM": "xcb"}, PLUGIN) is None  # the real one loads


@needs_plugin
def test_voxdesk_says_it_in_the_terminal_and_the_log(tmp_path):
    """``voxdesk`` with no arguments, the plugin lookup pointed at the broken copy: one message on
    stderr, the same in voxdesk.log, exit 1, and Qt's GUI library never loaded."""
    broken = _broken_plugin(tmp_path)
    code = (
        "import sys, ui.qt_check as q\n"
        f"q.xcb_plugin = lambda: __import__('pathlib').Path({str(broken)!r})\n"
        "from app.cli import main\n"
        "rc = main([])\n"
        "assert 'PySide6.QtGui' not in sys.modules\n"
        "sys.exit(rc)\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "VOXDESK_HOME": str(tmp_path / "home")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("VoxDesk cannot open its window") and "libxcb-icccm.so.9" in done.stderr
    assert "Traceback" not in done.stderr
    logs = list((tmp_path / "home").rglob("voxdesk.log"))
    assert len(logs) == 1 and "libxcb-icccm.so.9" in logs[0].read_text(encoding="utf-8")


HIDE = """set -e
mount --bind "$LIBS" "$ORIG"
for f in "$ORIG"/*; do
  case "${f##*/}" in libxcb-icccm.so*|libxcb-keysyms.so*) continue;; esac
  ln -s "$f" "$FARM/${f##*/}"
done
mount --bind "$FARM" "$LIBS"
exec "$@"
"""


def _can_unshare() -> bool:
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@needs_plugin
@pytest.mark.skipif(not _can_unshare(), reason="needs root and unshare -m to hide a system library")
def test_a_minimal_system_without_two_xcb_packages(tmp_path):
    """The issue's case, for real: in a private mount namespace the system library folder lacks
    libxcb-icccm4's and libxcb-keysyms1's files. Qt alone aborts (134) naming libxcb-cursor0;
    ``voxdesk`` names the two and the apt line, and exits 1."""
    done = subprocess.run(["ldd", str(PLUGIN)], capture_output=True, text=True, check=True)
    rows = [line.split() for line in done.stdout.splitlines()]
    icccm = next(row[2] for row in rows if row and row[0] == "libxcb-icccm.so.4")
    libs = os.path.realpath(Path(icccm).parent)
    (tmp_path / "orig").mkdir()
    (tmp_path / "farm").mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "VOXDESK_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(ROOT), "LIBS": libs, "ORIG": str(tmp_path / "orig"),
           "FARM": str(tmp_path / "farm")}  # fmt: skip
    script = Path(sys.executable).parent / "voxdesk"
    entry = [str(script)] if script.is_file() else [sys.executable, "-m", "app"]
    run = subprocess.run(["unshare", "-m", "bash", "-c", HIDE, "hide", *entry], env=env, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in run.stderr
    assert "\n    sudo apt-get install libxcb-icccm4 libxcb-keysyms1\n" in run.stderr
    assert "libxcb-cursor0" not in run.stderr and "Traceback" not in run.stderr
    (log,) = (tmp_path / "home").rglob("voxdesk.log")
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in log.read_text(encoding="utf-8")
