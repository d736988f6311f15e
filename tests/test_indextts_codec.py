"""IndexTTS-2.5's semantic codec decoder and length regulator against the official goldens.

``tests/data/indextts/codec_lr.npz`` (tests/data/indextts/README.md) holds what the official
``EnhancedCodec.decode`` and ``InterpolateRegulator`` made on the tiny folder of seed 0 (the
``tiny_ix`` fixture writes the same folder): for two
random code strings, ``S_infer`` and, at three duration factors, the target length and the
condition; and the prompt condition of given w2v-BERT-shaped features.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.common.weight_norm import fold_weight_norm
from app.models.indextts.checkpoint import official_shapes
from app.models.indextts.codec import SemanticCodec
from app.models.indextts.config import load_config
from app.models.indextts.length_regulator import LengthRegulator, target_frames
from app.models.indextts.presets import REAL, preset
from app.models.indextts.weights import load_torch

GOLDEN = Path(__file__).parent / "data" / "indextts" / "codec_lr.npz"
TOL = 1e-5


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    return dict(np.load(GOLDEN))


@pytest.fixture(scope="module")
def parts(tiny_ix: Path) -> tuple[dict, dict, dict[str, torch.Tensor], dict[str, torch.Tensor]]:  # noqa: F811
    """The tiny folder's config sections and its codec.pth / s2mel.pth tables."""
    cfg = load_config(tiny_ix)
    codec = load_torch(tiny_ix / "codec.pth")["model"]
    regulator = load_torch(tiny_ix / cfg.s2mel_checkpoint)["net"]["length_regulator"]
    return cfg.semantic_codec, cfg.s2mel, codec, regulator


@pytest.fixture(scope="module")
def codec(parts) -> SemanticCodec:
    section, _, state, _ = parts
    return SemanticCodec.from_config(section).load(state)


@pytest.fixture(scope="module")
def regulator(parts) -> LengthRegulator:
    _, s2mel, _, state = parts
    return LengthRegulator.from_config(s2mel).load(state)


def _lengths(golden: dict[str, np.ndarray]) -> list[int]:
    return sorted(int(k.split("_")[1]) for k in golden if k.startswith("codes_"))


def test_decode_matches_official(codec: SemanticCodec, golden: dict[str, np.ndarray]) -> None:
    for n in _lengths(golden):
        got = codec.decode(torch.from_numpy(golden[f"codes_{n}"]))
        want = golden[f"S_infer_{n}"]
        assert got.shape == want.shape == (1, 2 * n, 1024)
        assert np.abs(got.numpy() - want).max() < TOL


def test_target_frames_match_official(golden: dict[str, np.ndarray]) -> None:
    for n in _lengths(golden):
        for factor in golden["duration_factors"]:
            assert target_frames(2 * n, float(factor)) == int(golden[f"target_{n}_{factor}"][0])


def test_condition_matches_official(
    codec: SemanticCodec, regulator: LengthRegulator, golden: dict[str, np.ndarray]
) -> None:
    """From the official S_infer (the regulator alone) and from codes (codec then regulator)."""
    for n in _lengths(golden):
        s_infer = codec.decode(torch.from_numpy(golden[f"codes_{n}"]))
        for factor in golden["duration_factors"]:
            want = golden[f"cond_{n}_{factor}"]
            ylens = torch.from_numpy(golden[f"target_{n}_{factor}"])
            alone = regulator(torch.from_numpy(golden[f"S_infer_{n}"]), ylens)
            chained = regulator(s_infer, torch.tensor([target_frames(s_infer.shape[1], float(factor))]))
            assert alone.shape == chained.shape == want.shape
            assert want.shape[1] == int(ylens[0])
            assert np.abs(alone.numpy() - want).max() < TOL
            assert np.abs(chained.numpy() - want).max() < TOL


def test_prompt_condition_matches_official(regulator: LengthRegulator, golden: dict[str, np.ndarray]) -> None:
    feats = torch.from_numpy(golden["prompt_feats"]).float()
    got = regulator(feats, torch.from_numpy(golden["prompt_ylens"]))
    want = golden["prompt_condition"]
    assert got.shape == want.shape == (1, int(golden["prompt_ylens"][0]), want.shape[2])
    assert np.abs(got.numpy() - want).max() < TOL


def test_rows_past_their_length_are_zero(regulator: LengthRegulator, golden: dict[str, np.ndarray]) -> None:
    """As the official batch: every row is stretched to the longest length, then cut to its own."""
    feats = torch.from_numpy(golden["prompt_feats"]).float()
    longest = regulator(feats, torch.tensor([41]))
    both = regulator(feats.repeat(2, 1, 1), torch.tensor([30, 41]))
    assert both.shape == (2, 41, longest.shape[2])
    assert torch.equal(both[0, 30:], torch.zeros_like(both[0, 30:]))
    assert torch.allclose(both[0, :30], longest[0, :30], atol=TOL)
    assert torch.allclose(both[1], longest[0], atol=TOL)


def test_codes_outside_the_codebook_are_one_line(codec: SemanticCodec) -> None:
    size = codec.codebook_size
    for bad, named in (([3, size, 5], size), ([3, -1, 5], -1), ([size + 1], size + 1)):
        line = rf"^Semantic code {named} is outside .*0 to {size - 1}"
        with pytest.raises(VoxDeskError, match=line) as err:
            codec.decode(torch.tensor([bad]))
        assert "\n" not in str(err.value)
    with pytest.raises(VoxDeskError, match="got a tensor of shape"):
        codec.decode(torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(VoxDeskError, match="got a tensor of shape"):
        codec.decode(torch.zeros(2, 1, 3, dtype=torch.long))


def test_empty_input_is_one_line(regulator: LengthRegulator) -> None:
    with pytest.raises(VoxDeskError, match="0 feature frames"):
        regulator(torch.zeros(1, 0, 1024), torch.tensor([10]))
    with pytest.raises(VoxDeskError, match="to 0 mel frames"):
        regulator(torch.zeros(1, 5, 1024), torch.tensor([0]))


def test_bad_duration_factor_is_one_line() -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(VoxDeskError, match="not a positive number"):
            target_frames(20, bad)
    with pytest.raises(VoxDeskError, match="make no mel frame"):
        target_frames(2, 0.25)
    assert target_frames(22, 0.75) == int(22 * 1.72 * 0.75)


def test_both_weight_norm_forms_load_alike(
    parts, codec: SemanticCodec, golden: dict[str, np.ndarray]
) -> None:
    """``weight_g``/``weight_v`` (torch's old weight_norm) and ``parametrizations.weight.original0/1``
    (the new one) give the same folded weight."""
    section, _, state, _ = parts
    new = {".weight_g": ".parametrizations.weight.original0",
           ".weight_v": ".parametrizations.weight.original1"}  # fmt: skip
    renamed = {}
    for key, value in state.items():
        suffix = next((s for s in new if key.endswith(s)), None)
        renamed[key[: -len(suffix)] + new[suffix] if suffix else key] = value
    assert renamed.keys() != state.keys()
    other = SemanticCodec.from_config(section).load(renamed)
    codes = torch.from_numpy(golden[f"codes_{_lengths(golden)[0]}"])
    assert torch.equal(other.decode(codes), codec.decode(codes))
    folded = fold_weight_norm(state)
    assert "quantizer.quantizers.0.out_project.weight" in folded
    assert not any(k.endswith((".weight_g", ".weight_v")) for k in folded)


def test_mismatched_weights_are_one_line(parts) -> None:
    section, s2mel, codec_sd, lr_sd = parts
    missing = {k: v for k, v in codec_sd.items() if not k.startswith("up.")}
    with pytest.raises(VoxDeskError, match=r"codec\.pth.*up\."):
        SemanticCodec.from_config(section).load(missing)
    shaped = dict(lr_sd, **{"content_in_proj.bias": torch.zeros(7)})
    with pytest.raises(VoxDeskError, match="content_in_proj.bias"):
        LengthRegulator.from_config(s2mel).load(shaped)
    extra = dict(lr_sd, **{"model.99.weight": torch.zeros(1)})
    with pytest.raises(VoxDeskError, match=r"model\.99\.weight"):
        LengthRegulator.from_config(s2mel).load(extra)


def test_config_the_25_path_cannot_run_is_one_line(parts) -> None:
    section, s2mel, _, _ = parts
    with pytest.raises(VoxDeskError, match="downsample_scale is 1"):
        SemanticCodec.from_config(dict(section, downsample_scale=1))
    with pytest.raises(VoxDeskError, match="vocos_dim is '32'"):
        SemanticCodec.from_config(dict(section, vocos_dim="32"))
    for key in ("is_discrete", "vector_quantize"):
        bad = dict(s2mel, length_regulator=dict(s2mel["length_regulator"], **{key: True}))
        with pytest.raises(VoxDeskError, match=f"length_regulator.{key} is set"):
            LengthRegulator.from_config(bad)
    empty = dict(s2mel, length_regulator=dict(s2mel["length_regulator"], sampling_ratios=[]))
    with pytest.raises(VoxDeskError, match="sampling_ratios"):
        LengthRegulator.from_config(empty)


def test_dtype_follows_the_parameters(parts, golden: dict[str, np.ndarray]) -> None:
    section, s2mel, codec_sd, lr_sd = parts
    codec = SemanticCodec.from_config(section).load(codec_sd).double()
    regulator = LengthRegulator.from_config(s2mel).load(lr_sd).double()
    n = _lengths(golden)[-1]
    s_infer = codec.decode(torch.from_numpy(golden[f"codes_{n}"]))
    cond = regulator(s_infer.float(), torch.from_numpy(golden[f"target_{n}_1.0"]))
    assert s_infer.dtype == cond.dtype == torch.float64
    assert np.abs(s_infer.numpy() - golden[f"S_infer_{n}"]).max() < 1e-4
    assert np.abs(cond.numpy() - golden[f"cond_{n}_1.0"]).max() < 1e-4


def test_real_shapes_take_the_official_keys() -> None:
    """At the released model's shapes, both modules take exactly the official state dicts recorded
    in official_shapes.json (uninitialised tensors: only names and shapes matter here)."""
    tree, entry = preset(REAL), official_shapes(REAL)
    codec = SemanticCodec.from_config(tree["semantic_codec"])
    regulator = LengthRegulator.from_config(tree["s2mel"])
    codec.load({k: torch.empty(shape) for k, shape in entry["codec"].items()})
    regulator.load({k: torch.empty(shape) for k, shape in entry["length_regulator"].items()})
    assert codec.up.weight.shape == (1024, 1024, 3)
    assert regulator.content_in_proj.weight.shape == (512, 1024)
