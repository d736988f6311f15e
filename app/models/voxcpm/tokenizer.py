"""Text to token ids, exactly as the official ``LlamaTokenizerFast`` + CJK splitting does.

transformers 5.x does not use ``tokenizer.json`` as it stands: ``LlamaTokenizer`` keeps only
its vocabulary, merges and added tokens and rebuilds the rest (BPE with byte fallback and
no unknown token, no normalizer, a Metaspace pre-tokenizer that prepends "▁" to the first
word unless ``legacy`` is true in ``tokenizer_config.json``, then to every word). We rebuild
the same pipeline with the ``tokenizers`` library alone.

The official wrapper then replaces every token whose text without "▁" is a vocabulary entry
of two or more CJK characters (U+4E00-U+9FFF) by those single characters (dropping the "▁"),
and looks tokens up in the vocabulary (unknown ones map to ``<unk>``). No BOS or EOS.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.errors import VoxDeskError


def _is_cjk_word(token: str) -> bool:
    return len(token) >= 2 and all("\u4e00" <= c <= "\u9fff" for c in token)


def check_tokenizer(model_dir: str | Path, vocab_size: int) -> int:
    """Build the tokenizer and check its ids fit the model; the number of entries, or VoxDeskError."""
    path = Path(model_dir) / "tokenizer.json"
    try:
        tokenizer = TextTokenizer(model_dir)
        ids = list(tokenizer.vocab.values())
        if not all(isinstance(i, int) for i in ids):
            raise ValueError("its vocabulary ids are not numbers")
        largest = max(ids, default=-1)
        tokenizer.tokenize("Hello 你好")
    except VoxDeskError:
        raise
    except Exception as exc:  # noqa: BLE001 - the tokenizers library raises plain Exception
        raise VoxDeskError(f"{path.name} is damaged or not a VoxCPM tokenizer ({exc}).") from None
    if largest < 0 or largest >= vocab_size:
        raise VoxDeskError(
            f"{path.name} has ids up to {largest}, but the model's vocabulary has {vocab_size}: "
            "it belongs to another model. Re-download the model."
        )
    return len(ids)


class TextTokenizer:
    def __init__(self, model_dir: str | Path) -> None:
        from tokenizers import AddedToken, Tokenizer, pre_tokenizers
        from tokenizers.models import BPE

        model_dir = Path(model_dir)
        path = model_dir / "tokenizer.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            model = data["model"]
            if model.get("type", "BPE") != "BPE":
                raise ValueError("not a BPE tokenizer")
            vocab: dict[str, int] = dict(model["vocab"])
            merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        except FileNotFoundError:
            raise VoxDeskError(f"{path} not found: choose a complete VoxCPM model folder.") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise VoxDeskError(f"{path.name} is damaged or not a VoxCPM tokenizer ({exc}).") from None
        settings = _read_settings(model_dir / "tokenizer_config.json")
        tok = Tokenizer(BPE(vocab=vocab, merges=merges, fuse_unk=True, byte_fallback=True))
        tok.normalizer = None
        if settings.get("add_prefix_space", True) is False:
            scheme = "never"
        else:
            scheme = "always" if settings.get("legacy", False) else "first"
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme, split=False)
        added = []
        for entry in data.get("added_tokens") or []:
            added.append(
                AddedToken(
                    entry["content"],
                    single_word=entry.get("single_word", False),
                    lstrip=entry.get("lstrip", False),
                    rstrip=entry.get("rstrip", False),
                    normalized=entry.get("normalized", False),
                    special=entry.get("special", False),
                )
            )
            vocab.setdefault(entry["content"], entry["id"])
        tok.add_tokens(added)
        self._tok = tok
        self.vocab = vocab
        unk = settings.get("unk_token", "<unk>")
        unk = unk.get("content", "<unk>") if isinstance(unk, dict) else unk
        self.unk_id = vocab.get(unk)
        self._cjk_words = {t for t in vocab if _is_cjk_word(t)}

    def tokenize(self, text: str) -> list[str]:
        """Token strings after the official CJK splitting."""
        out: list[str] = []
        for token in self._tok.encode(text, add_special_tokens=False).tokens:
            bare = token.replace("▁", "")
            out.extend(bare if bare in self._cjk_words else [token])
        return out

    def __call__(self, text: str) -> list[int]:
        ids = []
        for token in self.tokenize(text):
            tid = self.vocab.get(token, self.unk_id)
            if tid is None:
                raise VoxDeskError(f"The tokenizer has no entry for '{token}' and no <unk> token.")
            ids.append(tid)
        return ids


def _read_settings(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VoxDeskError(f"{path.name} is damaged ({exc}). Re-download the model.") from None
    return data if isinstance(data, dict) else {}
