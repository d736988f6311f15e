"""Emotion from a description: IndexTTS's QwenEmotion (a fine-tuned Qwen3) and how its reply is read.

The official ``QwenEmotion`` (``infer_v2_5.py:910-1060``) loads the folder ``cfg.qwen_emo_path`` with
``AutoTokenizer`` and ``AutoModelForCausalLM(torch_dtype="float16")``, asks it the chat
``[system "文本情感分类", user TEXT]`` (thinking off), samples a reply with the folder's
``generation_config.json`` on the global torch generator, and reads the reply as 8 scores:
JSON, else a ``key: number`` pattern; the sad score moves to melancholic when the text names
melancholy; Chinese keys map to the 8 English ones in the order of :data:`app.engine.request.EMOTIONS`; each
score is clamped to [0, 1.2]; no emotion at all means calm 1.0. This module does the same with
transformers' ``Qwen3ForCausalLM`` on the CPU in fp16 (``device_map="auto"`` is the CPU on a machine
without a GPU), from local files only and without code from the folder. Where the official
reader would raise on a malformed reply (a score that is not a number, a regex match such as
``1.2.3``), this one reads the score as 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from app.engine.request import EMOTIONS
from app.errors import VoxDeskError
from app.models.common.hf_quiet import quiet_transformers
from app.models.indextts.weights import NO_QWEN

THINK_END = 151668  # ``</think>``, the id the official reader looks for
PROMPT = "文本情感分类"
CN_KEYS = ("高兴", "愤怒", "悲伤", "恐惧", "反感", "低落", "惊讶", "自然")  # in EMOTIONS' order
MELANCHOLIC_WORDS = ("低落", "melancholy", "melancholic", "depression", "depressed", "gloomy")
LABEL_KEYS = ("emotion", "emotion_label", "label", "情感", "情绪")
MAX_SCORE = 1.2
_PAIR = re.compile(r'([^\s":.,]+?)"?\s*:\s*([\d.]+)')
_TO_CN = dict(zip(EMOTIONS, CN_KEYS, strict=True))
MISSING = NO_QWEN[0].upper() + NO_QWEN[1:] + ": install it from the Models page ({path} is missing)."


class QwenEmotion:
    """The QwenEmotion model of one folder; :meth:`inference` reads a text's emotion."""

    def __init__(self, folder: str | Path, device: str | torch.device = "cpu") -> None:
        from transformers import AutoTokenizer, Qwen3ForCausalLM

        root = Path(folder)
        if not (root / "config.json").is_file():
            raise VoxDeskError(MISSING.format(path=root))
        try:
            with quiet_transformers():
                self.tokenizer = AutoTokenizer.from_pretrained(root, local_files_only=True)
                self.model = Qwen3ForCausalLM.from_pretrained(
                    root, dtype=torch.float16, local_files_only=True
                )
        except Exception as exc:  # noqa: BLE001 - a damaged download fails in many ways inside transformers
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise VoxDeskError(f"The QwenEmotion model in {root} does not load ({first}): download it "
                               "again from the Models page.") from None  # fmt: skip
        self.model.to(device).eval()

    def prompt_ids(self, text: str) -> torch.Tensor:
        """The chat the official code sends, as ids [1, L]."""
        messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": text}]
        chat = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                  enable_thinking=False)  # fmt: skip
        return self.tokenizer([chat], return_tensors="pt").input_ids

    @torch.no_grad()
    def reply(self, text: str) -> list[int]:
        """The ids QwenEmotion answers ``text`` with, drawn from the global torch generator with the
        folder's generation config, as the official ``generate`` call does."""
        ids = self.prompt_ids(text).to(self.model.device)
        out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=32768,
                                  pad_token_id=self.tokenizer.eos_token_id)  # fmt: skip
        return out[0, ids.shape[1]:].tolist()

    def inference(self, text: str) -> dict[str, float]:
        """The 8 scores of ``text`` (English keys, in :data:`EMOTIONS` order)."""
        return self.read(self.reply(text), text)

    def vector(self, text: str) -> list[float]:
        """:meth:`inference` as the 8 weights the matrices mix."""
        return list(self.inference(text).values())

    def read(self, reply_ids: Sequence[int], text: str) -> dict[str, float]:
        """The scores in a reply given as token ids (what follows the last ``</think>``)."""
        return read_reply(reply_ids, text, lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True))


def read_reply(reply_ids: Sequence[int], text: str, decode: Callable[[list[int]], str]) -> dict[str, float]:
    """The official reader: cut after the last ``</think>``, decode, parse, swap, convert."""
    ids = list(reply_ids)
    start = len(ids) - ids[::-1].index(THINK_END) if THINK_END in ids else 0
    content = parse(decode(ids[start:]))
    if any(word in text.lower() for word in MELANCHOLIC_WORDS):
        content = content if isinstance(content, dict) else _labelled(content)
        content["悲伤"], content["低落"] = content.get("低落", 0.0), content.get("悲伤", 0.0)
    return scores(content)


def parse(reply: str) -> Any:
    """JSON if the reply is JSON, else every ``key: number`` pair found in it."""
    try:
        return json.loads(reply)
    except (ValueError, RecursionError):
        pairs: dict[str, Any] = {}
        for match in _PAIR.finditer(reply):
            try:
                pairs[match.group(1)] = float(match.group(2))
            except ValueError:
                pairs[match.group(1)] = 0.0
        return pairs


def _label(value: Any) -> str | None:
    """The Chinese key a label names (a Chinese key itself or an English name, any case)."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value in CN_KEYS:
        return value
    return _TO_CN.get(value.lower())


def _labelled(content: Any) -> dict[Any, Any]:
    """The official ``normalize_content``: a reply that names one emotion (as a string, under a
    label key, or as the value of an emotion key) becomes that emotion at 1.0."""
    out = dict(content) if isinstance(content, dict) else {}
    named = _label(content) if isinstance(content, str) else None
    for key in LABEL_KEYS:
        if named is not None:
            break
        named = _label(out.get(key))
    if named is not None and all(key not in out for key in CN_KEYS):
        out[named] = 1.0
    for key in CN_KEYS:
        named = _label(out.get(key))
        if named is not None:
            out[key] = 1.0 if named == key else 0.0
            if named != key:
                out[named] = 1.0
    return out


def scores(content: Any) -> dict[str, float]:
    """The official ``convert``: 8 English keys, each clamped to [0, 1.2] (missing → 0); all zero
    → calm 1.0."""
    content = _labelled(content)
    out = {}
    for name, key in zip(EMOTIONS, CN_KEYS, strict=True):
        value = content.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            value = float(value) if isinstance(value, bool) else 0.0
        out[name] = float(max(0.0, min(MAX_SCORE, value)))
    if all(v <= 0.0 for v in out.values()):
        out["calm"] = 1.0
    return out


# ---- a tiny random QwenEmotion folder, for tests --------------------------------------------
QWEN_SPECIALS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
    "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>",
    "</tool_response>", "<think>", "</think>",
)  # fmt: skip
FIRST_SPECIAL = 151643  # Qwen2/3's <|endoftext|>; </think> is then 151668
QWEN_VOCAB = 151936  # the embedding rows of every Qwen3 size
# The Qwen3 chat as the official call renders it (system, user, the assistant turn with an empty
# thinking block when enable_thinking is false); not Qwen's full template (no tools, no history).
CHAT_TEMPLATE = (
    "{%- for m in messages %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}{%- endif %}"
)
_TINY_CORPUS = [
    '{"高兴": 0.0, "愤怒": 0.0, "悲伤": 0.95, "恐惧": 0.0, "反感": 0.0, "低落": 0.0, "惊讶": 0.0, '
    '"自然": 0.05}',
    '{"高兴": 0.8, "愤怒": 0.0, "悲伤": 0.0, "恐惧": 0.1, "反感": 0.0, "低落": 0.0, "惊讶": 0.5, '
    '"自然": 0.0}',
    "今天我非常高兴，可是他很愤怒。I feel gloomy and melancholic today, not calm at all!",
]
# The tiny model's replies follow a small grammar over these token classes (plus </think> and
# <|im_end|>): a JSON object of emotion keys with 0/1 scores, sometimes followed by </think> and a
# second object. "start" is the prompt's last token, "\n".
_CLASSES = {"start": ["\n"], "brace": ['{"'], "quote": [' "'],
            "key": ["高兴", "愤怒", "悲伤", "低落", "自然"], "colon": ['":'], "space": [" "],
            "digit": ["0", "1"], "comma": [","], "close": ["}"],
            "think": ["</think>"], "end": ["<|im_end|>"]}  # fmt: skip
_NEXT = {"start": {"brace": 2.0}, "brace": {"key": 2.0}, "quote": {"key": 2.0}, "key": {"colon": 2.0},
         "colon": {"space": 2.0}, "space": {"digit": 2.0}, "digit": {"comma": 1.8, "close": 2.0},
         "comma": {"quote": 2.0}, "close": {"end": 2.0, "think": 1.7}, "think": {"brace": 2.0}}  # fmt: skip
_LIFT = {"1": 0.5}  # a score of 1 a little more likely than the random rows make it


def _tiny_tokenizer() -> dict[str, Any]:
    """tokenizer.json: Qwen2's pipeline (NFC, its split regex, byte-level BPE) with ~400 symbols
    learnt from :data:`_TINY_CORPUS`, and Qwen3's 26 special tokens at their real ids."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    from app.models.cosyvoice.tokenizer import PRETOKENIZE

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])  # fmt: skip
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)  # fmt: skip
    tok.train_from_iterator(_TINY_CORPUS * 4, trainer)
    data = json.loads(tok.to_str())
    data["model"]["vocab"] |= {t: FIRST_SPECIAL + i for i, t in enumerate(QWEN_SPECIALS)}
    data["added_tokens"] = [{"id": FIRST_SPECIAL + i, "content": t, "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": not t.endswith("think>")}
                            for i, t in enumerate(QWEN_SPECIALS)]  # fmt: skip
    return data


def _tiny_weights(
    cfg: dict[str, Any], vocab: dict[str, int], gen: torch.Generator
) -> dict[str, torch.Tensor]:
    """Random Qwen3 weights that reply in :data:`_NEXT`'s grammar. Feature 0 of the residual stream
    is a constant (no layer writes to it) and the output row of every token outside the grammar
    points against it, so those are never drawn; features 1… carry the current token's class and
    the output rows the class that may follow; small random layers make the draws depend on the
    text."""
    dim, hidden, n_vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, kv, head_dim = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]

    def randn(*shape: int, std: float) -> torch.Tensor:
        return torch.randn(shape, generator=gen) * std

    embed, head = randn(n_vocab, dim, std=0.3), randn(n_vocab, dim, std=0.3)
    embed[:, 0], head[:, 0] = 4.0, -6.0
    for c, (name, pieces) in enumerate(_CLASSES.items(), start=1):
        ids = [vocab[_byte_level(p)] if p not in QWEN_SPECIALS else vocab[p] for p in pieces]
        embed[ids, c] = 4.0
        if name != "start":
            head[ids, 0] = 6.0
        for src, weights in _NEXT.items():
            head[ids, 1 + list(_CLASSES).index(src)] = weights.get(name, -2.0)
    for piece, lift in _LIFT.items():
        head[vocab[piece], 0] += lift
    sd = {"model.embed_tokens.weight": embed, "lm_head.weight": head, "model.norm.weight": torch.ones(dim)}
    for n in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{n}."
        shapes = {"self_attn.q_proj": (heads * head_dim, dim), "self_attn.k_proj": (kv * head_dim, dim),
                  "self_attn.v_proj": (kv * head_dim, dim), "self_attn.o_proj": (dim, heads * head_dim),
                  "mlp.gate_proj": (hidden, dim), "mlp.up_proj": (hidden, dim),
                  "mlp.down_proj": (dim, hidden)}  # fmt: skip
        for name, shape in shapes.items():
            sd[p + name + ".weight"] = randn(*shape, std=0.15)
        sd[p + "self_attn.o_proj.weight"][0] = 0.0
        sd[p + "mlp.down_proj.weight"][0] = 0.0
        for name, width in (("input_layernorm", dim), ("post_attention_layernorm", dim),
                            ("self_attn.q_norm", head_dim), ("self_attn.k_norm", head_dim)):  # fmt: skip
            sd[p + name + ".weight"] = torch.ones(width)
    return {k: v.to(torch.float16).contiguous() for k, v in sd.items()}


def write_tiny_qwen(folder: str | Path, seed: int = 0) -> Path:
    """Write a random QwenEmotion folder (Qwen3 layout: config.json, generation_config.json,
    model.safetensors, tokenizer.json, tokenizer_config.json) that loads as the real one does:
    the real vocabulary size and special-token ids, a sampling generation config (so its draws move
    the global generator, as the real one's do) and replies a few tokens long."""
    from safetensors.torch import save_file

    from app import atomic

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _tiny_tokenizer()
    cfg = {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": QWEN_VOCAB,
        "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "num_key_value_heads": 1, "head_dim": 8, "hidden_act": "silu", "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000, "rope_scaling": None, "attention_bias": False,
        "attention_dropout": 0.0, "tie_word_embeddings": False, "use_cache": True,
        "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2,
        "initializer_range": 0.02, "bos_token_id": FIRST_SPECIAL, "eos_token_id": FIRST_SPECIAL + 2,
        "torch_dtype": "float16",
    }  # fmt: skip
    generation = {"bos_token_id": FIRST_SPECIAL, "do_sample": True,
                  "eos_token_id": [FIRST_SPECIAL + 2, FIRST_SPECIAL], "pad_token_id": FIRST_SPECIAL,
                  "temperature": 0.7, "top_k": 20, "top_p": 0.8}  # fmt: skip
    decoder = {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in tokenizer["added_tokens"]}
    tok_cfg = {
        "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": decoder, "bos_token": None,
        "chat_template": CHAT_TEMPLATE, "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>",
        "errors": "replace", "model_max_length": 2048, "pad_token": "<|endoftext|>",
        "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }  # fmt: skip
    gen = torch.Generator().manual_seed(seed)
    with atomic.atomic_path(out / "model.safetensors") as tmp:
        save_file(_tiny_weights(cfg, tokenizer["model"]["vocab"], gen), str(tmp), metadata={"format": "pt"})
    atomic.write_json(out / "config.json", cfg)
    atomic.write_json(out / "generation_config.json", generation)
    atomic.write_json(out / "tokenizer_config.json", tok_cfg)
    atomic.write_text(out / "tokenizer.json", json.dumps(tokenizer, ensure_ascii=False))
    return out


def _byte_level(text: str) -> str:
    """``text`` in the byte-level alphabet the BPE vocabulary is written in."""
    from tokenizers import pre_tokenizers

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return "".join(piece for piece, _ in byte_level.pre_tokenize_str(text))
