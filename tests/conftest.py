"""Test-wide setup: Qt renders offscreen, and the official-package harness is importable."""

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).parent))

# Session fixtures tiny_v1 / tiny_v2 (tiny random checkpoints) for every test file.
pytest_plugins = ["tiny"]
