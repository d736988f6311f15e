"""Segmenter and pronunciation list."""

import random
import re

import pytest

from app.errors import VoxDeskError
from app.text.pronunciation import PronunciationList, Rule, compile_rule
from app.text.segmenter import Segment, line_tag, split_script, split_sentences

TAG = re.compile(r"^[^\S\n]*\[([^\[\]\n]{1,64})\]", re.M)


def _chars(text: str) -> str:
    return "".join(text.split())


def _assert_lossless(text: str, segments: list[Segment]) -> None:
    expected = _chars(TAG.sub(lambda m: "" if m.group(1).strip() else m.group(), text))
    assert _chars("".join(s.text for s in segments)) == expected


def test_english_sentences_and_decimals():
    text = 'Dr. Smith paid $3.50 for it. "Really?!" she asked. Yes… e.g. like this.'
    assert split_sentences(text) == [
        "Dr. Smith paid $3.50 for it.",
        '"Really?!"',
        "she asked.",
        "Yes…",
        "e.g. like this.",
    ]


def test_chinese_sentences():
    text = "你好。今天天气很好！我们去公园吧？好的；走吧…「真的吗？」"
    assert split_sentences(text) == [
        "你好。",
        "今天天气很好！",
        "我们去公园吧？",
        "好的；",
        "走吧…",
        "「真的吗？」",
    ]


def test_lines_tags_and_order():
    text = (
        "[Alice] Hi Bob. How are you?\n\n  [Bob]I'm fine!\nNarrator speaks.\n"
        "[ ] stays text\nx [Carol] stays too"
    )
    segments = split_script(text)
    assert [(s.voice, s.text, s.line) for s in segments] == [
        ("Alice", "Hi Bob.", 0),
        ("Alice", "How are you?", 0),
        ("Bob", "I'm fine!", 2),
        (None, "Narrator speaks.", 3),
        (None, "[ ] stays text", 4),
        (None, "x [Carol] stays too", 5),
    ]


def test_line_tag():
    tag = line_tag("  [Mary Ann]hello")
    assert (tag.voice, "  [Mary Ann]hello"[tag.end :]) == ("Mary Ann", "hello")
    assert line_tag("hello [Mary]") is None


def test_long_sentence_splits_at_commas_then_length():
    clause = "这是一个非常长的句子，"
    segments = split_script(clause * 50, max_chars=60)
    assert all(len(s.text) <= 60 for s in segments)
    assert all(s.text.endswith("，") for s in segments)  # cut at the commas, not mid-clause
    english = " ".join(["word"] * 200) + "."
    parts = split_sentences(english, max_chars=50)
    assert all(len(p) <= 50 for p in parts) and len(parts) > 10
    assert all(not p.startswith(" ") and "wor d" not in p for p in parts)
    no_spaces = "x" * 130
    assert split_sentences(no_spaces, max_chars=50) == ["x" * 50, "x" * 50, "x" * 30]


def test_numbers_with_commas_and_colons_stay_whole():
    text = "At 10:30 we paid 1,000,000 dollars, then left, " * 3 + "done."
    parts = split_sentences(text, max_chars=60)
    assert all(len(p) <= 60 for p in parts)
    assert all("1,000,000" in p or "1," not in p for p in parts) and "10:30" in parts[0]
    assert " ".join(parts) == text


def test_default_max_keeps_segments_short():
    text = ("A sentence that goes on, and on, and on: with many clauses, " * 30) + "end."
    segments = split_script(text)
    assert all(len(s.text) <= 200 for s in segments)
    _assert_lossless(text, segments)


def test_empty_and_punctuation_only():
    assert split_script("\n  \n\t\n") == []
    assert split_sentences("Hello!!! ?!") == ["Hello!!! ?!"]
    assert split_sentences("...") == ["..."]


def test_never_loses_text_fuzz():
    rng = random.Random(1234)
    alphabet = list('abc XYZ 你好世界 ，、,:：。！？；…!?;."”』)\n\t[]') + [
        "[Alice] ",
        "\n[Bob]",
        "3.14",
        "Dr. ",
    ]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        max_chars = rng.choice([20, 37, 200])
        segments = split_script(text, max_chars=max_chars)
        _assert_lossless(text, segments)
        assert all(s.text and s.text == s.text.strip() and len(s.text) <= max_chars for s in segments)
        assert [s.line for s in segments] == sorted(s.line for s in segments)


def test_max_chars_floor():
    with pytest.raises(ValueError):
        split_script("hi", max_chars=5)


def test_pronunciation_plain_regex_case_word():
    rules = PronunciationList(
        [
            Rule("VoxCPM", "vox see pee em"),
            Rule("read", "red", whole_word=True),
            Rule(r"(\d+)%", r"\1 percent", regex=True),
            Rule("SQL", "sequel", case_sensitive=True),
            Rule("never", "always", enabled=False),
            Rule("", "ignored"),
        ]
    )
    out = rules.apply("voxcpm read bread 50% sql SQL never")
    assert out == "vox see pee em red bread 50 percent sql sequel never"


def test_plain_replacement_is_literal():
    assert PronunciationList([Rule("a", r"\1 \g<0>")]).apply("a") == r"\1 \g<0>"


def test_rules_apply_in_order():
    rules = PronunciationList([Rule("a", "b"), Rule("b", "c")])
    assert rules.apply("a") == "c"


@pytest.mark.parametrize(
    ("rule", "needle"),
    [
        (Rule("(unclosed", "x", regex=True), "Pronunciation rule 2"),
        (Rule("a", r"\2", regex=True), "valid regular expression"),
        (Rule("x*", "y", regex=True), "matches empty text"),
    ],
)
def test_invalid_rule_names_it(rule, needle):
    rules = PronunciationList([Rule("fine", "ok"), rule])
    with pytest.raises(VoxDeskError, match=re.escape(needle)):
        rules.validate()
    with pytest.raises(VoxDeskError, match=r"rule 2"):
        rules.apply("text")


def test_invalid_regex_is_fine_when_plain_or_disabled():
    compile_rule(Rule("(unclosed", "x"))
    PronunciationList([Rule("(", "x", regex=True, enabled=False)]).validate()


def test_pronunciation_round_trip_and_tolerance():
    rules = PronunciationList(
        [Rule("a", "b", regex=True, case_sensitive=True, whole_word=False, enabled=False)]
    )
    data = rules.to_list()
    data[0]["future_key"] = 1
    again = PronunciationList.from_list(data)
    assert again.rules == rules.rules
    assert PronunciationList.from_list(None).rules == []
    with pytest.raises(VoxDeskError):
        PronunciationList.from_list([{"replace": "x"}])
    with pytest.raises(VoxDeskError):
        PronunciationList.from_list({"find": "x"})
