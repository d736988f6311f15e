"""The IndexTTS-2.5 model shapes VoxDesk knows: ``config.yaml`` trees as plain data.

``PRESETS[name]`` is the mapping the official ``IndexTTS2`` reads from ``config.yaml``
(``OmegaConf.load``): ``gpt`` -> ``UnifiedVoice(**gpt, spk_cond_mode="campplus")``,
``semantic_codec`` -> ``EnhancedCodec(**sc, cfg=sc)``, ``s2mel`` -> ``MyModel(s2mel)`` and the
mel settings, plus the file names and the emotion row counts (docs/indextts_plan.md section 2).
``BIGVGAN[name]`` is the ``hf_cache/bigvgan/config.json`` that goes with it (the official code
takes the vocoder from that folder, not from ``config.yaml``).

- ``indextts25-tiny``: random test models. Every network keeps two layers or blocks so each code
  path runs, and every width is small, except what the official code hard-codes: the w2v-BERT
  width 1024 (the emotion conformer's input, its perceiver's width, ``emovec_layer``, the length
  regulator's input and so the codec's ``hidden_size``), CAMPPlus (fixed 80 -> 192) and the mel
  settings BigVGAN's 256x upsampling implies. Its mel vocabulary is 1024 codes (start 1024, stop
  1025) instead of 8192 so a random GPT can stop; ``number_text_tokens`` leaves room for a tiny
  tiktoken vocabulary of up to 727 mergeable ranks plus the 1673 special tokens the official
  tokenizer registers (ids < 2400).
- ``indextts25``: the released model's shapes, for benchmarks with random weights. The IndexTTS-2
  ``config.yaml`` (published with IndexTeam/IndexTTS-2) with what the 2.5 code reads; see the notes
  in ``_REAL`` for what is taken from third-party descriptions of the 2.5 release.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from app.errors import VoxDeskError

TINY = "indextts25-tiny"
REAL = "indextts25"
W2V_WIDTH = 1024  # hard-coded by the official code (model_v2.py:356,375,381,392)
SPK_DIM = 192  # CAMPPlus embedding size, hard-coded (infer_v2_5.py:218)

_MEL = {
    "sr": 22050,
    "spect_params": {"n_fft": 1024, "win_length": 1024, "hop_length": 256, "n_mels": 80, "fmin": 0,
                     "fmax": "None"},
}  # fmt: skip

_FILES = {
    "gpt_checkpoint": "gpt.pth",
    "w2v_stat": "wav2vec2bert_stats.pt",
    "s2mel_checkpoint": "s2mel.pth",
    "emo_matrix": "feat2.pt",
    "spk_matrix": "feat1.pt",
}


def _gpt(*, dim: int, layers: int, heads: int, text_tokens: int, mel_codes: int,
         emo: dict[str, Any], cond: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    return {
        "model_dim": dim,
        "max_mel_tokens": 1815,
        "max_text_tokens": 600,
        "heads": heads,
        "use_mel_codes_as_input": True,
        "mel_length_compression": 1024,
        "layers": layers,
        "number_text_tokens": text_tokens,
        "number_mel_codes": mel_codes,
        "start_mel_token": mel_codes - 2,
        "stop_mel_token": mel_codes - 1,
        "start_text_token": 0,
        "stop_text_token": 1,
        "train_solo_embeddings": False,
        # unused in campplus mode (no speaker conformer/perceiver is built), kept as published
        "condition_type": "conformer_perceiver",
        "condition_module": cond,
        "emo_condition_module": emo,
    }


def _s2mel(*, channels: int, dit_heads: int, dit_depth: int, wavenet_layers: int,
           codebook: int) -> dict[str, Any]:  # fmt: skip
    return {
        "preprocess_params": copy.deepcopy(_MEL),
        "dit_type": "DiT",
        "reg_loss_type": "l1",
        "style_encoder": {"dim": SPK_DIM},
        "length_regulator": {
            "channels": channels,
            "is_discrete": False,
            "in_channels": W2V_WIDTH,
            "content_codebook_size": codebook,
            "sampling_ratios": [1, 1, 1, 1],
            "vector_quantize": False,
            "n_codebooks": 1,
            "quantizer_dropout": 0.0,
            "f0_condition": False,
            "n_f0_bins": 512,
        },
        "DiT": {
            "hidden_dim": channels,
            "num_heads": dit_heads,
            "depth": dit_depth,
            "class_dropout_prob": 0.1,
            "block_size": 8192,
            "in_channels": 80,
            "style_condition": True,
            "final_layer_type": "wavenet",
            "target": "mel",
            "content_dim": channels,
            "content_codebook_size": 1024,
            "content_type": "discrete",
            "f0_condition": False,
            "n_f0_bins": 512,
            "content_codebooks": 1,
            "is_causal": False,
            "long_skip_connection": True,
            "zero_prompt_speech_token": False,
            "time_as_token": False,
            "style_as_token": False,
            "uvit_skip_connection": True,
            "add_resblock_in_transformer": False,
        },
        "wavenet": {
            "hidden_dim": channels,
            "num_layers": wavenet_layers,
            "kernel_size": 5,
            "dilation_rate": 1,
            "p_dropout": 0.2,
            "style_condition": True,
        },
    }


def _tree(*, gpt: dict[str, Any], codec: dict[str, Any], s2mel: dict[str, Any], emo_num: list[int],
          qwen: str) -> dict[str, Any]:  # fmt: skip
    return {
        "dataset": {"bpe_model": "multilingual_zh_ja_yue_char_del.tiktoken", "sample_rate": 24000},
        "gpt": gpt,
        "semantic_codec": codec,
        "s2mel": s2mel,
        **_FILES,
        "emo_num": emo_num,
        "qwen_emo_path": qwen,
        "vocoder": {"type": "bigvgan", "name": "nvidia/bigvgan_v2_22khz_80band_256x"},
        "version": 2.5,
    }


_TINY = _tree(
    gpt=_gpt(
        dim=32, layers=2, heads=2, text_tokens=2400, mel_codes=1026,
        # perceiver_mult sets the emotion perceiver's feed-forward width int(1024 * mult * 2 / 3):
        # 0.125 keeps it at 85 (the perceiver itself is 1024 wide, hard-coded)
        emo={"output_size": 32, "linear_units": 64, "attention_heads": 2, "num_blocks": 2,
             "input_layer": "conv2d2", "perceiver_mult": 0.125},
        cond={"output_size": 32, "linear_units": 64, "attention_heads": 2, "num_blocks": 2,
              "input_layer": "conv2d2", "perceiver_mult": 2},
    ),
    codec={"codebook_size": 1024, "hidden_size": W2V_WIDTH, "codebook_dim": 8, "vocos_dim": 32,
           "vocos_intermediate_dim": 64, "vocos_num_layers": 2, "num_quantizers": 1,
           "downsample_scale": 2},
    s2mel=_s2mel(channels=32, dit_heads=2, dit_depth=2, wavenet_layers=2, codebook=64),
    emo_num=[2, 3, 1, 2, 2, 1, 3, 2],
    qwen="qwen0.6bemo4-merge/",
)  # fmt: skip

# The IndexTTS-2 config.yaml as published, with the 2.5 changes. Guessed or taken from third-party
# descriptions of the 2.5 release (not from its config.yaml, not readable here): number_text_tokens
# 60509 (58836 tiktoken ranks + 1673 specials; checkpoints reportedly hold 60510 text rows),
# the tokenizer file name under dataset.bpe_model, num_quantizers 1 and downsample_scale 2 (the 2.5
# codec runs at 25 Hz), version 2.5. Everything else is IndexTTS-2's.
_REAL = _tree(
    gpt=_gpt(
        dim=1280, layers=24, heads=20, text_tokens=60509, mel_codes=8194,
        emo={"output_size": 512, "linear_units": 1024, "attention_heads": 4, "num_blocks": 4,
             "input_layer": "conv2d2", "perceiver_mult": 2},
        cond={"output_size": 512, "linear_units": 2048, "attention_heads": 8, "num_blocks": 6,
              "input_layer": "conv2d2", "perceiver_mult": 2},
    ),
    codec={"codebook_size": 8192, "hidden_size": W2V_WIDTH, "codebook_dim": 8, "vocos_dim": 384,
           "vocos_intermediate_dim": 2048, "vocos_num_layers": 12, "num_quantizers": 1,
           "downsample_scale": 2},
    s2mel=_s2mel(channels=512, dit_heads=8, dit_depth=13, wavenet_layers=8, codebook=2048),
    emo_num=[3, 17, 2, 8, 4, 5, 10, 24],
    qwen="qwen0.6bemo4-merge/",
)  # fmt: skip

PRESETS: dict[str, dict[str, Any]] = {TINY: _TINY, REAL: _REAL}


def _bigvgan(*, channels: int, rates: list[int], kernels: list[int]) -> dict[str, Any]:
    return {
        "resblock": "1",
        "upsample_rates": rates,
        "upsample_kernel_sizes": kernels,
        "upsample_initial_channel": channels,
        "resblock_kernel_sizes": [3, 7, 11],
        "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        "use_tanh_at_final": False,
        "use_bias_at_final": False,
        "activation": "snakebeta",
        "snake_logscale": True,
        "num_mels": 80,
        "n_fft": 1024,
        "hop_size": 256,
        "win_size": 1024,
        "sampling_rate": 22050,
        "fmin": 0,
        "fmax": None,
    }


# nvidia/bigvgan_v2_22khz_80band_256x's generator settings (its config.json also holds training
# entries the generator does not read); the tiny one keeps 256x in four stages of 32 channels.
BIGVGAN: dict[str, dict[str, Any]] = {
    TINY: _bigvgan(channels=32, rates=[4, 4, 4, 4], kernels=[8, 8, 8, 8]),
    REAL: _bigvgan(channels=1536, rates=[4, 4, 2, 2, 2, 2], kernels=[8, 8, 4, 4, 4, 4]),
}


def preset(name: str) -> dict[str, Any]:
    """A deep copy of the tree called ``name``, or a one-line error naming the known ones."""
    if name not in PRESETS:
        raise VoxDeskError(f"Unknown IndexTTS preset '{name}': use {', '.join(PRESETS)}.")
    return copy.deepcopy(PRESETS[name])


class _Dumper(yaml.SafeDumper):
    """Block mappings, and lists of plain values on one line (``emo_num: [3, 17, ...]``)."""

    def represent_list(self, data: list[Any]) -> yaml.Node:
        flat = all(not isinstance(v, (dict, list)) for v in data)
        return self.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _Dumper.represent_list)


def yaml_text(tree: dict[str, Any]) -> str:
    """``tree`` as the plain YAML of a ``config.yaml`` (keys in the tree's order, no tags)."""
    header = "# IndexTTS-2.5 config.yaml written by VoxDesk (app/models/indextts/presets.py)\n"
    return header + yaml.dump(tree, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                              default_flow_style=False, width=110)  # fmt: skip
