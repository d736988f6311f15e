"""What CosyVoice2 / CosyVoice3 say: the official text normalization, sentence split and prompt forms.

:func:`normalize` is the official ``CosyVoiceFrontEnd.text_normalize`` with wetext as its
normalizer (the official code uses ttsfrd when installed, which is not on PyPI, else wetext):
wetext's grammars for Chinese (erhua kept) or English, the official clean-ups, the English
digits spelled by ``inflect``, then ``split_paragraph`` into pieces of about 60-80 characters
(Chinese) or tokens (English), each spoken by one LM call. A text holding ``<|...|>`` (every
CosyVoice3 prompt form) is left as it is and not split. :func:`lm_texts` adds CosyVoice3's
system prompt and ``<|endofprompt|>`` forms as the official examples write them, so the user
types only the text, the transcript and the instruction; :func:`request_texts` puts the two
together in the order of the official ``inference_*`` entries.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

from app.errors import VoxDeskError
from app.text.normalize import drop_cjk_spaces, is_chinese, spell_digits

MODES = ("zero_shot", "cross_lingual", "instruct2")
ENDOFPROMPT = "<|endofprompt|>"
SYSTEM = "You are a helpful assistant."  # CosyVoice3's system prompt (official example.py)
MAX_PIECE, MIN_PIECE, MERGE_BELOW = 80, 60, 20  # split_paragraph's token_max_n, token_min_n, merge_len
_STOPS = {"zh": "。？！；：、.?!;", "en": ".?!;:"}
_QUOTES = ('"', "”")
_TRAILING_COMMAS = re.compile(r"[，,、]+$")
_BRACKETS = {"（": "", "）": "", "【": "", "】": "", "`": "", "——": " "}

log = logging.getLogger(__name__)
Encode = Callable[[str], list[int]]


class _Tools:
    """wetext's default normalizer (language detected, erhua kept: the official settings for
    both its Chinese and English instances) and inflect, loaded once on first use."""

    _lock = threading.Lock()
    _loaded: tuple | None = None

    @classmethod
    def get(cls) -> tuple:
        with cls._lock:
            if cls._loaded is None:
                try:
                    import inflect
                    from wetext import Normalizer
                except ImportError as exc:
                    raise VoxDeskError(f"Text normalization is not installed ({exc.name} is missing): "
                                       "reinstall VoxDesk.") from None  # fmt: skip
                cls._loaded = (Normalizer(remove_erhua=False), inflect.engine(), threading.Lock())
            return cls._loaded


def prepare() -> None:
    """Load wetext and inflect now (seconds of CPU: inflect's typeguard instrumentation), so a
    model load pays for it rather than the first request after it."""
    _Tools.get()


def _wetext(text: str) -> str:
    """wetext's normalization of ``text``; the text as it is where wetext fails on it (its English
    grammar asserts on repeated spaces: the official code would stop there). That is what the
    official frontend does when no normalizer is installed: the rest of its steps still run."""
    tn, _, lock = _Tools.get()
    with lock:  # wetext's normalizer is not documented as thread-safe
        try:
            return tn.normalize(text)
        except Exception:  # noqa: BLE001 - a grammar failing on odd input
            log.warning("wetext could not normalize %r; it is spoken as written", text[:80])
            return text


def only_punctuation(text: str) -> bool:
    """Empty or made only of Unicode punctuation and symbols (such pieces are not spoken)."""
    import regex

    return bool(regex.fullmatch(r"[\p{P}\p{S}]*", text))


def split_paragraph(text: str, lang: str, encode: Encode | None = None) -> list[str]:
    """The official ``split_paragraph`` (comma_split off): sentences cut after each stop mark (a
    closing quote right after one stays with it), then joined while a piece stays within 80 or
    holds at most 60; a last piece under 20 joins the one before. Lengths are characters for
    ``lang="zh"``, tokens of ``encode`` for ``"en"``."""
    if not text:
        return []

    def length(s: str) -> int:
        if lang == "zh":
            return len(s)
        if encode is None:
            raise ValueError("split_paragraph: English lengths are counted in tokens: give encode")
        return len(encode(s))

    stops = _STOPS[lang]
    if text[-1] not in stops:
        text += "。" if lang == "zh" else "."
    sentences: list[str] = []
    start = 0
    for i, c in enumerate(text):
        if c not in stops:
            continue
        if i > start:
            sentences.append(text[start : i + 1])
        if i + 1 < len(text) and text[i + 1] in _QUOTES:
            if sentences:  # the official pops the last sentence (or fails when there is none)
                sentences[-1] += text[i + 1]
            else:
                sentences.append(text[i + 1])
            start = i + 2
        else:
            start = i + 1
    pieces: list[str] = []
    current = ""
    for s in sentences:
        if length(current + s) > MAX_PIECE and length(current) > MIN_PIECE:
            pieces.append(current)
            current = ""
        current += s
    if current:
        if pieces and length(current) < MERGE_BELOW:
            pieces[-1] += current
        else:
            pieces.append(current)
    return pieces


def _clean_chinese(text: str) -> str:
    text = drop_cjk_spaces(_wetext(text).replace("\n", ""))
    text = text.replace("²", "平方").replace("³", "立方").replace(".", "。").replace(" - ", "，")
    for mark, repl in _BRACKETS.items():
        text = text.replace(mark, repl)
    return _TRAILING_COMMAS.sub("。", text)


def normalize(
    text: str, split: bool = True, encode: Encode | None = None, text_frontend: bool = True
) -> list[str]:
    """The official ``text_normalize``: the pieces to speak (``split``) or the whole normalized
    text as one item (``split=False``, how the official code treats a prompt transcript).

    ``encode`` is the model's tokenizer (:meth:`CosyTokenizer.encode`): English pieces are
    measured in its tokens, as the official code does; Chinese ones in characters. A text with
    ``<|`` and ``|>`` in it, or any text with ``text_frontend=False`` (the official switch), is
    returned unchanged as one piece."""
    if not text_frontend or text == "" or ("<|" in text and "|>" in text):
        return [text]
    text = text.strip()
    if is_chinese(text):
        text = _clean_chinese(text)
        lang = "zh"
    else:
        text = spell_digits(_wetext(text), _Tools.get()[1])
        lang = "en"
    if not split:
        return [text]
    return [p for p in split_paragraph(text, lang, encode) if not only_punctuation(p)]


def lm_texts(
    family: str, mode: str, text: str, prompt_text: str = "", instruction: str = ""
) -> tuple[str, str]:
    """(the text to speak, the prompt-text slot) of one request as the official examples write them.

    CosyVoice3: zero-shot prompt ``SYSTEM<|endofprompt|>`` + transcript; cross-lingual text
    ``SYSTEM<|endofprompt|>`` + text; instruct2 ``SYSTEM + " " + instruction + <|endofprompt|>``.
    CosyVoice2: the transcript as it is; instruct2 ``instruction + <|endofprompt|>``. A form the
    user already wrote (an instruction ending in ``<|endofprompt|>``) is not added twice."""
    if mode not in MODES:
        raise VoxDeskError(f"Unknown CosyVoice mode '{mode}': use zero_shot, cross_lingual or instruct2.")
    v3 = family == "cosyvoice3"
    head = SYSTEM + ENDOFPROMPT
    if mode == "zero_shot":
        return text, (head + prompt_text if v3 and ENDOFPROMPT not in prompt_text else prompt_text)
    if mode == "cross_lingual":
        return (head + text if v3 and ENDOFPROMPT not in text else text), ""
    if ENDOFPROMPT in instruction:
        return text, instruction
    return text, (f"{SYSTEM} {instruction}{ENDOFPROMPT}" if v3 else instruction + ENDOFPROMPT)


def request_texts(
    family: str, mode: str, text: str, prompt_text: str = "", instruction: str = "",
    encode: Encode | None = None, text_frontend: bool = True,
) -> tuple[list[str], str]:  # fmt: skip
    """(the pieces to speak, the prompt-text slot) as the official ``inference_*`` entries make
    them: :func:`lm_texts`, then the text normalized and split; in zero-shot the prompt slot
    normalized without splitting (CosyVoice3's holds ``<|endofprompt|>``, so it stays as it is);
    the instruction is never normalized. ``text_frontend=False`` skips normalizing and splitting."""
    text, prompt = lm_texts(family, mode, text, prompt_text, instruction)
    if mode == "zero_shot":
        prompt = normalize(prompt, split=False, text_frontend=text_frontend)[0]
    return normalize(text, split=True, encode=encode, text_frontend=text_frontend), prompt
