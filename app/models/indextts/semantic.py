"""w2v-BERT 2.0 semantic features of a 16 kHz clip, as IndexTTS-2.5's ``get_emb`` makes them.

The official code (``infer_v2_5.py`` ``get_emb``) runs transformers' ``SeamlessM4TFeatureExtractor``
and ``Wav2Vec2BertModel`` from ``hf_cache/w2v-bert-2.0`` and keeps ``hidden_states[17]``,
normalised with the mean and variance of ``wav2vec2bert_stats.pt``. Both are library classes, so
they are used as they are; only what hidden state 17 needs is loaded: the model is built with 17
encoder layers (hidden state 17 is the output of the 17th layer; the encoder adds no final norm),
and the weights of the later layers are never read (tests/test_indextts_semantic.py checks the
result equals the untruncated model's).

One quirk changes no feature but does change the random numbers drawn later: transformers'
encoder draws ``torch.rand([])`` from the global torch generator once per layer and call
(LayerDrop, drawn even in eval mode). The official code therefore consumes
``num_hidden_layers`` (24 for the released model) draws per ``get_emb``: ``infer`` calls it twice
for a new speaker clip (``spk_cond_emb`` and the unused ``S_ref``) and once for a new emotion
clip (none for a clip it has cached), all before the GPT. :meth:`features` runs without touching
the global generator; :attr:`SemanticEncoder.official_draws` says how many draws one official
call made, for a runner that keeps its generator state-equal.

:func:`write_tiny_w2v` writes a small but valid folder for tests.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app import atomic
from app.atomic import atomic_path
from app.errors import VoxDeskError
from app.models.common.hf_quiet import quiet_transformers

log = logging.getLogger(__name__)

WIDTH = 1024  # hard-coded downstream (the emotion conformer, the length regulator, the stats)
LAYER = 17  # infer_v2_5.py get_emb: hidden_states[17]
RATE = 16000
FILES = ("config.json", "preprocessor_config.json", "model.safetensors")
_LATER_LAYER = re.compile(r"encoder\.layers\.(\d+)\.")

# facebook/w2v-bert-2.0's preprocessor_config.json
PREPROCESSOR = {
    "feature_extractor_type": "SeamlessM4TFeatureExtractor",
    "feature_size": 80,
    "num_mel_bins": 80,
    "padding_side": "right",
    "padding_value": 1,
    "processor_class": "Wav2Vec2BertProcessor",
    "return_attention_mask": True,
    "sampling_rate": 16000,
    "stride": 2,
}

# facebook/w2v-bert-2.0's config.json (transformers' Wav2Vec2BertConfig defaults are taken from it)
CONFIG: dict[str, Any] = {
    "activation_dropout": 0.0, "adapter_act": "relu", "adapter_kernel_size": 3, "adapter_stride": 2,
    "add_adapter": False, "apply_spec_augment": False, "architectures": ["Wav2Vec2BertModel"],
    "attention_dropout": 0.0, "bos_token_id": 1, "classifier_proj_size": 768, "codevector_dim": 768,
    "conformer_conv_dropout": 0.1, "contrastive_logits_temperature": 0.1, "conv_depthwise_kernel_size": 31,
    "ctc_loss_reduction": "sum", "ctc_zero_infinity": False, "diversity_loss_weight": 0.1,
    "eos_token_id": 2, "feat_proj_dropout": 0.0, "feat_quantizer_dropout": 0.0,
    "feature_projection_input_dim": 160, "final_dropout": 0.1, "hidden_act": "swish",
    "hidden_dropout": 0.0, "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 4096,
    "layer_norm_eps": 1e-05, "layerdrop": 0.1, "left_max_position_embeddings": 64,
    "mask_feature_length": 10, "mask_feature_min_masks": 0, "mask_feature_prob": 0.0,
    "mask_time_length": 10, "mask_time_min_masks": 2, "mask_time_prob": 0.05,
    "max_source_positions": 5000, "model_type": "wav2vec2-bert", "num_adapter_layers": 1,
    "num_attention_heads": 16, "num_codevector_groups": 2, "num_codevectors_per_group": 320,
    "num_hidden_layers": 24, "num_negatives": 100, "output_hidden_size": 1024, "pad_token_id": 0,
    "position_embeddings_type": "relative_key", "proj_codevector_dim": 768,
    "right_max_position_embeddings": 8, "rotary_embedding_base": 10000,
    "tdnn_dilation": [1, 2, 3, 1, 1], "tdnn_dim": [512, 512, 512, 512, 1500], "tdnn_kernel": [5, 3, 3, 1, 1],
    "torch_dtype": "float32", "use_intermediate_ffn_before_adapter": False,
    "use_weighted_layer_sum": False, "vocab_size": None, "xvector_output_dim": 512,
}  # fmt: skip

# The tiny folder: the width and the layers hidden state 17 needs (one more, so that a test sees
# the truncation drop something), every other size as small as transformers builds it.
TINY = {"num_hidden_layers": LAYER + 1, "intermediate_size": 8, "conv_depthwise_kernel_size": 3}


def _not_w2v(folder: Path, why: str) -> VoxDeskError:
    return VoxDeskError(f"{folder} is not a w2v-BERT 2.0 folder VoxDesk can use ({why}): "
                        "download the IndexTTS model folder again.")  # fmt: skip


def _read_config(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise VoxDeskError(f"The w2v-BERT folder {folder} is missing: download the IndexTTS model "
                           "folder again.")  # fmt: skip
    for name in FILES:
        if not (folder / name).is_file():
            raise _not_w2v(folder, f"{name} is missing")
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        raise _not_w2v(folder, "config.json is not JSON") from None
    if not isinstance(config, dict) or config.get("model_type") != "wav2vec2-bert":
        raise _not_w2v(folder, "config.json does not describe a wav2vec2-bert model")
    layers = config.get("num_hidden_layers")
    if config.get("hidden_size") != WIDTH or type(layers) is not int or layers < LAYER:
        raise _not_w2v(folder, f"IndexTTS needs width {WIDTH} and at least {LAYER} layers")
    return config


def _load_stats(path: Path) -> tuple[torch.Tensor, torch.Tensor]:
    from app.models.indextts.weights import load_torch

    stats = load_torch(path)
    parts = (stats.get("mean"), stats.get("var")) if isinstance(stats, dict) else (None, None)
    if not all(isinstance(t, torch.Tensor) and t.shape == (WIDTH,) for t in parts):
        raise VoxDeskError(f"{path.name} in {path.parent} does not hold the w2v-BERT mean and variance "
                           f"({WIDTH} values each): download the IndexTTS model folder again.")  # fmt: skip
    mean, var = (t.float() for t in parts)
    return mean, torch.sqrt(var)


def _later_layer(key: str) -> bool:
    match = _LATER_LAYER.search(key)
    return match is not None and int(match.group(1)) >= LAYER


def _load_model(folder: Path) -> tuple[Any, torch.nn.Module]:
    """The feature extractor and the model built with :data:`LAYER` layers, its weights checked."""
    from transformers import SeamlessM4TFeatureExtractor, Wav2Vec2BertConfig, Wav2Vec2BertModel

    try:
        with quiet_transformers():
            extractor = SeamlessM4TFeatureExtractor.from_pretrained(str(folder), local_files_only=True)
            cfg = Wav2Vec2BertConfig.from_pretrained(str(folder), local_files_only=True)
            cfg.num_hidden_layers = LAYER
            model, info = Wav2Vec2BertModel.from_pretrained(
                str(folder), config=cfg, local_files_only=True, use_safetensors=True,
                dtype=torch.float32, output_loading_info=True, ignore_mismatched_sizes=True)  # fmt: skip
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        log.exception("w2v-BERT folder %s", folder)
        raise _not_w2v(folder, str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__) from None
    # a mis-shaped weight is reported (and left random) like a missing one: both are refused
    mismatched = sorted(m[0] if isinstance(m, tuple) else str(m) for m in info.get("mismatched_keys", ()))
    missing = mismatched + sorted(info.get("missing_keys", ()))
    if missing:
        raise _not_w2v(folder, f"model.safetensors lacks or mis-shapes {missing[0]}")
    extra = [k for k in info.get("unexpected_keys", ()) if not _later_layer(k)]
    if extra:
        log.warning("%s: %d weights not used by Wav2Vec2BertModel, e.g. %s", folder, len(extra), extra[0])
    return extractor, model.eval()


class SemanticEncoder:
    """The feature extractor and the first 17 layers of w2v-BERT 2.0, plus the stats."""

    def __init__(self, w2v_dir: str | Path, stats_path: str | Path,
                 device: str | torch.device = "cpu") -> None:  # fmt: skip
        folder = Path(w2v_dir)
        config = _read_config(folder)
        self.official_draws: int = config["num_hidden_layers"]
        mean, std = _load_stats(Path(stats_path))
        self.extractor, model = _load_model(folder)
        self.model = model.to(device)
        self.mean, self.std = mean.to(device), std.to(device)

    @property
    def device(self) -> torch.device:
        return self.mean.device

    @torch.inference_mode()
    def features(self, audio_16k: np.ndarray) -> torch.Tensor:
        """Normalised hidden state 17 [1, T, 1024] (T = samples // 320) of mono 16 kHz float audio."""
        samples = np.asarray(audio_16k, dtype=np.float32).reshape(-1)
        inputs = self.extractor(samples, sampling_rate=RATE, return_tensors="pt")
        with torch.random.fork_rng(devices=[]):  # LayerDrop's draws (see the module docstring)
            out = self.model(input_features=inputs["input_features"].to(self.device),
                             attention_mask=inputs["attention_mask"].to(self.device),
                             output_hidden_states=True)  # fmt: skip
        return (out.hidden_states[LAYER] - self.mean) / self.std


# ---- the tiny folder ---------------------------------------------------------------------------
# primes above twice the largest key: 2 M values in the tiny model, 4 M (an FFN matrix) in the full one
_POOL = {False: 4_194_301, True: 8_388_617}


class _Pool:
    """Random float16 values with unit-scale activations (norm gains near 1, small biases, weights
    scaled by 1/sqrt(fan-in)), each key cut from one draw of normal values at an offset of its own:
    drawing all 133 M values afresh takes seconds, copying them a fraction of that."""

    def __init__(self, seed: int, size: int) -> None:
        self.values = torch.randn(size, generator=torch.Generator().manual_seed(seed))
        self.scaled: dict[tuple[float, float], torch.Tensor] = {}

    def take(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        leaf = name.rsplit(".", 1)[-1]
        if "norm" in name and leaf == "weight":
            scale, shift = 0.1, 1.0
        elif leaf == "bias" or name == "masked_spec_embed":
            scale, shift = 0.05, 0.0
        elif "distance_embedding" in name:
            scale, shift = 0.1, 0.0
        else:
            scale, shift = 1 / max(1, torch.Size(shape[1:]).numel()) ** 0.5, 0.0
        if (scale, shift) not in self.scaled:
            self.scaled[scale, shift] = (shift + scale * self.values).to(torch.float16)
        n = torch.Size(shape).numel()
        start = zlib.crc32(name.encode()) % (self.values.numel() - n)
        return self.scaled[scale, shift][start : start + n].clone().reshape(shape)


def w2v_config(full: bool = False) -> dict[str, Any]:
    """The ``config.json`` written: the released model's (``full``) or the tiny one (:data:`TINY`)."""
    return dict(CONFIG) if full else CONFIG | TINY


def write_tiny_w2v(folder: str | Path, seed: int = 0, full: bool = False) -> Path:
    """A random w2v-BERT 2.0 folder that transformers loads as the real one: the real
    ``preprocessor_config.json``, :func:`w2v_config` (``full``: the released sizes, 580 M values,
    for benchmarks) and ``model.safetensors`` stored as float16 (loaded as float32) to halve its
    size. Returns ``folder``."""
    from safetensors.torch import save_file
    from transformers import Wav2Vec2BertConfig, Wav2Vec2BertModel

    out = Path(folder)
    config = w2v_config(full)
    with torch.device("meta"):
        model = Wav2Vec2BertModel(Wav2Vec2BertConfig(**config))
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    pool = _Pool(seed, _POOL[full])
    weights = {k: pool.take(k, s) for k, s in shapes.items()}
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "model.safetensors") as tmp:
        save_file(weights, str(tmp), metadata={"format": "pt"})
    atomic.write_text(out / "config.json", json.dumps(config, indent=2) + "\n")
    atomic.write_text(out / "preprocessor_config.json", json.dumps(PREPROCESSOR, indent=2) + "\n")
    return out
