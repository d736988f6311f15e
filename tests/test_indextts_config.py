"""The IndexTTS config.yaml reader: plain data read, hostile text refused by key, nothing run."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.errors import VoxDeskError
from app.models.indextts.config import load_config, read_tree
from app.models.indextts.presets import PRESETS, REAL, TINY, preset, yaml_text


def _folder(tmp_path: Path, text: str) -> Path:
    (tmp_path / "config.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(VoxDeskError) as info:
        load_config(_folder(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def _edited(change: Any) -> str:
    tree = preset(TINY)
    change(tree)
    return yaml_text(tree)


@pytest.fixture
def canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module that, if anything imported or called it, would leave a file behind."""
    touch = f"open({str(tmp_path / 'ran')!r}, 'w').close()"
    (tmp_path / "voxdesk_canary.py").write_text(
        f"{touch}\nclass Boom:\n    def __init__(self, *a, **k):\n        {touch}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / "ran"


@pytest.mark.parametrize("name", [TINY, REAL])
def test_the_presets_read_back_with_the_official_defaults(tmp_path: Path, name: str) -> None:
    cfg = load_config(_folder(tmp_path, yaml_text(PRESETS[name])))
    assert cfg.tree == PRESETS[name]
    assert cfg.gpt == {"max_conditioning_inputs": 1, "checkpointing": True, "types": 1,
                       "condition_num_latent": 32, **PRESETS[name]["gpt"]}  # fmt: skip
    assert cfg.semantic_codec["downsample_scale"] == 2 and cfg.semantic_codec["num_quantizers"] == 1
    assert cfg.s2mel == PRESETS[name]["s2mel"]
    assert (cfg.gpt_checkpoint, cfg.s2mel_checkpoint, cfg.w2v_stat) == (
        "gpt.pth",
        "s2mel.pth",
        "wav2vec2bert_stats.pt",
    )
    assert (cfg.spk_matrix, cfg.emo_matrix, cfg.qwen_emo_path) == (
        "feat1.pt",
        "feat2.pt",
        "qwen0.6bemo4-merge/",
    )
    assert cfg.emo_num == PRESETS[name]["emo_num"] and len(cfg.emo_num) == 8
    assert cfg.version == 2.5


def test_the_published_layout_reads_with_optional_keys_left_out(tmp_path: Path) -> None:
    """The IndexTTS-2 file has no num_quantizers/downsample_scale, no max_conditioning_inputs."""
    tree = preset(REAL)
    for key in ("num_quantizers", "downsample_scale"):
        del tree["semantic_codec"][key]
    del tree["version"]
    cfg = load_config(_folder(tmp_path, yaml_text(tree)))
    assert cfg.semantic_codec["downsample_scale"] == 2 and cfg.version is None


@pytest.mark.parametrize(
    ("fmax", "expected"), [("None", None), (8000, 8000), ("null", 8000), (11025, 8000), (None, None)]
)
def test_the_mel_fmax_quirk(tmp_path: Path, fmax: Any, expected: int | None) -> None:
    """infer_v2_5.py:263: the text "None" (or no key) means no limit, any other value means 8000."""

    def change(tree: dict[str, Any]) -> None:
        spect = tree["s2mel"]["preprocess_params"]["spect_params"]
        if fmax is None:
            del spect["fmax"]
        else:
            spect["fmax"] = fmax

    cfg = load_config(_folder(tmp_path, _edited(change)))
    assert cfg.mel["fmax"] == expected
    assert (cfg.mel["n_fft"], cfg.mel["hop_size"], cfg.mel["sampling_rate"]) == (1024, 256, 22050)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("gpt: !!python/object/apply:voxdesk_canary.Boom []\n", "gpt"),
        ("gpt:\n  layers: !!python/object:voxdesk_canary.Boom {}\n", "gpt.layers"),
        ("s2mel: !include other.yaml\n", "s2mel"),
        ("emo_num: !!python/name:voxdesk_canary.Boom\n", "emo_num"),
        ("gpt_checkpoint: ${oc.env:HOME}/gpt.pth\n", "gpt_checkpoint"),
        ("gpt:\n  model_dim: '${s2mel.x}'\n", "gpt.model_dim"),
        ("emo_num: [1, '${gpt.layers}']\n", "emo_num[1]"),
    ],
)  # fmt: skip
def test_tags_and_interpolations_are_refused_naming_the_key(tmp_path: Path, canary: Path, text: str,
                                                            where: str) -> None:  # fmt: skip
    message = _error(tmp_path, "version: 2.5\n" + text)
    assert f": {where}: " in message and "nothing in it was run" in message
    assert not canary.exists()


def test_anchors_aliases_and_huge_files_are_refused(tmp_path: Path) -> None:
    laughs = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"
    assert "anchors and aliases" in _error(tmp_path, laughs)
    assert "larger than 1 MiB" in _error(tmp_path, "x: " + "y" * (1 << 20) + "\n")
    (tmp_path / "config.yaml").write_bytes(b"gpt: \xff\xfe\n")
    with pytest.raises(VoxDeskError, match="not UTF-8"):
        load_config(tmp_path)
    assert "not a mapping" in _error(tmp_path, "- a list\n")
    assert "(line 3)" in _error(tmp_path, "gpt:\n  a: [1, 2\n")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda t: t["gpt"].pop("model_dim"), "gpt.model_dim: is missing"),
        (lambda t: t.pop("s2mel"), "s2mel: is missing"),
        (lambda t: t["gpt"]["emo_condition_module"].pop("num_blocks"),
         "gpt.emo_condition_module.num_blocks: is missing"),
        (lambda t: t["s2mel"]["DiT"].pop("depth"), "s2mel.DiT.depth: is missing"),
        (lambda t: t["s2mel"]["preprocess_params"]["spect_params"].pop("hop_length"),
         "s2mel.preprocess_params.spect_params.hop_length: is missing"),
        (lambda t: t.pop("emo_matrix"), "emo_matrix: is missing"),
        (lambda t: t["gpt"].update(layers="24"), "gpt.layers: must be a whole number"),
        (lambda t: t["gpt"].update(heads=True), "gpt.heads: must be a whole number"),
        (lambda t: t["gpt"].update(layers=2.0), "gpt.layers: must be a whole number"),
        (lambda t: t["s2mel"]["wavenet"].update(style_condition="yes"),
         "s2mel.wavenet.style_condition: must be true or false"),
        (lambda t: t["gpt"].update(speed_emb=1), "gpt.speed_emb: is not a setting"),
        (lambda t: t["semantic_codec"].update(downsample_scale=1), "downsample_scale: must be more than 1"),
        (lambda t: t["semantic_codec"].update(hidden_size=512), "semantic_codec.hidden_size: must be 1024"),
        (lambda t: t["s2mel"]["length_regulator"].update(in_channels=512), "in_channels: must be 1024"),
        (lambda t: t["gpt"].update(stop_mel_token=1026), "gpt.number_mel_codes: must exceed"),
        (lambda t: t.update(emo_num=[1, 2, 3]), "emo_num: must list 8 positive whole numbers"),
        (lambda t: t.update(emo_num=[1, 2, 3, 4, 5, 6, 7, 0]), "emo_num: must list 8"),
        (lambda t: t.update(gpt_checkpoint="/"), "gpt_checkpoint: '/' points outside"),
        (lambda t: t.update(s2mel_checkpoint=".."), "s2mel_checkpoint: '..' points outside"),
        (lambda t: t.update(w2v_stat=7), "w2v_stat: must be a file name"),
    ],
)  # fmt: skip
def test_a_missing_or_wrong_key_gives_one_line_naming_it(tmp_path: Path, change: Any, named: str) -> None:
    message = _error(tmp_path, _edited(change))
    assert named in message and message.startswith("config.yaml in ")


@pytest.mark.parametrize(
    ("key", "value", "name"),
    [("gpt_checkpoint", "/cubefs/train/ckpt/gpt.pth", "gpt.pth"),
     ("s2mel_checkpoint", "../s2mel.pth", "s2mel.pth"),
     ("qwen_emo_path", "C:\\models\\qwen0.6bemo4-merge\\", "qwen0.6bemo4-merge")],
)  # fmt: skip
def test_a_path_that_leads_elsewhere_is_read_as_its_name_in_the_folder(
    tmp_path: Path, key: str, value: str, name: str
) -> None:
    """Released configs may carry the training machine's paths: the file is looked for in the
    model folder under its own name, never outside it."""
    tree = copy.deepcopy(PRESETS[TINY])
    tree[key] = value
    cfg = load_config(_folder(tmp_path, yaml_text(tree)))
    assert getattr(cfg, key) == name


def test_a_folder_without_config_says_so(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="has no config.yaml: choose an IndexTTS-2.5 model folder"):
        load_config(tmp_path)


def test_read_tree_gives_plain_python_data(tmp_path: Path) -> None:
    tree = read_tree(_folder(tmp_path, yaml_text(PRESETS[TINY])) / "config.yaml")
    assert tree == PRESETS[TINY] and tree is not PRESETS[TINY]
    assert yaml.safe_load(yaml_text(tree)) == copy.deepcopy(PRESETS[TINY])
