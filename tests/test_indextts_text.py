"""IndexTTS-2.5's text frontend against the official ``infer`` text path (tests/data/indextts/
text_tokens.json, tools/indextts_golden_text.py): the same ids per segment, the same Python
``random`` draws, the same vocabulary and language ids; bad input gives one plain line."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts import text as text_module
from app.models.indextts.presets import PRESETS, TINY, yaml_text
from app.models.indextts.text import MAX_CHARS, TextFrontend, write_tiny_vocab
from app.models.indextts.vocab import VOCAB_FILE, language_id, load_encoding, special_names

GOLDEN = json.loads((Path(__file__).parent / "data" / "indextts" / "text_tokens.json").read_text("utf-8"))
CASES = {case["name"]: case for case in GOLDEN["cases"]}
JAPANESE = {name for name, case in CASES.items() if case["lang"] == "ja"}


def _needs_japanese() -> None:
    """Skip where fugashi + unidic-lite (the optional 'ja' extra) are not installed."""
    try:
        text_module._Japanese.words("日本")
    except VoxDeskError:
        pytest.skip("Japanese text needs fugashi + unidic-lite (pip install 'voxdesk[ja]')")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("indextts_text")
    (out / "config.yaml").write_text(yaml_text(PRESETS[TINY]), encoding="utf-8")
    write_tiny_vocab(out)
    return out


@pytest.fixture(scope="module")
def frontend(folder: Path) -> TextFrontend:
    return TextFrontend(folder)


def test_tiny_vocab_is_the_one_the_goldens_used(folder: Path) -> None:
    assert hashlib.sha256((folder / VOCAB_FILE).read_bytes()).hexdigest() == GOLDEN["vocab_sha256"]
    encoding = load_encoding(folder)
    assert encoding.n_vocab == GOLDEN["n_vocab"] == 2373
    assert special_names() == GOLDEN["specials"]
    assert encoding.encode_single_token(special_names()[0]) == GOLDEN["first_special"] == 700
    # as in the real vocabulary, the ids the GPT drops (start/stop text token) are "!" and '"'
    assert encoding.encode("!\"") == [0, 1]
    assert PRESETS[TINY]["gpt"]["number_text_tokens"] > encoding.n_vocab - 1


def test_the_tiny_model_folder_holds_the_golden_vocabulary(tiny_ix: Path) -> None:  # noqa: F811
    assert hashlib.sha256((tiny_ix / VOCAB_FILE).read_bytes()).hexdigest() == GOLDEN["vocab_sha256"]
    case = CASES["zh_annotation"]
    assert TextFrontend(tiny_ix).segments(case["text"], case["lang"]) == case["segments"]


def test_language_ids_are_the_official_ones() -> None:
    assert {code: language_id(code) for code in GOLDEN["language_ids"]} == GOLDEN["language_ids"]


def test_capacity_comes_from_config(frontend: TextFrontend) -> None:
    assert frontend.max_text_tokens == GOLDEN["max_text_tokens"] == PRESETS[TINY]["gpt"]["max_text_tokens"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_segments_match_official(frontend: TextFrontend, name: str) -> None:
    case = CASES[name]
    if name in JAPANESE:
        _needs_japanese()
    frontend.normalizer.glossary = case.get("glossary", {})
    rng = random.Random(case.get("seed", 0))
    try:
        segments = frontend.segments(case["text"], case["lang"], case.get("max_tokens", 120),
                                     case.get("normalize", True), rng)  # fmt: skip
    finally:
        frontend.normalizer.glossary = {}
    assert segments == case["segments"]
    assert rng.random() == case["next_random"]  # the same number of draws (Japanese: one per kanji run)
    assert language_id(case["lang"]) == case["lang_id"]


def test_long_texts_split_as_official(frontend: TextFrontend) -> None:
    for name in ("long_zh", "long_en", "long_zh_tight", "unpunctuated_split", "annotation_split"):
        case = CASES[name]
        assert len(case["segments"]) >= 3
        prefix = f"<|{case['lang']}|> "
        prepared = frontend.prepare(case["text"], case["lang"])
        assert frontend.split(prepared, prefix, case.get("max_tokens", 120)) == case["texts"]


def test_global_random_is_the_default(frontend: TextFrontend) -> None:
    _needs_japanese()
    case = CASES["ja_spaces"]
    random.seed(case["seed"])
    assert frontend.segments(case["text"], "JA") == case["segments"]
    assert random.random() == case["next_random"]


@pytest.mark.parametrize("text", ["", "   \n\t ", "x" * (MAX_CHARS + 1)])
def test_empty_or_huge_text_is_one_line(frontend: TextFrontend, text: str) -> None:
    with pytest.raises(VoxDeskError) as err:
        frontend.segments(text, "en")
    assert "\n" not in str(err.value) and "text" in str(err.value)


@pytest.mark.parametrize("lang", ["", "z h"])
def test_bad_language_code_is_one_line(frontend: TextFrontend, lang: str) -> None:
    with pytest.raises(VoxDeskError, match="not a language code"):
        frontend.segments("hello", lang)


def test_japanese_without_fugashi(frontend: TextFrontend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fugashi", None)  # import fugashi -> ImportError
    monkeypatch.setattr(text_module._Japanese, "_tagger", None)
    with pytest.raises(VoxDeskError, match="fugashi and unidic-lite") as err:
        frontend.segments("今日はいい天気ですね。", "ja")
    assert "\n" not in str(err.value)
    assert frontend.segments(CASES["zh"]["text"], "zh") == CASES["zh"]["segments"]  # other languages work


def test_vocabulary_problems_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match=f"{VOCAB_FILE} is missing"):
        load_encoding(tmp_path)
    path = tmp_path / VOCAB_FILE
    path.write_text(f"{base64.b64encode(b'a').decode()} 0\nnot-base64!! 1\n", encoding="ascii")
    with pytest.raises(VoxDeskError, match="line 2"):
        load_encoding(tmp_path)
    path.write_text(f"{base64.b64encode(b'a').decode()} 0\n{base64.b64encode(b'b').decode()} 5\n")
    with pytest.raises(VoxDeskError, match="not 0 .. 1"):
        load_encoding(tmp_path)


def test_config_problems_are_one_line(tmp_path: Path) -> None:
    write_tiny_vocab(tmp_path)
    with pytest.raises(VoxDeskError, match="config.yaml") as err:
        TextFrontend(tmp_path)
    assert "\n" not in str(err.value)
    assert TextFrontend(tmp_path, max_text_tokens=40).max_text_tokens == 40


def test_glossary_file_is_read_and_checked(tmp_path: Path) -> None:
    write_tiny_vocab(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml_text(PRESETS[TINY]), encoding="utf-8")
    case = CASES["glossary_en"]
    glossary = tmp_path / "glossary.yaml"
    import yaml

    glossary.write_text(yaml.safe_dump(case["glossary"], allow_unicode=True), encoding="utf-8")
    assert TextFrontend(tmp_path).segments(case["text"], "en") == case["segments"]
    glossary.write_text("M.2: 2\n", encoding="utf-8")
    with pytest.raises(VoxDeskError, match="not text"):
        TextFrontend(tmp_path)
    glossary.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(VoxDeskError, match="must map each term"):
        TextFrontend(tmp_path)
