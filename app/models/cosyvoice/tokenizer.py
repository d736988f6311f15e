"""Text to token ids, as the official ``CosyVoice2Tokenizer`` / ``CosyVoice3Tokenizer`` encode.

The official tokenizers load ``CosyVoice-BlankEN`` with transformers' ``AutoTokenizer``, which
turns Qwen2's ``vocab.json`` + ``merges.txt`` into a fast tokenizer: NFC normalization, Qwen2's
pre-split regex (isolated pieces), byte-level mapping without a prefix space, byte-level BPE
with no unknown token. Then ``add_special_tokens`` appends CosyVoice's markers after the
folder's own added tokens (``<|endoftext|>`` 151643, ``<|im_start|>``, ``<|im_end|>``), so
``<|endofprompt|>`` is 151646. Special tokens are matched in the raw text before anything else,
whatever the caller passes as ``allowed_special``. This module builds the same pipeline with the
``tokenizers`` library from the data files only (no code from the folder runs).
"""

from __future__ import annotations

import json
from pathlib import Path

from app.errors import VoxDeskError

# Qwen2's pre-tokenizer: contractions, letter runs with one leading non-letter, single digits,
# punctuation runs, newlines, spaces (transformers' Qwen2Converter).
PRETOKENIZE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")  # fmt: skip

_V2_SPECIALS = [
    "<|im_start|>", "<|im_end|>", "<|endofprompt|>", "[breath]", "<strong>", "</strong>", "[noise]",
    "[laughter]", "[cough]", "[clucking]", "[accent]", "[quick_breath]", "<laughter>", "</laughter>",
    "[hissing]", "[sigh]", "[vocalized-noise]", "[lipsmack]", "[mn]",
]  # fmt: skip
_ARPABET = (
    "AA AA0 AA1 AA2 AE AE0 AE1 AE2 AH AH0 AH1 AH2 AO AO0 AO1 AO2 AW AW0 AW1 AW2 AY AY0 AY1 AY2 B CH D DH "
    "EH EH0 EH1 EH2 ER ER0 ER1 ER2 EY EY0 EY1 EY2 F G HH IH IH0 IH1 IH2 IY IY0 IY1 IY2 JH K L M N NG OW OW0 "
    "OW1 OW2 OY OY0 OY1 OY2 P R S SH T TH UH UH0 UH1 UH2 UW UW0 UW1 UW2 V W Y Z ZH"
)
_PINYIN = (
    "a ai an ang ao b c ch d e ei en eng f g h i ian in ing iu ià iàn iàng iào iá ián iáng iáo iè ié iòng "
    "ióng iù iú iā iān iāng iāo iē iě iōng iū iǎ iǎn iǎng iǎo iǒng iǔ j k l m n o ong ou p q r s sh t u "
    "uang ue un uo uà uài uàn uàng uá uái uán uáng uè ué uì uí uò uó uā uāi uān uāng uē uě uī uō uǎ uǎi "
    "uǎn uǎng uǐ uǒ vè w x y z zh à ài àn àng ào á ái án áng áo è èi èn èng èr é éi én éng ér ì ìn ìng í "
    "ín íng ò òng òu ó óng óu ù ùn ú ún ā āi ān āng āo ē ēi ēn ēng ě ěi ěn ěng ěr ī īn īng ō ōng ōu ū ūn "
    "ǎ ǎi ǎn ǎng ǎo ǐ ǐn ǐng ǒ ǒng ǒu ǔ ǔn ǘ ǚ ǜ"
)
# The official lists, in their order (tokenizer.py: CosyVoice2Tokenizer, CosyVoice3Tokenizer).
SPECIALS = {
    "cosyvoice2": _V2_SPECIALS,
    "cosyvoice3": [*_V2_SPECIALS, "<|endofsystem|>", *(f"[{p}]" for p in _ARPABET.split()),
                   *(f"[{p}]" for p in _PINYIN.split())],
}  # fmt: skip
ENDOFTEXT = "<|endoftext|>"  # the official eos/pad token, already one of Qwen2's added tokens


def _read(path: Path, what: str):
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else text
    except FileNotFoundError:
        raise VoxDeskError(f"{path.name} is missing from {path.parent}: download the model folder "
                           "again.") from None  # fmt: skip
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise VoxDeskError(f"{path.name} in {path.parent} is not {what} ({exc}): download the model "
                           "folder again.") from None  # fmt: skip


def _merges(text: str, path: Path) -> list[tuple[str, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line or (n == 1 and line.startswith("#version")):
            continue
        pair = line.split(" ")
        if len(pair) != 2:
            raise VoxDeskError(f"{path.name} line {n} is not a pair of symbols: download the model "
                               "folder again.")  # fmt: skip
        out.append((pair[0], pair[1]))
    return out


class CosyTokenizer:
    """The official text tokenizer of ``family`` from a ``CosyVoice-BlankEN`` folder."""

    def __init__(self, tokenizer_dir: str | Path, family: str) -> None:
        from tokenizers import AddedToken, Regex, Tokenizer, normalizers, pre_tokenizers
        from tokenizers.models import BPE

        if family not in SPECIALS:
            raise VoxDeskError(f"Unknown CosyVoice family '{family}': expected cosyvoice2 or cosyvoice3.")
        folder = Path(tokenizer_dir)
        vocab = _read(folder / "vocab.json", "a tokenizer vocabulary")
        merges_path = folder / "merges.txt"
        merges = _merges(_read(merges_path, "a merges list"), merges_path)
        config_path = folder / "tokenizer_config.json"
        config = _read(config_path, "a tokenizer config") if config_path.is_file() else {}
        if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
            raise VoxDeskError(f"vocab.json in {folder} is not a table of token ids: download the model "
                               "folder again.")  # fmt: skip
        try:
            tok = Tokenizer(BPE(vocab=vocab, merges=merges, unk_token=None, byte_fallback=False))
        except Exception as exc:  # noqa: BLE001 - the tokenizers library raises plain Exception
            raise VoxDeskError(f"The tokenizer in {folder} does not load ({exc}): download the model "
                               "folder again.") from None  # fmt: skip
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PRETOKENIZE), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])  # fmt: skip
        # The folder's own added tokens first, at their ids, then the official specials.
        declared = config.get("added_tokens_decoder") if isinstance(config, dict) else None
        declared = declared if isinstance(declared, dict) else {}
        for id_text, entry in sorted(declared.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1):
            content = entry.get("content") if isinstance(entry, dict) else None
            if not id_text.isdigit() or not isinstance(content, str):
                raise VoxDeskError(f"tokenizer_config.json in {folder} has a malformed added token: download "
                                   "the model folder again.")  # fmt: skip
            flags = {k: bool(entry.get(k, False)) for k in ("single_word", "lstrip", "rstrip", "normalized")}
            token = AddedToken(content, special=bool(entry.get("special", True)), **flags)
            tok.add_special_tokens([token]) if token.special else tok.add_tokens([token])
            if tok.token_to_id(content) != int(id_text):
                raise VoxDeskError(f"tokenizer_config.json in {folder} places {content} at {id_text}, after "
                                   "a gap in the ids: download the model folder again.")  # fmt: skip
        added = [ENDOFTEXT, *SPECIALS[family]]
        tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in added])
        self._tok = tok
        self.family = family

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special tokens written in it are matched (``allowed_special='all'``)."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def token_id(self, token: str) -> int | None:
        """The id of one token (e.g. ``<|endofprompt|>``), or None if the vocabulary lacks it."""
        return self._tok.token_to_id(token)
