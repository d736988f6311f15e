"""Text normalization equals the official ``TextNormalizer`` (voxcpm 2.0.3) output, input for input.

Both run on the same libraries (wetext's FST grammars, inflect, regex); the official class is
imported from the test-only package and compared directly, so a new wetext or inflect release
that changes a reading changes both sides alike.
"""

import os
import subprocess
import sys
import time

import pytest
from official import import_official

from app.text.normalize import normalize_for_speech, normalizer

CASES = [
    "今天是2024年3月5日。",
    "气温-3.5℃，湿度85%。",
    "这件衣服¥299.99，打八折。",
    "我的电话是13812345678。",
    "会议在10:30开始，14:45结束。",
    "他跑了3.2km，用时25分钟。",
    "增长率为12.5%，同比增长3倍。",
    "2023-12-31是最后一天。",
    "共有1,234,567人参加。",
    "体温是37.5°C。",
    "面积是120m²，体积是3m³。",
    "x-2=5，求x。",
    "550 + 320 = 870 千卡。",
    "分数是3/4，约0.75。",
    "价格在$100到$200之间。",
    "√4≈2，而1<2。",
    "【通知】请于（明天）8点到达——谢谢。",
    "第1名获得了500元奖金。",
    "我买了2kg苹果和500g香蕉。",
    "iPhone 15 Pro售价7999元。",
    "**重要**：请看[链接](http://a.b)😀。",
    "号码是010-12345678。",
    "2024/03/05 下午3点15分见。",
    "On March 5, 2024, it cost $1,234.56.",
    "The meeting starts at 10:30 am.",
    "Call me at 555-123-4567.",
    "It grew 12.5% in 2023.",
    "She ran 5km in 25 minutes.",
    "The temperature is -3.5°C today.",
    "I have 3 apples and 1/2 an orange.",
    "Dr. Smith lives at 221B Baker St.",
    "The 1st, 2nd and 3rd places.",
    "Pay €50 or £40 by 12/25/2024.",
    "Version 2.0.3 was released.",
    "Hello world, no numbers here.",
    "He weighs 70kg and is 1.8m tall.",
    "# Title\n\n- item 1\n- item 2",
    "x² + y² = z²",
    "Tel: +1 (800) 555-0199, ext. 42.",
    "About 3.14159 or 22/7.",
    "ＡＢＣ１２３全角",
]


@pytest.fixture(scope="module")
def official():
    import_official()
    from voxcpm.utils.text_normalize import TextNormalizer

    return TextNormalizer()


@pytest.mark.parametrize("text", CASES)
def test_equals_official_normalizer(official, text):
    assert normalizer().normalize(text) == official.normalize(text)


def test_readings_are_spelled_out():
    """Not an identity: numbers, money, percent, dates and phone numbers become words."""
    said = normalize_for_speech
    assert said("增长率为12.5%。") == "增长率为百分之十二点五。"
    assert said("我的电话是13812345678。") == "我的电话是幺三八幺二三四五六七八。"
    assert said("It grew 12.5% in 2023.") == "It grew twelve point five percent in twenty twenty three."
    assert said("Pay €50.") == "Pay fifty euros."
    assert not any(c.isdigit() for c in said("会议在10:30开始，花了¥299.99。"))


def test_grammars_ship_with_wetext_and_load_offline():
    """wetext reads its FSTs from its own installed package; a fresh interpreter with every
    socket refused still loads them and normalizes (nothing fetched at run time)."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from importlib.resources import files\n"
        "import wetext\n"
        "from app.text.normalize import normalize_for_speech\n"
        "assert files('wetext.fsts').joinpath('zh/tn/tagger.fst').is_file()\n"
        "print(normalize_for_speech('3.5%'), normalize_for_speech('气温3.5℃'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["three", "point", "five", "percent", "气温三点五摄氏度"]


def test_window_normalizer_child_ends_with_its_parent() -> None:
    """A window that crashes (or leaves with ``os._exit``) runs no ``atexit`` hook; its grammar
    child must not live on as an orphan holding the grammars' memory."""
    script = (
        "import os\n"
        "from app.text.normalize import NormalizerProcess\n"
        "proc = NormalizerProcess()\n"
        "print(proc.submit('3 km').result(timeout=120), flush=True)\n"
        "print(*proc._pool._processes, flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=180, check=True
    )
    spoken, pids = out.stdout.splitlines()[-2:]
    assert spoken.strip() and "3" not in spoken
    child = int(pids.split()[0])
    deadline = time.monotonic() + 20
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the normalizer child outlived its parent"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has ended; only its parent (gone here) would reap it.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return True
