"""What CosyVoice3's graphed DiT relies on, checked on the CPU: the position convolution as
kernel taps (what CUDA runs for small shapes, dit.py) equals the convolution, and a call padded
to its bucket (flow_graphs.py) gives the valid frames the same velocity as the call itself.
The graphs themselves need CUDA: tools/cosyvoice_graphs_check.py compares them with the eager
engine on the GPU machine (docs/benchmarks.md). Also: which dtype the flow runs in."""

from pathlib import Path

import pytest
import torch
from torch import nn

from app.models.cosyvoice.checkpoint import write_checkpoint
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.dit import POS_GROUPS, POS_KERNEL, conv_taps
from app.models.cosyvoice.flow_graphs import MAX_FRAMES, bucket, fill, static_inputs
from app.models.cosyvoice.flow_v3 import FlowV3
from app.models.cosyvoice.runner import flow_dtype


@pytest.mark.parametrize(("dim", "rows", "frames"), [(64, 3, 7), (1024, 2, 90)])
def test_the_position_convolution_as_taps_equals_the_convolution(dim: int, rows: int, frames: int) -> None:
    torch.manual_seed(0)
    conv = nn.Conv1d(dim, dim, POS_KERNEL, groups=POS_GROUPS)
    x = torch.randn(rows, dim, frames + POS_KERNEL - 1)
    with torch.no_grad():
        assert torch.allclose(conv_taps(conv, x), conv(x), rtol=1e-5, atol=1e-5)


def test_buckets_round_rows_to_powers_of_two_and_frames_up() -> None:
    assert bucket(1, 1) == (1, 64)
    assert bucket(2, 200) == (2, 256)
    assert bucket(3, 256) == (4, 256)
    assert bucket(2, MAX_FRAMES // 2) == (2, MAX_FRAMES // 2)
    assert bucket(2, MAX_FRAMES // 2 + 1) is None  # past the largest graph: eager
    assert bucket(33, 100) == (64, 128)
    assert bucket(33, 200) is None


@pytest.fixture(scope="module")
def dit(tmp_path_factory: pytest.TempPathFactory) -> nn.Module:
    folder: Path = write_checkpoint(tmp_path_factory.mktemp("cv3"), "cosyvoice3-tiny")
    flow = FlowV3.from_config(load_config(folder / "cosyvoice3.yaml"))
    flow.load(torch.load(folder / "flow.pt", weights_only=True))
    return flow.eval().estimator


@pytest.mark.parametrize("streaming", [False, True])
def test_a_call_padded_to_its_bucket_gives_the_valid_frames_the_same_velocity(
    dit: nn.Module, streaming: bool
) -> None:
    torch.manual_seed(1)
    rows, frames = 3, 117  # bucket (4, 128): a padded row and 11 padded frames
    x, mu, cond = (torch.randn(rows, 80, frames) for _ in range(3))
    lengths = torch.tensor([117, 80, 101])
    mask = (torch.arange(frames)[None] < lengths[:, None]).float().unsqueeze(1)
    t, spks = torch.rand(rows), torch.randn(rows, 80)
    with torch.inference_mode():
        alone = dit(x, mask, mu, t, spks, cond, streaming=streaming)
        static = static_inputs(*bucket(rows, frames), like=x)
        fill(static, (x, mask, mu, t, spks, cond))
        padded = dit(*(static[n] for n in ("x", "mask", "mu", "t", "spks", "cond")), streaming=streaming)
    assert padded.shape == (4, 80, 128)
    for row, n in enumerate(lengths.tolist()):  # other GEMM shapes: equal to rounding (~5e-6 of the scale)
        assert torch.allclose(padded[row, :, :n], alone[row, :, :n], rtol=1e-4, atol=1e-4), row


def test_fill_clears_what_a_larger_call_left_in_the_bucket() -> None:
    static = static_inputs(4, 128, like=torch.zeros(1, 80, 1))
    big = (torch.ones(4, 80, 128), torch.ones(4, 1, 128), torch.ones(4, 80, 128), torch.ones(4),
           torch.ones(4, 80), torch.ones(4, 80, 128))  # fmt: skip
    fill(static, big)
    small = (torch.full((2, 80, 70), 2.0), torch.ones(2, 1, 70), torch.zeros(2, 80, 70), torch.tensor(0.5),
             torch.zeros(2, 80), torch.zeros(2, 80, 70))  # fmt: skip
    fill(static, small)
    x = static["x"]
    assert x[:2, :, :70].eq(2).all() and x[2:].eq(0).all() and x[:, :, 70:].eq(0).all()
    assert static["mask"].sum() == 2 * 70
    assert static["t"].tolist() == [0.5, 0.5, 0.0, 0.0]  # a scalar time is every row's


def test_the_flow_follows_a_half_precision_lm_only_for_cosyvoice3_on_a_gpu() -> None:
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    assert flow_dtype("cosyvoice3", cuda, torch.bfloat16) == torch.bfloat16
    assert flow_dtype("cosyvoice3", cuda, torch.float16) == torch.float16
    assert flow_dtype("cosyvoice3", cuda, torch.float32) == torch.float32
    assert flow_dtype("cosyvoice3", cpu, torch.bfloat16) == torch.float32  # the CPU's bf16 is automatic
    assert flow_dtype("cosyvoice2", cuda, torch.bfloat16) == torch.float32  # never measured in half
