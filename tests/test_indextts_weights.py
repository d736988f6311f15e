"""IndexTTS weight files read as untrusted input, the tiny-folder writer, and the folder check."""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts import checkpoint
from app.models.indextts.checkpoint import SHAPES_FILE, state_dict, write_folder
from app.models.indextts.presets import BIGVGAN, PRESETS, REAL, TINY, yaml_text
from app.models.indextts.weights import check_folder, load_torch, state_of, strict_load

PARTS = ("gpt", "cfm", "length_regulator", "codec", "campplus", "bigvgan")


def _entry(name: str = TINY) -> dict:
    return json.loads(SHAPES_FILE.read_text(encoding="utf-8"))[name]


@pytest.fixture(scope="module")
def files(tiny_ix: Path) -> dict[str, dict[str, torch.Tensor]]:  # noqa: F811
    """Every state dict of the tiny folder, read the way the official loaders unwrap them."""
    folder = tiny_ix
    s2mel = load_torch(folder / "s2mel.pth")["net"]
    return {
        "gpt": state_of(load_torch(folder / "gpt.pth"), "model", folder / "gpt.pth"),
        "cfm": s2mel["cfm"],
        "length_regulator": s2mel["length_regulator"],
        "codec": load_torch(folder / "codec.pth")["model"],
        "campplus": load_torch(folder / "hf_cache" / "campplus_cn_common.bin"),
        "bigvgan": load_torch(folder / "hf_cache" / "bigvgan" / "bigvgan_generator.pt")["generator"],
    }


# ---- the writer -------------------------------------------------------------------------------
def test_the_tiny_folder_has_the_official_layout_and_keys(tiny_ix: Path, files: dict) -> None:  # noqa: F811
    entry = _entry()
    for part in PARTS:
        assert {k: list(v.shape) for k, v in files[part].items()} == entry[part], part
    assert set(load_torch(tiny_ix / "s2mel.pth")["net"]) == {"cfm", "length_regulator"}
    assert files["campplus"]["head.bn1.num_batches_tracked"].dtype == torch.int64
    assert files["cfm"]["estimator.input_pos"].dtype == torch.int64
    assert json.loads((tiny_ix / "hf_cache" / "bigvgan" / "config.json").read_text()) == BIGVGAN[TINY]
    stats = load_torch(tiny_ix / "wav2vec2bert_stats.pt")
    assert stats["mean"].shape == stats["var"].shape == (1024,) and bool((stats["var"] > 0).all())
    rows = sum(PRESETS[TINY]["emo_num"])
    assert load_torch(tiny_ix / "feat1.pt").shape == (rows, 192)
    assert load_torch(tiny_ix / "feat2.pt").shape == (rows, PRESETS[TINY]["gpt"]["model_dim"])


@pytest.mark.parametrize(
    ("module", "written"),
    [("text", "multilingual_zh_ja_yue_char_del.tiktoken"), ("semantic", "hf_cache/w2v-bert-2.0/config.json"),
     ("qwen_emotion", "qwen0.6bemo4-merge/config.json")],
)  # fmt: skip
def test_the_other_parts_write_their_files_once_merged(tiny_ix: Path, module: str, written: str) -> None:  # noqa: F811
    merged = importlib.util.find_spec(f"app.models.indextts.{module}") is not None
    assert (tiny_ix / written).is_file() == merged


def test_the_command_line_writes_or_says_why_not(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "file").write_text("x")
    assert checkpoint.main([str(tmp_path / "file")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error: ") and "is a file" in out and out.count("\n") == 1


def test_the_computed_buffers_are_the_official_formulas(files: dict) -> None:
    pe = files["gpt"]["emo_conditioning_encoder.embed.pos_enc.pe"]
    position, dim = 7, pe.shape[-1]
    assert pe[0, position, 0] == pytest.approx(torch.sin(torch.tensor(7.0)).item(), abs=1e-6)
    assert pe[0, position, 1] == pytest.approx(torch.cos(torch.tensor(7.0)).item(), abs=1e-6)
    assert pe[0, position, dim - 1] == pytest.approx(
        torch.cos(torch.tensor(7.0 * 10000.0 ** (-(dim - 2) / dim))).item(), abs=1e-6
    )
    assert torch.equal(files["cfm"]["estimator.input_pos"], torch.arange(16384))
    freqs = files["cfm"]["estimator.t_embedder.freqs"]
    assert torch.allclose(freqs, torch.exp(-torch.log(torch.tensor(10000.0)) * torch.arange(128) / 128))
    filters = [v for k, v in files["bigvgan"].items() if k.endswith(".filter")]
    assert filters and all(torch.equal(f, filters[0]) for f in filters)
    assert filters[0].sum().item() == pytest.approx(1.0, abs=1e-6)  # a normalised low-pass kernel


def test_the_weights_are_tame(files: dict) -> None:
    gpt = files["gpt"]
    assert gpt["gpt.h.0.ln_1.weight"].mean().item() == pytest.approx(1.0, abs=0.1)
    assert gpt["final_norm.bias"].abs().max() < 0.3
    stop = PRESETS[TINY]["gpt"]["stop_mel_token"]
    assert gpt["mel_head.bias"][stop] > checkpoint.STOP_BIAS - 0.3
    assert files["cfm"]["estimator.x_embedder.weight_g"].mean().item() == pytest.approx(1.0, abs=0.1)
    assert files["codec"]["quantizer.quantizers.0.codebook.weight"].std().item() == pytest.approx(
        1.0, abs=0.15
    )
    voc = files["bigvgan"]
    assert voc["activation_post.act.alpha"].abs().max() < 0.5  # log-scale SnakeBeta: exp(~0)
    assert voc["conv_post.weight_g"].abs().item() < 0.2  # VOCODER_GAIN
    bn = files["campplus"]
    assert all(v.min() > 0 for k, v in bn.items() if k.endswith("running_var"))


def test_same_seed_same_tensors_and_another_seed_differs() -> None:
    entry = _entry()
    for part, key in (("length_regulator", "model.0.weight"), ("bigvgan", "conv_pre.weight_v")):
        a, b, c = (state_dict(entry, part, seed) for seed in (0, 0, 1))
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert not torch.equal(a[key], c[key])


def test_the_writer_refuses_bad_requests_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="Unknown IndexTTS preset 'nope'"):
        write_folder(tmp_path / "x", "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(VoxDeskError, match="is a file"):
        write_folder(tmp_path / "file")


def test_a_stale_shapes_recording_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    table[TINY]["tree"]["gpt"]["layers"] = 3
    stale = tmp_path / "official_shapes.json"
    stale.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setattr(checkpoint, "SHAPES_FILE", stale)
    with pytest.raises(VoxDeskError, match="rerun tools/indextts_goldens.py shapes"):
        write_folder(tmp_path / "x")


def test_the_real_preset_is_recorded_at_the_released_sizes() -> None:
    entry = _entry(REAL)
    assert entry["tree"] == PRESETS[REAL]
    assert entry["gpt"]["text_embedding.weight"] == [60510, 1280]  # number_text_tokens * types + 1
    assert entry["gpt"]["mel_pos_embedding.emb.weight"] == [1818, 1280]  # max_mel_tokens + 2 + 1
    assert entry["gpt"]["gpt.h.23.mlp.c_fc.weight"] == [1280, 5120]
    assert entry["gpt"]["emovec_layer.weight"] == [1280, 1024]
    assert entry["bigvgan"]["conv_pre.weight_v"] == [1536, 80, 7]
    assert entry["campplus"] == _entry(TINY)["campplus"]  # CAMPPlus(80, 192) is fixed
    for name in entry["buffers"]:  # the released sizes' positional table, filters, DiT positions
        part, _, key = name.partition(".")
        dtype = getattr(torch, entry["dtypes"].get(name, "float32"))
        assert list(checkpoint._buffer(entry, name, entry[part][key], dtype).shape) == entry[part][key]
    assert set(state_dict(entry, "length_regulator", 0)) == set(entry["length_regulator"])


# ---- load_torch / strict_load -----------------------------------------------------------------
class Payload:
    def __reduce__(self):  # noqa: ANN204 - the shape of a hostile pickle
        return (print, ("ran",))


def test_a_pickled_class_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "gpt.pth"
    torch.save({"model": {"w": torch.zeros(1)}, "extra": Payload()}, bad, pickle_protocol=2)
    with pytest.raises(VoxDeskError) as info:
        load_torch(bad)
    assert str(info.value).startswith("gpt.pth in ") and "could run code; nothing of it was run" in str(
        info.value
    )
    assert "ran" not in capsys.readouterr().out
    legacy = tmp_path / "feat2.pt"
    with legacy.open("wb") as handle:
        pickle.dump(Payload(), handle, protocol=2)
    with pytest.raises(VoxDeskError, match="feat2.pt in .* (could run code|damaged or incomplete)"):
        load_torch(legacy)
    assert "ran" not in capsys.readouterr().out


def test_truncated_missing_and_garbage_files_give_one_line(tmp_path: Path, tiny_ix: Path) -> None:  # noqa: F811
    whole = (tiny_ix / "s2mel.pth").read_bytes()
    cut = tmp_path / "s2mel.pth"
    cut.write_bytes(whole[: len(whole) // 2])
    assert not zipfile.is_zipfile(cut)
    with pytest.raises(VoxDeskError, match=r"^s2mel.pth in .* is damaged or incomplete"):
        load_torch(cut)
    (tmp_path / "codec.pth").write_bytes(b"not a checkpoint at all")
    with pytest.raises(VoxDeskError, match="codec.pth in .* is damaged or incomplete"):
        load_torch(tmp_path / "codec.pth")
    with pytest.raises(VoxDeskError, match="feat1.pt is missing from"):
        load_torch(tmp_path / "feat1.pt")


def test_state_of_unwraps_like_the_official_loaders(tmp_path: Path) -> None:
    path = tmp_path / "gpt.pth"
    table = {"a.weight": torch.ones(2)}
    assert state_of({"model": table}, "model", path) is table
    assert state_of(table, "model", path) is table
    with pytest.raises(VoxDeskError, match="gpt.pth in .* does not hold a table of named tensors"):
        state_of({"model": [1, 2]}, "model", path)


def test_strict_load_names_the_first_bad_key() -> None:
    module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.LayerNorm(2))
    good = {k: torch.full_like(v, 0.5) for k, v in module.state_dict().items()}
    strict_load(module, good, "gpt.pth")
    assert torch.equal(module[0].weight, torch.full((2, 3), 0.5))
    cases = [
        ({k: v for k, v in good.items() if k != "1.bias"}, "1.bias is missing"),
        ({**good, "2.weight": torch.zeros(1)}, "2.weight is not part of this model"),
        ({**good, "0.weight": torch.zeros(3, 2)}, "0.weight has shape [3, 2] instead of [2, 3]"),
    ]
    for state, problem in cases:
        with pytest.raises(VoxDeskError) as info:
            strict_load(module, state, "gpt.pth")
        assert (
            str(info.value)
            == f"gpt.pth does not fit this model ({problem}): download the model folder again."
        )


# ---- check_folder -----------------------------------------------------------------------------
LAYOUT = (
    "gpt.pth", "s2mel.pth", "codec.pth", "wav2vec2bert_stats.pt", "feat1.pt", "feat2.pt",
    "multilingual_zh_ja_yue_char_del.tiktoken", "hf_cache/campplus_cn_common.bin",
    "hf_cache/bigvgan/config.json", "hf_cache/bigvgan/bigvgan_generator.pt",
    "hf_cache/w2v-bert-2.0/config.json", "hf_cache/w2v-bert-2.0/preprocessor_config.json",
    "hf_cache/w2v-bert-2.0/model.safetensors", "qwen0.6bemo4-merge/config.json",
    "qwen0.6bemo4-merge/model.safetensors",
)  # fmt: skip


def _layout(tmp_path: Path) -> Path:
    """A folder with every part of the official layout as an empty file (check_folder reads none)."""
    folder = tmp_path / "ix"
    for name in LAYOUT:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).touch()
    (folder / "config.yaml").write_text(yaml_text(PRESETS[TINY]), encoding="utf-8")
    return folder


def test_a_complete_folder_has_every_part(tmp_path: Path) -> None:
    folder = check_folder(_layout(tmp_path))
    assert folder.missing == {} and folder.can_speak and folder.emotion_vectors and folder.emotion_text
    assert folder.summary() == "ix: every part is present."
    assert folder.gpt.name == "gpt.pth" and folder.bigvgan.name == "bigvgan" and folder.config.emo_num
    folder.require_speech()


@pytest.mark.parametrize(
    ("remove", "label", "speaks", "vectors", "text"),
    [
        ("qwen0.6bemo4-merge", "the QwenEmotion model (qwen0.6bemo4-merge)", True, True, False),
        ("feat2.pt", "the emotion matrix (feat2.pt)", True, False, False),
        ("hf_cache/bigvgan/bigvgan_generator.pt", "the BigVGAN vocoder (hf_cache/bigvgan)",
         False, False, False),
        ("hf_cache/w2v-bert-2.0", "the w2v-BERT speech encoder (hf_cache/w2v-bert-2.0)", False, False, False),
        ("hf_cache/campplus_cn_common.bin", "the CAMPPlus speaker encoder (hf_cache/campplus_cn_common.bin)",
         False, False, False),
        ("codec.pth", "the semantic codec (codec.pth)", False, False, False),
        ("multilingual_zh_ja_yue_char_del.tiktoken",
         "the text vocabulary (multilingual_zh_ja_yue_char_del.tiktoken)", False, False, False),
    ],
)  # fmt: skip
def test_each_missing_part_is_named_with_what_still_works(
    tmp_path: Path,
    remove: str,
    label: str,
    speaks: bool,
    vectors: bool,
    text: bool,
) -> None:
    root = _layout(tmp_path)
    target = root / remove
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    folder = check_folder(root)
    assert list(folder.missing) == [label]
    assert (folder.can_speak, folder.emotion_vectors, folder.emotion_text) == (speaks, vectors, text)
    assert label in folder.summary() and "\n" not in folder.summary()
    if speaks:
        folder.require_speech()
    else:
        assert folder.missing[label] == "nothing can be spoken"
        with pytest.raises(
            VoxDeskError, match=f"^{label.split(' (')[0]}.* is missing from .*nothing can be spoken"
        ):
            folder.require_speech()


def test_no_qwen_says_emotion_from_text_needs_it(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    shutil.rmtree(root / "qwen0.6bemo4-merge")
    assert check_folder(root).missing == {
        "the QwenEmotion model (qwen0.6bemo4-merge)": "emotion from text needs the QwenEmotion model"
    }


def test_not_a_model_folder(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="does not exist"):
        check_folder(tmp_path / "nope")
    with pytest.raises(VoxDeskError, match="has no config.yaml"):
        check_folder(tmp_path)
    (tmp_path / "config.yaml").write_text("gpt: !!python/object:os.system {}\n")
    with pytest.raises(VoxDeskError, match="gpt: the tag !!python/object:os.system is not plain data"):
        check_folder(tmp_path)
