"""Test-wide setup: Qt renders offscreen, and the official-package harness is importable."""

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).parent))

# Session fixtures tiny_v1 / tiny_v2 (tiny random checkpoints) and tiny_asr (a tiny recognizer).
pytest_plugins = ["tiny", "tiny_asr"]
