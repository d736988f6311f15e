"""IndexTTS-2.5's text normalisation: ``TextNormalizer`` of ``indextts/utils/front.py`` as the
official ``infer`` runs it, with wetext's grammars (the branch the official code takes on Windows
and macOS; on Linux it would use WeTextProcessing's ``tn``, whose output differs in places).

:func:`clean` is the character map every language goes through first. :meth:`Normalizer.normalize`
(Chinese, mixed and English text) keeps ``<word|PRON>`` annotations out of the grammars' reach,
then takes the Chinese path when the text has a CJK ideograph, no Latin letter, is one e-mail
address, or holds a pinyin syllable with its tone digit (``xing2``); the English path otherwise.
The Chinese path shields technical terms (``GPT-5``), pinyin and hyphenated Chinese names from the
grammar and puts them back after it; both paths apply the user's ``glossary.yaml`` terms first and
map the punctuation the grammars leave back through the character map.

One difference from the official code, where it has no defined result: when two shielded pinyin
syllables (or two names) contain one another, the official order is that of a Python ``set``
(different from one process to the next); ours is longest first, then first seen.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

from app.errors import VoxDeskError

log = logging.getLogger(__name__)

# The official char_rep_map, in its order: a regex alternation takes the first key that matches
# at a position, so "，，，" becomes ",,," (three "，"), never "…".
CHAR_MAP = {
    "：": ",", "；": ",", ";": ",", "，": ",", "。": ".", "！": "!", "？": "?", "\n": " ", "·": "-",
    "、": ",", "...": "…", ",,,": "…", "，，，": "…", "……": "…", "“": "'", "”": "'", '"': "'",
    "‘": "'", "’": "'", "（": "'", "）": "'", "(": "'", ")": "'", "《": "'", "》": "'", "【": "'",
    "】": "'", "[": "'", "]": "'", "—": "-", "～": "-", "~": "-", "「": "'", "」": "'", ":": ",",
}  # fmt: skip
ZH_MAP = {"$": ".", **CHAR_MAP}  # after the Chinese grammar, a "$" left over is read as a dot


def _alternation(table: dict[str, str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(key) for key in table))


_CLEAN, _ZH_CLEAN = _alternation(CHAR_MAP), _alternation(ZH_MAP)
ANNOTATION = re.compile(r"<([^|>\n]+)\|([^>\n]+)>")
_PINYIN = re.compile(
    r"(?<![a-z])((?:[bpmfdtnlgkhjqxzcsryw]|[zcs]h)?(?:[aeiouüv]|[ae]i|u[aio]|ao|ou|i[aue]|[uüv]e|[uvü]ang?"
    r"|uai|[aeiuv]n|[aeio]ng|ia[no]|i[ao]ng)|ng|er)([1-5])",
    re.IGNORECASE,
)
_JQX_U = re.compile(r"([jqx])[uü](n|e|an)*(\d)", re.IGNORECASE)
_NAME = re.compile(r"[\u4e00-\u9fff]+(?:[-·—][\u4e00-\u9fff]+){1,2}", re.IGNORECASE)
_TECH = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+")
_HYPHEN_MARK = re.compile(r"\s*<H>\s*")
_CONTRACTION = re.compile(r"(what|where|who|which|how|t?here|it|s?he|that|this)'s", re.IGNORECASE)
_EMAIL = re.compile(r"^[a-zA-Z0-9]+@[a-zA-Z0-9]+\.[a-zA-Z]+$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[a-zA-Z]")


def clean(text: str) -> str:
    """The official character map (full-width punctuation, quotes, brackets, new lines)."""
    return _CLEAN.sub(lambda m: CHAR_MAP[m.group()], text)


def _letters(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa: the official annotation placeholders' tags."""
    tag = ""
    while True:
        tag = chr(ord("a") + n % 26) + tag
        n = n // 26 - 1
        if n < 0:
            return tag


def use_chinese(text: str) -> bool:
    """Whether the official normaliser takes its Chinese path for ``text``."""
    if _CJK.search(text) or not _LATIN.search(text) or _EMAIL.match(text):
        return True
    return bool(_PINYIN.search(text))


def _shield(text: str, found: list[str], mark: str) -> tuple[str, list[str]]:
    """Replace each distinct string of ``found`` (longest first) by ``<{mark}_a>``, ``<{mark}_b>``..."""
    items = sorted(dict.fromkeys(found), key=len, reverse=True)
    for i, item in enumerate(items):
        text = text.replace(item, f"<{mark}_{chr(ord('a') + i)}>")
    return text, items


def _unshield(text: str, items: list[str], mark: str, form=lambda item: item) -> str:
    for i, item in enumerate(items):
        text = text.replace(f"<{mark}_{chr(ord('a') + i)}>", form(item))
    return text


def _pinyin_form(pinyin: str) -> str:
    """The official ``correct_pinyin``: j/q/x + u or ü is written with v, and such syllables upper-cased."""
    if pinyin[0] not in "jqxJQX":
        return pinyin
    return _JQX_U.sub(r"\g<1>v\g<2>\g<3>", pinyin).upper()


def _shield_tech(text: str) -> tuple[str, bool]:
    terms = sorted(dict.fromkeys(_TECH.findall(text)), key=len, reverse=True)
    for term in terms:
        text = text.replace(term, term.replace("-", "<H>"))
    return text, bool(terms)


class Normalizer:
    """wetext's Chinese (erhua kept) and English grammars, loaded once per process, and the
    official steps around them; ``glossary`` maps a term to its reading (text, or per language
    ``{"zh": ..., "en": ...}``), as the model folder's ``glossary.yaml`` does."""

    _lock = threading.Lock()
    _grammars: tuple | None = None

    def __init__(self, glossary: dict[str, str | dict[str, str]] | None = None) -> None:
        self.glossary = dict(glossary or {})

    @classmethod
    def _wetext(cls) -> tuple:
        with cls._lock:
            if cls._grammars is None:
                try:
                    from wetext import Normalizer as Grammar
                except ImportError:
                    message = "Text normalization is not installed (wetext is missing): reinstall VoxDesk."
                    raise VoxDeskError(message) from None
                cls._grammars = (Grammar(remove_erhua=False, lang="zh", operator="tn"),
                                 Grammar(lang="en", operator="tn"), threading.Lock())  # fmt: skip
            return cls._grammars

    def normalize(self, text: str) -> str:
        found: list[str] = []

        def hold(match: re.Match[str]) -> str:
            found.append(match.group(0))
            return f"PRONPLACEHOLDER{_letters(len(found) - 1)}PRONPLACEHOLDER"

        text = ANNOTATION.sub(hold, text)
        text = self._chinese(text) if use_chinese(text) else self._english(text)
        for i, annotation in enumerate(found):
            text = text.replace(f"PRONPLACEHOLDER{_letters(i)}PRONPLACEHOLDER", annotation)
        return text

    def _chinese(self, text: str) -> str:
        text = self._terms(_CONTRACTION.sub(r"\1 is", text), "zh")
        text, tech = _shield_tech(text.rstrip())
        text, pinyins = _shield(text, ["".join(p) for p in _PINYIN.findall(text)], "pinyin")
        text, names = _shield(text, _NAME.findall(text), "n")
        zh, _, lock = self._wetext()
        with lock:
            try:
                text = zh.normalize(text)
            except Exception:  # noqa: BLE001 - the official code says nothing in this case
                log.warning("wetext could not normalize %r; nothing is spoken for it", text[:80])
                text = ""
        text = _unshield(_unshield(text, names, "n"), pinyins, "pinyin", _pinyin_form)
        if tech:
            text = _HYPHEN_MARK.sub("-", text)
        return _ZH_CLEAN.sub(lambda m: ZH_MAP[m.group()], text)

    def _english(self, text: str) -> str:
        text = self._terms(_CONTRACTION.sub(r"\1 is", text), "en")
        shielded, tech = _shield_tech(text)
        _, en, lock = self._wetext()
        with lock:
            try:
                text = en.normalize(shielded)
                if tech:
                    text = _HYPHEN_MARK.sub("-", text)
            except Exception:  # noqa: BLE001 - wetext's English grammar asserts on some input
                log.warning("wetext could not normalize %r; it is spoken as written", text[:80])
        return clean(text)

    def _terms(self, text: str, lang: str) -> str:
        """The glossary's readings, longest term first, matched in any case."""
        for term in sorted(self.glossary, key=len, reverse=True):
            reading = self.glossary[term]
            if isinstance(reading, dict):
                reading = reading.get(lang, term)
            try:
                text = re.sub(re.escape(term), reading, text, flags=re.IGNORECASE)
            except re.error as exc:
                raise VoxDeskError(f"glossary.yaml: the reading of {term!r} is not valid ({exc}): "
                                   "write a backslash as \\\\.") from None  # fmt: skip
        return text


def read_glossary(path: Path) -> dict[str, str | dict[str, str]]:
    """A model folder's ``glossary.yaml`` (term -> reading, or term -> {language: reading});
    empty when the file is absent; one plain line for a file that is not such a mapping."""
    import yaml

    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise VoxDeskError(f"Cannot read {path} ({str(exc).splitlines()[0]}): fix or remove it.") from None
    if not data:
        return {}
    if not isinstance(data, dict):
        raise VoxDeskError(f"{path} must map each term to its reading: fix or remove it.")
    for term, reading in data.items():
        readings = reading.values() if isinstance(reading, dict) else [reading]
        if not isinstance(term, str) or not all(isinstance(r, str) for r in readings):
            raise VoxDeskError(f"{path}: the reading of {term!r} is not text: fix or remove it.")
    return data
