"""QwenEmotion (emotion from a text) against the official goldens (tests/data/indextts/README.md).

On the tiny folder's random Qwen3 (fp16, CPU), the same seed gives the official reply token for
token, the same scores and the same torch generator state afterwards (its draws shift everything
drawn later, quirk 3); the official reader's result for a set of fixed replies; and the vector mix
of the scores.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.engine.request import EMOTIONS
from app.errors import VoxDeskError
from app.models.indextts.config import load_config
from app.models.indextts.emotion import EmotionEncoder, EmotionMatrices, scale_vector
from app.models.indextts.qwen_emotion import THINK_END, QwenEmotion, write_tiny_qwen
from app.models.indextts.weights import load_torch

DATA = Path(__file__).parent / "data" / "indextts"


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((DATA / "emotion.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def qwen(tiny_ix: Path) -> QwenEmotion:  # noqa: F811
    return QwenEmotion(tiny_ix / load_config(tiny_ix).qwen_emo_path)


def test_text_matches_official_draw_for_draw(tiny_ix: Path, qwen: QwenEmotion, record: dict) -> None:  # noqa: F811
    cfg = load_config(tiny_ix)
    encoder = EmotionEncoder.from_config(cfg.gpt).load(load_torch(tiny_ix / cfg.gpt_checkpoint))
    matrices = EmotionMatrices.load(tiny_ix, cfg)
    arrays = dict(np.load(DATA / "emotion.npz"))
    spec = record["feats"]["spk"]
    spk = torch.randn((1, spec["frames"], 1024), generator=torch.Generator().manual_seed(spec["seed"]))
    style = torch.randn((1, 192), generator=torch.Generator().manual_seed(record["style"]["seed"]))
    base = encoder.merge(spk, spk, 1.0)
    for case in record["texts"]:
        torch.manual_seed(case["seed"])
        reply = qwen.reply(case["text"])
        after = hashlib.sha256(torch.get_rng_state().numpy().tobytes()).hexdigest()
        assert reply == case["reply_ids"], case["name"]
        assert after == case["rng_after"], case["name"]
        scores = qwen.read(reply, case["text"])
        assert scores == case["scores"]
        vector = scale_vector(list(scores.values()), case["alpha"])
        assert vector == case["vector"]
        mixed = matrices.mix(vector, style, base)
        assert float((mixed - torch.from_numpy(arrays[case["name"]])).abs().max()) < 1e-3


def test_replies_are_read_as_official(qwen: QwenEmotion, record: dict) -> None:
    for case in record["replies"]:
        assert qwen.read(case["reply_ids"], case["text"]) == case["scores"], case["reply"]


def test_a_malformed_score_reads_as_zero(qwen: QwenEmotion) -> None:
    """Where the official reader raises (a score that is no number), ours reads 0."""
    ids = qwen.tokenizer.encode('{"高兴": "very", "愤怒": null, "悲伤": [1]}', add_special_tokens=False)
    assert qwen.read(ids, "x")["calm"] == 1.0
    ids = qwen.tokenizer.encode("悲伤: 1.2.3, 高兴: 0.5", add_special_tokens=False)
    assert qwen.read(ids, "x") == {**dict.fromkeys(EMOTIONS, 0.0), "happy": 0.5}


def test_missing_folder_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="Emotion from text needs the QwenEmotion model: install it"):
        QwenEmotion(tmp_path / "qwen0.6bemo4-merge")


@pytest.mark.parametrize("damage", ["model.safetensors", "tokenizer.json"])
def test_damaged_folder_says_what_to_do(tiny_ix: Path, tmp_path: Path, damage: str) -> None:  # noqa: F811
    folder = shutil.copytree(tiny_ix / load_config(tiny_ix).qwen_emo_path, tmp_path / "qwen")
    (folder / damage).write_bytes(b"not a file of this kind")
    with pytest.raises(VoxDeskError) as err:
        QwenEmotion(folder)
    assert "does not load" in str(err.value) and "\n" not in str(err.value)


def test_tiny_folder_looks_like_the_real_one(qwen: QwenEmotion, tiny_ix: Path, tmp_path: Path) -> None:  # noqa: F811
    folder = tiny_ix / load_config(tiny_ix).qwen_emo_path
    assert qwen.tokenizer.convert_tokens_to_ids("</think>") == THINK_END
    assert qwen.tokenizer.eos_token == "<|im_end|>" and qwen.model.dtype == torch.float16
    assert json.loads((folder / "generation_config.json").read_text())["do_sample"] is True
    assert sum(f.stat().st_size for f in folder.iterdir()) < 12_000_000
    again = write_tiny_qwen(tmp_path / "again", seed=0)
    assert (again / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()
