"""The tiny CosyVoice2 / CosyVoice3 models: their Qwen2 sizes and their yaml text.

The yaml follows the released ``cosyvoice2.yaml`` / ``cosyvoice3.yaml`` (the same classes, keys
and construction seeds) with the inference entries only and small widths and depths; the
official loader builds the official modules from it (tools/cosyvoice_goldens.py), and
:mod:`app.models.cosyvoice.checkpoint` writes the weights that fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import VoxDeskError


@dataclass(frozen=True)
class Preset:
    """One tiny model: its family, the Qwen2 dimensions and the yaml body (flow and hift)."""

    family: str  # "cosyvoice2" | "cosyvoice3"
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    body: str
    label: str = "Tiny random {family} for tests"  # the yaml's first comment

    @property
    def yaml_name(self) -> str:
        return f"{self.family}.yaml"

    @property
    def tokenizer_onnx(self) -> str:
        return "speech_tokenizer_v2.onnx" if self.family == "cosyvoice2" else "speech_tokenizer_v3.onnx"


_HEAD = """\
# {label}, written by VoxDesk (app/models/cosyvoice/checkpoint.py).
# set random seed, so that you may reproduce your result.
__set_seed1: !apply:random.seed [1986]
__set_seed2: !apply:numpy.random.seed [1986]
__set_seed3: !apply:torch.manual_seed [1986]
__set_seed4: !apply:torch.cuda.manual_seed_all [1986]

# fixed params
sample_rate: 24000
llm_input_size: {hidden}
llm_output_size: {hidden}
spk_embed_dim: 192
qwen_pretrain_path: ''
token_frame_rate: 25
token_mel_ratio: 2

# stream related params
chunk_size: 25 # streaming inference chunk size, in token
num_decoding_left_chunks: -1 # streaming inference flow decoder left chunk size, <0 means use all left chunks

llm: !new:cosyvoice.llm.llm.{lm_class}
    llm_input_size: !ref <llm_input_size>
    llm_output_size: !ref <llm_output_size>
    speech_token_size: 6561
    length_normalized_loss: True
    lsm_weight: 0
    mix_ratio: [5, 15]
    llm: !new:cosyvoice.llm.llm.Qwen2Encoder
        pretrain_path: !ref <qwen_pretrain_path>
    sampling: !name:cosyvoice.utils.common.ras_sampling
        top_p: 0.8
        top_k: 25
        win_size: 10
        tau_r: 0.1
"""

_CFM = """\
    decoder: !new:cosyvoice.flow.flow_matching.CausalConditionalCFM
        in_channels: 240
        n_spks: 1
        spk_emb_dim: 80
        cfm_params: !new:omegaconf.DictConfig
            content:
                sigma_min: 1e-06
                solver: 'euler'
                t_scheduler: 'cosine'
                training_cfg_rate: 0.2
                inference_cfg_rate: 0.7
                reg_loss_type: 'l1'
"""

_HIFT = """\
hift: !new:cosyvoice.hifigan.generator.{hift_class}
    in_channels: 80
    base_channels: {base}
    nb_harmonics: 8
    sampling_rate: !ref <sample_rate>
    nsf_alpha: 0.1
    nsf_sigma: 0.003
    nsf_voiced_threshold: 10
    upsample_rates: [8, 5, 3]
    upsample_kernel_sizes: [16, 11, 7]
    istft_params:
        n_fft: 16
        hop_len: 4
    resblock_kernel_sizes: [3, 7, 11]
    resblock_dilation_sizes: [[1, 3, 5], [1, 3, 5], [1, 3, 5]]
    source_resblock_kernel_sizes: [7, 7, 11]
    source_resblock_dilation_sizes: [[1, 3, 5], [1, 3, 5], [1, 3, 5]]
    lrelu_slope: 0.1
    audio_limit: 0.99
{extra}    f0_predictor: !new:cosyvoice.hifigan.f0_predictor.{f0_class}
        num_class: 1
        in_channels: 80
        cond_channels: {base}
"""

_TAIL = """\
# processor functions
get_tokenizer: !name:cosyvoice.tokenizer.tokenizer.get_qwen_tokenizer
    token_path: !ref <qwen_pretrain_path>
    skip_special_tokens: True
{version}allowed_special: 'all'
feat_extractor: !name:matcha.utils.audio.mel_spectrogram
    n_fft: 1920
    num_mels: 80
    sampling_rate: !ref <sample_rate>
    hop_size: 480
    win_size: 1920
    fmin: 0
    fmax: {fmax}
    center: False
"""

# The conformer encoder of CosyVoice2 is 512 wide: upsample_encoder.py hard-codes 512 channels for
# its look-ahead and upsampling layers, so only its depth, heads and feed-forward width shrink.
_FLOW_V2 = """\
flow: !new:cosyvoice.flow.flow.CausalMaskedDiffWithXvec
    input_size: 512
    output_size: 80
    spk_embed_dim: !ref <spk_embed_dim>
    output_type: 'mel'
    vocab_size: 6561
    input_frame_rate: !ref <token_frame_rate>
    only_mask_loss: True
    token_mel_ratio: !ref <token_mel_ratio>
    pre_lookahead_len: 3
    encoder: !new:cosyvoice.transformer.upsample_encoder.UpsampleConformerEncoder
        output_size: 512
        attention_heads: 2
        linear_units: 64
        num_blocks: 1
        dropout_rate: 0.1
        positional_dropout_rate: 0.1
        attention_dropout_rate: 0.1
        normalize_before: True
        input_layer: 'linear'
        pos_enc_layer_type: 'rel_pos_espnet'
        selfattention_layer_type: 'rel_selfattn'
        input_size: 512
        use_cnn_module: False
        macaron_style: False
        static_chunk_size: !ref <chunk_size>
{cfm}        estimator: !new:cosyvoice.flow.decoder.CausalConditionalDecoder
            in_channels: 320
            out_channels: 80
            channels: [32]
            dropout: 0.0
            attention_head_dim: 16
            n_blocks: 1
            num_mid_blocks: 1
            num_heads: 2
            act_fn: 'gelu'
            static_chunk_size: !ref <chunk_size> * <token_mel_ratio>
            num_decoding_left_chunks: !ref <num_decoding_left_chunks>
"""

_FLOW_V3 = """\
flow: !new:cosyvoice.flow.flow.CausalMaskedDiffWithDiT
    input_size: 80
    output_size: 80
    spk_embed_dim: !ref <spk_embed_dim>
    output_type: 'mel'
    vocab_size: 6561
    input_frame_rate: !ref <token_frame_rate>
    only_mask_loss: True
    token_mel_ratio: !ref <token_mel_ratio>
    pre_lookahead_len: 3
    pre_lookahead_layer: !new:cosyvoice.transformer.upsample_encoder.PreLookaheadLayer
        in_channels: 80
        channels: {pre}
        pre_lookahead_len: 3
{cfm}        estimator: !new:cosyvoice.flow.DiT.dit.DiT
            dim: {dim}
            depth: {depth}
            heads: {heads}
            dim_head: {dim_head}
            ff_mult: 2
            mel_dim: 80
            mu_dim: 80
            spk_dim: 80
            out_channels: 80
            static_chunk_size: !ref <chunk_size> * <token_mel_ratio>
            num_decoding_left_chunks: !ref <num_decoding_left_chunks>
"""

_TINY_DIT = dict(pre=32, dim=32, depth=2, heads=2, dim_head=16)
_V3_HIFT = dict(hift_class="CausalHiFTGenerator", extra="    conv_pre_look_right: 4\n",
                f0_class="CausalConvRNNF0Predictor")

PRESETS: dict[str, Preset] = {
    "cosyvoice2-tiny": Preset(
        "cosyvoice2", hidden=32, layers=2, heads=4, kv_heads=2, ffn=64,
        body=_FLOW_V2.format(cfm=_CFM)
        + _HIFT.format(hift_class="HiFTGenerator", extra="", f0_class="ConvRNNF0Predictor", base=16),
    ),
    "cosyvoice3-tiny": Preset(
        "cosyvoice3", hidden=32, layers=2, heads=4, kv_heads=2, ffn=64,
        body=_FLOW_V3.format(cfm=_CFM, **_TINY_DIT) + _HIFT.format(**_V3_HIFT, base=16),
    ),
    # Fun-CosyVoice3-0.5B-2512's real sizes (random weights, for benchmarks): Qwen2-0.5B, and the
    # flow and vocoder of the official examples/libritts/cosyvoice3/conf/cosyvoice3.yaml
    "cosyvoice3-0.5b": Preset(
        "cosyvoice3", hidden=896, layers=24, heads=14, kv_heads=2, ffn=4864,
        body=_FLOW_V3.format(cfm=_CFM, pre=1024, dim=1024, depth=22, heads=16, dim_head=64)
        + _HIFT.format(**_V3_HIFT, base=512),
        label="Random cosyvoice3 of Fun-CosyVoice3-0.5B-2512's sizes, for benchmarks",
    ),
}  # fmt: skip


def preset(name: str) -> Preset:
    """The preset called ``name``, or a one-line error naming the known ones."""
    if name not in PRESETS:
        raise VoxDeskError(f"Unknown CosyVoice preset '{name}': use {', '.join(PRESETS)}.")
    return PRESETS[name]


def yaml_text(p: Preset) -> str:
    """The HyperPyYAML text of ``p``: the layout of the released yaml, inference keys only."""
    v3 = p.family == "cosyvoice3"
    label, lm_class = p.label.format(family=p.family), "CosyVoice3LM" if v3 else "Qwen2LM"
    head = _HEAD.format(label=label, family=p.family, hidden=p.hidden, lm_class=lm_class)
    tail = _TAIL.format(version="    version: cosyvoice3\n" if v3 else "", fmax="null" if v3 else 8000)
    return f"{head}\n{p.body}\n{tail}"
