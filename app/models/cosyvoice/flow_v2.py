"""CosyVoice2's flow: speech tokens → mel (``CausalMaskedDiffWithXvec.inference``, flow.py:236).

For each row: the prompt's speech tokens then the new ones are embedded (ids clamped at 0,
padding zeroed), encoded by the up-sampling conformer (:mod:`.conformer`, two mel frames per
token) and projected to 80 channels (``encoder_proj``); the speaker embedding is normalised and
projected (``spk_embed_affine_layer``); the condition is the prompt's mel then zeros; the CFM
solver (:mod:`.cfm`: the fixed seed-0 noise table, 10 Euler steps, CFG 0.7) integrates the
U-Net (:mod:`.unet`); the frames after the prompt's are returned.

In a non-final streaming chunk (``finalize=False``) the last ``pre_lookahead_len`` (3) tokens
are only look-ahead context: the mel covers the tokens before them. The official streaming loop
calls the final chunk with ``streaming=False`` (cli/model.py:367-373 passes no ``stream``): full
attention. A batch of rows of different lengths is padded on the right and masked, rows may
differ in ``finalize``; each row computes what it computes alone (to float rounding, not bit for
bit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.cosyvoice import cfm
from app.models.cosyvoice.config import CosyVoiceConfig, Tag
from app.models.cosyvoice.conformer import LOOKAHEAD, UpsampleConformerEncoder
from app.models.cosyvoice.unet import CausalUNet

N_TIMESTEPS = 10  # flow.py:275, hard-coded in the call


def _args(tag: Any, what: str) -> dict[str, Any]:
    if not isinstance(tag, Tag) or not isinstance(tag.args, dict):
        raise VoxDeskError(f"cosyvoice2.yaml has no flow {what} section: not a CosyVoice2 config.")
    return tag.args


class FlowV2(nn.Module):
    """The flow with ``flow.pt``'s keys (``input_embedding``, ``spk_embed_affine_layer``,
    ``encoder.*``, ``encoder_proj``, ``decoder.estimator.*``)."""

    def __init__(
        self,
        encoder: UpsampleConformerEncoder,
        estimator: CausalUNet,
        vocab_size: int = 6561,
        output_size: int = 80,
        spk_embed_dim: int = 192,
        token_mel_ratio: int = 2,
        pre_lookahead_len: int = LOOKAHEAD,
        cfg_rate: float = 0.7,
    ) -> None:
        super().__init__()
        if output_size != cfm.MEL_BINS or token_mel_ratio != encoder.up_layer.stride:
            raise VoxDeskError(f"CosyVoice2 flow with output_size {output_size}, token_mel_ratio "
                               f"{token_mel_ratio}: VoxDesk reads 80 bins, 2 frames a token.")  # fmt: skip
        if pre_lookahead_len != encoder.pre_lookahead_layer.lookahead:
            raise VoxDeskError(f"CosyVoice2 flow with pre_lookahead_len {pre_lookahead_len}: the encoder "
                               f"looks {LOOKAHEAD} tokens ahead.")  # fmt: skip
        self.output_size, self.token_mel_ratio = output_size, token_mel_ratio
        self.pre_lookahead_len, self.cfg_rate = pre_lookahead_len, cfg_rate
        self.input_embedding = nn.Embedding(vocab_size, encoder.dim)
        self.spk_embed_affine_layer = nn.Linear(spk_embed_dim, output_size)
        self.encoder = encoder
        self.encoder_proj = nn.Linear(encoder.dim, output_size)
        self.decoder = nn.Module()
        self.decoder.estimator = estimator
        self.register_buffer("noise", cfm.noise_table(), persistent=False)

    @classmethod
    def from_config(cls, cfg: CosyVoiceConfig) -> FlowV2:
        """Built from ``cosyvoice2.yaml``'s ``flow`` section (values the official defaults fill)."""
        if cfg.family != "cosyvoice2":
            raise VoxDeskError(f"FlowV2 is CosyVoice2's flow; this folder is {cfg.family}.")
        flow = _args(cfg.flow, "")
        decoder = _args(flow.get("decoder"), "decoder")
        params = decoder.get("cfm_params")
        cfg_args = params.args if isinstance(params, Tag) and isinstance(params.args, dict) else {}
        cfg_rate = (cfg_args.get("content") or cfg_args).get("inference_cfg_rate", 0.7)
        return cls(
            UpsampleConformerEncoder.from_args(_args(flow.get("encoder"), "encoder")),
            CausalUNet.from_args(_args(decoder.get("estimator"), "estimator")),
            vocab_size=int(flow.get("vocab_size", 4096)), output_size=int(flow.get("output_size", 80)),
            spk_embed_dim=int(flow.get("spk_embed_dim", 192)),
            token_mel_ratio=int(flow.get("token_mel_ratio", 2)),
            pre_lookahead_len=int(flow.get("pre_lookahead_len", 3)), cfg_rate=float(cfg_rate),
        )  # fmt: skip

    def load(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Load ``flow.pt``'s tensors strictly: a missing, extra or misshapen key is one line."""
        own = self.state_dict()
        missing = sorted(set(own) - set(state_dict))
        extra = sorted(set(state_dict) - set(own))
        if missing or extra:
            first = f"lacks {missing[0]}" if missing else f"has {extra[0]}, which CosyVoice2's flow has not"
            raise VoxDeskError(f"flow.pt {first} ({len(missing)} missing, {len(extra)} unexpected keys): "
                               "not the flow of this cosyvoice2.yaml.")  # fmt: skip
        for key, value in state_dict.items():
            if tuple(value.shape) != tuple(own[key].shape):
                raise VoxDeskError(f"flow.pt: {key} is {tuple(value.shape)}, cosyvoice2.yaml makes it "
                                   f"{tuple(own[key].shape)}: not the flow of this folder.")  # fmt: skip
        self.load_state_dict(state_dict, strict=True)

    @staticmethod
    def _join(a: torch.Tensor, a_len: torch.Tensor, b: torch.Tensor, b_len: torch.Tensor) -> torch.Tensor:
        """Per row ``a[:a_len]`` then ``b[:b_len]``, right-padded with zeros: [B, max(a_len+b_len)]."""
        total = a_len + b_len
        j = torch.arange(int(total.max()), device=a.device).unsqueeze(0)
        from_a = j < a_len.unsqueeze(1)
        ia = j.clamp(max=max(a.shape[1] - 1, 0)).expand(a.shape[0], -1)
        ib = (j - a_len.unsqueeze(1)).clamp(0, max(b.shape[1] - 1, 0))
        pa = a.gather(1, ia) if a.shape[1] else torch.zeros_like(ib)
        pb = b.gather(1, ib) if b.shape[1] else torch.zeros_like(ia)
        return torch.where(from_a, pa, pb) * (j < total.unsqueeze(1))

    @torch.inference_mode()
    def inference(
        self,
        token: torch.Tensor,
        token_len: torch.Tensor,
        prompt_token: torch.Tensor,
        prompt_token_len: torch.Tensor,
        prompt_feat: torch.Tensor,
        prompt_feat_len: torch.Tensor,
        embedding: torch.Tensor,
        streaming: bool,
        finalize: bool | Sequence[bool],
    ) -> torch.Tensor:
        """The mel [B, 80, T] after each row's prompt frames, left-aligned, zeros past a row's
        ``2 * (prompt_token_len + token_len - 3 · not finalize) - prompt_feat_len`` frames
        (``2 * token_len``, less 6 if the row does not finalize, when the prompt mel has two frames
        per prompt token as the frontend trims it). Tokens
        [B, N] / prompt tokens [B, S] long, prompt mel [B, Tp, 80], embedding [B, 192]; each
        ``*_len`` [B] gives a row's unpadded length (a non-final row's includes its 3 look-ahead
        tokens). ``finalize`` may differ per row; ``streaming`` (chunk masks) holds for the batch."""
        device, dtype = self.encoder_proj.weight.device, self.encoder_proj.weight.dtype
        lens = [x.to(device).long().reshape(-1) for x in (token_len, prompt_token_len, prompt_feat_len)]
        token_len, prompt_token_len, prompt_feat_len = lens
        spks = self.spk_embed_affine_layer(F.normalize(embedding.to(device, dtype), dim=1))
        ids = self._join(prompt_token.to(device).long(), prompt_token_len, token.to(device).long(), token_len)
        lengths = prompt_token_len + token_len
        if self.token_mel_ratio * int(lengths.max()) > self.noise.shape[-1]:
            seconds = self.noise.shape[-1] // 50
            raise VoxDeskError(f"CosyVoice2's flow takes at most {seconds} s of speech with its prompt at "
                               "once: split the text into shorter pieces.")  # fmt: skip
        valid = torch.arange(ids.shape[1], device=device).unsqueeze(0) < lengths.unsqueeze(1)
        x = self.input_embedding(ids.clamp(min=0)) * valid.unsqueeze(-1).to(dtype)
        final = torch.as_tensor(finalize, dtype=torch.bool, device=device).expand(ids.shape[0])
        h, mel_lengths = self.encoder(x, lengths, self.pre_lookahead_len * (~final).long(), streaming)
        mu = self.encoder_proj(h).transpose(1, 2).contiguous()  # [B, 80, T]
        frames = mu.shape[-1]
        t = torch.arange(frames, device=device).unsqueeze(0)
        mask = (t < mel_lengths.unsqueeze(1)).unsqueeze(1).to(dtype)
        feat = prompt_feat.to(device, dtype)[:, : min(prompt_feat.shape[1], frames)].transpose(1, 2)
        prompt_frames = (t[:, : feat.shape[-1]] < prompt_feat_len.unsqueeze(1)).unsqueeze(1)
        cond = torch.zeros_like(mu)
        cond[:, :, : feat.shape[-1]] = feat * prompt_frames
        noise = self.noise[:, :, :frames].to(dtype).expand(mu.shape[0], -1, -1)
        mel = cfm.solve(self.decoder.estimator, noise, mu, mask, spks, cond, n_timesteps=N_TIMESTEPS,
                        cfg_rate=self.cfg_rate, streaming=streaming)  # fmt: skip
        out_len = (mel_lengths - prompt_feat_len).clamp(min=0)
        index = (prompt_feat_len.unsqueeze(1) + t[:, : int(out_len.max())]).clamp(max=frames - 1)
        out = mel.gather(2, index.unsqueeze(1).expand(-1, mel.shape[1], -1))
        return out * (t[:, : out.shape[-1]] < out_len.unsqueeze(1)).unsqueeze(1).to(out.dtype)
