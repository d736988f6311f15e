"""``python -m app`` opens the VoxDesk window."""

import sys

# (imports stay under the guard: the text normalizer's child process, started with "spawn",
# imports this module again as __mp_main__ and must not load the window)
if __name__ == "__main__":
    if sys.argv[1:2] == ["--self-test"]:  # the installation check (app/selftest.py), no window
        from app.cli import main

        sys.exit(main(sys.argv[1:]))
    from ui.qt_check import run_window

    sys.exit(run_window(sys.argv[1:]))
