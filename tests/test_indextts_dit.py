"""IndexTTS's S2Mel DiT estimator and CFM solver against the official goldens, and batched rows.

The golden (tests/data/indextts/dit_cfm.npz, tools/indextts_golden_dit.py) holds one estimator
call and full ``CFM.inference`` runs of the official code on the tiny folder (the session's
``tiny_ix``, same seed) and on a deeper DiT whose weights both sides draw from the same numpy seed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts import bench_s2mel, cfm
from app.models.indextts.checkpoint import official_shapes
from app.models.indextts.config import load_config
from app.models.indextts.dit import S2MelDiT
from app.models.indextts.dit_wavenet import reflect_index
from app.models.indextts.presets import REAL, preset
from app.models.indextts.weights import load_torch

DATA = Path(__file__).parent / "data" / "indextts" / "dit_cfm.npz"
EST_TOL = 1e-5
S2Mel = tuple[dict[str, Any], dict[str, torch.Tensor]]  # the s2mel config section, net.cfm's tensors
SOLVE_TOL = 1e-3


def _threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def golden_threads() -> Iterator[None]:
    yield from _threads(2)  # as the goldens were made


@pytest.fixture
def one_thread() -> Iterator[None]:
    yield from _threads(1)  # within tolerance of the goldens; 2 threads on a shared core pair only wait


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(DATA) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def s2mel(tiny_ix: Path) -> S2Mel:  # noqa: F811
    """The tiny folder's s2mel config section and ``net.cfm`` tensors."""
    cfg = load_config(tiny_ix)
    return cfg.s2mel, load_torch(tiny_ix / cfg.s2mel_checkpoint)["net"]["cfm"]


@pytest.fixture(scope="module")
def dit(s2mel: S2Mel) -> S2MelDiT:
    section, state = s2mel
    return S2MelDiT.from_config(section).load(state)


def _t(golden: dict[str, np.ndarray], key: str) -> torch.Tensor:
    return torch.from_numpy(golden[key])


def _solve_inputs(golden: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _t(golden, "cfm_cond"), _t(golden, "cfm_ref_mel"), _t(golden, "cfm_style")


@pytest.mark.usefixtures("golden_threads")
def test_estimator_matches_official(dit: S2MelDiT, golden: dict[str, np.ndarray]) -> None:
    args = [_t(golden, f"est_{k}") for k in ("x", "prompt_x", "lens", "t", "style", "cond")]
    with torch.inference_mode():
        v = dit(*args)
        unmasked = dit(args[0], args[1], None, *args[3:])  # every row full: the same velocity
    want = _t(golden, "est_v")
    assert v.shape == want.shape == (2, 80, 80)
    assert (v - want).abs().max().item() < EST_TOL  # measured 0.0 (|v| up to 3.9; 9.5e-7 on 1 thread)
    assert (unmasked - want).abs().max().item() < EST_TOL


@pytest.mark.usefixtures("golden_threads")
def test_solve_matches_official(dit: S2MelDiT, golden: dict[str, np.ndarray]) -> None:
    cond, ref_mel, style = _solve_inputs(golden)
    seed = int(golden["cfm_seed"])
    torch.manual_seed(seed)  # the global generator, as the official draws it
    mel = cfm.solve(dit, cond, ref_mel, style)
    own = cfm.solve(dit, cond, ref_mel, style, generator=torch.Generator().manual_seed(seed))
    want = _t(golden, "cfm_vc_target")
    assert mel.shape == want.shape == (1, 80, 80)
    assert (mel - want).abs().max().item() < SOLVE_TOL  # measured 0.0 (|mel| up to 4.8; 1.4e-6 on 1 thread)
    assert torch.equal(own, mel)
    assert not mel[:, :, : ref_mel.shape[-1]].any()  # the prompt frames stay zero, for the caller to cut


@pytest.mark.usefixtures("golden_threads")
def test_deeper_dit_matches_official(s2mel: S2Mel, golden: dict[str, np.ndarray]) -> None:
    """Five blocks (U-ViT skips pushed by blocks 0-1, taken by 4 then 3) and a dilated WaveNet."""
    section = copy.deepcopy(s2mel[0])
    section["DiT"]["depth"] = int(golden["deep_depth"])
    section["wavenet"]["num_layers"] = int(golden["deep_wavenet_layers"])
    section["wavenet"]["dilation_rate"] = int(golden["deep_dilation"])
    deep = S2MelDiT.from_config(section)
    state = {f"estimator.{k}": v for k, v in deep.named_buffers()}  # as built, on both sides
    rng = np.random.default_rng(int(golden["deep_weight_seed"]))
    for key, dims in zip(golden["deep_keys"].tolist(), golden["deep_shapes"].tolist(), strict=True):
        shape = tuple(int(n) for n in dims.split(","))
        mean, std = _deep_scale(key, shape)
        state[key] = torch.from_numpy(rng.normal(mean, std, shape).astype(np.float32))
    deep.load(state)
    torch.manual_seed(int(golden["cfm_seed"]))
    mel = cfm.solve(deep, *_solve_inputs(golden))
    assert (mel - _t(golden, "deep_vc_target")).abs().max().item() < SOLVE_TOL  # measured 0.0


def _deep_scale(key: str, shape: tuple[int, ...]) -> tuple[float, float]:
    """tools/indextts_golden_dit.py's ``deep_scale``."""
    if key.endswith((".weight_g", "norm.weight")):
        return 1.0, 0.1
    if len(shape) == 1:
        return 0.0, 0.02
    return 0.0, float(np.prod(shape[1:])) ** -0.5


@pytest.mark.usefixtures("one_thread")
def test_batched_rows_give_what_they_give_alone(dit: S2MelDiT, golden: dict[str, np.ndarray]) -> None:
    """The golden request beside a shorter one (its own length, prompt length and noise)."""
    cond, ref_mel, style = _solve_inputs(golden)
    frames, prompt = cond.shape[1], ref_mel.shape[-1]
    noise = torch.randn(1, 80, frames, generator=torch.Generator().manual_seed(int(golden["cfm_seed"])))
    gen = torch.Generator().manual_seed(5)
    short, short_prompt = 41, 17  # WaveNet reflection at its own end, keys past it masked
    noise2 = torch.randn(1, 80, short, generator=gen)
    cond2 = torch.randn(1, short, cond.shape[2], generator=gen)
    ref2 = torch.randn(1, 80, short_prompt, generator=gen) - 4
    style2 = torch.randn(1, 192, generator=gen)
    alone = cfm.euler(dit, noise2, cond2, ref2, style2)
    pad = frames - short
    both = cfm.euler(
        dit,
        torch.cat([noise, F.pad(noise2, (0, pad))]),
        torch.cat([cond, F.pad(cond2, (0, 0, 0, pad))]),
        torch.cat([ref_mel, F.pad(ref2, (0, prompt - short_prompt))]),
        torch.cat([style, style2]),
        lengths=torch.tensor([frames, short]),
        prompt_lens=torch.tensor([prompt, short_prompt]),
    )
    assert (both[:1] - _t(golden, "cfm_vc_target")).abs().max().item() < SOLVE_TOL  # measured 1.2e-6
    assert (both[1:, :, :short] - alone).abs().max().item() < 1e-4  # measured 1.4e-6
    assert not both[1, :, :short_prompt].any()


@pytest.mark.usefixtures("one_thread")
def test_no_guidance_is_the_conditioned_velocity(dit: S2MelDiT, golden: dict[str, np.ndarray]) -> None:
    """``cfg_rate`` 0 (the official's unstacked branch) = vanishing guidance on the stacked rows."""
    cond, ref_mel, style = _solve_inputs(golden)
    noise = torch.randn(1, 80, cond.shape[1], generator=torch.Generator().manual_seed(3))
    plain = cfm.euler(dit, noise, cond, ref_mel, style, steps=5, cfg_rate=0.0)
    vanishing = cfm.euler(dit, noise, cond, ref_mel, style, steps=5, cfg_rate=1e-30)
    assert (plain - vanishing).abs().max().item() < 1e-5


def _pad1d_reflect(x: torch.Tensor, left: int, right: int) -> torch.Tensor:
    """encodec's ``pad1d(x, (left, right), mode="reflect")`` (indextts/s2mel/modules/encodec.py)."""
    extra = max(0, max(left, right) - x.shape[-1] + 1)
    padded = F.pad(F.pad(x, (0, extra)), (left, right), mode="reflect")
    return padded[..., : padded.shape[-1] - extra]


@pytest.mark.parametrize(("left", "right"), [(2, 2), (4, 4), (1, 0), (0, 3)])
def test_reflect_padding_pads_each_row_as_alone(left: int, right: int) -> None:
    """Rows of 1 .. 9 frames in one batch of 9, short rows included (zero-extended first)."""
    lengths = torch.arange(1, 10)
    rows = torch.randn(9, 3, 9, generator=torch.Generator().manual_seed(0))
    idx = reflect_index(lengths, 9, left, right)
    batch = torch.cat([rows, rows.new_zeros(9, 3, 1)], dim=-1).gather(2, idx[:, None, :].expand(-1, 3, -1))
    for row, n in enumerate(lengths.tolist()):
        alone = _pad1d_reflect(rows[row : row + 1, :, :n], left, right)
        assert torch.equal(batch[row : row + 1, :, : n + left + right], alone), n


def test_both_weight_norm_forms_load_alike(
    s2mel: S2Mel, dit: S2MelDiT, golden: dict[str, np.ndarray]
) -> None:
    """``weight_g``/``weight_v`` (torch's old weight norm) or ``parametrizations.weight.original0/1``."""
    section, state = s2mel
    renamed = {}
    for key, value in state.items():
        key = key.replace(".weight_g", ".parametrizations.weight.original0")
        renamed["module." + key.replace(".weight_v", ".parametrizations.weight.original1")] = value
    other = S2MelDiT.from_config(section).load(renamed)
    for (name, mine), theirs in zip(dit.state_dict().items(), other.state_dict().values(), strict=True):
        assert torch.equal(mine, theirs), name


def test_the_released_shapes_load() -> None:
    """The official DiT's keys and shapes at the released size (official_shapes.json, 13 blocks,
    512 wide) fit, on the meta device (nothing allocated)."""
    state = {k: torch.empty(shape, device="meta") for k, shape in official_shapes(REAL)["cfm"].items()}
    with torch.device("meta"):
        dit = S2MelDiT.from_config(preset(REAL)["s2mel"])
    dit.load(state)
    assert (
        len(dit.transformer.layers) == 13 and dit.transformer.layers[0].feed_forward.w1.out_features == 1536
    )


def test_a_file_that_does_not_fit_is_named(s2mel: S2Mel) -> None:
    section, state = s2mel
    missing = {k: v for k, v in state.items() if k != "estimator.conv2.bias"}
    with pytest.raises(VoxDeskError, match="conv2.bias") as err:
        S2MelDiT.from_config(section).load(missing)
    assert "\n" not in str(err.value)
    misshaped = dict(state, **{"estimator.conv2.bias": torch.zeros(3)})
    with pytest.raises(VoxDeskError, match="conv2.bias"):
        S2MelDiT.from_config(section).load(misshaped)


@pytest.mark.parametrize(
    ("where", "key", "value", "named"),
    [
        ("DiT", "time_as_token", True, "s2mel.DiT.time_as_token"),
        ("DiT", "final_layer_type", "mlp", "s2mel.DiT.final_layer_type"),
        ("DiT", "zero_prompt_speech_token", True, "s2mel.DiT.zero_prompt_speech_token"),
        ("DiT", "depth", 0, "s2mel.DiT.depth"),
        ("DiT", "long_skip_connection", "yes", "s2mel.DiT.long_skip_connection"),
        ("wavenet", "kernel_size", 4, "s2mel.wavenet"),
    ],
)
def test_a_config_it_does_not_run_is_refused(
    s2mel: S2Mel, where: str, key: str, value: Any, named: str
) -> None:
    section = copy.deepcopy(s2mel[0])
    section[where][key] = value
    with pytest.raises(VoxDeskError, match=named.replace(".", r"\.")) as err:
        S2MelDiT.from_config(section)
    assert "\n" not in str(err.value)


def test_too_long_a_row_is_refused(dit: S2MelDiT) -> None:
    frames = dit.input_pos.shape[0] + 1
    x = torch.zeros(1, 80, frames)
    with pytest.raises(VoxDeskError, match="at most 16384 mel frames"):
        dit(x, x, None, torch.zeros(1), torch.zeros(1, 192), torch.zeros(1, frames, 32))


@pytest.mark.usefixtures("one_thread")
def test_the_benchmark_runs(tmp_path: Path) -> None:
    """app/models/indextts/bench_s2mel.py on the tiny preset (the lead runs it on a GPU at real size)."""
    out = tmp_path / "s2mel.json"
    args = ["--preset", "indextts25-tiny", "--prompt", "8", "--frames", "24", "--batch", "1,2", "--repeat=1"]
    assert bench_s2mel.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    (row,) = result["rows"]
    assert row["frames"] == 24 and row["voxdesk_b2_ms"] > 0 and row["voxdesk_b2_ms_per_request"] > 0
