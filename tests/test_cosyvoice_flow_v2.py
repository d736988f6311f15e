"""CosyVoice2's flow (app/models/cosyvoice/flow_v2.py) against the official goldens.

The goldens' ``mel_k`` are the mels the official code gave the vocoder: for a plain call the
flow's output (``speed`` != 1: linearly resampled to ``int(T / speed)`` frames first); for a
streaming call one per chunk, each after the previous vocoder input's last 8 frames (the
official mel cache, cli/model.py:305-318). :func:`stream_mels` replays the official chunk
schedule (cli/model.py:343-373) on our flow.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from app.errors import VoxDeskError
from app.models.cosyvoice.checkpoint import SHAPES_FILE, write_checkpoint
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.flow_v2 import FlowV2

DATA = Path(__file__).parent / "data" / "cosyvoice"
ATOL = 1e-3
TOKEN_HOP, MAX_HOP, MEL_CACHE = 25, 100, 8  # CosyVoice2Model.__init__ (cli/model.py:257-265)


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    # The goldens were made with two threads; one changes only the rounding (the mels agree to
    # 2e-6 either way), and two threads on a busy 2-core machine spin for ten times as long.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp("cv2"), "cosyvoice2-tiny")


@pytest.fixture(scope="module")
def flow(folder: Path) -> FlowV2:
    model = FlowV2.from_config(load_config(folder / "cosyvoice2.yaml")).eval()
    model.load(torch.load(folder / "flow.pt", weights_only=True))
    return model


def golden(mode: str) -> dict[str, np.ndarray]:
    with np.load(DATA / f"cosyvoice2_{mode}.npz") as data:
        return dict(data)


def run(flow: FlowV2, g: dict[str, np.ndarray], n: int, streaming: bool, finalize: bool) -> torch.Tensor:
    """The flow on the golden's first ``n`` tokens with its prompt, as token2wav calls it."""
    t = {k: torch.from_numpy(v) for k, v in g.items()}
    return flow.inference(
        t["tokens"][:n].unsqueeze(0), torch.tensor([n]),
        t["input_flow_prompt_speech_token"], t["input_flow_prompt_speech_token_len"],
        t["input_prompt_speech_feat"], t["input_prompt_speech_feat_len"],
        t["input_flow_embedding"], streaming, finalize,
    )  # fmt: skip


def stream_mels(flow: FlowV2, g: dict[str, np.ndarray], hop: int = TOKEN_HOP) -> list[torch.Tensor]:
    """The vocoder inputs of the official streaming loop once the LM has ended.

    The first chunk's hop is padded so that prompt + chunk is a multiple of the hop; a chunk runs
    while ``hop + pre_lookahead_len`` new tokens exist (``finalize=False``, streaming masks); the
    hop doubles after each chunk up to 100; the rest runs with ``finalize=True`` and, as the
    official call passes no ``stream``, ``streaming=False``. Each keeps the frames from
    ``2 * token_offset`` and is prefixed with the previous vocoder input's last 8 frames."""
    n, prompt = len(g["tokens"]), g["input_flow_prompt_speech_token"].shape[1]
    pad = math.ceil(prompt / hop) * hop - prompt
    offset, mels = 0, []

    def keep(mel: torch.Tensor) -> None:
        mel = mel[:, :, offset * flow.token_mel_ratio :]
        mels.append(torch.cat([mels[-1][:, :, -MEL_CACHE:], mel], dim=2) if mels else mel)

    while n - offset >= (this_hop := hop + pad if offset == 0 else hop) + flow.pre_lookahead_len:
        keep(run(flow, g, offset + this_hop + flow.pre_lookahead_len, streaming=True, finalize=False))
        offset += this_hop
        hop = min(MAX_HOP, hop * 2)
    keep(run(flow, g, n, streaming=False, finalize=True))
    return mels


@pytest.mark.parametrize("mode", ["zero_shot", "cross_lingual", "instruct2"])
def test_the_mel_equals_the_official_one(flow: FlowV2, mode: str) -> None:
    g = golden(mode)
    mel = run(flow, g, len(g["tokens"]), streaming=False, finalize=True)
    assert mel.shape == g["mel_0"].shape == (1, 80, 2 * len(g["tokens"]))
    np.testing.assert_allclose(mel.numpy(), g["mel_0"], atol=ATOL, rtol=0)


def test_speed_resamples_the_flow_mel_before_the_vocoder(flow: FlowV2) -> None:
    g, speed = golden("speed"), 1.2
    mel = run(flow, g, len(g["tokens"]), streaming=False, finalize=True)
    np.testing.assert_allclose(mel.numpy(), golden("zero_shot")["mel_0"], atol=ATOL, rtol=0)  # same tokens
    resampled = F.interpolate(mel, size=int(mel.shape[2] / speed), mode="linear")
    assert resampled.shape == g["mel_0"].shape
    np.testing.assert_allclose(resampled.numpy(), g["mel_0"], atol=ATOL, rtol=0)


def test_streaming_chunks_equal_the_official_vocoder_inputs(flow: FlowV2) -> None:
    g = golden("stream")
    mels = stream_mels(flow, g)
    expected = [g[k] for k in sorted((k for k in g if k.startswith("mel_")), key=lambda k: int(k[4:]))]
    assert [m.shape[2] for m in mels] == [e.shape[2] for e in expected] == [50, 8 + 36]
    for mel, want in zip(mels, expected, strict=True):
        np.testing.assert_allclose(mel.numpy(), want, atol=ATOL, rtol=0)
    # The masks matter: the final chunk with streaming (chunked) attention is another mel.
    chunked = run(flow, g, len(g["tokens"]), streaming=True, finalize=True)[:, :, 50:]
    assert np.abs(chunked.numpy() - expected[1][:, :, MEL_CACHE:]).max() > 10 * ATOL


def batch_inference(flow: FlowV2, requests: list[tuple[torch.Tensor, ...]], streaming: bool,
                    finalize: bool) -> torch.Tensor:  # fmt: skip
    """``requests`` of (tokens [N], prompt tokens [S], prompt mel [Tp, 80], embedding [192]),
    padded on the right into one call."""
    padded, lengths = [], []
    for rows in list(zip(*requests, strict=True))[:3]:
        longest = max(r.shape[0] for r in rows)
        padded.append(torch.stack([F.pad(r, (0, 0) * (r.dim() - 1) + (0, longest - len(r))) for r in rows]))
        lengths.append(torch.tensor([r.shape[0] for r in rows]))
    embeddings = torch.stack([r[3] for r in requests])
    return flow.inference(padded[0], lengths[0], padded[1], lengths[1], padded[2], lengths[2], embeddings,
                          streaming, finalize)  # fmt: skip


@pytest.mark.parametrize(("streaming", "finalize"), [(False, True), (True, False)])
def test_a_padded_batch_equals_each_request_alone(flow: FlowV2, streaming: bool, finalize: bool) -> None:
    a = {k: torch.from_numpy(v) for k, v in golden("zero_shot").items()}
    b = {k: torch.from_numpy(v) for k, v in golden("stream").items()}
    requests = [  # different tokens, prompt lengths and speakers
        (a["tokens"], a["input_flow_prompt_speech_token"][0], a["input_prompt_speech_feat"][0],
         a["input_flow_embedding"][0]),
        (b["tokens"][:40], b["input_flow_prompt_speech_token"][0, :19], b["input_prompt_speech_feat"][0, :38],
         -b["input_flow_embedding"][0]),
    ]  # fmt: skip
    batch = batch_inference(flow, requests, streaming, finalize)
    lookahead = 0 if finalize else flow.pre_lookahead_len
    assert batch.shape == (2, 80, 2 * (40 - lookahead))
    for row, request in enumerate(requests):
        alone = batch_inference(flow, [request], streaming, finalize)
        frames = 2 * (len(request[0]) - lookahead)
        assert alone.shape == (1, 80, frames)
        np.testing.assert_allclose(batch[row, :, :frames].numpy(), alone[0].numpy(), atol=ATOL, rtol=0)
        assert not batch[row, :, frames:].any()  # zeros after a shorter row


def test_the_state_dict_is_the_official_one(tmp_path: Path) -> None:
    """Every key and shape the official ``CausalMaskedDiffWithXvec`` has for the tiny yaml."""
    entry = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))["cosyvoice2"]
    (tmp_path / "cosyvoice2.yaml").write_text(entry["yaml"], encoding="utf-8")
    model = FlowV2.from_config(load_config(tmp_path / "cosyvoice2.yaml"))
    assert {k: list(v.shape) for k, v in model.state_dict().items()} == entry["flow"]


def test_load_names_a_missing_or_misshapen_key(flow: FlowV2, folder: Path) -> None:
    weights = torch.load(folder / "flow.pt", weights_only=True)
    fresh = FlowV2.from_config(load_config(folder / "cosyvoice2.yaml"))
    with pytest.raises(VoxDeskError, match="lacks encoder_proj.bias"):
        fresh.load({k: v for k, v in weights.items() if k != "encoder_proj.bias"})
    with pytest.raises(VoxDeskError, match=r"encoder_proj.bias is \(81,\)"):
        fresh.load(weights | {"encoder_proj.bias": torch.zeros(81)})
    with pytest.raises(VoxDeskError, match="has extra.weight"):
        fresh.load(weights | {"extra.weight": torch.zeros(1)})


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [("channels: [32]", "channels: [32, 32]", "one-level U-Net"),
     ("use_cnn_module: False", "use_cnn_module: True", "use_cnn_module: True is not supported"),
     ("output_size: 512", "output_size: 256", "output_size 256 is not 512")],
)  # fmt: skip
def test_an_unsupported_flow_config_is_one_line(folder: Path, tmp_path: Path, old: str, new: str,
                                                message: str) -> None:  # fmt: skip
    text = (folder / "cosyvoice2.yaml").read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "cosyvoice2.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(VoxDeskError, match=message):
        FlowV2.from_config(load_config(tmp_path / "cosyvoice2.yaml"))
