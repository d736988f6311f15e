"""IndexTTS's emotion vector against the official goldens (tests/data/indextts/README.md, emotion).

The tiny folder's emotion encoder (gpt.pth) and matrices (feat1.pt, feat2.pt) give, from the
golden's fixed random features and style, the official ``merge_emovec`` for plain cloning and an
emotion clip at α 0.6, and the official vector mix (rows picked by cosine, α applied with its
4-place truncation); the vector rule and the web UI's balance say what they should.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts.config import load_config
from app.models.indextts.emotion import (
    EmotionEncoder,
    EmotionMatrices,
    scale_vector,
    webui_balance,
)
from app.models.indextts.presets import PRESETS, TINY
from app.models.indextts.weights import load_torch

DATA = Path(__file__).parent / "data" / "indextts"
TOL = 1e-3


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict[str, np.ndarray]]:
    record = json.loads((DATA / "emotion.json").read_text(encoding="utf-8"))
    return record, dict(np.load(DATA / "emotion.npz"))


def inputs(record: dict) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """The golden's fixed random features [1, T, 1024] and style [1, 192], checked by their sums."""
    feats = {}
    for name, spec in record["feats"].items():
        gen = torch.Generator().manual_seed(spec["seed"])
        feats[name] = torch.randn((1, spec["frames"], 1024), generator=gen)
        assert float(feats[name].sum()) == pytest.approx(spec["sum"], rel=1e-6)
    style = torch.randn((1, 192), generator=torch.Generator().manual_seed(record["style"]["seed"]))
    assert float(style.sum()) == pytest.approx(record["style"]["sum"], rel=1e-6)
    return feats, style


@pytest.fixture(scope="module")
def encoder(tiny_ix: Path) -> EmotionEncoder:  # noqa: F811
    cfg = load_config(tiny_ix)
    return EmotionEncoder.from_config(cfg.gpt).load(load_torch(tiny_ix / cfg.gpt_checkpoint))


def close(ours: torch.Tensor, theirs: np.ndarray) -> float:
    assert tuple(ours.shape) == theirs.shape
    diff = float((ours - torch.from_numpy(theirs)).abs().max())
    assert diff < TOL, diff
    return diff


def test_emotion_clip_matches_official(encoder: EmotionEncoder, golden) -> None:
    record, arrays = golden
    feats, _ = inputs(record)
    close(encoder.emovec(feats["emo"]), arrays["emo_alone"])
    close(encoder.merge(feats["spk"], feats["spk"], 1.0), arrays["plain"])
    close(encoder.merge(feats["spk"], feats["emo"], record["emo_alpha"]), arrays["emo_audio"])


def test_vector_mix_matches_official(tiny_ix: Path, encoder: EmotionEncoder, golden) -> None:  # noqa: F811
    record, arrays = golden
    feats, style = inputs(record)
    matrices = EmotionMatrices.load(tiny_ix, load_config(tiny_ix))
    assert matrices.rows(style) == record["rows"]
    base = encoder.merge(feats["spk"], feats["spk"], 1.0)
    close(matrices.mix(scale_vector(record["vector"], 1.0), style, base), arrays["vector"])
    scaled = scale_vector(record["vector"], record["vector_alpha"]["alpha"])
    assert scaled == record["vector_alpha"]["scaled"]  # truncated: 0.3 x 0.6 gives 0.1799
    close(matrices.mix(scaled, style, base), arrays["vector_alpha"])


def test_random_rows_match_official(tiny_ix: Path, encoder: EmotionEncoder, golden) -> None:  # noqa: F811
    """``use_random``: per emotion a row from Python's random (seeded as the official run was)."""
    record, arrays = golden
    feats, style = inputs(record)
    matrices = EmotionMatrices.load(tiny_ix, load_config(tiny_ix))
    rows = matrices.random_rows(random.Random(record["random_rows"]["seed"]))
    assert rows == record["random_rows"]["rows"]
    base = encoder.merge(feats["spk"], feats["spk"], 1.0)
    close(matrices.mix(record["vector"], style, base, rows), arrays["vector_random"])


def test_alpha_is_clamped_for_vectors() -> None:
    assert scale_vector([0.5, 0.25], 3.0) == [0.5, 0.25]
    assert scale_vector([0.5, 0.25], -1.0) == [0.0, 0.0]


def test_webui_balance_matches_official(golden) -> None:
    for case in golden[0]["balance"]:
        assert webui_balance(case["in"]) == pytest.approx(case["out"], abs=1e-12)


def test_matrices_of_the_wrong_shape_are_refused(tiny_ix: Path, tmp_path: Path) -> None:  # noqa: F811
    cfg = load_config(tiny_ix)
    folder = tmp_path / "m"
    folder.mkdir()
    shutil.copy(tiny_ix / cfg.spk_matrix, folder / cfg.spk_matrix)
    torch.save(torch.zeros(3, 4), folder / cfg.emo_matrix)
    with pytest.raises(VoxDeskError, match=r"feat2\.pt holds \[3, 4\], not the \[16, 32\] matrix"):
        EmotionMatrices.load(folder, cfg)


def test_encoder_refuses_what_it_would_compute_differently(encoder: EmotionEncoder) -> None:
    with pytest.raises(VoxDeskError, match="1100 feature frames"):
        encoder.emovec(torch.zeros(1, 1100, 1024))
    gpt = dict(PRESETS[TINY]["gpt"])
    gpt["emo_condition_module"] = {**gpt["emo_condition_module"], "input_layer": "conv2d"}
    with pytest.raises(VoxDeskError, match="input_layer 'conv2d' is not supported"):
        EmotionEncoder.from_config(gpt)


def test_encoder_load_names_a_missing_key(tiny_ix: Path) -> None:  # noqa: F811
    cfg = load_config(tiny_ix)
    state = load_torch(tiny_ix / cfg.gpt_checkpoint)
    state = {k: v for k, v in state.items() if k != "emo_layer.bias"}
    with pytest.raises(VoxDeskError, match="emo_layer.bias is missing"):
        EmotionEncoder.from_config(cfg.gpt).load(state)
