"""Write randomly initialised CosyVoice2 / CosyVoice3 folders in the official layout, for tests.

A folder holds what the released ``CosyVoice2-0.5B`` / ``Fun-CosyVoice3-0.5B-2512`` folders hold::

    cosyvoice2.yaml | cosyvoice3.yaml    HyperPyYAML, the official loader's text (tiny dimensions)
    llm.pt  flow.pt  hift.pt             plain tensor dicts (load with weights_only=True)
    campplus.onnx                        speaker embedding: "input" [B, T, 80] -> "pred" [B, 192]
    speech_tokenizer_v2.onnx | _v3.onnx  "feats" [1, 128, T] + "feats_length" [1] -> "indices" [1, T/4]
    CosyVoice-BlankEN/                   Qwen2 config.json, model.safetensors, vocab.json, merges.txt,
                                         tokenizer_config.json (<|endoftext|> = 151643, as in Qwen2)
    config.json                          "{}", as the released folders have

The state-dict key names and shapes of ``flow.pt`` and ``hift.pt`` come from
``official_shapes.json`` beside this file: the official modules' ``state_dict()`` for the yaml
of :mod:`app.models.cosyvoice.presets`, recorded by ``tools/cosyvoice_goldens.py shapes`` (a
key or shape that differs makes the official ``load_state_dict(strict=True)`` fail, so every
golden run checks the recording).
``llm.pt`` follows from the Qwen2 dimensions. The two small ``.onnx`` graphs are random
projections with the official input/output names, not the real networks: a parity test feeds
both implementations the same files, so only their names, types and shapes must be the real ones.

The Qwen vocabulary keeps the real size (151936 rows) because CosyVoice3's code asserts the id of
``<|endofprompt|>`` (151646, the first token the official tokenizer adds after Qwen2's three).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from app import atomic
from app.atomic import atomic_path
from app.errors import VoxDeskError
from app.models.cosyvoice.presets import PRESETS, Preset, preset, yaml_text

SHAPES_FILE = Path(__file__).with_name("official_shapes.json")
QWEN_VOCAB = 151936
ENDOFTEXT = 151643  # <|endoftext|>, then <|im_start|> 151644 and <|im_end|> 151645, as in Qwen2
SPEECH_TOKENS = 6561
SPK_DIM = 192
MODULATION_GAIN = 0.1  # of CosyVoice3's DiT modulation weights: see _condition_flow


# ---- the Qwen2 text model -------------------------------------------------------------------
def qwen_config(p: Preset) -> dict[str, Any]:
    """``CosyVoice-BlankEN/config.json``: a Qwen2ForCausalLM of the preset's size."""
    return {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
        "hidden_size": p.hidden, "intermediate_size": p.ffn, "num_hidden_layers": p.layers,
        "num_attention_heads": p.heads, "num_key_value_heads": p.kv_heads,
        "max_position_embeddings": 32768, "max_window_layers": p.layers, "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0, "sliding_window": 32768, "use_sliding_window": False,
        "tie_word_embeddings": True, "vocab_size": QWEN_VOCAB, "bos_token_id": ENDOFTEXT,
        "eos_token_id": ENDOFTEXT, "torch_dtype": "float32", "attention_dropout": 0.0,
        "initializer_range": 0.02, "use_cache": True,
    }  # fmt: skip


def qwen_shapes(p: Preset) -> dict[str, tuple[int, ...]]:
    """Key -> shape of ``Qwen2ForCausalLM.state_dict()`` (``model.*`` and the tied ``lm_head``)."""
    head_dim = p.hidden // p.heads
    kv = p.kv_heads * head_dim
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (QWEN_VOCAB, p.hidden)}
    for i in range(p.layers):
        pre = f"model.layers.{i}."
        out |= {
            pre + "self_attn.q_proj.weight": (p.hidden, p.hidden), pre + "self_attn.q_proj.bias": (p.hidden,),
            pre + "self_attn.k_proj.weight": (kv, p.hidden), pre + "self_attn.k_proj.bias": (kv,),
            pre + "self_attn.v_proj.weight": (kv, p.hidden), pre + "self_attn.v_proj.bias": (kv,),
            pre + "self_attn.o_proj.weight": (p.hidden, p.hidden),
            pre + "mlp.gate_proj.weight": (p.ffn, p.hidden), pre + "mlp.up_proj.weight": (p.ffn, p.hidden),
            pre + "mlp.down_proj.weight": (p.hidden, p.ffn),
            pre + "input_layernorm.weight": (p.hidden,), pre + "post_attention_layernorm.weight": (p.hidden,),
        }  # fmt: skip
    out["model.norm.weight"] = (p.hidden,)
    return out


def llm_shapes(p: Preset) -> dict[str, tuple[int, ...]]:
    """Key -> shape of ``llm.pt``: ``Qwen2LM`` (CosyVoice2) or ``CosyVoice3LM`` (llm.py)."""
    out = {f"llm.model.{k}": s for k, s in qwen_shapes(p).items()}
    out["llm.model.lm_head.weight"] = (QWEN_VOCAB, p.hidden)
    if p.family == "cosyvoice2":  # sos/task_id rows, 3 extra speech ids (eos, ?, fill), biased head
        out |= {"llm_embedding.weight": (2, p.hidden), "llm_decoder.weight": (SPEECH_TOKENS + 3, p.hidden),
                "llm_decoder.bias": (SPEECH_TOKENS + 3,),
                "speech_embedding.weight": (SPEECH_TOKENS + 3, p.hidden)}  # fmt: skip
    else:  # 200 extra speech ids (sos, eos, task_id, fill, ...), head without bias
        out |= {"llm_decoder.weight": (SPEECH_TOKENS + 200, p.hidden),
                "speech_embedding.weight": (SPEECH_TOKENS + 200, p.hidden)}  # fmt: skip
    return out


# ---- weights --------------------------------------------------------------------------------
def _init(name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Random values with unit-scale activations; norm, Snake-alpha and weight-norm gains near 1."""
    leaf = name.rsplit(".", 1)[-1]
    if (leaf == "weight" and len(shape) == 1) or leaf in ("alpha", "original0", "weight_g", "gamma"):
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)
    if leaf in ("bias", "beta"):
        return 0.05 * torch.randn(shape, generator=gen)
    if "embed" in name and len(shape) == 2:
        return torch.randn(shape, generator=gen)
    fan_in = max(1, torch.Size(shape[1:]).numel()) if len(shape) > 1 else 1
    return torch.randn(shape, generator=gen) / fan_in**0.5


def _state_dict(shapes: dict[str, tuple[int, ...]], gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {k: _init(k, s, gen) for k, s in shapes.items()}


def official_shapes(p: Preset) -> dict[str, Any]:
    """The recorded ``{"flow": {key: shape}, "hift": ..., "buffers": {key: values}}`` of ``p``."""
    try:
        table = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VoxDeskError(f"Cannot read {SHAPES_FILE} ({exc}): rerun tools/cosyvoice_goldens.py "
                           "shapes.") from None  # fmt: skip
    entry = next((e for e in table.values() if isinstance(e, dict) and e.get("yaml") == yaml_text(p)), None)
    if entry is None:
        raise VoxDeskError(f"{SHAPES_FILE} has no entry recorded for this {p.yaml_name}: rerun "
                           "tools/cosyvoice_goldens.py shapes.")  # fmt: skip
    return entry


def _condition_flow(p: Preset, flow: dict[str, torch.Tensor]) -> None:
    """Make the random CosyVoice3 DiT well-conditioned, so goldens hold across CPUs.

    With unit-scale modulation (AdaLayerNormZero's shift, scale and gate from the time step) the
    random DiT is chaotic: a 1e-7 relative change of its input (another CPU's vector kernels)
    grew to 0.03 in the mel over the ten solver steps, past the parity tolerance. A tenth of the
    modulation weights keeps each block near the identity and the cross-CPU difference near 1e-6
    (tools/cosyvoice_goldens.py crosscheck; figures in tests/data/cosyvoice/README.md).
    """
    if p.family != "cosyvoice3":
        return
    for key in flow:
        if ".attn_norm.linear." in key or ".norm_out.linear." in key:
            flow[key] *= MODULATION_GAIN


# ---- ONNX -----------------------------------------------------------------------------------
def _onnx_bytes(
    nodes: list, inputs: list, outputs: list, weights: dict[str, torch.Tensor], name: str
) -> bytes:
    import onnx
    from onnx import helper, numpy_helper

    inits = [numpy_helper.from_array(w.numpy(), k) for k, w in weights.items()]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="voxdesk")
    model.ir_version = 8  # readable by onnxruntime >= 1.14
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def campplus_onnx(gen: torch.Generator) -> bytes:
    """A stand-in for CAM++: mean over frames of a random projection, ``input`` -> ``pred``."""
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("MatMul", ["input", "w1"], ["h"]),
        helper.make_node("Tanh", ["h"], ["t"]),
        helper.make_node("ReduceMean", ["t"], ["m"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["m", "w2"], ["pred"]),
    ]
    weights = {"w1": torch.randn(80, 64, generator=gen) / 80**0.5,
               "w2": torch.randn(64, SPK_DIM, generator=gen)}  # fmt: skip
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["B", "T", 80])]
    outputs = [helper.make_tensor_value_info("pred", TensorProto.FLOAT, ["B", SPK_DIM])]
    return _onnx_bytes(nodes, inputs, outputs, weights, "campplus")


def speech_tokenizer_onnx(gen: torch.Generator) -> bytes:
    """A stand-in for the speech tokenizer: 128-bin whisper log-mel at 100 Hz -> one token per
    4 frames (25 Hz) in [0, 6561), by a strided convolution and an arg-max over a random codebook.
    ``feats_length`` is an input, as in the official graph, but unused here."""
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Conv", ["feats", "w1"], ["h"], kernel_shape=[4], strides=[4]),
        helper.make_node("Transpose", ["h"], ["ht"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["ht", "codes"], ["scores"]),
        helper.make_node("ArgMax", ["scores"], ["indices"], axis=2, keepdims=0),
    ]
    weights = {"w1": torch.randn(16, 128, 4, generator=gen) / (128 * 4) ** 0.5,
               "codes": torch.randn(16, SPEECH_TOKENS, generator=gen)}  # fmt: skip
    inputs = [helper.make_tensor_value_info("feats", TensorProto.FLOAT, [1, 128, "T"]),
              helper.make_tensor_value_info("feats_length", TensorProto.INT32, [1])]  # fmt: skip
    outputs = [helper.make_tensor_value_info("indices", TensorProto.INT64, [1, "N"])]
    return _onnx_bytes(nodes, inputs, outputs, weights, "speech_tokenizer")


# ---- the tokenizer --------------------------------------------------------------------------
_CORPUS = [
    "Hello world, this is a small test of the CosyVoice speech model, version three.",
    "The quick brown fox jumps over the lazy dog. 1234567890 times!",
    "你好世界，今天天气很好。我们一起去北京吃饭吧！希望你以后能够做的比我还好呦。",
    "收到好友从远方寄来的生日礼物，那份意外的惊喜与深深的祝福让我心中充满了甜蜜的快乐。",
    "You are a helpful assistant. Please speak as fast as you can. 请用广东话表达。",
]


def tokenizer_files() -> dict[str, Any]:
    """A byte-level BPE in Qwen2's file format: ``vocab.json``, ``merges.txt``, ``tokenizer_config.json``.

    256 byte symbols plus about a hundred merges learnt from a small Chinese/English text, then
    unused entries up to id 151642; the three Qwen2 specials follow at their real ids
    151643-151645 (declared in ``added_tokens_decoder``), so the ids the official tokenizers add
    after them are the real ones too.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=360, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)  # fmt: skip
    tok.train_from_iterator(_CORPUS * 4, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    vocab = dict(model["vocab"])
    # Entries no merge produces fill the vocabulary up to Qwen2's size, so the specials that the
    # loaders add after it get the real ids (<|endoftext|> 151643, ..., <|endofprompt|> 151646).
    vocab |= {f"<|unused_{i}|>": i for i in range(len(vocab), ENDOFTEXT)}
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    decoder = {str(ENDOFTEXT + i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                    "single_word": False, "special": True} for i, t in enumerate(specials)}
    config = {
        "add_prefix_space": False, "added_tokens_decoder": decoder, "additional_special_tokens": specials[1:],
        "bos_token": None, "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>",
        "errors": "replace", "model_max_length": 32768, "pad_token": "<|endoftext|>",
        "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }  # fmt: skip
    return {"vocab.json": vocab, "merges.txt": "#version: 0.2\n" + "\n".join(merges) + "\n",
            "tokenizer_config.json": config}  # fmt: skip


# ---- the folder -----------------------------------------------------------------------------
def _save_pt(path: Path, sd: dict[str, torch.Tensor]) -> None:
    with atomic_path(path) as tmp:
        torch.save(sd, tmp)


def write_checkpoint(
    out_dir: str | Path, name: str = "cosyvoice3-tiny", seed: int = 0, with_onnx: bool = True
) -> Path:
    """Write the random folder of preset ``name`` into ``out_dir`` (created); returns the folder.

    The same ``name`` and ``seed`` always give the same bytes in every file but the ``.pt``
    pickles' framing, so goldens made from one folder hold for another written alike.
    ``with_onnx=False`` leaves out the two ``.onnx`` files (needs no ``onnx`` package: enough for
    the LM, flow and vocoder, not for the frontend)."""
    p = preset(name)
    shapes = official_shapes(p)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise VoxDeskError(f"{out} is a file: give a folder to write the checkpoint into.")
    try:
        (out / "CosyVoice-BlankEN").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or exc
        raise VoxDeskError(f"Cannot create the folder {out} ({reason}): choose another one.") from None
    gen = torch.Generator().manual_seed(seed)
    atomic.write_text(out / p.yaml_name, yaml_text(p))
    atomic.write_text(out / "config.json", "{}")
    llm = _state_dict(llm_shapes(p), gen)
    llm["llm.model.lm_head.weight"] = llm["llm.model.model.embed_tokens.weight"]  # tied, as in Qwen2-0.5B
    if p.family == "cosyvoice2":
        # A random head almost never picks <eos> (1 of 6564), so every run would last the
        # maximum 20 tokens per text token; this bias ends a run a few tokens after the minimum
        # (about 1 step in 8 once allowed). CosyVoice3's 200 stop ids stop it by themselves.
        llm["llm_decoder.bias"][SPEECH_TOKENS] = 4.0
    _save_pt(out / "llm.pt", llm)
    flow = _state_dict({k: tuple(s) for k, s in shapes["flow"].items()}, gen)
    hift = _state_dict({k: tuple(s) for k, s in shapes["hift"].items()}, gen)
    _condition_flow(p, flow)
    # Random weights make the vocoder's log-magnitudes large: most samples would sit at the
    # +-0.99 clamp, where a parity test sees nothing. A smaller output-conv gain keeps the tiny
    # audio near 0.1 and unclipped (measured with the official HiFT on the goldens' mels).
    hift["conv_post.parametrizations.weight.original0"] *= 0.3 if p.family == "cosyvoice2" else 0.1
    for key, values in shapes.get("buffers", {}).items():  # computed constants, not weights
        part, _, rest = key.partition(".")
        {"flow": flow, "hift": hift}[part][rest] = torch.tensor(values, dtype=torch.float32)
    _save_pt(out / "flow.pt", flow)
    _save_pt(out / "hift.pt", hift)
    if with_onnx:
        atomic.write_bytes(out / "campplus.onnx", campplus_onnx(gen))
        atomic.write_bytes(out / p.tokenizer_onnx, speech_tokenizer_onnx(gen))
    blank = out / "CosyVoice-BlankEN"
    atomic.write_json(blank / "config.json", qwen_config(p))
    from safetensors.torch import save_file

    qwen = {k[len("llm.model.") :]: v for k, v in llm.items() if k.startswith("llm.model.model.")}
    with atomic_path(blank / "model.safetensors") as tmp:
        save_file(qwen, str(tmp), metadata={"format": "pt"})
    for fname, content in tokenizer_files().items():
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=1)
        atomic.write_text(blank / fname, text)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m app.models.cosyvoice.checkpoint OUT [--preset NAME] [--seed N]``."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--preset", default="cosyvoice3-tiny", choices=sorted(PRESETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--yaml-only", action="store_true", help="write only the yaml (to record shapes)")
    args = ap.parse_args(argv)
    try:
        if args.yaml_only:
            p = preset(args.preset)
            Path(args.out).mkdir(parents=True, exist_ok=True)
            atomic.write_text(Path(args.out) / p.yaml_name, yaml_text(p))
        else:
            write_checkpoint(args.out, args.preset, args.seed)
    except VoxDeskError as exc:
        print(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
