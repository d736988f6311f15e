"""LocEnc: turns one patch of latent frames into one LM input vector.

The patch ``[P, D]`` is projected to the encoder width, a learned CLS token
(``special_token``) is put in front, a non-causal MiniCPM stack runs over the ``P + 1``
tokens, and the CLS output is the patch embedding.
"""

from __future__ import annotations

import torch
from torch import nn

from app.models.voxcpm.config import LMConfig
from app.models.voxcpm.minicpm import MiniCPM


class LocEnc(nn.Module):
    def __init__(self, cfg: LMConfig, feat_dim: int) -> None:
        super().__init__()
        self.special_token = nn.Parameter(torch.zeros(1, 1, 1, cfg.hidden_size))
        self.in_proj = nn.Linear(feat_dim, cfg.hidden_size)
        self.encoder = MiniCPM(cfg)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        """``patches [..., P, D]`` -> ``[..., hidden]``."""
        lead = patches.shape[:-2]
        x = self.in_proj(patches.reshape(-1, *patches.shape[-2:]))
        cls = self.special_token.reshape(1, 1, -1).expand(x.shape[0], 1, -1)
        out = self.encoder(torch.cat([cls, x], dim=1))
        return out[:, 0].reshape(*lead, -1)
