"""IndexTTS's emotion vector: from a clip (the encoder), from 8 weights (the matrices), and mixes.

The GPT is conditioned on ``spk_emb_proj(style) + emovec`` (``model_v2.py:768``); ``emovec`` [1, d]
comes from one of three controls (docs/indextts_plan.md section 1):

- a clip: :meth:`EmotionEncoder.merge` of the speaker's and the emotion clip's w2v-BERT features,
  ``base + α·(emo − base)`` (``merge_emovec``; plain cloning passes the speaker clip as both, α 1);
- 8 weights (or QwenEmotion's reading of a text): :meth:`EmotionMatrices.mix`, which picks per
  emotion the matrix row whose speaker column is nearest (cosine) to the voice's CAMPPlus style and
  adds ``Σ w_k·row_k + (1 − Σ w)·merge(speaker clip, speaker clip, 1)``;
- the request's α applied to the weights first: :func:`scale_vector` (``infer_v2_5.py:606-610``).

The official ``infer`` does not check the weights; VoxDesk's rule (:func:`check_vector`, the request's:
:mod:`app.engine.request`) is the one a user can read off the meaning: 8 weights from 0 to 1 whose
total is at most 1, the rest being the voice's own emotion. :func:`webui_balance` is the official web
UI's rescaling, offered by name.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.indextts.emo_conformer import INPUT_LAYERS, EmotionConformer, PerceiverResampler
from app.models.indextts.presets import SPK_DIM, W2V_WIDTH
from app.models.indextts.weights import load_torch, strict_load

PREFIXES = ("emo_conditioning_encoder.", "emo_perceiver_encoder.", "emovec_layer.", "emo_layer.")
WEBUI_BIAS = (0.9375, 0.875, 1.0, 1.0, 0.9375, 0.9375, 0.6875, 0.5625)  # infer_v2_5.py:496
WEBUI_TOTAL = 0.8  # infer_v2_5.py:499-502


class EmotionEncoder(nn.Module):
    """``UnifiedVoice``'s emotion path, keyed as in ``gpt.pth``: conformer → perceiver (1 latent,
    1024 wide) → ``emovec_layer`` (1024 → d) → ``emo_layer`` (d → d)."""

    def __init__(self, dim: int, emo: Mapping[str, Any]) -> None:
        super().__init__()
        if emo["input_layer"] not in INPUT_LAYERS:
            raise VoxDeskError(f"IndexTTS emo_condition_module input_layer '{emo['input_layer']}' is not "
                               f"supported (VoxDesk reads {', '.join(INPUT_LAYERS)}).")  # fmt: skip
        width, heads = int(emo["output_size"]), int(emo["attention_heads"])
        self.emo_conditioning_encoder = EmotionConformer(
            W2V_WIDTH, width, heads, int(emo["linear_units"]), int(emo["num_blocks"])
        )
        self.emo_perceiver_encoder = PerceiverResampler(W2V_WIDTH, width, heads, float(emo["perceiver_mult"]))
        self.emovec_layer = nn.Linear(W2V_WIDTH, dim)
        self.emo_layer = nn.Linear(dim, dim)

    @classmethod
    def from_config(cls, gpt: Mapping[str, Any]) -> EmotionEncoder:
        """From config.yaml's ``gpt`` section (``model_dim``, ``emo_condition_module``)."""
        return cls(int(gpt["model_dim"]), gpt["emo_condition_module"]).eval()

    def load(self, gpt_state_dict: Mapping[str, torch.Tensor]) -> EmotionEncoder:
        """Take this encoder's keys of ``gpt.pth`` (strict: one line naming a missing or odd key)."""
        own = {k: v for k, v in gpt_state_dict.items() if k.startswith(PREFIXES)}
        strict_load(self, own, "gpt.pth (emotion encoder)")
        return self

    @torch.no_grad()
    def emovec(self, feats: torch.Tensor) -> torch.Tensor:
        """``get_emovec``: normalised w2v-BERT features [B, T, 1024] → [B, d]."""
        weight = self.emovec_layer.weight
        x = self.emo_conditioning_encoder(feats.to(weight))
        x = self.emo_perceiver_encoder(x).squeeze(1)
        return self.emo_layer(self.emovec_layer(x))

    def merge(self, spk_feats: torch.Tensor, emo_feats: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
        """``merge_emovec``: ``base + α·(emo − base)`` with base from the speaker clip's features.

        α is used as given (the official code clamps it only for weight vectors)."""
        emo = self.emovec(emo_feats)
        base = self.emovec(spk_feats)
        return base + alpha * (emo - base)


@dataclass(frozen=True)
class EmotionMatrices:
    """``feat2.pt`` (emotion rows [Σn, d]) and ``feat1.pt`` (their speakers' CAMPPlus styles [Σn, 192]),
    split per emotion by ``emo_num``."""

    emo: tuple[torch.Tensor, ...]
    spk: tuple[torch.Tensor, ...]

    @classmethod
    def load(cls, model_dir: str | Path, cfg: Any) -> EmotionMatrices:
        """From the files ``cfg.emo_matrix`` / ``cfg.spk_matrix`` (an ``IndexConfig``), checked against
        ``cfg.emo_num`` and the GPT width."""
        root = Path(model_dir)
        counts = [int(n) for n in cfg.emo_num]
        width = int(cfg.gpt["model_dim"])
        emo = _matrix(root / cfg.emo_matrix, sum(counts), width)
        spk = _matrix(root / cfg.spk_matrix, sum(counts), SPK_DIM)
        return cls(tuple(torch.split(emo, counts)), tuple(torch.split(spk, counts)))

    def rows(self, style: torch.Tensor) -> list[int]:
        """Per emotion, the row whose speaker style is most similar (cosine, first of ties) to
        ``style`` [1, 192] (``find_most_similar_cosine``)."""
        style = style.float()
        return [int(torch.argmax(F.cosine_similarity(style, spk.to(style.device).float(), dim=1)))
                for spk in self.spk]  # fmt: skip

    def random_rows(self, rng: random.Random) -> list[int]:
        """The official ``use_random`` choice: per emotion ``rng.randint(0, n − 1)`` (the official
        code draws from Python's global ``random``)."""
        return [rng.randint(0, len(m) - 1) for m in self.emo]

    def mix(
        self,
        weights: Sequence[float],
        style: torch.Tensor,
        base: torch.Tensor,
        rows: Sequence[int] | None = None,
    ) -> torch.Tensor:
        """``Σ w_k·row_k + (1 − Σ w)·base`` (``infer_v2_5.py:666-680``, ``:768``): ``base`` [1, d] is
        :meth:`EmotionEncoder.merge` of the speaker clip with itself at α 1; the rows are those
        nearest to ``style`` unless ``rows`` (e.g. :meth:`random_rows`) are given."""
        w = torch.tensor([float(v) for v in weights], device=base.device)
        rows = self.rows(style) if rows is None else rows
        picked = torch.cat([m[i].unsqueeze(0) for i, m in zip(rows, self.emo, strict=True)])
        mixed = torch.sum(w.unsqueeze(1) * picked.to(base.device), 0).unsqueeze(0)
        return mixed + (1 - torch.sum(w)) * base


def _matrix(path: Path, rows: int, width: int) -> torch.Tensor:
    value = load_torch(path)
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != (rows, width):
        got = list(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise VoxDeskError(f"{path.name} holds {got}, not the [{rows}, {width}] matrix this folder's "
                           "config.yaml describes: download the model folder again.")  # fmt: skip
    return value.float()


def scale_vector(values: Sequence[float], alpha: float) -> list[float]:
    """The request's emotion weight α applied to a vector (``infer_v2_5.py:606-610``): α clamped to
    [0, 1]; unless it is 1, each value becomes ``int(v·α·10000) / 10000`` (truncated, 4 places)."""
    alpha = max(0.0, min(1.0, alpha))
    if alpha == 1.0:
        return [float(v) for v in values]
    return [int(v * alpha * 10000) / 10000 for v in values]


def webui_balance(values: Sequence[float]) -> list[float]:
    """The official web UI's ``normalize_emo_vec(apply_bias=True)``: each weight times its bias
    (surprise and calm damped most), then all scaled down so the total is at most 0.8."""
    out = [v * b for v, b in zip(values, WEBUI_BIAS, strict=True)]
    total = sum(out)
    if total > WEBUI_TOTAL:
        out = [v * (WEBUI_TOTAL / total) for v in out]
    return out
