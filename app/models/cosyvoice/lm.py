"""CosyVoice2 / CosyVoice3's speech-token LM on the engine's paged attention.

The official ``Qwen2LM`` / ``CosyVoice3LM`` (cosyvoice/llm/llm.py) wrap a transformers
``Qwen2ForCausalLM`` and use only its last hidden state (after the final RMSNorm): its text
``lm_head`` is never used. Here the Qwen2 stack is the project's MiniCPM stack with q/k/v biases,
plain RoPE (LongRoPE factors of 1) and no muP, which is Qwen2 exactly; attention goes through
:class:`app.engine.attention.PagedKVCache` with the :class:`AttnContext` the caller sets.

The input of a request (llm.py ``inference``)::

    [sos] [prompt text + text ids] [task_id] [prompt speech tokens]   then one speech token a step

CosyVoice2 keeps sos / task_id in ``llm_embedding`` (2 rows) and has 3 extra speech ids (eos 6561,
6562, fill 6563); CosyVoice3 keeps them among 200 extra speech ids (sos 6561, eos 6562,
task_id 6563, fill 6564) and its head has no bias. Every extra id stops a run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from app.engine.attention import PagedKVCache
from app.engine.family import KVSpec
from app.errors import VoxDeskError
from app.models.cosyvoice.config import CosyVoiceConfig, Tag
from app.models.voxcpm.config import LMConfig, RopeScaling
from app.models.voxcpm.minicpm import MiniCPM
from app.models.voxcpm.weights import check_tensors

QWEN_DIR = "CosyVoice-BlankEN"
ENDOFPROMPT = 151646  # <|endofprompt|>: CosyVoice3 asserts it is in prompt text + text
_QWEN_PREFIX = "llm.model.model."  # llm.pt's names of the Qwen2 stack; ours are "llm."
_UNUSED = ("llm.model.lm_head.weight",)  # Qwen2's tied text head: in llm.pt, never used
_EXTRA_IDS = {"cosyvoice2": 3, "cosyvoice3": 200}


def qwen_config(data: Mapping[str, Any], name: str = "config.json") -> LMConfig:
    """The Qwen2 ``config.json`` as the stack's :class:`LMConfig` (one line when it is not Qwen2)."""
    try:
        if data.get("rope_scaling"):
            raise ValueError("rope_scaling is not read")
        hidden, heads = int(data["hidden_size"]), int(data["num_attention_heads"])
        kv_heads = int(data.get("num_key_value_heads", heads))
        max_pos = int(data["max_position_embeddings"])
        if min(hidden, heads, kv_heads, max_pos) <= 0 or hidden % heads or heads % kv_heads:
            raise ValueError("inconsistent head counts")
        half = hidden // heads // 2
        return LMConfig(
            hidden_size=hidden,
            intermediate_size=int(data["intermediate_size"]),
            max_position_embeddings=max_pos,
            num_attention_heads=heads,
            num_hidden_layers=int(data["num_hidden_layers"]),
            num_key_value_heads=kv_heads,
            rms_norm_eps=float(data["rms_norm_eps"]),
            # LongRoPE with factors of 1 and no extension is Qwen2's plain rotary (scale 1)
            rope_scaling=RopeScaling("none", [1.0] * half, [1.0] * half, max_pos),
            vocab_size=int(data["vocab_size"]),
            scale_emb=1.0,
            dim_model_base=hidden,
            scale_depth=1.0,
            rope_theta=float(data.get("rope_theta", 10000.0)),
            use_mup=False,
            qkv_bias=True,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise VoxDeskError(f"{name} is not a Qwen2 config CosyVoice's LM can use ({exc}).") from None


def read_qwen_config(qwen_dir: str | Path) -> LMConfig:
    """:func:`qwen_config` of ``qwen_dir/config.json``."""
    path = Path(qwen_dir) / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise VoxDeskError(f"Cannot read {path} ({exc}): the model folder is incomplete.") from None
    if not isinstance(data, dict):
        raise VoxDeskError(f"{path} is not a Qwen2 config: the model folder is incomplete.")
    return qwen_config(data, str(path))


class CosyLM(nn.Module):
    """The Qwen2 stack (``llm``), ``speech_embedding``, ``llm_embedding`` (CosyVoice2) and
    ``llm_decoder`` of one family; state-dict names are llm.pt's with ``llm.model.model.`` read
    as ``llm.``."""

    def __init__(self, family: str, qwen: LMConfig, speech_token_size: int = 6561) -> None:
        super().__init__()
        if family not in _EXTRA_IDS:
            raise ValueError(f"unknown CosyVoice family {family!r}")
        self.family = family
        self.qwen = qwen
        self.speech_token_size = n = speech_token_size
        hidden, size = qwen.hidden_size, speech_token_size + _EXTRA_IDS[family]
        self.llm = MiniCPM(qwen)
        self.speech_embedding = nn.Embedding(size, hidden)
        self.llm_decoder = nn.Linear(hidden, size, bias=family == "cosyvoice2")
        if family == "cosyvoice2":
            self.llm_embedding = nn.Embedding(2, hidden)
            self.sos, self.task_id = 0, 1  # rows of llm_embedding
        else:
            self.sos, self.task_id = n, n + 2  # rows of speech_embedding, eos between them
        self.eos = n if family == "cosyvoice2" else n + 1
        self.stop_ids = frozenset(range(n, size))

    @classmethod
    def from_config(cls, cfg: CosyVoiceConfig, qwen_dir: str | Path | None = None) -> CosyLM:
        """The LM of ``cfg``'s family; the Qwen2 sizes come from ``qwen_dir/config.json`` (the
        folder's ``CosyVoice-BlankEN``), else from the yaml's ``pretrain_path`` when it is set."""
        if qwen_dir is None:
            inner = cfg.llm.get("llm")
            qwen_dir = inner.get("pretrain_path") if isinstance(inner, Tag) else None
            if not qwen_dir:
                raise VoxDeskError(f"The {cfg.family} config names no Qwen2 folder: give its {QWEN_DIR}.")
        qwen = read_qwen_config(qwen_dir)
        width = cfg.llm.get("llm_input_size")
        if width is not None and int(width) != qwen.hidden_size:
            raise VoxDeskError(f"{QWEN_DIR}/config.json is {qwen.hidden_size} wide but the yaml's LM is "
                               f"{width}: the files do not belong together.")  # fmt: skip
        return cls(cfg.family, qwen, cfg.speech_token_size)

    # ---- weights ----------------------------------------------------------------------------
    def official_names(self) -> dict[str, str]:
        """Our parameter name -> its name in llm.pt."""
        return {k: _QWEN_PREFIX + k[4:] if k.startswith("llm.") else k for k in self.state_dict()}

    def load(self, state_dict: Mapping[str, torch.Tensor], path: Path = Path("llm.pt")) -> None:
        """Load llm.pt's tensors strictly (Qwen2's unused ``lm_head`` may be there); a missing,
        unexpected or mis-shaped tensor is one line naming ``path`` and the key."""
        names = self.official_names()
        shapes = self.state_dict()
        expected = {names[k]: shapes[k].shape for k in shapes}
        check_tensors(expected, {k: v for k, v in state_dict.items() if k not in _UNUSED}, path)
        ours = {k: state_dict[names[k]] for k in names}
        meta = next(self.parameters()).is_meta
        self.load_state_dict(ours, strict=True, assign=meta)
        if meta and self.llm.rope is not None:
            self.llm.rope.build(torch.device("cpu"), torch.float32)

    def kv_spec(self) -> KVSpec:
        q = self.qwen
        return KVSpec(q.num_hidden_layers, q.num_key_value_heads, q.head_dim)

    # ---- inputs -----------------------------------------------------------------------------
    def prefix_embeds(self, text_ids: torch.Tensor, prompt_speech: torch.Tensor) -> torch.Tensor:
        """``[T + S + 2, H]``: sos, the text (prompt text then text, already joined), task_id and
        the LM's prompt speech tokens, as llm.py ``inference`` lays them out."""
        if self.family == "cosyvoice3" and not bool((text_ids == ENDOFPROMPT).any()):
            raise VoxDeskError("CosyVoice3 needs <|endofprompt|> in the prompt text or the text.")
        rows = self.llm_embedding.weight if self.family == "cosyvoice2" else self.speech_embedding.weight
        text = self.llm.embed_tokens(text_ids.long())
        speech = self.speech_embedding(prompt_speech.long())
        return torch.cat([rows[self.sos][None], text, rows[self.task_id][None], speech])

    def speech_embeds(self, tokens: torch.Tensor) -> torch.Tensor:
        """``[B, H]``: the rows of the speech tokens decoded last, the next step's input."""
        return self.speech_embedding(tokens.long())

    # ---- compute ----------------------------------------------------------------------------
    def forward(self, embeds: torch.Tensor, positions: torch.Tensor, kv: PagedKVCache) -> torch.Tensor:
        """``embeds [B, L, H]`` at ``positions [B, L]`` -> final-normed hidden ``[B, L, H]``; the
        new K/V go where ``kv.context`` says."""
        return self.llm(embeds, positions, kv)

    def logp(self, hidden: torch.Tensor) -> torch.Tensor:
        """``[B, H]`` -> log-probabilities of the speech ids ``[B, V]`` (fp32)."""
        return self.llm_decoder(hidden).float().log_softmax(dim=-1)
