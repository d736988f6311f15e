"""The tiny CosyVoice folder writer: the official layout, well-formed files, safe to load.

That the official loader accepts these folders (strict state-dict loading, the tokenizer ids,
synthesis in every mode) is shown by tools/cosyvoice_goldens.py, which made the committed goldens
in tests/data/cosyvoice/ from them; here only what VoxDesk's own venv can check.
"""

import json
from pathlib import Path

import onnx
import pytest
import torch
from safetensors.torch import load_file

from app.errors import VoxDeskError
from app.models.cosyvoice.checkpoint import (
    ENDOFTEXT,
    MODULATION_GAIN,
    llm_shapes,
    official_shapes,
    qwen_shapes,
    write_checkpoint,
)
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.presets import PRESETS

TINY = sorted(n for n in PRESETS if n.endswith("-tiny"))  # the real-size ones are GBs: benchmarks only


@pytest.fixture(scope="module", params=TINY)
def folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = request.param
    return name, write_checkpoint(tmp_path_factory.mktemp(name), name, seed=3)


def test_the_official_layout(folder: tuple[str, Path]) -> None:
    name, root = folder
    p = PRESETS[name]
    expected = {p.yaml_name, "llm.pt", "flow.pt", "hift.pt", "campplus.onnx", p.tokenizer_onnx, "config.json",
                "CosyVoice-BlankEN"}  # fmt: skip
    assert {f.name for f in root.iterdir()} == expected
    blank = {f.name for f in (root / "CosyVoice-BlankEN").iterdir()}
    assert blank == {"config.json", "model.safetensors", "vocab.json", "merges.txt", "tokenizer_config.json"}
    assert load_config(root / p.yaml_name).family == p.family


def test_pt_files_load_as_plain_tensors_with_the_official_keys(folder: tuple[str, Path]) -> None:
    name, root = folder
    p = PRESETS[name]
    recorded = official_shapes(p)
    for part, shapes in (("llm", llm_shapes(p)), ("flow", recorded["flow"]), ("hift", recorded["hift"])):
        sd = torch.load(root / f"{part}.pt", weights_only=True, map_location="cpu")
        assert set(sd) == set(shapes), part
        for key, shape in shapes.items():
            assert tuple(sd[key].shape) == tuple(shape), key
            assert sd[key].dtype == torch.float32 and torch.isfinite(sd[key]).all(), key
    llm = torch.load(root / "llm.pt", weights_only=True)
    assert torch.equal(llm["llm.model.lm_head.weight"], llm["llm.model.model.embed_tokens.weight"])
    if p.family == "cosyvoice3":  # the rotary frequencies are the recorded constants, not noise
        flow = torch.load(root / "flow.pt", weights_only=True)
        freqs = recorded["buffers"]["flow.decoder.estimator.rotary_embed.inv_freq"]
        assert torch.equal(flow["decoder.estimator.rotary_embed.inv_freq"], torch.tensor(freqs))


def test_the_dit_modulation_is_damped_so_goldens_hold_across_cpus(folder: tuple[str, Path]) -> None:
    """CosyVoice3's AdaLayerNormZero weights are a tenth of the other linear layers' scale (with
    unit scale the random DiT amplified another CPU's rounding past the parity tolerance)."""
    name, root = folder
    flow = torch.load(root / "flow.pt", weights_only=True)
    modulation = [k for k in flow if ".attn_norm.linear." in k or ".norm_out.linear." in k]
    if PRESETS[name].family == "cosyvoice2":
        assert modulation == []  # CosyVoice2's flow has none: its goldens held without damping
        return
    blocks = {k.split(".")[3] for k in flow if k.startswith("decoder.estimator.transformer_blocks.")}
    assert len(modulation) == 2 * (len(blocks) + 1)  # weight and bias per block and the final norm

    def gain(key: str) -> float:  # the weight's std relative to 1 / sqrt(fan_in)
        w = flow[key]
        return float(w.std() * w.shape[1] ** 0.5)

    for key in modulation:
        if key.endswith(".weight"):
            assert gain(key) == pytest.approx(MODULATION_GAIN, rel=0.2), key
    assert gain("decoder.estimator.transformer_blocks.0.attn.to_q.weight") == pytest.approx(1.0, rel=0.2)


def test_the_qwen_folder_matches_llm_pt(folder: tuple[str, Path]) -> None:
    name, root = folder
    p = PRESETS[name]
    blank = root / "CosyVoice-BlankEN"
    weights = load_file(blank / "model.safetensors")
    assert {k: tuple(v.shape) for k, v in weights.items()} == qwen_shapes(p)
    llm = torch.load(root / "llm.pt", weights_only=True)
    assert all(torch.equal(v, llm[f"llm.model.{k}"]) for k, v in weights.items())
    config = json.loads((blank / "config.json").read_text())
    assert (config["model_type"], config["hidden_size"], config["vocab_size"]) == ("qwen2", p.hidden, 151936)
    vocab = json.loads((blank / "vocab.json").read_text(encoding="utf-8"))
    assert sorted(vocab.values()) == list(range(ENDOFTEXT))
    added = json.loads((blank / "tokenizer_config.json").read_text())["added_tokens_decoder"]
    assert {int(k): v["content"] for k, v in added.items()} == {
        151643: "<|endoftext|>", 151644: "<|im_start|>", 151645: "<|im_end|>"}  # fmt: skip
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(blank / "vocab.json"), str(blank / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ids = tok.encode("你好，世界。Hello world.").ids
    assert ids and max(ids) < 1000 and len(ids) < len("你好，世界。Hello world.".encode())


def _io(model: onnx.ModelProto) -> tuple[list, list]:
    def desc(values: list) -> list:
        out = []
        for v in values:
            dims = [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]
            out.append((v.name, v.type.tensor_type.elem_type, dims))
        return out

    return desc(model.graph.input), desc(model.graph.output)


def test_onnx_files_check_and_have_the_official_names(folder: tuple[str, Path]) -> None:
    name, root = folder
    campplus = onnx.load(root / "campplus.onnx")
    onnx.checker.check_model(campplus, full_check=True)
    assert _io(campplus) == ([("input", onnx.TensorProto.FLOAT, ["B", "T", 80])],
                             [("pred", onnx.TensorProto.FLOAT, ["B", 192])])  # fmt: skip
    tokenizer = onnx.load(root / PRESETS[name].tokenizer_onnx)
    onnx.checker.check_model(tokenizer, full_check=True)
    inputs, outputs = _io(tokenizer)
    assert inputs == [("feats", onnx.TensorProto.FLOAT, [1, 128, "T"]),
                      ("feats_length", onnx.TensorProto.INT32, [1])]  # fmt: skip
    assert outputs == [("indices", onnx.TensorProto.INT64, [1, "N"])]


def test_same_seed_same_weights(folder: tuple[str, Path], tmp_path: Path) -> None:
    name, root = folder
    again = write_checkpoint(tmp_path / "again", name, seed=3)
    for f in ("hift.pt", "llm.pt"):
        a = torch.load(root / f, weights_only=True)
        b = torch.load(again / f, weights_only=True)
        assert all(torch.equal(a[k], b[k]) for k in a), f
    for f in ("campplus.onnx", PRESETS[name].tokenizer_onnx, PRESETS[name].yaml_name):
        assert (root / f).read_bytes() == (again / f).read_bytes(), f


def test_bad_requests_give_one_line(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="Unknown CosyVoice preset"):
        write_checkpoint(tmp_path / "x", "cosyvoice9")
    (tmp_path / "file").write_text("")
    with pytest.raises(VoxDeskError, match="is a file"):
        write_checkpoint(tmp_path / "file", "cosyvoice3-tiny")


def test_the_real_size_preset_has_its_shapes_recorded() -> None:
    """Fun-CosyVoice3-0.5B-2512's sizes: Qwen2-0.5B, the 22-layer 1024-wide DiT, the 512-channel HiFT."""
    p = PRESETS["cosyvoice3-0.5b"]
    llm = llm_shapes(p)
    assert llm["llm.model.model.embed_tokens.weight"] == (151936, 896)
    assert llm["llm.model.model.layers.23.mlp.gate_proj.weight"] == (4864, 896)
    assert llm["llm.model.model.layers.0.self_attn.k_proj.weight"] == (128, 896)  # 2 kv heads of 64
    recorded = official_shapes(p)
    assert tuple(recorded["flow"]["decoder.estimator.transformer_blocks.21.attn.to_q.weight"]) == (1024, 1024)
    assert tuple(recorded["hift"]["conv_pre.parametrizations.weight.original1"])[0] == 512
