"""CosyVoice2's flow (app/models/cosyvoice/flow_v2.py) against the official goldens.

The goldens' ``mel_k`` are the mels the official code gave the vocoder: for a plain call the
flow's output (``speed`` != 1: linearly resampled to ``int(T / speed)`` frames first); for a
streaming call one per chunk, each after the previous vocoder input's last 8 frames (the
official mel cache, cli/model.py:303-318). :func:`stream_mels` replays the official chunk
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
LOOKAHEAD = 3  # the yaml's pre_lookahead_len


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


def golden(name: str) -> dict[str, np.ndarray]:
    """A golden file with the flow's inputs under the names ``tokens``, ``prompt_token``
    [1, S], ``prompt_feat`` [1, Tp, 80] and ``embedding`` [1, 192] (the mode files name them
    ``input_flow_prompt_speech_token`` ... as the frontend does)."""
    with np.load(DATA / f"cosyvoice2_{name}.npz") as data:
        g = dict(data)
    renames = {"input_flow_prompt_speech_token": "prompt_token", "input_prompt_speech_feat": "prompt_feat",
               "input_flow_embedding": "embedding"}  # fmt: skip
    return g | {new: g[old] for old, new in renames.items() if old in g}


def run(flow: FlowV2, g: dict[str, np.ndarray], n: int, streaming: bool, finalize: bool) -> torch.Tensor:
    """The flow on the golden's first ``n`` tokens with its prompt, as token2wav calls it."""
    prompt, feat = torch.from_numpy(g["prompt_token"]), torch.from_numpy(g["prompt_feat"])
    return flow.inference(
        torch.from_numpy(g["tokens"][:n]).unsqueeze(0), torch.tensor([n]),
        prompt, torch.tensor([prompt.shape[1]]), feat, torch.tensor([feat.shape[1]]),
        torch.from_numpy(g["embedding"]), streaming, finalize,
    )  # fmt: skip


def schedule(n: int, prompt: int, hop: int = TOKEN_HOP) -> tuple[list[tuple[int, int, bool]], int]:
    """The official streaming loop's flow calls once the LM has ended with ``n`` tokens
    (cli/model.py:343-373): ``(tokens given to the flow, token_offset, finalize)`` per chunk,
    and the hop the model keeps for its next call.

    The first chunk's hop is padded so that prompt + chunk is a multiple of the hop; a chunk runs
    while ``hop + pre_lookahead_len`` (3) new tokens exist, with those 3 as look-ahead; the hop
    doubles after each chunk up to 100; the rest is the final call."""
    pad = math.ceil(prompt / hop) * hop - prompt
    calls, offset = [], 0
    while n - offset >= (this_hop := hop + pad if offset == 0 else hop) + LOOKAHEAD:
        calls.append((offset + this_hop + LOOKAHEAD, offset, False))
        offset += this_hop
        hop = min(MAX_HOP, hop * 2)
    return [*calls, (n, offset, True)], hop


def stream_mels(flow: FlowV2, g: dict[str, np.ndarray]) -> list[torch.Tensor]:
    """The vocoder inputs of the official streaming call: each chunk's mel from
    ``2 * token_offset`` on, after the previous vocoder input's last 8 frames. Non-final chunks
    run with streaming (chunked) attention, the final one without: the official final call
    passes no ``stream`` (cli/model.py:367-373)."""
    mels: list[torch.Tensor] = []
    for n, offset, finalize in schedule(len(g["tokens"]), g["prompt_token"].shape[1])[0]:
        mel = run(flow, g, n, streaming=not finalize, finalize=finalize)
        mel = mel[:, :, offset * flow.token_mel_ratio :]
        mels.append(torch.cat([mels[-1][:, :, -MEL_CACHE:], mel], dim=2) if mels else mel)
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


STREAMS = [("stream", [50, 8 + 36]), ("flow_stream", [62, 8 + 100, 8 + 138])]


@pytest.mark.parametrize(("name", "frames"), STREAMS)
def test_streaming_chunks_equal_the_official_vocoder_inputs(flow: FlowV2, name: str, frames: list) -> None:
    """``stream``: the zero-shot call's 2 chunks (25 prompt tokens, no padding); ``flow_stream``
    (tools/cosyvoice_flow_goldens.py): 150 tokens after 19 prompt tokens, hops 25+6, 50, rest."""
    g = golden(name)
    mels = stream_mels(flow, g)
    expected = [g[k] for k in sorted((k for k in g if k.startswith("mel_")), key=lambda k: int(k[4:]))]
    assert [m.shape[2] for m in mels] == [e.shape[2] for e in expected] == frames
    for mel, want in zip(mels, expected, strict=True):
        np.testing.assert_allclose(mel.numpy(), want, atol=ATOL, rtol=0)


def test_the_final_chunk_runs_without_streaming_masks(flow: FlowV2) -> None:
    """With chunked attention the final chunk would be another mel: the masks matter."""
    g = golden("stream")
    chunked = run(flow, g, len(g["tokens"]), streaming=True, finalize=True)[:, :, 50:]
    assert np.abs(chunked.numpy() - g["mel_1"][:, :, MEL_CACHE:]).max() > 10 * ATOL


def test_the_hop_stays_doubled_for_the_next_call() -> None:
    """The official model keeps its hop between calls: a second identical call starts at 100
    and, with 150 tokens after a 19-token prompt, makes only the final call."""
    g = golden("flow_stream")
    first, hop = schedule(len(g["tokens"]), g["prompt_token"].shape[1])
    assert [c[:2] for c in first] == [(34, 0), (84, 31), (150, 81)] and hop == MAX_HOP
    second, _ = schedule(len(g["tokens"]), g["prompt_token"].shape[1], hop)
    assert len(second) == int(g["second_call_chunks"]) == 1


def batch_inference(flow: FlowV2, requests: list[tuple[torch.Tensor, ...]], streaming: bool,
                    finalize: bool | list[bool]) -> torch.Tensor:  # fmt: skip
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


@pytest.mark.parametrize(("streaming", "finalize"), [(False, [True, True]), (True, [False, False]),
                                                     (True, [True, False])])  # fmt: skip
def test_a_padded_batch_equals_each_request_alone(
    flow: FlowV2, streaming: bool, finalize: list[bool]
) -> None:
    a = {k: torch.from_numpy(v) for k, v in golden("zero_shot").items()}
    b = {k: torch.from_numpy(v) for k, v in golden("stream").items()}
    requests = [  # different tokens, prompt lengths and speakers
        (a["tokens"], a["input_flow_prompt_speech_token"][0], a["input_prompt_speech_feat"][0],
         a["input_flow_embedding"][0]),
        (b["tokens"][:40], b["input_flow_prompt_speech_token"][0, :19], b["input_prompt_speech_feat"][0, :38],
         -b["input_flow_embedding"][0]),
    ]  # fmt: skip
    batch = batch_inference(flow, requests, streaming, finalize)
    lookahead = [0 if f else flow.pre_lookahead_len for f in finalize]
    assert batch.shape == (2, 80, 2 * (40 - lookahead[1]))
    if not streaming:  # the first row is the zero-shot golden's request
        np.testing.assert_allclose(batch[:1, :, :16].numpy(), a["mel_0"].numpy(), atol=ATOL, rtol=0)
    for row, request in enumerate(requests):
        alone = batch_inference(flow, [request], streaming, finalize[row])
        frames = 2 * (len(request[0]) - lookahead[row])
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


def test_more_than_the_noise_table_is_one_line(flow: FlowV2) -> None:
    """The official noise table covers 300 s (15000 frames); longer input is refused up front."""
    g = golden("zero_shot")
    g["tokens"] = np.zeros(7500 - g["input_flow_prompt_speech_token"].shape[1] + 1, dtype=np.int64)
    with pytest.raises(VoxDeskError, match="at most 300 s"):
        run(flow, g, len(g["tokens"]), streaming=False, finalize=True)
