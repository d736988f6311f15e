"""IndexTTS-2.5's text frontend: the token ids the official ``infer`` hands to the GPT for a text.

:meth:`TextFrontend.segments` follows ``IndexTTS2.infer_generator`` (``infer_v2_5.py`` ~700-726)
step by step:

1. the character map of :func:`~app.models.indextts.normalize.clean` (every language);
2. normalisation, unless switched off: Chinese, ``zhen`` and English through
   :class:`~app.models.indextts.normalize.Normalizer` (wetext); Japanese and Spanish through NeMo in
   the official code, which is not among its dependencies and leaves the text as it is when
   missing (as here: no NeMo); Arabic and every other language: none;
3. lower case for ja, zh, zhen and en; UPPER case for es; Arabic and the rest as written;
4. ``<word|PRON>`` annotations: a kana reading becomes `` PRON `` (plain text); any other becomes
   ``<|SPECIAL_TOKEN_2|>PRON<|SPECIAL_TOKEN_2|>`` when the word has a CJK ideograph (pinyin),
   ``<|SPECIAL_TOKEN_1|>PRON<|SPECIAL_TOKEN_1|>`` otherwise (CMU phones), PRON upper-cased;
5. Japanese: each space-separated run is cut into words by MeCab (fugashi + unidic-lite) and the
   words joined with spaces. The official ``JapaneseG2PProcessor(g2p_ratio=0)`` replaces no word
   by its reading, but still draws one ``random.random()`` for each run holding a kanji word:
   ours draws it too (from ``rng``, Python's global generator by default, as the official code), so
   the draws after it stay where they were (in ``infer`` they come after the ``use_random``
   emotion-row draws, ``random.randint`` per emotion);
6. every ``<|name|>`` upper-cased (so ``<|special_token_1|>`` typed by hand is a special token);
7. the split of ``split_text_by_tokens``: nothing when the text fits ``min(max_tokens,
   max_text_tokens) - len(prefix)`` tokens; else special-token spans kept whole, the rest cut after
   ``，。！？、；：,.!?;:`` or a new line, pieces still too long cut between characters, the
   pieces packed greedily back up to the budget;
8. each segment encoded as ``<|lang|> `` + segment (special tokens recognised anywhere), plus a
   trailing id 1. The GPT later drops every id 0 and 1 (``!`` and ``"`` in the vocabulary), so
   they are kept here, as the official ``infer`` hands them over.

Japanese needs fugashi and unidic-lite (MIT/BSD, ~250 MB installed, not in the bundle: the
optional ``ja`` extra): without them Japanese text is refused with one line, while other languages
work. The official code cannot start at all without fugashi, unless mecab-python3 and a system
MeCab dictionary stand in (a fallback we do not take: its words may differ).

The vocabulary (and the tiny one the test folders hold: 700 ranks + 1673 specials = 2373 ids)
lives in :mod:`app.models.indextts.vocab`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

from app.errors import VoxDeskError
from app.models.indextts.config import load_config
from app.models.indextts.normalize import ANNOTATION, Normalizer, clean, read_glossary
from app.models.indextts.vocab import language_id, load_encoding, write_tiny_vocab

__all__ = ["LANGUAGES", "MAX_CHARS", "TextFrontend", "language_id", "write_tiny_vocab"]

LANGUAGES = ("zh", "en", "ja", "ar", "es")  # the official web UI's choices
MAX_CHARS = 10_000  # one request; longer text goes through the app's segmenter or long-form projects first
_HIRAGANA = re.compile(r"[\u3040-\u309F]+")
_KATAKANA = re.compile(r"[\u30A0-\u30FF]+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SPECIAL = re.compile(r"<\|([^|]+)\|>")
_PROTECTED = re.compile(r"<\|SPECIAL_TOKEN_\d+\|>.*?<\|SPECIAL_TOKEN_\d+\|>")
_CUT_AFTER = re.compile(r"(?<=[，。！？、；：,\.!\?;:\n])")
_SPACES = re.compile(r"( +)")


def annotate(text: str) -> str:
    """Step 4: ``<word|PRON>`` annotations as the tokenizer reads them."""

    def form(match: re.Match[str]) -> str:
        word, pron = match.group(1), match.group(2).upper()
        if _HIRAGANA.fullmatch(pron) or _KATAKANA.fullmatch(pron):
            return f" {pron} "
        token = "<|SPECIAL_TOKEN_2|>" if _CJK.search(word) else "<|SPECIAL_TOKEN_1|>"
        return f"{token}{pron}{token}"

    return ANNOTATION.sub(form, text)


class _Japanese:
    """MeCab through fugashi with the unidic-lite dictionary, loaded on first use."""

    _tagger = None

    @classmethod
    def words(cls, text: str) -> list[str]:
        if cls._tagger is None:
            try:
                import fugashi

                cls._tagger = fugashi.Tagger()
            except Exception:  # noqa: BLE001 - ImportError, or fugashi without its dictionary
                raise VoxDeskError("Japanese text needs the fugashi and unidic-lite packages (about 250 MB), "
                                   "which are not installed: install them (pip install fugashi unidic-lite) "
                                   "or choose another language.") from None  # fmt: skip
        return [word.surface for word in cls._tagger(text)]

    @classmethod
    def spaced(cls, text: str, draw: Callable[[], float]) -> str:
        """Step 5: words joined by spaces, one draw per space-separated run with a kanji word."""
        out = []
        for run in _SPACES.split(text):
            if run.strip():
                words = cls.words(run)
                if any(_CJK.search(word) for word in words):
                    draw()  # the official g2p_ratio=0 draw, its result unused
                run = " ".join(words)
            out.append(run)
        return "".join(out)


class TextFrontend:
    """The text path of the official ``infer`` for the model in ``model_dir``: its vocabulary,
    its ``glossary.yaml`` if any and the GPT's text capacity (``gpt.max_text_tokens`` of
    ``config.yaml`` unless given)."""

    def __init__(self, model_dir: Path, max_text_tokens: int | None = None) -> None:
        model_dir = Path(model_dir)
        self.encoding = load_encoding(model_dir)
        self.max_text_tokens = max_text_tokens or load_config(model_dir).gpt["max_text_tokens"]
        self.normalizer = Normalizer(read_glossary(model_dir / "glossary.yaml"))

    def count(self, text: str) -> int:
        """How many tokens ``text`` encodes to (special tokens counted as one)."""
        return len(self.encoding.encode(text, allowed_special="all"))

    def prepare(self, text: str, lang: str, normalize: bool = True, rng: random.Random | None = None) -> str:
        """Steps 1-6: the text as the official code splits it."""
        _check(text, lang)
        lang = lang.lower()
        text = clean(text)
        if normalize and lang in ("zh", "zhen", "en"):
            text = self.normalizer.normalize(text)
        if lang in ("ja", "zh", "zhen", "en"):
            text = text.lower()
        elif lang == "es":
            text = text.upper()
        text = annotate(text)
        if lang == "ja":
            text = _Japanese.spaced(text, (rng or random).random)
        return _SPECIAL.sub(lambda m: f"<|{m.group(1).upper()}|>", text)

    def split(self, text: str, prefix: str, max_tokens: int = 120) -> list[str]:
        """Step 7: the official ``split_text_by_tokens``."""
        budget = max(1, min(max_tokens, self.max_text_tokens) - self.count(prefix))
        if self.count(text) <= budget:
            return [text]
        chunks: list[str] = []
        for piece, whole in _pieces(text):
            if whole:
                chunks.append(piece)
                continue
            for part in _CUT_AFTER.split(piece):
                if part and self.count(part) <= budget:
                    chunks.append(part)
                elif part:
                    chunks.extend(self._pack(list(part), budget))
        return self._pack(chunks, budget) or [text]

    def _pack(self, pieces: list[str], budget: int) -> list[str]:
        """Join consecutive pieces while the join fits ``budget`` tokens (a lone piece always fits)."""
        out: list[str] = []
        current = ""
        for piece in pieces:
            if current and self.count(current + piece) > budget:
                out.append(current)
                current = piece
            else:
                current += piece
        if current:
            out.append(current)
        return out

    def segments(self, text: str, lang: str, max_tokens: int = 120, normalize: bool = True,
                 rng: random.Random | None = None) -> list[list[int]]:  # fmt: skip
        """The ids of each segment the official ``infer`` hands to the GPT (ending in id 1)."""
        prefix = f"<|{lang.lower()}|> "
        pieces = self.split(self.prepare(text, lang, normalize, rng), prefix, max_tokens)
        return [self.encoding.encode(prefix + piece, allowed_special="all") + [1] for piece in pieces]


def _check(text: str, lang: str) -> None:
    if not lang or lang.split() != [lang]:
        raise VoxDeskError(f"{lang!r} is not a language code: choose one of {', '.join(LANGUAGES)}.")
    if not text.strip():
        raise VoxDeskError("There is no text to speak: type some text.")
    if len(text) > MAX_CHARS:
        raise VoxDeskError(f"The text is {len(text):,} characters long; IndexTTS takes at most {MAX_CHARS:,} "
                           "at a time: split it, or read it as a long-form project.")  # fmt: skip


def _pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` cut around its ``<|SPECIAL_TOKEN_n|>...<|SPECIAL_TOKEN_n|>`` spans (True: a span)."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for match in _PROTECTED.finditer(text):
        if match.start() > pos:
            out.append((text[pos : match.start()], False))
        out.append((match.group(0), True))
        pos = match.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out

