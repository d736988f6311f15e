"""The training forward of VoxCPM on our inference modules: the official ``forward`` losses.

A training sample is packed as the official ``AudioFeatureProcessingPacker.process_tts_data``
does (OpenBMB/VoxCPM @ 616d3d3e, ``src/voxcpm/training/packers.py``)::

    tokens      [text ids..., 101, 0 x A, 102]
    feats       [0 x (text+1), audio patches (A), 0]
    text_mask   1 on the text, 101 and 102; audio_mask 1 on the patches; loss_mask = audio_mask
    labels      1 at the last audio patch (stop), else 0

and the loss is the official ``VoxCPM(2)Model.forward`` + ``UnifiedCFM.compute_loss``: both LMs
run causally over the whole sequence (the same ``embed_prefill``/``prefill`` the inference path
uses, with a causal attention backend instead of a KV cache), their outputs shifted one step
give the DiT condition of each patch, the flow-matching loss is the masked MSE of the predicted
velocity at a log-normal time, and the stop loss the masked cross-entropy of the stop head. The
random draws (CFG drop of the condition, noisy condition, times, noise) are made in the official
order from the global generator, so a seeded step equals the official trainer's step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from app.errors import VoxDeskError
from app.models.voxcpm.model import AUDIO_END, AUDIO_START, VoxCPM

LAMBDAS = {"loss/diff": 1.0, "loss/stop": 1.0}  # the official yaml's loss weights


class CausalAttention:
    """The KV backend of a full-sequence causal pass (no cache): fused causal attention."""

    def attend(self, layer_idx: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True
        )
        return out.transpose(1, 2)


@dataclass(frozen=True)
class Batch:
    """Padded ``[B, T]`` tensors (``feats``: ``[B, T, P, D]``) of packed samples."""

    tokens: torch.Tensor
    feats: torch.Tensor
    text_mask: torch.Tensor
    audio_mask: torch.Tensor
    loss_mask: torch.Tensor
    labels: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(*(t.to(device) for t in (self.tokens, self.feats, self.text_mask, self.audio_mask,
                                               self.loss_mask, self.labels)))  # fmt: skip


def pack(samples: list[tuple[list[int], torch.Tensor]]) -> Batch:
    """``[(text ids, audio patches [A, P, D])]`` -> a right-padded :class:`Batch`."""
    rows = []
    for ids, patches in samples:
        n_text, n_audio = len(ids) + 1, patches.shape[0]
        total = n_text + n_audio + 1
        tokens = torch.zeros(total, dtype=torch.long)
        tokens[: len(ids)] = torch.tensor(ids, dtype=torch.long)
        tokens[len(ids)], tokens[-1] = AUDIO_START, AUDIO_END
        feats = torch.zeros(total, *patches.shape[1:])
        feats[n_text : n_text + n_audio] = patches.float()
        audio = torch.zeros(total)
        audio[n_text : n_text + n_audio] = 1
        text = 1 - audio
        labels = torch.zeros(total, dtype=torch.long)
        labels[-2] = 1
        rows.append((tokens, feats, text, audio, audio.clone(), labels))
    length = max(r[0].shape[0] for r in rows)

    def pad(t: torch.Tensor) -> torch.Tensor:
        return F.pad(t, (0, 0) * (t.dim() - 1) + (0, length - t.shape[0]))

    return Batch(*(torch.stack([pad(r[i]) for r in rows]) for i in range(6)))


def _cfm_setting(model: VoxCPM, key: str, default):
    return model.cfg.cfm.get(key, default)


def diffusion_loss(
    model: VoxCPM, x1: torch.Tensor, mu: torch.Tensor, cond: torch.Tensor, mask: torch.Tensor, progress: float
) -> torch.Tensor:
    """The official ``UnifiedCFM.compute_loss`` (no mean mode): ``x1``/``cond`` ``[N, D, P]``,
    ``mu [N, M]``, ``mask [N, 1, P]``."""
    if model.cfg.dit_mean_mode:
        raise VoxDeskError("Training a mean-mode DiT is not supported; choose a released VoxCPM model.")
    b = x1.shape[0]
    cfg_rate = float(_cfm_setting(model, "training_cfg_rate", 0.1))
    if cfg_rate > 0:
        mu = mu * (torch.rand(b, device=x1.device) > cfg_rate).view(-1, 1)
    lo, hi = _cfm_setting(model, "noise_cond_prob_range", (0.0, 0.0))
    noisy = torch.rand(b, device=x1.device) > (1.0 - (lo + progress * (hi - lo)))
    cond = cond + noisy.view(-1, 1, 1) * torch.randn_like(cond) * float(
        _cfm_setting(model, "noise_cond_scale", 0.0)
    )
    scheduler = _cfm_setting(model, "t_scheduler", "log-norm")
    if scheduler == "log-norm":
        torch.randn(b, device=x1.device, dtype=x1.dtype)  # r: equal to t without mean mode
        t = torch.sigmoid(torch.randn(b, device=x1.device, dtype=x1.dtype) - 0.4)
    elif scheduler == "uniform":
        torch.rand(b, device=x1.device, dtype=x1.dtype)
        t = torch.rand(b, device=x1.device, dtype=x1.dtype)
    else:
        raise VoxDeskError(f"Unsupported t_scheduler {scheduler!r} in the model's config.json.")
    torch.rand(b, device=x1.device, dtype=x1.dtype)  # the r != t draw (ratio 0 without mean mode)
    z = torch.randn_like(x1)
    tv = t.view(-1, 1, 1)
    y = (1 - tv) * x1 + tv * z
    u_pred = model.feat_decoder.estimator(y, mu, t, cond, torch.zeros_like(t))
    losses = F.mse_loss(u_pred, (z - x1).detach(), reduction="none").mean(dim=1)
    weights = mask.squeeze(1).detach()
    return (weights * losses).sum() / torch.clamp(mask.sum(), min=1.0)


def losses(model: VoxCPM, batch: Batch, progress: float = 0.0) -> dict[str, torch.Tensor]:
    """``{"loss/diff", "loss/stop"}`` of a packed batch (on the model's device)."""
    dtype = model.dtype
    tm, am, lm_ = (m.to(dtype) for m in (batch.text_mask, batch.audio_mask, batch.loss_mask))
    feats = batch.feats.to(dtype)
    b, t, p, d = feats.shape
    embeds, feat_embed = model.embed_prefill(batch.tokens, feats, tm, am)
    causal = CausalAttention()
    positions = torch.arange(t, device=feats.device).expand(b, -1)
    lm_seq, res_seq = model.prefill(embeds, feat_embed, tm, am, positions, causal, causal)
    lm_h = torch.cat((torch.zeros_like(lm_seq[:, :1]), lm_seq[:, :-1]), dim=1)
    res_h = torch.cat((torch.zeros_like(res_seq[:, :1]), res_seq[:, :-1]), dim=1)
    mu = model.dit_condition(lm_h, res_h).reshape(b * t, -1)
    gt = feats.reshape(b * t, p, d)
    cond = torch.cat((torch.zeros_like(feats[:, :1]), feats[:, :-1]), dim=1).reshape(b * t, p, d)
    mask = lm_.unsqueeze(-1).repeat(1, 1, p).reshape(b * t, p, 1).transpose(1, 2)
    diff = diffusion_loss(
        model, gt.transpose(1, 2).contiguous(), mu, cond.transpose(1, 2).contiguous(), mask, progress
    )
    stop = F.cross_entropy(model.stop_logits(lm_h).transpose(1, 2), batch.labels, reduction="none")
    stop = (stop * lm_).sum() / torch.clamp(lm_.sum(), min=1.0)
    return {"loss/diff": diff, "loss/stop": stop}


def total_loss(parts: dict[str, torch.Tensor]) -> torch.Tensor:
    return sum(parts[k] * w for k, w in LAMBDAS.items())
