"""IndexTTS-2.5's w2v-BERT semantic features against the official ``get_emb``, the truncation to
17 layers against the whole model, LayerDrop's draws, the tiny folder and bad folders.

``tests/data/indextts/prompt_feats.npz`` (tools/indextts_golden_prompt.py) holds the official
features of the ``mono24k`` clip through both resampling paths, on the tiny folder of seed 0.
"""

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.indextts.audio_in import load_prompt
from app.models.indextts.semantic import LAYER, SemanticEncoder, w2v_config, write_tiny_w2v
from app.models.indextts.semantic import TINY as TINY_W2V

DATA = Path(__file__).parent / "data" / "indextts"


def _tool():
    path = Path(__file__).parents[1] / "tools" / "indextts_golden_prompt.py"
    spec = importlib.util.spec_from_file_location("indextts_golden_prompt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


@pytest.fixture(scope="module")
def folder(tiny_ix: Path) -> Path:  # noqa: F811
    return tiny_ix


@pytest.fixture(scope="module")
def encoder(folder: Path) -> SemanticEncoder:
    return SemanticEncoder(folder / "hf_cache" / "w2v-bert-2.0", folder / "wav2vec2bert_stats.pt")


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(DATA / "prompt_feats.npz") as data:
        return {k.replace("__", "/"): data[k] for k in data.files}


@pytest.fixture(scope="module")
def prompt():
    rate, seconds, channels, seed, _ = TOOL.CASES["mono24k"]
    return load_prompt(TOOL.prompt_clip(rate, seconds, channels, seed).astype(np.float32) / 32768, rate)


def test_features_match_the_official_on_both_paths(encoder: SemanticEncoder, golden, prompt) -> None:
    for key, audio in (("spk_cond_emb", prompt.audio_16k), ("emo_cond_emb", prompt.emo_16k)):
        feats = encoder.features(audio)
        assert feats.dtype == torch.float32 and tuple(feats.shape) == tuple(golden[f"mono24k/{key}_shape"])
        ref = golden[f"mono24k/{key}"]
        ours = feats[..., :: TOOL.FEAT_FRAMES, :: TOOL.FEAT_CHANNELS].numpy()
        assert ours.shape == ref.shape and np.abs(ours - ref).max() < 1e-3


def test_truncation_equals_the_whole_model(folder: Path, encoder: SemanticEncoder, prompt) -> None:
    from transformers import Wav2Vec2BertModel

    assert len(encoder.model.encoder.layers) == LAYER < TINY_W2V["num_hidden_layers"]
    w2v = folder / "hf_cache" / "w2v-bert-2.0"
    whole = Wav2Vec2BertModel.from_pretrained(str(w2v), local_files_only=True, dtype=torch.float32).eval()
    assert len(whole.encoder.layers) == TINY_W2V["num_hidden_layers"]
    inputs = encoder.extractor(prompt.audio_16k[:16000], sampling_rate=16000, return_tensors="pt")
    with torch.inference_mode():
        hidden = whole(**inputs, output_hidden_states=True).hidden_states
    expected = (hidden[LAYER] - encoder.mean) / encoder.std
    assert not torch.equal(hidden[LAYER], hidden[-1])
    assert torch.allclose(encoder.features(prompt.audio_16k[:16000]), expected, atol=1e-5)


def test_layerdrop_draws_as_the_official_and_ours_draw_none(encoder: SemanticEncoder, golden, prompt) -> None:
    """The official get_emb drew one torch.rand([]) per layer of the whole model from the global
    generator; ``official_draws`` says how many, and our call leaves the generator alone."""
    assert encoder.official_draws == golden["layers"] == TINY_W2V["num_hidden_layers"]
    torch.manual_seed(TOOL.RNG_SEED)
    for _ in range(encoder.official_draws):
        torch.rand([])
    assert torch.equal(torch.rand(4), torch.from_numpy(golden["rng_after_get_emb"]))
    state = torch.get_rng_state()
    encoder.features(prompt.emo_16k[:8000])
    assert torch.equal(torch.get_rng_state(), state)


def test_silence_and_the_shortest_clip_give_finite_features(encoder: SemanticEncoder) -> None:
    tone = (0.3 * np.sin(2 * np.pi * 220 * np.arange(2205) / 22050)).astype(np.float32)
    short = load_prompt(tone, 22050)  # 0.1 s, the shortest clip load_prompt takes
    for audio in (load_prompt(np.zeros(16000, np.float32), 16000).emo_16k, short.audio_16k, short.emo_16k):
        feats = encoder.features(audio)
        assert feats.shape[0] == 1 and feats.shape[2] == 1024 and feats.shape[1] >= 4
        assert torch.isfinite(feats).all()


def test_the_tiny_folder_is_a_real_w2v_bert_layout(folder: Path) -> None:
    w2v = folder / "hf_cache" / "w2v-bert-2.0"
    config = json.loads((w2v / "config.json").read_text())
    pre = json.loads((w2v / "preprocessor_config.json").read_text())
    assert config["hidden_size"] == 1024 and config["num_hidden_layers"] == LAYER + 1
    assert config["model_type"] == "wav2vec2-bert"
    assert pre["feature_extractor_type"] == "SeamlessM4TFeatureExtractor"
    size = (w2v / "model.safetensors").stat().st_size
    assert 200e6 < size < 300e6  # float16, 133 M values: what width 1024 and 18 layers cost


def test_the_writer_is_deterministic_per_seed(tmp_path: Path, folder: Path) -> None:
    from safetensors import safe_open

    again = write_tiny_w2v(tmp_path / "a", seed=0)
    other = write_tiny_w2v(tmp_path / "b", seed=1)
    key = "encoder.layers.3.self_attn.linear_q.weight"
    tensors = []
    for path in (folder / "hf_cache" / "w2v-bert-2.0", again, other):
        with safe_open(str(path / "model.safetensors"), "pt") as f:
            tensors.append(f.get_tensor(key))
    assert torch.equal(tensors[0], tensors[1]) and not torch.equal(tensors[0], tensors[2])
    assert abs(tensors[0].float().std().item() - 1 / 32) < 3e-3  # 1/sqrt(fan-in)


def test_the_full_sized_folder_has_the_released_config() -> None:
    """``write_tiny_w2v(full=True)`` (benchmarks; 1.16 GB, so not written here) has the released
    sizes: 24 layers, FFN 4096, kernel 31, 580 M values."""
    from transformers import Wav2Vec2BertConfig, Wav2Vec2BertModel

    config = w2v_config(full=True)
    sizes = ("num_hidden_layers", "intermediate_size", "conv_depthwise_kernel_size", "hidden_size")
    assert [config[k] for k in sizes] == [24, 4096, 31, 1024]
    assert w2v_config() == config | TINY_W2V
    with torch.device("meta"):
        model = Wav2Vec2BertModel(Wav2Vec2BertConfig(**config))
    assert sum(p.numel() for p in model.state_dict().values()) == 580_493_120


# ---- bad folders -------------------------------------------------------------------------------
def _copy(folder: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The tiny w2v-BERT folder's small files copied, its weights linked."""
    w2v, src = tmp_path / "w2v", folder / "hf_cache" / "w2v-bert-2.0"
    w2v.mkdir()
    for name in ("config.json", "preprocessor_config.json"):
        shutil.copy(src / name, w2v / name)
    (w2v / "model.safetensors").symlink_to(src / "model.safetensors")
    return w2v, folder / "wav2vec2bert_stats.pt"


def test_a_missing_folder_or_file_is_named(folder: Path, tmp_path: Path) -> None:
    stats = folder / "wav2vec2bert_stats.pt"
    with pytest.raises(VoxDeskError, match="w2v-BERT folder .* is missing"):
        SemanticEncoder(tmp_path / "nowhere", stats)
    w2v, _ = _copy(folder, tmp_path)
    (w2v / "preprocessor_config.json").unlink()
    with pytest.raises(VoxDeskError, match="preprocessor_config.json is missing"):
        SemanticEncoder(w2v, stats)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_size": 768}, "width 1024 and at least 17 layers"),
        ({"num_hidden_layers": 12}, "width 1024 and at least 17 layers"),
        ({"model_type": "bert"}, "does not describe a wav2vec2-bert model"),
    ],
)
def test_a_config_of_another_model_is_refused(folder: Path, tmp_path: Path, change: dict,
                                              message: str) -> None:  # fmt: skip
    w2v, stats = _copy(folder, tmp_path)
    config = json.loads((w2v / "config.json").read_text()) | change
    (w2v / "config.json").write_text(json.dumps(config))
    with pytest.raises(VoxDeskError, match=message) as err:
        SemanticEncoder(w2v, stats)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [  # "relative" positions have keys the file lacks; a wider FFN does not fit the file's
        ({"position_embeddings_type": "relative"}, "mis-shapes encoder.layers.0.self_attn.linear_pos"),
        ({"intermediate_size": 16}, "ffn1.intermediate_dense"),
    ],
)
def test_weights_that_do_not_fit_are_refused_not_left_random(folder: Path, tmp_path: Path, change: dict,
                                                              message: str) -> None:  # fmt: skip
    w2v, stats = _copy(folder, tmp_path)
    config = json.loads((w2v / "config.json").read_text()) | change
    (w2v / "config.json").write_text(json.dumps(config))
    with pytest.raises(VoxDeskError, match=message) as err:
        SemanticEncoder(w2v, stats)
    assert "\n" not in str(err.value)


def test_stats_of_another_shape_are_named(folder: Path, tmp_path: Path) -> None:
    bad = tmp_path / "stats.pt"
    torch.save({"mean": torch.zeros(768), "var": torch.ones(768)}, bad)
    with pytest.raises(VoxDeskError, match="stats.pt .* mean and variance"):
        SemanticEncoder(folder / "hf_cache" / "w2v-bert-2.0", bad)
