"""Test-wide setup: Qt renders offscreen, the automatic CPU precision is fp32, and the
official-package harness is importable."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The automatic CPU precision is bf16 on a processor with native bf16 (app/cpu_precision.py); the
# suite's equalities (batch against one by one, engine against the official fp32 loop) are fp32
# ones, so every test process, subprocesses included, decides as on a CPU without it. The bf16
# rule itself is tested with explicit capabilities (tests/test_cpu_precision.py).
os.environ["VOXDESK_NO_NATIVE_BF16"] = "1"
sys.path.insert(0, str(Path(__file__).parent))

# Session fixtures tiny_v1 / tiny_v2 (tiny random checkpoints), tiny_asr (a tiny recognizer) and
# tiny_speaker (a tiny speaker-embedding model).
pytest_plugins = ["tiny", "tiny_asr", "tiny_speaker"]


@pytest.fixture(scope="module")
def golden_threads() -> Iterator[None]:
    """torch on 2 threads for a module, as the parity goldens were made (the order of a float sum
    depends on it): ``pytestmark = pytest.mark.usefixtures("golden_threads")``."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


_exit_status = 0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without running native destructors once the report is printed: Qt's application
    object, onnxruntime sessions and torch threads torn down in arbitrary order at interpreter
    exit crashed the process after every test had passed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_status)
