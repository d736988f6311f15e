"""``python -m app`` opens the VoxDesk window."""

import sys

from ui.main import run

if __name__ == "__main__":
    if sys.argv[1:2] == ["--self-test"]:  # the installation check (app/selftest.py), no window
        from app.cli import main

        sys.exit(main(sys.argv[1:]))
    sys.exit(run(sys.argv[1:]))
