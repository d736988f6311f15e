"""Our tokenizer gives exactly the ids of the official LlamaTokenizerFast + CJK splitting
(transformers 5.3), on tokenizers written by our checkpoint writer."""

from __future__ import annotations

import json
import shutil

import pytest
from official import import_official

from app.models.voxcpm.checkpoint import tokenizer_json
from app.models.voxcpm.tokenizer import TextTokenizer

TEXTS = [
    "你好世界",
    "你好，世界！Hello, world.",
    "我们在上海说English和中文混合，2024年3月5日，价格是99.5元。",
    "  leading and   multiple spaces, tabs\tand\nnewlines  ",
    "The quick brown fox jumps over the lazy dog 1234567890!",
    "(温柔的女声, calm)今天天气很好。Good morning!",
    "emoji 😀, rare 龘 and symbols © ½ → <s> </s>",
    "",
]


def _official_ids(folder, texts):
    import_official()
    from transformers import LlamaTokenizerFast
    from voxcpm.model.utils import mask_multichar_chinese_tokens

    wrapped = mask_multichar_chinese_tokens(LlamaTokenizerFast.from_pretrained(str(folder)))
    return [wrapped(t) for t in texts]


@pytest.mark.parametrize("settings", [{}, {"legacy": True}, {"add_prefix_space": False}])
def test_ids_match_official(tiny_v2, tmp_path, settings):
    folder = tmp_path / "tok"
    folder.mkdir()
    for name in ("tokenizer.json", "special_tokens_map.json"):
        shutil.copy(tiny_v2 / name, folder / name)
    config = json.loads((tiny_v2 / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, **settings}))
    ours = TextTokenizer(folder)
    assert [ours(t) for t in TEXTS] == _official_ids(folder, TEXTS)


def test_cjk_words_are_split_like_official(tiny_v2):
    ours = TextTokenizer(tiny_v2)
    raw = ours._tok.encode("你好世界，我们").tokens
    assert "世界" in raw and "我们" in raw  # multi-character CJK tokens from BPE ...
    assert ours.tokenize("你好世界，我们")[1:] == ["世", "界", "，", "我", "们"]  # ... split into characters
    assert ours.tokenize("你好")[0] == "▁你好"  # kept: "你好" alone is not a vocabulary entry


def test_no_bos_or_eos(tiny_v2):
    ours = TextTokenizer(tiny_v2)
    ids = ours("Hello")
    assert 1 not in ids and 2 not in ids and ids


def test_full_size_vocabulary(tmp_path):
    """The synthetic tokenizer of the real presets has the real vocabulary size, 73448."""
    data = tokenizer_json(73448)
    assert len(data["model"]["vocab"]) == 73448
    (tmp_path / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "LlamaTokenizer"}))
    ours = TextTokenizer(tmp_path)
    assert [ours(t) for t in TEXTS[:3]] == _official_ids(tmp_path, TEXTS[:3])
