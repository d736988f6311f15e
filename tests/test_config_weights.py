"""config.json parsing (official defaults) and strict, safe weight loading."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from official import import_official
from safetensors.torch import load_file, save_file
from tiny import write_tiny_checkpoint

from app.errors import VoxDeskError
from app.models.voxcpm.config import load_config, parse_config
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.weights import load_model


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(src, dst)
    return dst


def _edit_config(path: Path, edit) -> None:
    data = json.loads((path / "config.json").read_text())
    edit(data)
    (path / "config.json").write_text(json.dumps(data))


def test_parse_both_architectures(tiny_v1, tiny_v2):
    v1, v2 = load_config(tiny_v1), load_config(tiny_v2)
    assert (v1.architecture, v2.architecture) == ("voxcpm", "voxcpm2")
    assert v2.residual_lm_config().no_rope and not v1.residual_lm_config().no_rope
    assert v2.lm.head_dim == 32 and v1.lm.head_dim == 16
    assert v1.stack_lm_config(v1.dit).num_key_value_heads == v1.lm.num_key_value_heads


def test_official_defaults(tiny_v1):
    data = json.loads((tiny_v1 / "config.json").read_text())
    del data["architecture"], data["lm_config"]["use_mup"], data["max_length"], data["patch_size"]
    cfg = parse_config(data)
    assert cfg.architecture == "voxcpm"
    assert cfg.lm.use_mup is True  # the pydantic default
    assert (cfg.max_length, cfg.patch_size) == (4096, 2)


def test_config_errors(tiny_v2, tmp_path):
    data = json.loads((tiny_v2 / "config.json").read_text())
    with pytest.raises(VoxDeskError, match="unknown architecture 'voxcpm9'"):
        parse_config({**data, "architecture": "voxcpm9"})
    with pytest.raises(VoxDeskError, match="dit_config"):
        parse_config({k: v for k, v in data.items() if k != "dit_config"})
    with pytest.raises(VoxDeskError, match="hidden_size"):
        parse_config(
            {**data, "lm_config": {k: v for k, v in data["lm_config"].items() if k != "hidden_size"}}
        )
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(VoxDeskError, match="not valid JSON"):
        load_config(tmp_path)
    with pytest.raises(VoxDeskError, match="not found"):
        load_config(tmp_path / "nowhere")


def test_mup_matches_official(tiny_v2, tmp_path):
    """A config without use_mup gets muP (official default); ours follows it exactly."""
    path = _copy(tiny_v2, tmp_path)
    _edit_config(path, lambda d: d["lm_config"].pop("use_mup"))
    import_official()
    from voxcpm.model.voxcpm2 import VoxCPM2Model

    off = VoxCPM2Model.from_local(str(path), optimize=False, device="cpu")
    caps = []
    off.feat_decoder.register_forward_hook(lambda m, i, o: caps.append(o.transpose(1, 2)[0]))
    torch.manual_seed(4)
    off.generate(target_text="Hello 你好", min_len=5, max_len=5, retry_badcase=False)
    ours = Synthesizer.from_dir(path, "cpu").synthesize("Hello 你好", seed=4, min_len=5, max_len=5)
    plain = Synthesizer.from_dir(tiny_v2, "cpu").synthesize("Hello 你好", seed=4, min_len=5, max_len=5)
    assert (torch.from_numpy(ours.latents) - torch.stack(caps)).abs().max() <= 1e-4
    assert (torch.from_numpy(plain.latents) - torch.stack(caps)).abs().max() > 1e-2


def test_dtype_defaults_and_override(tiny_v2, tmp_path):
    path = write_tiny_checkpoint(tmp_path / "bf16", "voxcpm2", dtype="bfloat16")
    model = load_model(path, "cpu")
    assert model.dtype == torch.float32  # CPU default
    model = load_model(path, "cpu", dtype="bfloat16")
    assert model.dtype == torch.bfloat16
    assert model.base_lm.rope.cos.dtype == torch.bfloat16  # the official rounding point
    assert next(model.audio_vae.parameters()).dtype == torch.float32


def test_alternative_file_names_load(tiny_v1, tmp_path):
    path = _copy(tiny_v1, tmp_path)
    main = load_file(path / "model.safetensors")
    torch.save({"state_dict": main}, path / "pytorch_model.bin")
    (path / "model.safetensors").unlink()
    vae = torch.load(path / "audiovae.pth", weights_only=True)["state_dict"]
    save_file(vae, path / "audiovae.safetensors")
    (path / "audiovae.pth").unlink()
    reference = load_model(tiny_v1, "cpu").state_dict()
    loaded = load_model(path, "cpu").state_dict()
    assert all(torch.equal(reference[k], loaded[k]) for k in reference)


@pytest.mark.parametrize(
    "damage, pattern",
    [
        ("missing", r"model.safetensors lacks tensor\(s\) stop_head.weight"),
        ("extra", r"model.safetensors has unexpected tensor\(s\) stop_head.bias"),
        ("shape", r"model.safetensors: tensor 'fsq_layer.in_proj.weight' has shape"),
        ("truncated", r"model.safetensors .* damaged or incomplete"),
        ("vae-missing", r"audiovae.pth lacks tensor\(s\) encoder"),
    ],
)
def test_damaged_weights_are_named(tiny_v2, tmp_path, damage, pattern):
    path = _copy(tiny_v2, tmp_path)
    main_file = path / "model.safetensors"
    sd = load_file(main_file)
    if damage == "missing":
        del sd["stop_head.weight"]
    elif damage == "extra":
        sd["stop_head.bias"] = torch.zeros(2)
    elif damage == "shape":
        sd["fsq_layer.in_proj.weight"] = torch.zeros(3, 3)
    if damage in ("missing", "extra", "shape"):
        save_file(sd, main_file)
    elif damage == "truncated":
        data = main_file.read_bytes()
        main_file.write_bytes(data[: len(data) // 2])
    else:
        vae = torch.load(path / "audiovae.pth", weights_only=True)["state_dict"]
        torch.save({"state_dict": {k: v for k, v in vae.items() if not k.startswith("encoder.block.0")}},
                   path / "audiovae.pth")  # fmt: skip
    with pytest.raises(VoxDeskError, match=pattern):
        load_model(path, "cpu")


class _Payload:
    """Unpickling this would create a file: proof that code ran."""

    def __init__(self, sentinel: str) -> None:
        self.sentinel = sentinel

    def __reduce__(self):
        return (Path.touch, (Path(self.sentinel),))


def test_pickle_with_code_is_refused_without_running_it(tiny_v2, tmp_path):
    path = _copy(tiny_v2, tmp_path)
    sentinel = tmp_path / "pwned"
    vae = torch.load(path / "audiovae.pth", weights_only=True)["state_dict"]
    torch.save({"state_dict": {**vae, "evil": _Payload(str(sentinel))}}, path / "audiovae.pth")
    assert not sentinel.exists()
    with pytest.raises(VoxDeskError, match="audiovae.pth .* other than tensors"):
        load_model(path, "cpu")
    assert not sentinel.exists()


def test_missing_files(tiny_v2, tmp_path):
    path = _copy(tiny_v2, tmp_path)
    (path / "audiovae.pth").unlink()
    with pytest.raises(VoxDeskError, match="audiovae.safetensors or audiovae.pth"):
        load_model(path, "cpu")
    with pytest.raises(VoxDeskError, match="does not exist"):
        load_model(tmp_path / "nothing", "cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_requested_without_gpu(tiny_v2):
    with pytest.raises(VoxDeskError, match="CUDA"):
        load_model(tiny_v2, "cuda")


@pytest.mark.parametrize(
    "preset, main_params, tensors",
    [("voxcpm-0.5b", 652_287_296, 377), ("voxcpm1.5", 801_729_856, 467), ("voxcpm2", 2_290_004_544, 577)],
)
def test_release_presets_have_the_published_shapes(preset, main_params, tensors):
    """Parameter and tensor counts of the real releases (spec section 2), built on the meta device."""
    from app.models.voxcpm.checkpoint import preset_config
    from app.models.voxcpm.model import VoxCPM

    with torch.device("meta"):
        model = VoxCPM(parse_config(preset_config(preset)))
    main = {k: v for k, v in model.state_dict().items() if not k.startswith("audio_vae.")}
    assert (sum(v.numel() for v in main.values()), len(main)) == (main_params, tensors)


@pytest.mark.parametrize("arch", ["voxcpm", "voxcpm2"])
def test_official_loader_uses_every_written_tensor(tiny_v1, tiny_v2, arch):
    """The official from_local ignores mismatches silently: check it loaded exactly our files."""
    path = tiny_v2 if arch == "voxcpm2" else tiny_v1
    import_official()
    if arch == "voxcpm2":
        from voxcpm.model.voxcpm2 import VoxCPM2Model as cls
    else:
        from voxcpm.model.voxcpm import VoxCPMModel as cls
    official = cls.from_local(str(path), optimize=False, device="cpu").state_dict()
    vae = torch.load(path / "audiovae.pth", weights_only=True)["state_dict"]
    written = {**load_file(path / "model.safetensors"), **{"audio_vae." + k: v for k, v in vae.items()}}
    assert set(official) == set(written)
    assert all(torch.equal(official[k], written[k]) for k in written)
