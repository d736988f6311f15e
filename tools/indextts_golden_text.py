"""Golden text ids of IndexTTS-2.5: the official ``infer`` text path on a VoxDesk tiny folder.

    /tmp/indexvenv/bin/python tools/indextts_golden_text.py CHECKOUT FOLDER OUT_DIR

``CHECKOUT`` is an index-tts checkout (commit ``ee40fa7d``), ``FOLDER`` a tiny folder (only its
``config.yaml`` and ``multilingual_zh_ja_yue_char_del.tiktoken`` are read: the one
``python -m app.models.indextts.checkpoint`` writes), ``OUT_DIR`` gets ``text_tokens.json``.

Each case runs the official ``IndexTTS2.infer_generator`` itself: the instance is built without
its networks (``__new__``), given the official tokenizer, ``TextNormalizer`` (wetext branch, see
tools/indextts_official.py) and ``JapaneseG2PProcessor(g2p_ratio=0)``, and cached speaker and
emotion conditions so the audio steps are skipped. The GPT stand-in answers the text capacity
(``max_text_tokens + 2`` positions, as ``UnifiedVoice`` builds it) and, when the segment loop
calls it for the first time, reads the loop's ``segment_tokens``, ``segments`` and ``lang`` and
stops the run. Python's ``random`` is seeded with the case's seed before the call and drawn once
after it (``next_random``), which shows how many draws the text path made.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from indextts_official import COMMIT, load_tree, official_import  # noqa: E402

LONG_ZH = (
    "清晨拉开窗帘，阳光洒在窗台的花艺礼盒上：薰衣草香薰蜡烛唤醒嗅觉，永生花束折射出晨露般的光泽。"
    "设计师将自然绽放的美学融入每个细节，手工陶瓷花瓶可作首饰收纳，香薰精油含有舒缓的配方。"
    "限量款附赠插花灵感手册，让每个平凡的日子都有花开的仪式感。"
    "宴会厅灯光暗下的刹那，星月系列耳坠开始发光；瑞士冷珐琅工艺让蓝宝石如银河流动。"
    "七夕限定礼盒含星座定制铭牌，让爱意如星辰永恒闪耀！你喜欢吗？"
)
LONG_EN = (
    "The library opens at nine in the morning and closes at six in the evening. "
    "Visitors may borrow up to five books at a time, and each loan lasts three weeks; "
    "renewals can be made online, by phone, or at the front desk. "
    "Children under twelve must be accompanied by an adult, and food is not allowed in the reading rooms. "
    "Please keep your voice down, switch off your phone, and enjoy the quiet!"
)
GLOSSARY = {"M.2": {"en": "M dot two", "zh": "M 二"}, "PCIe 5.0": {"zh": "PCIE 五点零"}, "C++": "C 加加"}


def _case(name: str, lang: str, text: str, **options: Any) -> dict[str, Any]:
    """options: max_tokens (default 120), normalize (default True), seed of Python's random
    (default 0), glossary (the terms a model folder's glossary.yaml would hold)."""
    return {"name": name, "lang": lang, "text": text, **options}


CASES: list[dict[str, Any]] = [
    _case("zh", "zh", "今天天气真不错，我们一起去公园散步吧。"),
    _case("en", "en", "The quick brown fox jumps over the lazy dog. It's a good day!"),
    _case("ja", "ja", "今日はいい天気ですね。一緒に公園へ行きましょう。"),
    _case("ja_spaces", "ja", "東京 と 大阪、そして 京都に 行きたい です。", seed=7),
    _case("es", "es", "¿Dónde está la biblioteca? Mañana vamos a la playa con 3 amigos."),
    _case("ar", "ar", "مرحبا بكم في عالم الذكاء الاصطناعي. كيف حالك اليوم؟"),
    _case("zh_en_mixed", "zh", "我最喜欢的 app 是 VoxDesk，它 works offline，效果666！"),
    _case("zh_numbers", "zh", "2025年1月11日下午3:30，价格是¥12.5，"
                              "增长了25%，电话135-4567-8900。"),  # fmt: skip
    _case("en_numbers", "en", "On 2025/01/11 it cost $12.50, up 25% at 8:00 AM; call 555-0100."),
    _case("en_terms", "en", "Such as XTTS, CosyVoice2, Fish-Speech, and GPT-5-Nano: who's there?"),
    _case("zh_pinyin", "zh", "晕XUAN4是一种GAN3觉，不zuo1死就不会死，"
                             "约瑟夫·高登-莱维特来了。"),  # fmt: skip
    _case("zh_annotation", "zh", "他在银<行|HANG2>工作，一<行|XING2>人走了。"),
    _case("en_annotation", "en", "We are <going|G OW1 . IH0 NG> home at 5 pm."),
    _case("ja_kana_annotation", "ja", "<今日|きょう>は晴れです。<東京|トウキョウ>へ行く。"),
    _case("lone_marks", "en", "! \" Wow ! Really \"ok\" !"),
    _case("lone_marks_raw", "en", "! \" ! \"", normalize=False),
    _case("typed_special", "en", "Say <|special_token_1|>HH AH0<|special_token_1|> <|endoftext|> now."),
    _case("zh_no_normalization", "zh", "2025年，价格¥12.5（含税）！", normalize=False),
    _case("zhen_prefix", "zhen", "这是zhen模式，mixed text 123。"),
    _case("yue_prefix", "yue", "你好，今日天氣好好。"),
    _case("long_zh", "zh", LONG_ZH),
    _case("long_en", "en", LONG_EN),
    _case("long_zh_tight", "zh", LONG_ZH[:80], max_tokens=24),
    _case("unpunctuated_split", "en", "abcdefghij" * 12 + " and the rest", max_tokens=16),
    _case("glossary_zh", "zh", "我的M.2硬盘支持PCIe 5.0和C++。", glossary=GLOSSARY),
    _case("glossary_en", "en", "An M.2 drive on PCIe 5.0, written in c++.",
          glossary={**GLOSSARY, "C++": "C plus plus"}),  # fmt: skip
    _case("annotation_split", "zh", "银<行|HANG2>的<行|XING2>长，" * 6, max_tokens=20),
]


class _Captured(Exception):
    def __init__(self, found: dict[str, Any]) -> None:
        super().__init__("text path done")
        self.found = found


class _GPTStandIn:
    """Answers the text capacity; stops the run at the first GPT call with the loop's locals."""

    def __init__(self, positions: int) -> None:
        emb = type("Emb", (), {"num_embeddings": positions})()
        self.text_pos_embedding = type("Pos", (), {"emb": emb})()

    def merge_emovec(self, *args: Any, **kwargs: Any) -> None:
        caller = sys._getframe(1).f_locals
        found = {key: caller[key] for key in ("segment_tokens", "segments", "lang")}
        raise _Captured(found)


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    official_import(sys.argv[1])
    folder, out_dir = Path(sys.argv[2]).resolve(), Path(sys.argv[3])
    import torch
    from indextts.infer_v2_5 import IndexTTS2
    from indextts.utils import tokenizer as official_tokenizer
    from indextts.utils.front import TextNormalizer
    from indextts.utils.ja_g2p import JapaneseG2PProcessor

    tree = load_tree(folder)
    tts = IndexTTS2.__new__(IndexTTS2)
    tts.device, tts.dtype, tts.qwen_emo, tts.gr_progress = "cpu", None, None, None
    tts.tokenizer = official_tokenizer.get_tokenizer(multilingual=True, model_dir=str(folder))
    tts.ja_text_process = JapaneseG2PProcessor(g2p_ratio=0)
    tts.text_process = TextNormalizer(enable_glossary=True)
    tts.text_process.load()
    tts.gpt = _GPTStandIn(int(tree.gpt.max_text_tokens) + 2)
    tts.cache_spk_cond, tts.cache_emo_cond = torch.zeros(1, 1, 8), torch.zeros(1, 1, 8)
    tts.cache_s2mel_style = tts.cache_s2mel_prompt = tts.cache_mel = None
    tts.cache_spk_audio_prompt = tts.cache_emo_audio_prompt = "speaker.wav"

    cases = []
    for case in CASES:
        tts.text_process.term_glossary = dict(case.get("glossary", {}))
        random.seed(case.get("seed", 0))
        run = tts.infer_generator("speaker.wav", case["text"], None, case["lang"],
                                  max_text_tokens_per_segment=case.get("max_tokens", 120),
                                  text_normalization=case.get("normalize", True))  # fmt: skip
        try:
            next(run)
            sys.exit(f"error: case {case['name']}: the official run went past the text path")
        except _Captured as stop:
            found = stop.found
        cases.append({**case, "segments": [t[0].tolist() for t in found["segment_tokens"]],
                      "texts": found["segments"], "lang_id": int(found["lang"][0]),
                      "next_random": random.random()})  # fmt: skip
        print(f"{case['name']}: {len(cases[-1]['segments'])} segment(s)", file=sys.stderr)

    encoding = tts.tokenizer.encoding
    vocab = folder / "multilingual_zh_ja_yue_char_del.tiktoken"
    golden = {
        "commit": COMMIT,
        "vocab_sha256": hashlib.sha256(vocab.read_bytes()).hexdigest(),
        "max_text_tokens": int(tree.gpt.max_text_tokens),
        "n_vocab": encoding.n_vocab,
        "specials": sorted(encoding.special_tokens_set, key=encoding.encode_single_token),
        "first_special": min(encoding.encode_single_token(name) for name in encoding.special_tokens_set),
        "language_ids": {code: official_tokenizer.lang_to_token(code)
                         for code in [*official_tokenizer.LANGUAGES, "ZH", "zhen", "xx"]},  # fmt: skip
        "cases": cases,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "text_tokens.json"
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
