"""Before the window opens on Linux: can Qt's X11 platform plugin (xcb) load here?

When a library the plugin links is missing, Qt prints a hint that names ``libxcb-cursor0`` whatever
is actually missing and aborts the process (exit 134) before VoxDesk can log anything. So VoxDesk
asks ``ldd`` first which of the plugin's libraries (and theirs, Qt's own included) cannot be found,
and says so in the terminal and in voxdesk.log with the apt-get line that installs them.

No Qt import here: a missing library would make importing Qt itself fail.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

# Every library Qt's xcb plugin, libQt6XcbQpa and libQt6Gui/Widgets/DBus need on a Debian-family
# system (ldd over PySide6 6.8's Qt/plugins/platforms/libqxcb.so), and the package holding it
# (Debian 12, Ubuntu 22.04 and 24.04 names; T64 gives the names that the 64-bit time_t
# transition changed in Ubuntu 24.04 and Debian 13).
PACKAGES = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libOpenGL.so.0": "libopengl0",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libexpat.so.1": "libexpat1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libpng16.so.16": "libpng16-16",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
}
T64 = {"libglib2.0-0": "libglib2.0-0t64", "libpng16-16": "libpng16-16t64"}


def xcb_plugin() -> Path | None:
    """PySide6's ``libqxcb.so`` (in a venv or the frozen bundle), or None where there is none."""
    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        plugin = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def uses_xcb(env: Mapping[str, str]) -> bool:
    """Whether Qt will start on X11: asked for (``QT_QPA_PLATFORM=xcb``), or by default outside a
    Wayland session (on Wayland Qt uses its wayland plugin and never needs these libraries)."""
    wanted = env.get("QT_QPA_PLATFORM", "").strip()
    if wanted:
        return wanted.split(";")[0].split(":")[0] == "xcb"
    return not env.get("WAYLAND_DISPLAY")


def missing_libraries(plugin: Path) -> list[str]:
    """The libraries ``ldd`` cannot find for ``plugin`` (its whole dependency tree); [] when all are
    there or ``ldd`` is not available to ask."""
    ldd = shutil.which("ldd")
    if ldd is None:
        log.info("ldd is not available: Qt's libraries are not checked before the window opens")
        return []
    try:
        done = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("Could not check Qt's libraries with ldd: %s", exc)
        return []
    found = {line.split()[0] for line in done.stdout.splitlines() if line.strip().endswith("=> not found")}
    return sorted(found)


def _known_package(name: str) -> bool:
    apt_cache = shutil.which("apt-cache")
    if apt_cache is None:
        return False
    try:
        done = subprocess.run([apt_cache, "show", "--no-all-versions", name], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def apt_packages(libraries: list[str], t64: bool = False) -> tuple[list[str], list[str]]:
    """The packages that provide ``libraries``, and the libraries no package is known for."""
    packages, unknown = [], []
    for name in libraries:
        package = PACKAGES.get(name)
        if package is None:
            unknown.append(name)
            continue
        package = T64.get(package, package) if t64 else package
        if package not in packages:
            packages.append(package)
    return packages, unknown


def message(libraries: list[str], has_apt: bool, t64: bool = False) -> str:
    """What the terminal and the log say when the window cannot open."""
    lines = [
        "VoxDesk cannot open its window: Qt's X11 platform plugin (xcb) needs libraries this system "
        f"does not have: {', '.join(libraries)}."
    ]
    packages, unknown = apt_packages(libraries, t64)
    if has_apt and packages:
        lines.append("Install them, then start VoxDesk again:")
        lines.append(f"    sudo apt-get install {' '.join(packages)}")
    rest = unknown if has_apt else libraries
    if rest:
        hint = " (apt-file search NAME finds them)" if has_apt else ""
        lines.append(f"Install the packages that provide {', '.join(rest)} with your system's package "
                     f"manager{hint}, then start VoxDesk again.")  # fmt: skip
    lines.append("(The command line works without them: voxdesk --help.)")
    return "\n".join(lines)


def check_window_libraries(env: Mapping[str, str] | None = None, plugin: Path | None = None) -> str | None:
    """None when the window can start; otherwise the message saying what to install."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux") or not uses_xcb(env):
        return None
    plugin = plugin or xcb_plugin()
    if plugin is None:
        return None
    missing = missing_libraries(plugin)
    if not missing:
        return None
    has_apt = shutil.which("apt-get") is not None
    renamed = [T64[p] for p in apt_packages(missing)[0] if p in T64]
    t64 = has_apt and any(_known_package(name) for name in renamed)  # Ubuntu 24.04, Debian 13
    return message(missing, has_apt, t64)


def run_window(argv: list[str] | None = None) -> int:
    """``voxdesk`` without arguments and ``python -m app``: the check, then the window."""
    problem = check_window_libraries()
    if problem is not None:
        from ui.errors import setup_logging

        setup_logging()
        log.error("%s", problem)
        print(problem, file=sys.stderr)
        return 1
    from ui.main import run

    return run(argv)
