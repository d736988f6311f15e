"""IndexTTS-2.5's GPT: the official ``UnifiedVoice`` (campplus mode) on the engine's paged attention.

What ``inference_speech`` feeds its GPT-2 stack for one text segment (docs/indextts_plan.md §3)::

    [spk_emb_proj(style) + emovec, 0, 0]        the conditioning, 3 rows
    [start_text] text [stop_text]               text_embedding + text_pos_embedding + lang_embedding
    start_mel                                   mel_embedding + mel_pos_embedding[0]
    then one code a step: code k (k = 0, 1, ...) at mel position k + 2

- Text ids equal to ``start_text`` / ``stop_text`` (0 and 1) are dropped from the text first; the
  official code then left-pads the prompt with as many zero rows and masks them out, which only
  changes where the rows sit, and GPT-2 here has no positional embedding of its own (``wpe`` is
  zeros), so the prompt is just ``[cond][text]``.
- Mel positions skip 1: the first forward embeds ``start_mel`` at 0 and every cached step embeds
  its code at ``mask length - prompt length``, one more than its index (``mel_position``).
- The blocks are transformers' GPT-2 (pre-norm LayerNorm, fused q/k/v in a ``Conv1D`` whose
  weight is ``[in, out]``, i.e. transposed against ``nn.Linear``, tanh-GELU MLP, final ``ln_f``);
  the mel head is ``final_norm`` then ``mel_head`` on that output (two LayerNorms in a row).
- The emotion encoder (``emo_*``, ``emovec_layer``) lives in gpt.pth too; ``emotion.py`` owns it.

``generate`` is the single-request reference decode (a contiguous KV cache whose rows follow the
beams): the tests hold it against the official codes; the runner puts the beams in the engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.engine.family import KVSpec
from app.errors import VoxDeskError
from app.models.indextts.beam import BeamParams, BeamState
from app.models.indextts.presets import SPK_DIM
from app.models.indextts.weights import strict_load
from app.models.voxcpm.minicpm import KVBackend

LANGUAGE_ROWS = 107  # len(LANGUAGE_DICT) + 1 in the official tokenizer.py: lang_embedding's rows
# gpt.pth keys that are not this module's: the emotion encoder (emotion.py) and the text head,
# which only training uses (inference never reads it)
EMOTION_KEYS = ("emo_conditioning_encoder.", "emo_perceiver_encoder.", "emo_layer.", "emovec_layer.")
_TRAINING_ONLY = ("text_head.", "mel_solo_embedding", "text_solo_embedding")


def mel_position(index: int | None) -> int:
    """The mel position of the input that is code ``index`` (``None``: ``start_mel``)."""
    return 0 if index is None else index + 2


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's ``gelu_new``, written out as transformers computes it (tanh approximation)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Conv1D(nn.Module):
    """GPT-2's projection: ``x @ weight + bias`` with ``weight [in, out]``."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)  # GPT-2's init, until loaded
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, layer_idx: int) -> None:
        super().__init__()
        self.heads, self.layer_idx = heads, layer_idx
        self.c_attn = Conv1D(dim, 3 * dim)
        self.c_proj = Conv1D(dim, dim)

    def forward(self, x: torch.Tensor, kv: KVBackend) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.c_attn(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        return self.c_proj(kv.attend(self.layer_idx, q, k, v).reshape(b, n, d))


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.c_fc = Conv1D(dim, 4 * dim)
        self.c_proj = Conv1D(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(_gelu_tanh(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, layer_idx: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = Attention(dim, heads, layer_idx)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-5)
        self.mlp = MLP(dim)

    def forward(self, x: torch.Tensor, kv: KVBackend) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), kv)
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """The stack (``gpt.h.*``, ``gpt.ln_f``) without token or position embeddings."""

    def __init__(self, dim: int, layers: int, heads: int) -> None:
        super().__init__()
        self.h = nn.ModuleList(Block(dim, heads, i) for i in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x: torch.Tensor, kv: KVBackend) -> torch.Tensor:
        for block in self.h:
            x = block(x, kv)
        return self.ln_f(x)


class PositionTable(nn.Module):
    """``LearnedPositionEmbeddings``: its one table is ``.emb``."""

    def __init__(self, rows: int, dim: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(rows, dim)


class UnifiedGPT(nn.Module):
    """``UnifiedVoice``'s inference part; parameter names are gpt.pth's keys."""

    def __init__(self, section: Mapping[str, Any]) -> None:
        super().__init__()
        try:
            dim, heads, layers = int(section["model_dim"]), int(section["heads"]), int(section["layers"])
            types = int(section.get("types", 1))
            self.max_text_tokens = int(section["max_text_tokens"])
            self.max_mel_tokens = int(section["max_mel_tokens"])
            conditioning_inputs = int(section.get("max_conditioning_inputs", 1))
            text_tokens, mel_codes = int(section["number_text_tokens"]), int(section["number_mel_codes"])
            self.start_text = int(section.get("start_text_token", 0))
            self.stop_text = int(section.get("stop_text_token", 1))
            self.start_mel = int(section.get("start_mel_token", 8192))
            self.stop_mel = int(section.get("stop_mel_token", 8193))
            codes_in = bool(section.get("use_mel_codes_as_input", True))
        except (KeyError, TypeError, ValueError) as exc:
            raise VoxDeskError(f"config.yaml's gpt section is not one IndexTTS can use ({exc}).") from None
        if dim % heads or not codes_in:
            raise VoxDeskError("config.yaml's gpt section is not one IndexTTS can use (model_dim must "
                               "divide by heads; mel codes must be the GPT's input).")  # fmt: skip
        self.dim, self.heads, self.layers = dim, heads, layers
        self.spk_emb_proj = nn.Linear(SPK_DIM, dim)
        self.text_embedding = nn.Embedding(text_tokens * types + 1, dim)
        self.lang_embedding = nn.Embedding(LANGUAGE_ROWS, dim)
        self.mel_embedding = nn.Embedding(mel_codes, dim)
        self.gpt = GPT2(dim, layers, heads)
        self.mel_pos_embedding = PositionTable(self.max_mel_tokens + 2 + conditioning_inputs, dim)
        self.text_pos_embedding = PositionTable(self.max_text_tokens + 2, dim)
        self.final_norm = nn.LayerNorm(dim)
        self.mel_head = nn.Linear(dim, mel_codes)

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> UnifiedGPT:
        """From config.yaml's ``gpt`` section (the keywords ``UnifiedVoice`` takes)."""
        return cls(section)

    # ---- weights ----------------------------------------------------------------------------
    def load(self, state_dict: Mapping[str, torch.Tensor], what: str = "gpt.pth") -> None:
        """gpt.pth's tensors (``weights.state_of`` unwraps its ``model`` entry), strictly, except the
        emotion encoder's and the training-only text head: one line naming ``what`` and the first
        missing, unexpected or mis-shaped key."""
        ours = {k: v for k, v in state_dict.items() if not k.startswith(EMOTION_KEYS + _TRAINING_ONLY)}
        strict_load(self, ours, what)

    def kv_spec(self) -> KVSpec:
        return KVSpec(self.layers, self.heads, self.dim // self.heads)

    # ---- inputs -----------------------------------------------------------------------------
    def conditioning(self, style: torch.Tensor, emovec: torch.Tensor) -> torch.Tensor:
        """``[3, d]``: the speaker (CAMPPlus ``style [1, 192]``) plus ``emovec [1, d]``, then two
        zero rows (where IndexTTS-2 put its speed embeddings; 2.5 never uses them)."""
        first = self.spk_emb_proj(style.reshape(1, SPK_DIM)) + emovec.reshape(1, self.dim)
        return torch.cat([first, first.new_zeros(2, self.dim)])

    def text_embeds(self, text_ids: torch.Tensor | list[int], lang: int) -> torch.Tensor:
        """``[L + 2, d]``: ``[start] text [stop]`` with ids 0/1 (start/stop) dropped from the text,
        plus text positions 0.. and the language row ``lang`` (the tokenizer's language index)."""
        ids = torch.as_tensor(text_ids, dtype=torch.long, device=self.text_embedding.weight.device).flatten()
        ids = ids[(ids != self.start_text) & (ids != self.stop_text)]
        if len(ids) > self.max_text_tokens:
            raise VoxDeskError(f"A text segment has {len(ids)} tokens; this model takes at most "
                               f"{self.max_text_tokens}: split the text into shorter sentences.")  # fmt: skip
        outside = ids[(ids < 0) | (ids >= self.text_embedding.num_embeddings)]
        if len(outside):
            raise VoxDeskError(f"Text token {int(outside[0])} is outside this model's vocabulary: the "
                               "tokenizer does not belong to this model folder.")  # fmt: skip
        if not 0 <= lang < LANGUAGE_ROWS:
            raise VoxDeskError(f"Language index {lang} is not one IndexTTS knows: pick a listed language.")
        ids = F.pad(F.pad(ids, (1, 0), value=self.start_text), (0, 1), value=self.stop_text)
        pos = torch.arange(len(ids), device=ids.device)
        return self.text_embedding(ids) + self.text_pos_embedding.emb(pos) + self.lang_embedding.weight[lang]

    def mel_embeds(self, tokens: torch.Tensor, mel_pos: torch.Tensor) -> torch.Tensor:
        """``[B, d]``: codes ``tokens [B]`` at mel positions ``mel_pos [B]`` (:func:`mel_position`)."""
        return self.mel_embedding(tokens.long()) + self.mel_pos_embedding.emb(mel_pos.long())

    def prompt(self, cond: torch.Tensor, text_ids: torch.Tensor | list[int], lang: int) -> torch.Tensor:
        """``[P + 1, d]``: conditioning, text and ``start_mel``: the first forward's input."""
        device = self.mel_embedding.weight.device
        start = torch.tensor([self.start_mel], device=device)
        start = self.mel_embeds(start, torch.tensor([mel_position(None)], device=device))
        return torch.cat([cond, self.text_embeds(text_ids, lang), start])

    # ---- compute ----------------------------------------------------------------------------
    def forward(self, embeds: torch.Tensor, kv: KVBackend) -> torch.Tensor:
        """``embeds [B, L, d]`` -> the stack's output ``[B, L, d]`` (after ``ln_f``); the K/V go
        where ``kv`` says. No positions: GPT-2 here has no positional embedding of its own."""
        return self.gpt(embeds, kv)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """``[..., d]`` -> mel-code logits ``[..., V]`` (``final_norm`` then ``mel_head``)."""
        return self.mel_head(self.final_norm(hidden))


class ContiguousKV:
    """A plain KV cache of ``B`` rows for :func:`generate`: ``reorder`` makes row ``i`` a copy of
    row ``rows[i]`` (the beams' parents)."""

    def __init__(self, layers: int) -> None:
        self.k: list[torch.Tensor | None] = [None] * layers
        self.v: list[torch.Tensor | None] = [None] * layers

    def attend(self, layer_idx: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        old_k, old_v = self.k[layer_idx], self.v[layer_idx]
        keys = k if old_k is None else torch.cat([old_k, k], dim=1)
        values = v if old_v is None else torch.cat([old_v, v], dim=1)
        self.k[layer_idx], self.v[layer_idx] = keys, values
        n, total = q.shape[1], keys.shape[1]
        mask = torch.ones(n, total, dtype=torch.bool, device=q.device).tril(total - n)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2),
                                             attn_mask=mask)  # fmt: skip
        return out.transpose(1, 2)

    def reorder(self, rows: list[int]) -> None:
        index = torch.tensor(rows, dtype=torch.long)
        self.k = [None if t is None else t[index.to(t.device)] for t in self.k]
        self.v = [None if t is None else t[index.to(t.device)] for t in self.v]


@torch.inference_mode()
def generate(
    model: UnifiedGPT,
    cond: torch.Tensor,
    text_ids: torch.Tensor | list[int],
    lang: int,
    params: BeamParams,
    generator: torch.Generator | None,
    trace: list[tuple[list[int], list[int], list[float]]] | None = None,
) -> list[int]:
    """The codes ``inference_speech`` + ``infer``'s cut give for one segment: ``cond [3, d]`` from
    :meth:`UnifiedGPT.conditioning`. ``trace`` (a list) receives each step's (codes, parents,
    beam scores)."""
    if params.max_mel_tokens > model.max_mel_tokens:
        raise VoxDeskError(f"max_mel_tokens {params.max_mel_tokens} is more than this model's "
                           f"{model.max_mel_tokens}: use a smaller value.")  # fmt: skip
    prompt = model.prompt(cond, text_ids, lang)
    state = BeamState(params, [1, model.start_mel], generator, stop_token=model.stop_mel)
    kv = ContiguousKV(model.layers)
    n = params.num_beams
    hidden = model(prompt[None], kv)[:, -1]  # the prompt once; its KV becomes every beam's
    while True:
        tokens, parents = state.step(model.logits(hidden))
        if trace is not None:
            trace.append((tokens, parents, state.scores.tolist()))
        if state.done:
            return state.best()
        kv.reorder(parents if state.steps > 1 else [0] * n)
        device = prompt.device
        pos = torch.full((n,), mel_position(state.steps - 1), dtype=torch.long, device=device)
        x = model.mel_embeds(torch.tensor(tokens, device=device), pos)
        hidden = model(x[:, None], kv)[:, 0]
