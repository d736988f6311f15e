"""IndexTTS's BigVGAN v2 vocoder: the official outputs (tests/data/indextts/bigvgan.npz), weight-norm
folding, and the one-line refusals of a bad config.json or generator file."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401
from torch import nn

from app.errors import VoxDeskError
from app.models.common.weight_norm import fold_weight_norm
from app.models.indextts.bigvgan import BigVGAN, VocoderConfig
from app.models.indextts.bigvgan_act import Periodic, kaiser_sinc
from app.models.indextts.presets import BIGVGAN, TINY

GOLDEN = Path(__file__).parent / "data" / "indextts" / "bigvgan.npz"
TOL = 1e-3


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


def _write(folder: Path, cfg: dict, state: dict[str, torch.Tensor]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    torch.save({"generator": state}, folder / "bigvgan_generator.pt")
    return folder


@pytest.fixture(scope="module")
def tiny(tiny_ix: Path) -> Path:  # noqa: F811
    """The tiny folder's hf_cache/bigvgan (weight norm as weight_g/weight_v, as released)."""
    return tiny_ix / "hf_cache" / "bigvgan"


@pytest.fixture(scope="module")
def vocoder(tiny: Path) -> BigVGAN:
    return BigVGAN.from_folder(tiny)


def _one_line(exc: pytest.ExceptionInfo[VoxDeskError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_golden_is_of_this_folder_writer(tiny: Path) -> None:
    """Else the parity tests below compare different weights: rerun the golden script (README)."""
    state = torch.load(tiny / "bigvgan_generator.pt", weights_only=True)["generator"]
    total = sum(v.double().abs().sum().item() for v in state.values())
    assert math.isclose(total, float(np.load(GOLDEN)["state_abs_sum"]), rel_tol=1e-5)


@pytest.mark.parametrize("frames", [40, 23])
def test_audio_matches_the_official_vocoder(vocoder: BigVGAN, frames: int) -> None:
    golden = np.load(GOLDEN)
    want = golden[f"wav_{frames}"]
    got = vocoder(torch.from_numpy(golden[f"mel_{frames}"])).numpy()
    assert got.shape == want.shape == (1, frames * 256)
    assert (np.abs(want) >= 1).mean() < 0.01  # few samples at the clamp, where errors would hide
    assert np.abs(got - want).max() < TOL  # measured: 2.6e-6 (40 frames), 1.8e-6 (23)


def test_kaiser_sinc_is_the_official_filter() -> None:
    want = np.load(GOLDEN)["kaiser_sinc"]
    got = kaiser_sinc(0.25, 0.3, 12).flatten().numpy()
    assert np.abs(got - want).max() < 1e-7
    assert math.isclose(float(got.sum()), 1.0, rel_tol=1e-6)


def test_weight_norm_folds_as_torch_computes_it() -> None:
    torch.manual_seed(1)
    for conv in (nn.Conv1d(6, 4, 5), nn.ConvTranspose1d(6, 4, 8, 4)):
        normed = nn.utils.parametrizations.weight_norm(conv)
        with torch.no_grad():
            normed.parametrizations.weight.original0.mul_(
                torch.rand_like(normed.parametrizations.weight.original0)
            )
        g = normed.parametrizations.weight.original0.detach()
        v = normed.parametrizations.weight.original1.detach()
        folded = fold_weight_norm({"c.weight_g": g, "c.weight_v": v, "c.bias": conv.bias.detach()})
        assert sorted(folded) == ["c.bias", "c.weight"]
        assert torch.allclose(folded["c.weight"], normed.weight.detach(), rtol=1e-6, atol=1e-7)


def test_weight_norm_and_plain_files_give_the_same_audio(
    vocoder: BigVGAN, tiny: Path, tmp_path: Path
) -> None:
    normed = vocoder
    assert not any(k.endswith(("weight_g", "weight_v")) for k in normed.state_dict())
    state = torch.load(tiny / "bigvgan_generator.pt", weights_only=True)["generator"]
    plain = BigVGAN.from_folder(_write(tmp_path / "plain", BIGVGAN[TINY], fold_weight_norm(state)))
    mel = torch.randn(1, 80, 9, generator=torch.Generator().manual_seed(3)) * 0.5 - 1
    wav = normed(mel)
    assert wav.shape == (1, 9 * 256) and normed.hop == 256
    assert (wav.abs() < 1).float().mean() > 0.95  # mostly unclamped, so a folding error would show
    assert torch.equal(wav, plain(mel))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"activation": "gelu"}, "activation is 'gelu'"),
        ({"resblock": "2"}, "resblock is '2'"),
        ({"num_mels": None}, "num_mels is missing"),
        ({"upsample_rates": [4, "4"]}, "upsample_rates must be a list"),
        ({"snake_logscale": "yes"}, "snake_logscale must be true or false"),
        ({"upsample_kernel_sizes": [8, 8]}, "upsample_kernel_sizes must have one entry"),
    ],
)
def test_bad_config_is_one_line_naming_the_key(tmp_path: Path, change: dict, named: str) -> None:
    cfg = {**BIGVGAN[TINY], **change}
    folder = _write(tmp_path / "bad", cfg, {})
    with pytest.raises(VoxDeskError) as exc:
        BigVGAN.from_folder(folder)
    assert named in _one_line(exc) and "config.json" in str(exc.value)


def test_config_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    folder = _write(tmp_path / "bad", BIGVGAN[TINY], {})
    (folder / "config.json").write_text('{"resblock": "1",')
    with pytest.raises(VoxDeskError) as exc:
        BigVGAN.from_folder(folder)
    assert "not valid JSON" in _one_line(exc)


class _Payload:
    def __reduce__(self):
        return (print, ("pickled code ran",))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "code", "no generator", "missing"])
def test_damaged_generator_file_is_one_line_naming_it(
    tiny: Path, tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "config.json").write_text((tiny / "config.json").read_text())
    path = folder / "bigvgan_generator.pt"
    data = (tiny / "bigvgan_generator.pt").read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00not a checkpoint" * 10)
    elif damage == "code":
        path.write_bytes(pickle.dumps({"generator": _Payload()}))
    elif damage == "no generator":
        torch.save({"model": {}}, path)
    with pytest.raises(VoxDeskError) as exc:
        BigVGAN.from_folder(folder)
    assert "bigvgan_generator.pt" in _one_line(exc)
    assert "pickled code ran" not in capsys.readouterr().out


@pytest.mark.parametrize("edit", ["drop", "extra", "shape"])
def test_generator_that_does_not_fit_names_the_key(tiny: Path, tmp_path: Path, edit: str) -> None:
    state = torch.load(tiny / "bigvgan_generator.pt", weights_only=True)["generator"]
    if edit == "drop":
        del state["resblocks.1.activations.3.act.beta"]
    elif edit == "extra":
        state["conv_post.bias"] = torch.zeros(1)
    else:
        state["ups.0.0.bias"] = torch.zeros(3)
    with pytest.raises(VoxDeskError) as exc:
        BigVGAN.from_folder(_write(tmp_path / "bad", BIGVGAN[TINY], state))
    named = {
        "drop": "resblocks.1.activations.3.act.beta is missing",
        "extra": "conv_post.bias is not part of this model",
        "shape": "ups.0.0.bias has shape [3] instead of [16]",
    }[edit]
    assert named in _one_line(exc)


def test_snake_is_snakebeta_with_beta_equal_to_alpha() -> None:
    x = torch.randn(2, 5, 7)
    snake, beta = Periodic(5, beta=False, logscale=True), Periodic(5, beta=True, logscale=True)
    with torch.no_grad():
        snake.alpha.copy_(torch.randn(5))
        beta.alpha.copy_(snake.alpha)
        beta.beta.copy_(snake.alpha)
    a = snake.alpha.exp()[:, None]
    assert torch.allclose(snake(x), x + torch.sin(a * x) ** 2 / (a + 1e-9), atol=1e-6)
    assert torch.equal(snake(x), beta(x))
    linear = Periodic(5, beta=True, logscale=False)
    assert torch.equal(linear(x), x + torch.sin(x) ** 2 / (1 + 1e-9))  # α = β = 1 untrained


def test_final_tanh_and_bias_default_to_on_as_in_the_official_config(
    vocoder: BigVGAN, tiny: Path, tmp_path: Path
) -> None:
    cfg = {k: v for k, v in BIGVGAN[TINY].items() if k not in ("use_tanh_at_final", "use_bias_at_final")}
    parsed = VocoderConfig.parse(cfg, "config.json")
    assert parsed.use_tanh_at_final and parsed.use_bias_at_final
    state = torch.load(tiny / "bigvgan_generator.pt", weights_only=True)["generator"]
    with pytest.raises(VoxDeskError) as exc:  # the tiny file has no output bias (use_bias_at_final false)
        BigVGAN.from_folder(_write(tmp_path / "defaults", cfg, state))
    assert "conv_post.bias is missing" in _one_line(exc)
    tanh = BigVGAN.from_folder(_write(tmp_path / "tanh", {**BIGVGAN[TINY], "use_tanh_at_final": True}, state))
    mel = torch.randn(1, 80, 6, generator=torch.Generator().manual_seed(4)) * 0.5 - 1
    clamped = vocoder(mel)
    inside = clamped.abs() < 1
    assert inside.float().mean() > 0.95
    assert torch.allclose(tanh(mel)[inside], torch.tanh(clamped[inside]), atol=1e-6)
