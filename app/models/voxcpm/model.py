"""``VoxCPM``: the module tree with the official parameter names, and its step functions.

Every method is batch-first and stateless apart from the KV backends passed in, so the
one-request loop (``generate.py``) and the batched engine (``app/engine``) share them.
Shapes: ``H`` LM width, ``P`` patch size, ``D`` latent size (``feat_dim``).

One request, in order::

    embeds = model.embed_prefill(ids, feats, text_mask, audio_mask)      # [B, T, H]
    lm_seq, res_seq = model.prefill(embeds, feats, text_mask, audio_mask, positions, base_kv, res_kv)
    lm_h, res_h = lm_seq[:, -1], res_seq[:, -1]
    loop:
        mu    = model.dit_condition(lm_h, res_h)
        patch = model.sample_patch(mu, cond, noise, cfg, timesteps)      # [B, P, D]
        stop  = model.stop_flags(lm_h)                                   # uses the lm_h that made the patch
        lm_h, res_h = model.decode_step(patch, positions, base_kv, res_kv)
        cond = patch
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from app.models.voxcpm.audio_vae import AudioVAE, AudioVAEConfig
from app.models.voxcpm.cfm import CFM
from app.models.voxcpm.config import VoxCPMConfig
from app.models.voxcpm.locdit import LocDiT
from app.models.voxcpm.locenc import LocEnc
from app.models.voxcpm.minicpm import KVBackend, MiniCPM

AUDIO_START, AUDIO_END, REF_START, REF_END = 101, 102, 103, 104


class FSQ(nn.Module):
    """Finite scalar quantisation of the base LM's hidden state (``fsq_layer``)."""

    def __init__(self, dim: int, latent: int, scale: int) -> None:
        super().__init__()
        self.scale = scale
        self.in_proj = nn.Linear(dim, latent)
        self.out_proj = nn.Linear(latent, dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.in_proj(h))
        q = torch.round(h * self.scale) / self.scale
        if self.training:  # straight-through gradient, as the official layer trains
            q = h + (q - h).detach()
        return self.out_proj(q)


class VoxCPM(nn.Module):
    native_speed = False  # no rate control of its own: the engine stretches the audio it makes

    def __init__(self, cfg: VoxCPMConfig, audio_vae: AudioVAE | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        h, hd = cfg.lm.hidden_size, cfg.dit.hidden_dim
        self.patch_size, self.feat_dim = cfg.patch_size, cfg.feat_dim
        self.base_lm = MiniCPM(cfg.lm)
        self.residual_lm = MiniCPM(cfg.residual_lm_config())
        self.feat_encoder = LocEnc(cfg.stack_lm_config(cfg.encoder), cfg.feat_dim)
        estimator = LocDiT(cfg.stack_lm_config(cfg.dit), cfg.feat_dim, v2=cfg.is_v2)
        self.feat_decoder = CFM(estimator, mean_mode=cfg.dit_mean_mode)
        self.fsq_layer = FSQ(h, cfg.fsq_latent_dim, cfg.fsq_scale)
        self.enc_to_lm_proj = nn.Linear(cfg.encoder.hidden_dim, h)
        self.lm_to_dit_proj = nn.Linear(h, hd)
        self.res_to_dit_proj = nn.Linear(h, hd)
        if cfg.is_v2:
            self.fusion_concat_proj = nn.Linear(2 * h, h)
        self.stop_proj = nn.Linear(h, h)
        self.stop_head = nn.Linear(h, 2, bias=False)
        if audio_vae is None:
            audio_vae = AudioVAE(AudioVAEConfig.from_dict(cfg.audio_vae, 2 if cfg.is_v2 else 1))
        self.audio_vae = audio_vae

    # ---- properties -------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.stop_head.weight.dtype

    @property
    def device(self) -> torch.device:
        return self.stop_head.weight.device

    @property
    def encode_rate(self) -> int:
        """Sample rate prompt and reference audio must have before ``encode_audio``."""
        return self.audio_vae.cfg.encoder_rate

    @property
    def output_rate(self) -> int:
        return self.audio_vae.cfg.output_rate

    @property
    def samples_per_patch(self) -> int:
        """Output samples decoded from one patch."""
        return self.patch_size * self.audio_vae.decoder_hop

    # ---- prefill ----------------------------------------------------------------------
    def embed_patches(self, patches: torch.Tensor) -> torch.Tensor:
        """``[..., P, D]`` -> LM-width embeddings ``[..., H]`` (LocEnc then ``enc_to_lm_proj``)."""
        return self.enc_to_lm_proj(self.feat_encoder(patches.to(self.dtype)))

    def embed_prefill(
        self, ids: torch.Tensor, feats: torch.Tensor, text_mask: torch.Tensor, audio_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``ids [B, T]``, ``feats [B, T, P, D]``, masks ``[B, T]`` -> (LM input, patch embeddings),
        both ``[B, T, H]``: ``text_mask*embed(id) + audio_mask*enc_to_lm(LocEnc(patch))``."""
        feat_embed = self.embed_patches(feats)
        tm, am = text_mask.to(self.dtype).unsqueeze(-1), audio_mask.to(self.dtype).unsqueeze(-1)
        return tm * self.base_lm.embed(ids) + am * feat_embed, feat_embed

    def fuse(self, lm_h: torch.Tensor, feat_embed: torch.Tensor) -> torch.Tensor:
        """Residual-LM input: ``lm_h + emb`` (v1) or ``fusion_concat_proj(cat[lm_h, emb])`` (v2)."""
        if self.cfg.is_v2:
            return self.fusion_concat_proj(torch.cat((lm_h, feat_embed), dim=-1))
        return lm_h + feat_embed

    def prefill(
        self,
        embeds: torch.Tensor,
        feat_embed: torch.Tensor,
        text_mask: torch.Tensor,
        audio_mask: torch.Tensor,
        positions: torch.Tensor,
        base_kv: KVBackend,
        res_kv: KVBackend,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run both LMs causally over the prefill. Returns ``(lm_seq, res_seq)`` ``[B, T, H]``;
        the decode loop starts from their last positions. FSQ applies at audio positions only."""
        tm, am = text_mask.to(self.dtype).unsqueeze(-1), audio_mask.to(self.dtype).unsqueeze(-1)
        enc = self.base_lm(embeds, positions, base_kv)
        lm_seq = self.fsq_layer(enc) * am + enc * tm
        res_seq = self.residual_lm(self.fuse(lm_seq, am * feat_embed), positions, res_kv)
        return lm_seq, res_seq

    # ---- decode -----------------------------------------------------------------------
    def decode_step(
        self, patch: torch.Tensor, positions: torch.Tensor, base_kv: KVBackend, res_kv: KVBackend
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Feed the patch just sampled (``[B, P, D]``) at ``positions [B]`` -> ``(lm_h, res_h)``
        ``[B, H]`` for the next patch."""
        emb = self.embed_patches(patch)
        pos = positions.view(-1, 1)
        lm_h = self.fsq_layer(self.base_lm(emb.unsqueeze(1), pos, base_kv)[:, 0])
        res_h = self.residual_lm(self.fuse(lm_h, emb).unsqueeze(1), pos, res_kv)[:, 0]
        return lm_h, res_h

    def dit_condition(self, lm_h: torch.Tensor, res_h: torch.Tensor) -> torch.Tensor:
        """``mu``: ``[B, Hd]`` (v1: sum) or ``[B, 2*Hd]`` (v2: concatenation)."""
        a, b = self.lm_to_dit_proj(lm_h), self.res_to_dit_proj(res_h)
        return torch.cat((a, b), dim=-1) if self.cfg.is_v2 else a + b

    def stop_logits(self, lm_h: torch.Tensor) -> torch.Tensor:
        return self.stop_head(F.silu(self.stop_proj(lm_h)))

    def stop_flags(self, lm_h: torch.Tensor) -> torch.Tensor:
        """``[B]`` bool: the stop head votes to end after the patch made from ``lm_h``."""
        return self.stop_logits(lm_h).argmax(dim=-1) == 1

    def sample_patch(
        self,
        mu: torch.Tensor,
        cond: torch.Tensor,
        noise: torch.Tensor,
        cfg: torch.Tensor,
        timesteps: int,
    ) -> torch.Tensor:
        """``mu [B, M]``, previous patch ``cond [B, P, D]``, ``noise [B, D, P]`` (model dtype),
        guidance ``cfg [B]`` -> the new patch ``[B, P, D]``."""
        cond_t = cond.to(self.dtype).transpose(1, 2)
        out = self.feat_decoder.solve(noise.to(self.dtype), mu, cond_t, cfg, timesteps)
        return out.transpose(1, 2)

    # ---- audio ------------------------------------------------------------------------
    def encode_audio(self, wav: torch.Tensor, padding: str) -> torch.Tensor:
        """``wav [B, T]`` float at ``encode_rate`` -> latent patches ``[B, n, P, D]`` (fp32).

        Pads with zeros to whole patches first: ``"left"`` for prompts (both versions),
        ``"right"`` for VoxCPM2 references, as the official code does.
        """
        step = self.patch_size * self.audio_vae.chunk_size
        extra = -wav.shape[-1] % step
        wav = F.pad(wav.float(), (extra, 0) if padding == "left" else (0, extra))
        mu = self.audio_vae.encode(wav.unsqueeze(1).to(self.device), self.encode_rate)
        b, d, n = mu.shape
        return mu.view(b, d, n // self.patch_size, self.patch_size).permute(0, 2, 3, 1).float()
