"""How far what the recognizer heard is from what the segment should say.

Both texts are normalized the same way (Unicode NFKC, case folded, punctuation and symbols
dropped, whitespace collapsed), then cut into units: every CJK character (Han, kana, Hangul) is
a unit of its own and every other run of letters and digits is a word. The score is the edit
distance between the two unit sequences over the number of units in the text (computed by
jiwer). For Chinese or Japanese text that is the character error rate (CER), for English the
word error rate (WER); mixed text gets the mixed error rate that code-switching recognition
uses (Chinese characters and English words together).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import jiwer

_CJK = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3131-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
)
_UNITS = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_DESIGN_PREFIX = re.compile(r"^\s*[(（][^)）]*[)）]")  # VoxCPM2 voice design: "(calm)text"


@dataclass(frozen=True)
class Score:
    """``value``: errors per unit of the text (0 = heard exactly; may exceed 1 when the recognizer
    heard far more than was said). ``metric``: "cer" or "wer", whichever names the units used."""

    value: float
    metric: str
    heard: str

    def label(self) -> str:
        """'CER 4%' / 'WER 35%'."""
        return f"{self.metric.upper()} {round(self.value * 100)}%"


def normalize(text: str) -> str:
    """NFKC, case folded, punctuation/symbols removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = [" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text]
    return " ".join("".join(kept).split())


def units(text: str) -> list[str]:
    """The normalized text cut into CJK characters and other words."""
    return _UNITS.findall(normalize(text))


def is_cjk(unit: str) -> bool:
    return len(unit) == 1 and bool(re.match(f"[{_CJK}]", unit))


def spoken_text(model_text: str) -> str:
    """The words the model was asked to say: the text sent to it without a voice-design prefix."""
    return _DESIGN_PREFIX.sub("", model_text, count=1)


def guess_language(text: str) -> str:
    """The recognizer's language for a segment's text ("zh", "en", "ja", "ko" or "auto"): short
    clips are often misidentified, and the text says which language it should be."""
    if re.search("[\u3040-\u30ff]", text):
        return "ja"
    if re.search("[\uac00-\ud7af]", text):
        return "ko"
    han = len(re.findall("[\u4e00-\u9fff\u3400-\u4dbf]", text))
    latin = len(re.findall("[A-Za-z]", text))
    if han and han * 2 >= latin:
        return "zh"
    return "en" if latin else "auto"


def score(expected: str, heard: str) -> Score:
    """Score ``heard`` against ``expected``; CER when most of the expected units are CJK."""
    want, got = units(expected), units(heard)
    cjk = sum(map(is_cjk, want))
    metric = "cer" if want and cjk * 2 >= len(want) else "wer"
    if not want:
        return Score(0.0 if not got else 1.0, metric, heard)
    if not got:
        return Score(1.0, metric, heard)
    value = jiwer.wer(" ".join(want), " ".join(got))
    return Score(float(value), metric, heard)
