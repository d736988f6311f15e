"""IndexTTS-2.5's text vocabulary: the whisper-style tiktoken encoding and its special tokens.

The model folder holds ``multilingual_zh_ja_yue_char_del.tiktoken``: one ``base64(bytes) rank``
line per byte-level BPE token, ranks dense from 0. The official tokenizer
(``indextts/utils/tokenizer.py``) appends 1673 special tokens after the ranks, in this order:
``<|endoftext|>``, ``<|startoftranscript|>``, the first 99 language codes of :data:`LANGUAGES`,
11 audio events, 4 emotions, 6 task tokens, ``<|SPECIAL_TOKEN_1|>`` .. ``_30``, 20 TTS tokens and
1501 timestamps ``<|0.00|>`` .. ``<|30.00|>``, and splits text with GPT-2's pattern. Special
tokens are recognised anywhere in the text (``allowed_special="all"``), also when a user types
one. A language code past the first 99 (``yue``, ``minnan``, ..., ``common``) or an unknown one
(``zhen``) has no token: its ``<|code|>`` prefix is spelled out byte by byte.

:func:`language_id` is the official ``lang_to_token``: the row of the GPT's language embedding
(every code of :data:`LANGUAGES`, unknown ones map to ``common``).

:func:`write_tiny_vocab` writes the tiny vocabulary of the test folders: the 256 bytes in GPT-2's
order (so, as in the real file, ``!`` is id 0 and ``"`` id 1, the ids the GPT drops) plus
:data:`TINY_MERGES` merges learned from a small multilingual sample, **700 ranks + 1673 specials =
2373 ids (0 .. 2372)**; a tiny preset's ``number_text_tokens`` must exceed 2372.
"""

from __future__ import annotations

import base64
import functools
from collections import Counter
from pathlib import Path

import regex

from app import atomic
from app.errors import VoxDeskError

VOCAB_FILE = "multilingual_zh_ja_yue_char_del.tiktoken"
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr "
    "bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn "
    "yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su "
    "yue minnan wuyu dialect zh/en en/zh common"
).split()
TOKEN_LANGUAGES = 99  # the official get_encoding's num_languages
_EVENTS = "ASR AED SER Speech /Speech BGM /BGM Laughter /Laughter Applause /Applause".split()
_EMOTIONS = "HAPPY SAD ANGRY NEUTRAL".split()
_TASKS = "translate transcribe startoflm startofprev nospeech notimestamps".split()
_TTS = "TTS/B TTS/O TTS/Q TTS/A TTS/CO TTS/CL TTS/H".split() + [f"TTS/SP{i:02d}" for i in range(1, 14)]
TINY_MERGES = 444


def special_names() -> list[str]:
    """The official special tokens in id order (they follow the last rank)."""
    names = ["endoftext", "startoftranscript", *LANGUAGES[:TOKEN_LANGUAGES], *_EVENTS, *_EMOTIONS, *_TASKS]
    names += [f"SPECIAL_TOKEN_{i}" for i in range(1, 31)] + _TTS + [f"{i * 0.02:.2f}" for i in range(1501)]
    return [f"<|{name}|>" for name in names]


def language_id(lang: str) -> int:
    """The official ``lang_to_token``: the index of ``lang`` (any case) in :data:`LANGUAGES`,
    that of ``common`` for a code it does not list."""
    lang = lang.lower()
    return LANGUAGES.index(lang if lang in LANGUAGES else "common")


def read_ranks(path: Path) -> dict[bytes, int]:
    """The ``base64 rank`` lines of a ``.tiktoken`` file; one plain line naming the first bad one."""
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except FileNotFoundError:
        raise VoxDeskError(f"The IndexTTS vocabulary {path.name} is missing from {path.parent}: "
                           "download the model again.") from None  # fmt: skip
    except (OSError, UnicodeDecodeError) as exc:
        raise VoxDeskError(f"Cannot read the IndexTTS vocabulary {path} ({exc}): "
                           "download the model again.") from None  # fmt: skip
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(lines, 1):
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError:
            raise VoxDeskError(f"{path.name} line {number} is not 'base64 rank': "
                               "the vocabulary is damaged, download the model again.") from None  # fmt: skip
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise VoxDeskError(f"The ranks of {path.name} are not 0 .. {len(ranks) - 1}, each once: "
                           "the vocabulary is damaged, download the model again.")  # fmt: skip
    return ranks


def load_encoding(model_dir: Path):
    """The official tokenizer's ``tiktoken.Encoding`` for the vocabulary in ``model_dir``."""
    import tiktoken

    ranks = read_ranks(Path(model_dir) / VOCAB_FILE)
    specials = {name: len(ranks) + i for i, name in enumerate(special_names())}
    size = len(ranks) + len(specials)
    return tiktoken.Encoding(name=VOCAB_FILE, pat_str=PATTERN, mergeable_ranks=ranks,
                             special_tokens=specials, explicit_n_vocab=size)  # fmt: skip


def gpt2_bytes() -> list[int]:
    """The 256 byte values in GPT-2's rank order: printable Latin-1 first, then the rest."""
    first = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    return first + [b for b in range(256) if b not in first]


# What the tiny vocabulary learns its merges from: a few sentences in the languages of the goldens
# (as the frontend hands them to the tokenizer: lower case, Spanish upper case, numbers in words).
_SAMPLE = """
<|zh|> 今天天气真不错,我们一起去公园散步吧.他在银行工作,一个人走了很长的路.
二零二五年一月十一日,价格是十二点五元,增长了百分之二十五.我最喜欢的应用是它.
中国的电影和音乐都很有意思,大家都说这里的人很好,学习中文需要时间和耐心.
<|en|> the quick brown fox jumps over the lazy dog. it is a good day, and we are going home now!
on january eleventh, twenty twenty five, it cost twelve dollars and fifty cents, up twenty five percent.
hello there, this is a test of the text frontend with numbers, dates and money.
<|ja|> 今日 は いい 天気 です ね. 一緒 に 公園 へ 行き ましょう. 東京 と 大阪 と 京都 に 行き たい です.
きょう は 晴れ です. わたし は 日本語 を 勉強 し て い ます.
<|es|> ¿DÓNDE ESTÁ LA BIBLIOTECA? MAÑANA VAMOS A LA PLAYA CON MIS AMIGOS. ES UN DÍA MUY BONITO.
<|ar|> مرحبا بكم في عالم الذكاء الاصطناعي. كيف حالك اليوم؟ نحن نتعلم اللغة العربية.
"""


@functools.cache
def tiny_ranks() -> tuple[bytes, ...]:
    """The tiny vocabulary's tokens in rank order: 256 bytes, then :data:`TINY_MERGES` merges
    learned greedily (most frequent adjacent pair, ties to the smallest bytes) from ``_SAMPLE``."""
    tokens = [bytes([b]) for b in gpt2_bytes()]
    known = set(tokens)
    counts = Counter(piece.encode() for piece in regex.findall(PATTERN, _SAMPLE))
    words = [[bytes([b]) for b in word] for word in counts]
    weights = list(counts.values())
    pairs: Counter[tuple[bytes, bytes]] = Counter()
    where: dict[tuple[bytes, bytes], set[int]] = {}
    for index, word in enumerate(words):
        _count(word, weights[index], index, pairs, where)
    while len(tokens) < 256 + TINY_MERGES:
        if not pairs:
            raise RuntimeError("the tiny vocabulary's sample has too few pairs for its merges")
        first, second = min(pairs, key=lambda pair: (-pairs[pair], pair))
        if first + second not in known:
            known.add(first + second)
            tokens.append(first + second)
        for index in sorted(where.pop((first, second))):
            _count(words[index], -weights[index], index, pairs, where)
            words[index] = _merge(words[index], first, second)
            _count(words[index], weights[index], index, pairs, where)
    return tuple(tokens)


def _count(word: list[bytes], weight: int, index: int, pairs: Counter, where: dict) -> None:
    """Add ``weight`` to the count of every adjacent pair of ``word`` (number ``index``)."""
    for pair in zip(word, word[1:], strict=False):
        pairs[pair] += weight
        if pairs[pair] == 0:
            del pairs[pair]
        where.setdefault(pair, set()).add(index)


def _merge(word: list[bytes], first: bytes, second: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == first and word[i + 1] == second:
            out.append(first + second)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def write_tiny_vocab(folder: Path) -> Path:
    """Write the tiny ``multilingual_zh_ja_yue_char_del.tiktoken`` into ``folder``; its path."""
    path = Path(folder) / VOCAB_FILE
    lines = (f"{base64.b64encode(token).decode()} {rank}\n" for rank, token in enumerate(tiny_ranks()))
    atomic.write_text(path, "".join(lines))
    return path
