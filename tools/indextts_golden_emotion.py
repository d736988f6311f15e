"""Goldens of IndexTTS's emotion controls, from the official code on a VoxDesk tiny folder.

    /tmp/indexvenv/bin/python tools/indextts_golden_emotion.py CHECKOUT FOLDER OUT_DIR

Runs in the official code's venv (see tests/data/indextts/README.md); FOLDER is written by
``python -m app.models.indextts.checkpoint FOLDER`` (indextts25-tiny, seed 0) and must hold the
QwenEmotion folder. Writes ``OUT_DIR/emotion.npz`` (the emotion vectors) and ``emotion.json`` (the
inputs' seeds and checksums, the weights, the matrix rows picked, QwenEmotion's replies, dicts and
the torch RNG state after each, the reply readings, the web UI's balance).

What runs is official: ``UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus")`` loaded by
``load_checkpoint`` and its ``merge_emovec`` (the inputs are fixed random w2v-BERT-like features
[1, T, 1024] and a CAMPPlus-like style [1, 192], so no other part is needed), the matrices as
``IndexTTS2.__init__`` loads and splits them (``torch.load``, ``torch.split``), the row choice
``find_most_similar_cosine``, ``QwenEmotion`` and ``IndexTTS2.normalize_emo_vec``. Three short
stretches of ``infer_generator`` are written out here because they are inline there: the α scaling
of a vector (``infer_v2_5.py:606-610``), the ``use_random`` row choice (``:671-672``) and the mix
(``:666-680``, ``:768``). For the reply readings
``QwenEmotion.model.generate`` is replaced by one returning a fixed reply, so everything after the
draw (``</think>`` cut, decode, JSON or pattern, melancholic swap, normalise, clamp, calm) is the
official code's.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from indextts_official import COMMIT, load_tree, official_import, save_npz  # noqa: E402

FEATS = {"spk": (11, 60), "emo": (12, 45)}  # name: (seed, frames) of randn [1, frames, 1024]
STYLE_SEED = 13  # randn [1, 192]
RANDOM_SEED = 7  # random.seed before the use_random row choice
VECTOR = [0.0, 0.3, 0.0, 0.0, 0.2, 0.0, 0.0, 0.35]
TEXTS = [  # (name, text, seed, alpha)
    ("text_zh", "今天我非常高兴，阳光明媚！", 0, 1.0),
    ("text_melancholic", "I feel so gloomy and melancholic today.", 3, 0.6),
]
REPLIES = [  # (text, reply) read by the official code after a replaced draw
    ("好开心", '{"高兴": 0.7, "悲伤": 0.2}'),
    ("生气", '</think>\n\n{"愤怒": 1.5, "自然": -0.3}'),
    ("有点烦", '高兴: 0.5, "反感" : 0.25 and 自然:1'),
    ("hello", '{"emotion": "Angry"}'),
    ("哇", '{"高兴": "surprised"}'),
    ("I am so depressed", '{"悲伤": 0.8, "低落": 0.1}'),
    ("gloomy", '{"emotion": "sad"}'),
    ("嗯", "{}"),
    ("嗯嗯", "[1, 2]"),
    ("怕", 'hmm</think>{"惊讶": 0.9}</think>{"恐惧": 0.4}'),
    ("真的", '{"高兴": true, "惊讶": 2}'),
    ("calm", '"calm"'),
]
BALANCE = [[0.5, 0.9, 0.0, 0.0, 0.0, 0.0, 0.4, 0.6], [0.1, 0.0, 0.2, 0.0, 0.0, 0.0, 0.3, 0.1]]


def randn(seed: int, *shape: int) -> Any:
    import torch

    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def scale(vector: list[float], alpha: float) -> list[float]:
    """infer_v2_5.py:606-610 (inline there)."""
    alpha = max(0.0, min(1.0, alpha))
    return vector if alpha == 1.0 else [int(x * alpha * 10000) / 10000 for x in vector]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.exit("usage: indextts_golden_emotion.py CHECKOUT FOLDER OUT_DIR")
    official_import(argv[0])
    folder, out = Path(argv[1]), Path(argv[2])
    import torch
    from indextts.gpt.model_v2 import UnifiedVoice
    from indextts.infer_v2_5 import IndexTTS2, QwenEmotion, find_most_similar_cosine
    from indextts.utils.checkpoint import load_checkpoint

    cfg = load_tree(folder)
    gpt = UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus")
    load_checkpoint(gpt, str(folder / cfg.gpt_checkpoint))
    gpt.eval()
    emo_num = list(cfg.emo_num)
    emo_matrix = torch.split(torch.load(folder / cfg.emo_matrix), emo_num)
    spk_matrix = torch.split(torch.load(folder / cfg.spk_matrix), emo_num)
    feats = {name: randn(seed, 1, frames, 1024) for name, (seed, frames) in FEATS.items()}
    style = randn(STYLE_SEED, 1, 192)

    def merge(spk: Any, emo: Any, alpha: float) -> Any:
        width = torch.tensor([1024])  # the caller's lengths: the feature width (finding 8)
        with torch.no_grad():
            return gpt.merge_emovec(spk, emo, width, width, alpha=alpha)

    rows = [int(find_most_similar_cosine(style, m)) for m in spk_matrix]

    random.seed(RANDOM_SEED)
    random_rows = [random.randint(0, x - 1) for x in emo_num]  # infer_v2_5.py:671-672 (use_random)

    def mix(vector: list[float], picks: list[int] = rows) -> Any:
        """infer_v2_5.py:666-680 and :768 (inline there): the speaker clip as its own emotion, α 1."""
        weight = torch.tensor(vector)
        picked = torch.cat([m[i].unsqueeze(0) for i, m in zip(picks, emo_matrix, strict=True)], 0)
        mat = torch.sum(weight.unsqueeze(1) * picked, 0).unsqueeze(0)
        return mat + (1 - torch.sum(weight)) * merge(feats["spk"], feats["spk"], 1.0)

    arrays = {
        "plain": merge(feats["spk"], feats["spk"], 1.0),
        "emo_audio": merge(feats["spk"], feats["emo"], 0.6),
        "emo_alone": gpt.get_emovec(feats["emo"], torch.tensor([1024])).detach(),
        "vector": mix(scale(VECTOR, 1.0)),
        "vector_alpha": mix(scale(VECTOR, 0.6)),
        "vector_random": mix(VECTOR, random_rows),
    }
    record: dict[str, Any] = {
        "commit": COMMIT,
        "feats": {name: {"seed": seed, "frames": frames, "sum": float(feats[name].sum())}
                  for name, (seed, frames) in FEATS.items()},
        "style": {"seed": STYLE_SEED, "sum": float(style.sum())},
        "emo_alpha": 0.6,
        "vector": VECTOR,
        "vector_alpha": {"alpha": 0.6, "scaled": scale(VECTOR, 0.6)},
        "rows": rows,
        "random_rows": {"seed": RANDOM_SEED, "rows": random_rows},
        "texts": [],
        "replies": [],
        "balance": [{"in": v, "out": IndexTTS2.normalize_emo_vec(None, v)} for v in BALANCE],
    }

    qwen = QwenEmotion(str(folder / cfg.qwen_emo_path))
    generate = qwen.model.generate
    drawn: list[list[int]] = []

    def recording(**kwargs: Any) -> Any:
        ids = generate(**kwargs)
        drawn.append(ids[0, kwargs["input_ids"].shape[1]:].tolist())
        return ids

    qwen.model.generate = recording
    for name, text, seed, alpha in TEXTS:
        torch.manual_seed(seed)
        scores = qwen.inference(text)
        state = hashlib.sha256(torch.get_rng_state().numpy().tobytes()).hexdigest()
        vector = scale(list(scores.values()), alpha)
        arrays[name] = mix(vector)
        record["texts"].append({"name": name, "text": text, "seed": seed, "alpha": alpha, "scores": scores,
                                "reply_ids": drawn[-1], "vector": vector, "rng_after": state})
    for text, reply in REPLIES:
        reply_ids = qwen.tokenizer.encode(reply, add_special_tokens=False)
        qwen.model.generate = lambda reply_ids=reply_ids, **kw: torch.cat(
            [kw["input_ids"], torch.tensor([reply_ids])], 1)
        record["replies"].append({"text": text, "reply": reply, "reply_ids": reply_ids,
                                  "scores": qwen.inference(text)})
    save_npz(out / "emotion.npz", **arrays)
    text = json.dumps(record, ensure_ascii=False, indent=1) + "\n"
    (out / "emotion.json").write_text(text, encoding="utf-8")
    print(f"wrote {out / 'emotion.npz'} and {out / 'emotion.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
