"""The CosyVoice yaml reader: the official text read as data, hostile text refused, nothing run."""

import sys
from pathlib import Path

import pytest

from app.errors import VoxDeskError
from app.models.cosyvoice.config import Ref, Tag, load_config, read_yaml
from app.models.cosyvoice.presets import PRESETS, yaml_text

OFFICIAL_LIKE = """\
__set_seed1: !apply:random.seed [1986]
__set_seed3: !apply:torch.manual_seed [1986]
sample_rate: 24000
chunk_size: 25
token_mel_ratio: 2
llm: !new:cosyvoice.llm.llm.CosyVoice3LM
    speech_token_size: 6561
    llm: !new:cosyvoice.llm.llm.Qwen2Encoder
        pretrain_path: !ref <qwen_pretrain_path>
    sampling: !name:cosyvoice.utils.common.ras_sampling
        top_p: 0.8
        top_k: 25
qwen_pretrain_path: ''
flow: !new:cosyvoice.flow.flow.CausalMaskedDiffWithDiT
    decoder: !new:cosyvoice.flow.flow_matching.CausalConditionalCFM
        cfm_params: !new:omegaconf.DictConfig
            content:
                sigma_min: 1e-06
        estimator: !new:cosyvoice.flow.DiT.dit.DiT
            static_chunk_size: !ref <chunk_size> * <token_mel_ratio>
            num_decoding_left_chunks: -1
hift: !new:cosyvoice.hifigan.generator.CausalHiFTGenerator
    upsample_rates: [8, 5, 3]
    istft_params:
        n_fft: 16
hifigan: !new:cosyvoice.hifigan.hifigan.HiFiGan
    generator: !ref <hift>
"""


def _write(tmp_path: Path, text: str, name: str = "cosyvoice3.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module that, if anything imported it, would leave a file behind."""
    touch = f"open({str(tmp_path / 'ran')!r}, 'w').close()"
    (tmp_path / "voxdesk_canary.py").write_text(f"{touch}\ndef boom(*a, **k):\n    {touch}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / "ran"


def test_official_layout_is_read_as_data(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, OFFICIAL_LIKE))
    assert cfg.family == "cosyvoice3"
    assert cfg.sample_rate == 24000 and cfg.seed == 1986
    assert cfg.sampling == {"top_p": 0.8, "top_k": 25}
    estimator = cfg.flow.get("decoder").get("estimator")
    args = {"static_chunk_size": 50, "num_decoding_left_chunks": -1}
    assert estimator == Tag("new", "cosyvoice.flow.DiT.dit.DiT", args)
    assert cfg.flow.get("decoder").get("cfm_params").get("content") == {"sigma_min": 1e-06}
    assert cfg.hift.get("istft_params") == {"n_fft": 16}
    assert cfg.tree["hifigan"].get("generator") == cfg.hift  # !ref to an object: the recorded tag
    assert cfg.tree["__set_seed1"] == Tag("apply", "random.seed", [1986])


def test_overrides_replace_entries_before_refs_resolve(tmp_path: Path) -> None:
    override = {"qwen_pretrain_path": "/m/CosyVoice-BlankEN"}
    tree = read_yaml(_write(tmp_path, OFFICIAL_LIKE), overrides=override)
    assert tree["llm"].get("llm").get("pretrain_path") == "/m/CosyVoice-BlankEN"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_tiny_writers_yaml_reads(tmp_path: Path, preset: str) -> None:
    p = PRESETS[preset]
    cfg = load_config(_write(tmp_path, yaml_text(p), p.yaml_name))
    assert cfg.family == p.family
    assert cfg.speech_token_size == 6561
    assert cfg.tree["llm_input_size"] == p.hidden
    assert cfg.flow.get("decoder").get("estimator").get("static_chunk_size") == 50


@pytest.mark.parametrize(
    "text",
    [
        "x: !!python/object/apply:voxdesk_canary.boom []\n",
        "x: !!python/object/new:voxdesk_canary.boom []\n",
        "x: !!python/name:voxdesk_canary.boom ''\n",
        "x: !apply:voxdesk_canary.boom []\n",
        "x: !apply:os.system ['true']\n",
        "x: !include:voxdesk_canary.yaml\n",
        "x: !copy <y>\ny: 1\n",
        "x: !ref <y>.__class__\ny: 1\n",
        "x: !ref __import__('voxdesk_canary')\n",
        "x: !ref <y> ** 99999999\ny: 9\n",
        "x: !ref <y>(1)\ny: 1\n",
        "x: !ref <x>\n",
        "a: &a [1, 2]\nb: [*a, *a]\n",
        "- just\n- a list\n",
        "x: !new:os..system {}\n",
        "x: !name:1abc\n",
    ],
)
def test_hostile_yaml_is_refused_and_nothing_runs(tmp_path: Path, canary: Path, text: str) -> None:
    with pytest.raises(VoxDeskError) as err:
        read_yaml(_write(tmp_path, text))
    message = str(err.value)
    assert "\n" not in message and "cosyvoice3.yaml" in message
    assert not canary.exists()
    assert "voxdesk_canary" not in sys.modules


def test_object_tags_are_recorded_never_built(tmp_path: Path, canary: Path) -> None:
    text = "a: !new:voxdesk_canary.boom\n    x: 1\nb: !name:voxdesk_canary.boom\n"
    tree = read_yaml(_write(tmp_path, text))
    assert tree["a"] == Tag("new", "voxdesk_canary.boom", {"x": 1})
    assert tree["b"] == Tag("name", "voxdesk_canary.boom", {})
    assert not canary.exists()
    assert "voxdesk_canary" not in sys.modules


def test_a_yaml_of_other_classes_is_not_a_cosyvoice_config(tmp_path: Path, canary: Path) -> None:
    text = OFFICIAL_LIKE.replace("cosyvoice.llm.llm.CosyVoice3LM", "voxdesk_canary.boom")
    with pytest.raises(VoxDeskError, match="CosyVoice2 and CosyVoice3 only"):
        load_config(_write(tmp_path, text))
    assert not canary.exists()
    with pytest.raises(VoxDeskError, match="no llm, flow and hift"):
        load_config(_write(tmp_path, "sample_rate: 24000\n"))


def test_billion_laughs_and_huge_files_are_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 30)]
    with pytest.raises(VoxDeskError, match="aliases|anchors"):
        read_yaml(_write(tmp_path, "\n".join(lines) + "\n"))
    with pytest.raises(VoxDeskError, match="larger than 1 MiB"):
        read_yaml(_write(tmp_path, "x: " + "a" * (1 << 20) + "\n"))
    deep = "x: " + "[" * 200 + "]" * 200 + "\n"
    with pytest.raises(VoxDeskError):
        read_yaml(_write(tmp_path, deep))


def test_unreadable_files_give_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "cosyvoice2.yaml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(VoxDeskError, match="not UTF-8"):
        read_yaml(bad)
    with pytest.raises(VoxDeskError, match="Cannot read"):
        read_yaml(tmp_path / "missing.yaml")
    with pytest.raises(VoxDeskError, match=r"\(line \d+\)"):
        read_yaml(_write(tmp_path, "a: 1\nb: [unclosed\n"))


def test_ref_arithmetic_is_numbers_only(tmp_path: Path) -> None:
    tree = read_yaml(_write(tmp_path, "a: 25\nb: 2\nc: !ref <a> * <b> + 1\nd: !ref -<a> // 2\ne: !ref <a>\n"))
    assert (tree["c"], tree["d"], tree["e"]) == (51, -13, 25)
    with pytest.raises(VoxDeskError, match="not a number"):
        read_yaml(_write(tmp_path, "a: text\nc: !ref <a> * 2\n"))
    assert Ref("<a>") != Ref("<b>")
