"""CosyVoice's text side against the official code: normalization and sentence split, the
tokenizer's ids (special tokens included) and the CosyVoice3 prompt forms.

The expected values in tests/data/cosyvoice/text_normalize.json were made by running the
official ``text_normalize`` and tokenizers on the tiny folders (tools/cosyvoice_goldens.py
``text``); English pieces are measured in the folder's tokens, so the folders are written alike.
"""

import json
from pathlib import Path

import pytest

from app.errors import VoxDeskError
from app.models.cosyvoice.text import lm_texts, normalize, request_texts, split_paragraph
from app.models.cosyvoice.tokenizer import CosyTokenizer

DATA = Path(__file__).parent / "data" / "cosyvoice"
GOLDEN = json.loads((DATA / "text_normalize.json").read_text(encoding="utf-8"))
FAMILIES = ("cosyvoice2", "cosyvoice3")


@pytest.fixture(scope="module", params=FAMILIES)
def tokenizer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CosyTokenizer:
    from app.models.cosyvoice.checkpoint import tokenizer_files

    family = request.param
    folder = tmp_path_factory.mktemp(family) / "CosyVoice-BlankEN"
    folder.mkdir()
    for name, content in tokenizer_files().items():  # the tokenizer files write_checkpoint writes
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        (folder / name).write_text(text, encoding="utf-8")
    return CosyTokenizer(folder, family)


def test_normalize_and_split_as_the_official_frontend(tokenizer: CosyTokenizer) -> None:
    expected = GOLDEN["families"][tokenizer.family]
    for text, pieces, whole in zip(GOLDEN["texts"], expected["split"], expected["whole"], strict=True):
        assert normalize(text, split=True, encode=tokenizer.encode) == pieces, text
        assert normalize(text, split=False) == [whole], text
    assert any(len(p) > 1 for p in expected["split"])  # the split is exercised, in both languages
    assert any(p == [] for p in expected["split"])  # and a text of punctuation only says nothing


def test_token_ids_as_the_official_tokenizer(tokenizer: CosyTokenizer) -> None:
    expected = GOLDEN["families"][tokenizer.family]["encode"]
    for text, ids in zip(GOLDEN["encode_texts"], expected, strict=True):
        assert tokenizer.encode(text) == ids, text
    assert tokenizer.token_id("<|endofprompt|>") == 151646
    assert tokenizer.token_id("<|endoftext|>") == 151643
    v3_only = tokenizer.token_id("[ǜ]")
    assert (v3_only is not None) == (tokenizer.family == "cosyvoice3")


def test_english_needs_the_tokenizer_to_split() -> None:
    with pytest.raises(ValueError, match="encode"):
        split_paragraph("One. Two.", "en")
    assert split_paragraph("一。二", "zh") == ["一。二。"]
    assert split_paragraph("", "zh") == []


def test_wetext_failing_leaves_the_text_as_written() -> None:
    """wetext's English grammar asserts on repeated spaces (the official frontend would stop):
    the text is spoken as written, digits still spelled."""
    assert normalize("a  b 2", split=False) == ["a  b two"]


def test_cosyvoice3_prompt_forms_as_the_official_examples() -> None:
    system = "You are a helpful assistant.<|endofprompt|>"
    assert lm_texts("cosyvoice3", "zero_shot", "你好。", "希望。") == ("你好。", system + "希望。")
    assert lm_texts("cosyvoice3", "cross_lingual", "Hello.") == (system + "Hello.", "")
    assert lm_texts("cosyvoice3", "instruct2", "你好。", instruction="请用广东话表达。") == (
        "你好。", "You are a helpful assistant. 请用广东话表达。<|endofprompt|>")  # fmt: skip
    assert lm_texts("cosyvoice2", "zero_shot", "你好。", "希望。") == ("你好。", "希望。")
    assert lm_texts("cosyvoice2", "instruct2", "你好。", instruction="用四川话说这句话") == (
        "你好。", "用四川话说这句话<|endofprompt|>")  # fmt: skip
    # a form the user already wrote is not doubled
    assert lm_texts("cosyvoice3", "zero_shot", "x", system + "p")[1] == system + "p"
    with pytest.raises(VoxDeskError, match="mode"):
        lm_texts("cosyvoice3", "sft", "x")


def test_request_texts_normalizes_like_the_official_entries(tokenizer: CosyTokenizer) -> None:
    fam = tokenizer.family
    pieces, prompt = request_texts(fam, "zero_shot", "我有3本书。", "他有2本。", encode=tokenizer.encode)
    assert pieces == ["我有三本书。"]
    # CosyVoice3's prompt holds <|endofprompt|>: the official skips normalizing it
    v3_prompt = "You are a helpful assistant.<|endofprompt|>他有2本。"
    assert prompt == ("他有两本。" if fam == "cosyvoice2" else v3_prompt)
    # the official text_frontend=False: nothing normalized or split
    raw = request_texts(fam, "zero_shot", "我有3本书。", "他有2本。", text_frontend=False)
    assert raw[0] == ["我有3本书。"] and raw[1].endswith("他有2本。")
    pieces, prompt = request_texts(fam, "instruct2", "Hi 2.", instruction="说2遍", encode=tokenizer.encode)
    assert pieces == ["Hi two."]
    head = "" if fam == "cosyvoice2" else "You are a helpful assistant. "
    assert prompt == head + "说2遍<|endofprompt|>"  # the instruction is never normalized
