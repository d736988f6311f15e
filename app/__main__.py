"""``python -m app`` opens the VoxDesk window."""

import sys

from ui.main import run

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
