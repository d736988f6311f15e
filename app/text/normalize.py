"""Spoken forms of numbers, dates, times, money, units, percentages and symbols (Chinese, English).

The same steps, in the same order and with the same libraries, as the official
``voxcpm.utils.text_normalize.TextNormalizer.normalize`` (2.0.3), so that a text normalized here
is token for token what the official package sends to the model with ``normalize=True``:

1. markdown, emoji, tabs and newlines cleaned away (``regex`` for the emoji classes);
2. a text with any CJK ideograph is Chinese, any other English;
3. Chinese: ``=`` read as 等于, a hyphen before a digit spaced out (so ``x-2`` is not "x negative
   two") when the text has digits or maths signs, then wetext's Chinese TN grammar (erhua
   removed), spaces between CJK characters dropped, ² ³ √ ≈ < spelled, brackets removed;
4. English: wetext's English TN grammar, then any digits left spelled by ``inflect``.

wetext's grammars are compiled FSTs shipped inside its wheel (``wetext/fsts``, read with
``importlib.resources``): nothing is downloaded, at install or at run time. Loading them takes a
few seconds, so :func:`normalizer` builds one instance, once, on first use (thread-safe).
"""

from __future__ import annotations

import atexit
import re
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from functools import lru_cache
from itertools import groupby
from typing import Any

from app.errors import VoxDeskError

CJK = re.compile(r"[\u4e00-\u9fff]+")
_MATHS = re.compile(r"([\d$%^*_+≥≤≠×÷?=])")
_DASH_BEFORE_DIGIT = re.compile(r"(?<=[a-zA-Z0-9])-(?=\d)")
_SPELLED_ZH = {"²": "平方", "³": "立方", "√": "根号", "≈": "约等于", "<": "小于"}
_BRACKETS_ZH = {"（": " ", "）": " ", "【": " ", "】": " ", "`": "", "——": " "}
_MARKDOWN = (
    (re.compile(r"```.*?```", re.DOTALL), ""),  # code blocks
    (re.compile(r"`[^`]*`"), ""),  # inline code
    (re.compile(r"!\[[^\]]*\]\([^\)]+\)"), ""),  # images
    (re.compile(r"\[([^\]]+)\]\([^)]+\)"), r"\1"),  # links keep their text
    (re.compile(r"^(\s*)-\s+", re.MULTILINE), r"\1"),  # list bullets
    (re.compile(r"<[^>]+>"), ""),  # HTML tags
    (re.compile(r"^#{1,6}\s*", re.MULTILINE), ""),  # heading marks
    (re.compile(r"\n\s*\n"), "\n"),  # blank lines
)


def is_chinese(text: str) -> bool:
    return bool(CJK.search(text))


def _clean(text: str) -> str:
    for pattern, repl in _MARKDOWN:
        text = pattern.sub(repl, text)
    text = _emoji().sub("", text.strip())
    return text.replace("\n", " ").replace("\t", " ").replace("“", '"').replace("”", '"')


@lru_cache(maxsize=1)
def _emoji():
    import regex

    return regex.compile(r"\p{Emoji_Presentation}|\p{Emoji}\uFE0F", flags=regex.UNICODE)


def drop_cjk_spaces(text: str) -> str:
    """Keep a space only between two ASCII non-space characters (the official ``replace_blank``,
    which reads the first character as the neighbour of a leading space)."""
    out = []
    for i, c in enumerate(text):
        if c != " ":
            out.append(c)
            continue
        before, after = text[i - 1], text[i + 1] if i + 1 < len(text) else ""
        if after.isascii() and after not in ("", " ") and before.isascii() and before != " ":
            out.append(c)
    return "".join(out)


def spell_digits(text: str, words) -> str:
    """Every run of digits (``str.isdigit``, so ² and full-width digits too) spelled out in
    English words by ``inflect``."""
    runs = ("".join(run) for _, run in groupby(text, str.isdigit))
    return "".join(words.number_to_words(r) if r[0].isdigit() else r for r in runs)


class TextNormalizer:
    """wetext (zh + en TN grammars) and inflect, loaded once; :meth:`normalize` is pure."""

    def __init__(self) -> None:
        try:
            import inflect
            from wetext import Normalizer
        except ImportError as exc:
            raise VoxDeskError(
                f"Text normalization is not installed ({exc.name} is missing): reinstall VoxDesk, "
                "or switch off reading numbers as words."
            ) from None

        self._zh = Normalizer(lang="zh", operator="tn", remove_erhua=True)
        self._en = Normalizer(lang="en", operator="tn")
        self._words = inflect.engine()
        self._lock = threading.Lock()  # wetext's normalizer is not documented as thread-safe

    def normalize(self, text: str) -> str:
        chinese = is_chinese(text)
        text = _clean(text)
        with self._lock:
            if chinese:
                text = text.replace("=", "等于")
                if _MATHS.search(text):
                    text = _DASH_BEFORE_DIGIT.sub(" - ", text)
                text = drop_cjk_spaces(self._zh.normalize(text))
                for table in (_SPELLED_ZH, _BRACKETS_ZH):
                    for sign, spoken in table.items():
                        text = text.replace(sign, spoken)
                return text
            return spell_digits(self._en.normalize(text), self._words)


_instance: TextNormalizer | None = None
_instance_lock = threading.Lock()


def normalizer() -> TextNormalizer:
    """The process-wide normalizer (its grammars load on the first call, a few seconds)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = TextNormalizer()
        return _instance


def normalize_for_speech(text: str) -> str:
    """``text`` with numbers, dates, money, units and symbols written as they are spoken."""
    engine = normalizer()
    try:
        return engine.normalize(text)
    except Exception:  # noqa: BLE001 - a grammar failing on odd input is one plain message
        raise VoxDeskError(
            "This text could not be normalized: switch off reading numbers as words for it."
        ) from None


class NormalizerProcess:
    """:func:`normalize_for_speech` in one child process, for the window.

    wetext's grammars run in C++ that keeps Python's GIL while it works: seconds to load, tens
    of milliseconds a text. In the window's process that would freeze the GUI thread; a child
    has its own interpreter. :meth:`submit` returns at once with a future of the spoken text.
    One child serves every window of the process and starts on the first :meth:`submit`.
    """

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def submit(self, text: str) -> Future[str]:
        with self._lock:
            if self._pool is None:
                import multiprocessing

                context = multiprocessing.get_context("spawn")  # no forked Qt or torch state
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=context, initializer=_yield_to_the_window
                )
            return self._pool.submit(normalize_for_speech, text)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _yield_to_the_window() -> None:
    """In the child: a lower CPU priority, so loading the grammars never competes with the GUI,
    and an end when the window's process ends, however it ends: a crash or ``os._exit`` runs no
    ``atexit`` hook, and an orphaned child would hold its grammars' memory until logout."""
    import multiprocessing
    import os

    if hasattr(os, "nice"):
        try:
            os.nice(5)
        except OSError:
            pass
    parent = multiprocessing.parent_process()
    if parent is not None:

        def leave_with_parent() -> None:
            parent.join()
            os._exit(0)

        threading.Thread(target=leave_with_parent, name="leave-with-parent", daemon=True).start()


background = NormalizerProcess()
atexit.register(background.close)
