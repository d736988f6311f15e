"""CosyVoice3's flow (FlowV3 + the DiT) against the official goldens, and batched rows.

The goldens (tests/data/cosyvoice/cosyvoice3_<mode>.npz) hold the flow's inputs (`input_*`), the
LM's tokens and each mel the official code gave its vocoder (`mel_0`, `mel_1`, ...). The flow
runs here on the same tiny folder the goldens were made from (written afresh, same seed).
"""

import copy
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from app.errors import VoxDeskError
from app.models.cosyvoice.checkpoint import write_checkpoint
from app.models.cosyvoice.config import Tag, load_config
from app.models.cosyvoice.dit import DiT, attention_mask
from app.models.cosyvoice.flow_v3 import FlowV3
from app.models.cosyvoice.presets import preset, yaml_text

DATA = Path(__file__).parent / "data" / "cosyvoice"
TOL = 1e-3
# The official streaming schedule (cosyvoice/cli/model.py CosyVoice2Model.tts at ace7c47)
HOP, MAX_HOP, LOOKAHEAD = 25, 100, 3


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
    yield from _threads(1)  # no golden involved; 2 threads on a shared CI core pair only wait


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp("cv3"), "cosyvoice3-tiny")


@pytest.fixture(scope="module")
def flow(folder: Path) -> FlowV3:
    model = FlowV3.from_config(load_config(folder / "cosyvoice3.yaml"))
    model.load(torch.load(folder / "flow.pt", weights_only=True))
    return model.eval()


def _golden(mode: str) -> dict[str, np.ndarray]:
    with np.load(DATA / f"cosyvoice3_{mode}.npz") as data:
        return {k: data[k] for k in data.files}


def _run(
    flow: FlowV3, g: dict[str, np.ndarray], tokens: np.ndarray, streaming: bool, finalize: bool
) -> torch.Tensor:
    tok = torch.from_numpy(tokens).unsqueeze(0)
    arg = {k: torch.from_numpy(g["input_" + k]) for k in ("flow_prompt_speech_token", "prompt_speech_feat")}
    lengths = {k: torch.from_numpy(g[f"input_{k}_len"]) for k in arg}
    return flow.inference(
        tok, torch.tensor([tok.shape[1]]),
        arg["flow_prompt_speech_token"], lengths["flow_prompt_speech_token"],
        arg["prompt_speech_feat"], lengths["prompt_speech_feat"],
        torch.from_numpy(g["input_flow_embedding"]), streaming=streaming, finalize=finalize,
    )  # fmt: skip


@pytest.mark.usefixtures("golden_threads")
@pytest.mark.parametrize("mode", ["zero_shot", "cross_lingual", "instruct2", "speed"])
def test_whole_utterance_mel_matches_the_official_flow(flow: FlowV3, mode: str) -> None:
    g = _golden(mode)
    mel = _run(flow, g, g["tokens"], streaming=False, finalize=True)
    if mode == "speed":  # the official token2wav resamples the flow's mel before the vocoder
        mel = F.interpolate(mel, size=int(mel.shape[2] / 1.2), mode="linear")
    assert mel.shape == g["mel_0"].shape
    np.testing.assert_allclose(mel.numpy(), g["mel_0"], rtol=0, atol=TOL)


@pytest.mark.usefixtures("golden_threads")
def test_streamed_mels_match_the_official_chunks(flow: FlowV3) -> None:
    """CosyVoice3 re-vocodes the whole mel so far: mel_k is the flow's output of chunks 0..k.
    A chunk takes hop + 3 tokens (the first hop padded so prompt + hop is a multiple of 25),
    runs with chunk masks and the 3 as look-ahead, and keeps the frames from the chunk's offset;
    the hop doubles up to 100; the rest runs when the LM ends, **without** chunk masks (the
    official last `token2wav` call does not pass `stream`)."""
    g = _golden("stream")
    tokens = g["tokens"]
    prompt = g["input_flow_prompt_speech_token"].shape[1]
    pad = -prompt % HOP
    hop, offset, mels = HOP, 0, []
    while len(tokens) - offset >= (this := hop + pad if offset == 0 else hop) + LOOKAHEAD:
        part = _run(flow, g, tokens[: offset + this + LOOKAHEAD], streaming=True, finalize=False)
        mels.append(part[:, :, offset * 2 :])
        offset, hop = offset + this, min(MAX_HOP, hop * 2)
    mels.append(_run(flow, g, tokens, streaming=False, finalize=True)[:, :, offset * 2 :])
    expected = [g[f"mel_{k}"] for k in range(len([k for k in g if k.startswith("mel_")]))]
    assert len(mels) == len(expected) >= 2
    for k, want in enumerate(expected):
        got = torch.cat(mels[: k + 1], dim=2).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"mel_{k}")


def _pad(rows: list[torch.Tensor]) -> torch.Tensor:
    n = max(r.shape[0] for r in rows)
    return torch.stack([torch.cat([r, r.new_zeros((n - r.shape[0], *r.shape[1:]))]) for r in rows])


def _batch(
    flow: FlowV3, reqs: list[dict[str, torch.Tensor]], streaming: bool, finalize: list[bool]
) -> torch.Tensor:
    lengths = {k: torch.tensor([r[k].shape[0] for r in reqs]) for k in ("tok", "pt", "pf")}
    return flow.inference(
        _pad([r["tok"] for r in reqs]), lengths["tok"], _pad([r["pt"] for r in reqs]), lengths["pt"],
        _pad([r["pf"] for r in reqs]), lengths["pf"], torch.stack([r["emb"] for r in reqs]),
        streaming=streaming, finalize=finalize,
    )  # fmt: skip


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize(
    "streaming, finalize", [(False, [True, True]), (True, [False, True]), (True, [True, False])]
)
def test_a_padded_batch_equals_each_request_alone(
    flow: FlowV3, streaming: bool, finalize: list[bool]
) -> None:
    """Two requests of different prompt and token lengths (and look-ahead handling) in one batch.

    In float64: batching is exact up to rounding. (In float32 the batched GEMMs round differently
    from the single ones, and the tiny random flow amplifies a 1e-7 relative change of its input
    to ~0.03 in its mel: a float32 comparison would measure that model's conditioning, not the
    masks.)"""
    a, b = _golden("zero_shot"), _golden("stream")
    # the second: another prompt (its first 20 tokens / 40 frames), voice and length
    reqs = [
        dict(tok=a["tokens"], pt=a["input_flow_prompt_speech_token"][0],
             pf=a["input_prompt_speech_feat"][0], emb=a["input_flow_embedding"][0]),
        dict(tok=b["tokens"], pt=b["input_flow_prompt_speech_token"][0, :20],
             pf=b["input_prompt_speech_feat"][0, :40], emb=-b["input_flow_embedding"][0]),
    ]  # fmt: skip
    reqs = [{k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in r.items()} for r in reqs]
    reqs = [{k: v.double() if v.is_floating_point() else v for k, v in r.items()} for r in reqs]
    flow64 = copy.deepcopy(flow).double()
    both = _batch(flow64, reqs, streaming, finalize)
    for i, req in enumerate(reqs):
        alone = _batch(flow64, [req], streaming, [finalize[i]])[0]
        n = alone.shape[1]
        assert n == 2 * (len(req["pt"]) + len(req["tok"]) - (0 if finalize[i] else LOOKAHEAD)) - len(
            req["pf"]
        )
        np.testing.assert_allclose(both[i, :, :n].numpy(), alone.numpy(), rtol=0, atol=1e-6)
        assert not both[i, :, n:].any()  # zeros past the row's frames


def test_streaming_mask_is_chunked_and_respects_padding() -> None:
    mask = torch.tensor([[[1, 1, 1, 1, 0]]], dtype=torch.float32)
    full = attention_mask(mask, streaming=False, chunk=2)[0, 0]
    assert full.tolist() == [[True, True, True, True, False]]
    chunked = attention_mask(mask, streaming=True, chunk=2)[0, 0].int().tolist()
    assert chunked == [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 0]]


def test_load_is_strict_and_says_what_is_wrong(folder: Path) -> None:
    cfg = load_config(folder / "cosyvoice3.yaml")
    state = torch.load(folder / "flow.pt", weights_only=True)
    missing = {k: v for k, v in state.items() if k != "decoder.estimator.proj_out.bias"}
    wrong = state | {"input_embedding.weight": torch.zeros(10, 80)}
    extra = state | {"decoder.estimator.long_skip_connection.weight": torch.zeros(32, 64)}
    cases = [(missing, "no 'decoder.estimator.proj_out.bias'"), (wrong, "'input_embedding.weight' of shape"),
             (extra, "unknown 'decoder.estimator.long_skip_connection.weight'")]  # fmt: skip
    for sd, says in cases:
        with pytest.raises(VoxDeskError, match="flow.pt") as err:
            FlowV3.from_config(cfg).load(sd)
        assert says in str(err.value) and "\n" not in str(err.value)


def test_a_cosyvoice2_config_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cosyvoice2.yaml"
    path.write_text(yaml_text(preset("cosyvoice2-tiny")), encoding="utf-8")
    with pytest.raises(VoxDeskError, match="not cosyvoice2's"):
        FlowV3.from_config(load_config(path))


def test_bad_dit_sizes_are_refused_in_one_line() -> None:
    for args, says in [({"dim": "big"}, "'dim'"), ({"dim": 32, "heads": 0}, "'heads'"), ({}, "'dim'"),
                       ({"dim": 32, "long_skip_connection": True}, "long skip")]:  # fmt: skip
        with pytest.raises(VoxDeskError, match=says):
            DiT.from_tag(Tag("new", "cosyvoice.flow.DiT.dit.DiT", args))
