"""Scoring what the recognizer heard against the segment's text (jiwer on normalized units)."""

from __future__ import annotations

import pytest

from app.backcheck.score import guess_language, normalize, score, spoken_text, units
from app.backcheck.takes import CheckPolicy, Take, Takes, take_seed


def test_normalize_drops_case_punctuation_width_and_spaces():
    assert normalize("  Hello,   WORLD!  ") == "hello world"
    assert normalize("你好，世界。") == "你好 世界"
    assert normalize("ＡＢＣ１２３") == "abc123"  # full-width forms (NFKC)
    assert normalize("it's — “quoted”") == "it s quoted"


def test_units_split_cjk_characters_and_words():
    assert units("你好 world, 再见!") == ["你", "好", "world", "再", "见"]
    assert units("こんにちは") == list("こんにちは")
    assert units("Don't stop") == ["don", "t", "stop"]


@pytest.mark.parametrize(
    "expected, heard, metric, value",
    [
        ("Hello there, how are you?", "hello there how are you", "wer", 0.0),
        ("Hello there, how are you?", "hello hair how are you", "wer", 0.2),  # 1 substitution in 5
        ("Hello there, how are you?", "hello how are you", "wer", 0.2),  # 1 deletion
        ("one two three four", "one two three four five six", "wer", 0.5),  # 2 insertions
        ("今天天气很好。", "今天天气很好", "cer", 0.0),
        ("今天天气很好。", "今天天汽很好", "cer", 1 / 6),  # one wrong character in six
        ("今天天气很好", "今天很好", "cer", 2 / 6),
        ("我爱 Python 编程", "我爱派森编程", "cer", 2 / 5),  # mixed: 4 Han + 1 word; 1 sub + 1 ins
        ("hello", "", "wer", 1.0),
        ("你好", "完全不同的一句话很长", "cer", 5.0),  # may exceed 1: far more was heard than said
    ],
)
def test_score_uses_cer_for_cjk_and_wer_otherwise(expected, heard, metric, value):
    s = score(expected, heard)
    assert s.metric == metric and s.value == pytest.approx(value) and s.heard == heard


def test_score_label_and_design_prefix():
    assert score("a b c d", "a b c x").label() == "WER 25%"
    assert spoken_text("(a calm old man)Hello there.") == "Hello there."
    assert spoken_text("（温柔）你好") == "你好"
    assert spoken_text("Hello (there)") == "Hello (there)"


def test_guess_language():
    assert guess_language("今天天气很好") == "zh"
    assert guess_language("Hello 你好 there friend") == "en"
    assert guess_language("こんにちは世界") == "ja"
    assert guess_language("안녕하세요") == "ko"
    assert guess_language("123") == "auto"


def test_takes_keep_the_best_and_stop_at_the_limit():
    policy = CheckPolicy(threshold=0.2, max_takes=3)
    takes = Takes()
    takes.add(Take(1, score("a b c d e", "x y c d e")))  # 0.4: flagged
    assert takes.wants_another(policy)
    takes.add(Take(2, score("a b c d e", "a y c d e")))  # 0.2: not above the threshold
    assert takes.best().seed == 2 and not takes.wants_another(policy)
    worse = Takes([Take(1, score("a b", "x y")), Take(2, score("a b", "x b")), Take(3, score("a b", "x y"))])
    assert worse.best().seed == 2 and not worse.wants_another(policy)  # three takes: stop, keep take 2
    assert Takes([Take(5, None), Take(6, score("a", "b"))]).best().seed == 6  # scored beats unchecked
    with pytest.raises(ValueError):
        CheckPolicy(max_takes=0)


def test_take_seeds_are_reproducible_and_distinct():
    seeds = [take_seed(7, t) for t in range(1, 6)]
    assert seeds[0] == 7 and len(set(seeds)) == 5 and seeds == [take_seed(7, t) for t in range(1, 6)]
    assert all(0 <= s < 2**31 for s in seeds)
