#!/usr/bin/env bash
# Build the Linux VoxDesk bundle (dist/VoxDesk/) and dist/VoxDesk-<version>-linux-x86_64.tar.gz.
#
# On a fresh Debian/Ubuntu x86_64 machine with python3 (3.10-3.12) and python3-venv:
#   installer/build_linux.sh
# It creates build/venv-bundle, installs torch (CPU), VoxDesk and PyInstaller, builds with
# pyinstaller.spec (which writes the self-test checkpoint), strips the two big torch libraries,
# runs the frozen self-test with both executables, starts the window offscreen for a few seconds,
# reports unresolved shared-library dependencies, and prints build time, size and the largest parts.
# Environment: PYTHON (default python3), TORCH (pip requirement, default torch==2.13.0),
# TORCH_INDEX (a wheel index to take torch from, e.g. PyTorch's CPU index where PyPI would give the
# CUDA build), VENV (default build/venv-bundle), SKIP_TAR=1 to skip the archive.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
TORCH=${TORCH:-torch==2.13.0}
VENV=${VENV:-build/venv-bundle}
BUNDLE=dist/VoxDesk
LIBS=$BUNDLE/_internal
START=$(date +%s)

step() { printf '\n==> %s\n' "$*"; }

# ---- environment --------------------------------------------------------------------------------
step "venv $VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PY=$VENV/bin/python
if [ -n "${TORCH_INDEX:-}" ]; then
    "$PY" -m pip install --quiet "$TORCH" --index-url "$TORCH_INDEX"
else
    "$PY" -m pip install --quiet "$TORCH"
fi
# torch is already satisfied, so installing the app keeps the build chosen above.
"$PY" -m pip install --quiet ".[bundle]"
"$PY" -c "import torch; print('torch', torch.__version__)"
VERSION=$("$PY" installer/version.py)
if ! ldconfig -p | grep -q 'libportaudio\.so\.2'; then
    echo "note: libportaudio2 is not installed: the bundle will lack PortAudio (apt-get install libportaudio2)"
fi

# ---- bundle -------------------------------------------------------------------------------------
step "pyinstaller"
T0=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN pyinstaller.spec
T1=$(date +%s)
BEFORE=$(du -sm "$BUNDLE" | cut -f1)

step "strip libtorch_cpu.so and libtorch_python.so (a global strip breaks numpy's OpenBLAS)"
strip --strip-unneeded "$LIBS/torch/lib/libtorch_cpu.so" "$LIBS/torch/lib/libtorch_python.so"

# ---- checks -------------------------------------------------------------------------------------
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
export VOXDESK_HOME=$HOME_DIR QT_QPA_PLATFORM=offscreen

step "self-test: voxdesk-cli --self-test"
"$BUNDLE/voxdesk-cli" --self-test
step "self-test: VoxDesk --self-test"
"$BUNDLE/VoxDesk" --self-test | tail -1

step "window: VoxDesk starts (offscreen, no model configured) and stays up for 30 s"
set +e
timeout 30 "$BUNDLE/VoxDesk" >"$HOME_DIR/window.out" 2>&1
RC=$?
set -e
if [ "$RC" -ne 124 ] || compgen -G "$HOME_DIR/logs/crash-*.log" >/dev/null; then
    echo "the window did not stay up (exit code $RC):"
    cat "$HOME_DIR/window.out" "$HOME_DIR"/logs/crash-*.log 2>/dev/null || true
    exit 1
fi
echo "still running after 30 s: ok"

if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    SYSTEM_PA=$(ldconfig -p | awk '/libportaudio\.so\.2 .*x86-64/ {print $NF; exit}')
    if [ -n "$SYSTEM_PA" ]; then
        step "self-test with the system's PortAudio made unloadable (the bundle must use its own)"
        unshare -m sh -c "mount --bind /dev/null '$(readlink -f "$SYSTEM_PA")' && '$BUNDLE/voxdesk-cli' --self-test" |
            grep -E "audio libs|SELF-TEST"
    fi
fi

step "shared libraries the bundle cannot resolve (Wayland and GTK ones come from the desktop)"
find "$LIBS" -type f \( -name '*.so' -o -name '*.so.*' \) -print0 |
    xargs -0 -n 50 env LD_LIBRARY_PATH="$LIBS" ldd 2>/dev/null |
    awk '/:$/ {file=$1} /not found/ {print "  " file " " $1}' | sed "s|$LIBS/||" | sort -u || true

# ---- archive and report -------------------------------------------------------------------------
TARBALL=""
if [ "${SKIP_TAR:-0}" != 1 ]; then
    step "tar.gz"
    TARBALL=dist/VoxDesk-$VERSION-linux-x86_64.tar.gz
    tar -C dist -czf "$TARBALL" VoxDesk
fi

END=$(date +%s)
set +o pipefail  # head closing its pipe early is fine here
step "VoxDesk $VERSION: report"
echo "total time:       $((END - START)) s (PyInstaller $((T1 - T0)) s)"
echo "bundle:           $(du -sm "$BUNDLE" | cut -f1) MB, $(find "$BUNDLE" -type f | wc -l) files (before strip: $BEFORE MB)"
[ -n "$TARBALL" ] && echo "archive:          $(du -m "$TARBALL" | cut -f1) MB  $TARBALL"
echo "largest files:"
find "$BUNDLE" -type f -printf '%s %P\n' | sort -rn | awk 'NR <= 10 {printf "  %8.1f MB  %s\n", $1/1048576, $2}'
echo "largest folders (two levels into _internal):"
du -m --max-depth=2 "$LIBS" | sort -rn | sed -n '2,11p' | awk '{printf "  %8d MB  %s\n", $1, $2}' | sed "s|$LIBS/||"
