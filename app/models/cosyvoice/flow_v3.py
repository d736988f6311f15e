"""CosyVoice3's flow (``CausalMaskedDiffWithDiT.inference``, ``cosyvoice/flow/flow.py`` at ace7c47):
speech tokens -> mel frames, for a batch of requests.

Per row: the prompt's speech tokens then the new ones are embedded (ids clamped at 0, padding
zeroed), pass the look-ahead layer (a convolution over each token and the next 3, a causal one,
a residual), are repeated twice (25 tokens/s -> 50 mel frames/s) and become ``mu``; ``cond`` is
the prompt's mel then zeros; the speaker vector is ``Linear(normalize(embedding))``; the CFM
solver (:mod:`app.models.cosyvoice.cfm`, the fixed noise table) with the DiT
(:mod:`app.models.cosyvoice.dit`) draws the mel, and the frames after the prompt's are returned.

In a streaming chunk that is not the last (``finalize`` False) the last 3 tokens are only the
look-ahead of the others: the official code passes them as the layer's ``context`` and gets 3
fewer outputs. Here every row runs over all its tokens and keeps its first ``n - 3`` outputs,
which are the same numbers (an output sees its own token and the next 3, all present), so rows
that finalize and rows that do not share one batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.cosyvoice import cfm
from app.models.cosyvoice.config import CosyVoiceConfig, Tag
from app.models.cosyvoice.dit import DiT
from app.models.cosyvoice.flow_graphs import GraphedEstimator

ESTIMATOR = "estimator."
ESTIMATOR_FILE = "decoder.estimator."  # flow.pt's name for the DiT: the official CFM object holds it


def _file_key(name: str) -> str:
    """``flow.pt``'s key of this module's parameter or buffer ``name``."""
    return ESTIMATOR_FILE + name[len(ESTIMATOR) :] if name.startswith(ESTIMATOR) else name


class PreLookaheadLayer(nn.Module):
    """``conv1`` (kernel ``lookahead + 1``, over a token and the next ``lookahead``; zeros past the
    end), leaky ReLU, ``conv2`` (kernel 3, causal), plus the input."""

    def __init__(self, channels: int, hidden: int, lookahead: int) -> None:
        super().__init__()
        self.lookahead = lookahead
        self.conv1 = nn.Conv1d(channels, hidden, kernel_size=lookahead + 1)
        self.conv2 = nn.Conv1d(hidden, channels, kernel_size=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` [B, N, C] -> [B, N, C]."""
        h = F.leaky_relu(self.conv1(F.pad(x.transpose(1, 2), (0, self.lookahead))))
        h = self.conv2(F.pad(h, (self.conv2.kernel_size[0] - 1, 0)))
        return h.transpose(1, 2) + x


def _int(tag: Tag, key: str, name: str) -> int:
    value = tag.get(key)
    if type(value) is not int or value <= 0:
        raise VoxDeskError(
            f"cosyvoice3.yaml: the flow's {name} '{key}' is missing or not a positive whole number."
        )
    return value


class FlowV3(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        mel_dim: int,
        spk_embed_dim: int,
        lookahead_channels: int,
        lookahead: int,
        token_mel_ratio: int,
        estimator: DiT,
        cfg_rate: float = 0.7,
        n_timesteps: int = 10,
    ) -> None:
        super().__init__()
        self.token_mel_ratio = token_mel_ratio
        self.lookahead = lookahead
        self.cfg_rate = cfg_rate
        self.n_timesteps = n_timesteps
        self.input_embedding = nn.Embedding(vocab_size, mel_dim)
        self.spk_embed_affine_layer = nn.Linear(spk_embed_dim, mel_dim)
        self.pre_lookahead_layer = PreLookaheadLayer(mel_dim, lookahead_channels, lookahead)
        self.estimator = estimator
        self.register_buffer("noise", cfm.noise_table(), persistent=False)
        self.graphed: GraphedEstimator | None = None  # set on CUDA by the runner (flow_graphs.py)

    @classmethod
    def from_config(cls, config: CosyVoiceConfig) -> FlowV3:
        """The sizes from the yaml's ``flow: !new:cosyvoice.flow.flow.CausalMaskedDiffWithDiT``."""
        if config.family != "cosyvoice3":
            raise VoxDeskError(f"FlowV3 runs CosyVoice3's flow, not {config.family}'s.")
        flow = config.flow
        layer, decoder = flow.get("pre_lookahead_layer"), flow.get("decoder")
        estimator = decoder.get("estimator") if isinstance(decoder, Tag) else None
        if not (isinstance(layer, Tag) and isinstance(estimator, Tag)):
            raise VoxDeskError("cosyvoice3.yaml: the flow has no pre_lookahead_layer or decoder estimator.")
        if flow.get("output_size", 80) != cfm.MEL_BINS or flow.get("input_size", 80) != cfm.MEL_BINS:
            raise VoxDeskError(
                f"cosyvoice3.yaml: the flow's input/output sizes must be {cfm.MEL_BINS} mel bins."
            )
        params = decoder.get("cfm_params")
        content = params.get("content", {}) if isinstance(params, Tag) else {}
        return cls(
            vocab_size=_int(flow, "vocab_size", "flow"),
            mel_dim=cfm.MEL_BINS,
            spk_embed_dim=_int(flow, "spk_embed_dim", "flow"),
            lookahead_channels=_int(layer, "channels", "pre_lookahead_layer"),
            lookahead=_int(flow, "pre_lookahead_len", "flow"),
            token_mel_ratio=_int(flow, "token_mel_ratio", "flow"),
            estimator=DiT.from_tag(estimator),
            cfg_rate=float(content.get("inference_cfg_rate", 0.7)),
        )

    def load(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Strictly from ``flow.pt``'s keys and shapes (the DiT's under ``decoder.estimator.``)."""
        own = self.state_dict()
        names = {_file_key(k): k for k in own}
        problems = [f"no '{k}'" for k in names if k not in state_dict]
        problems += [f"an unknown '{k}'" for k in state_dict if k not in names]
        problems += [
            f"'{k}' of shape {list(v.shape)}, not {list(own[names[k]].shape)}"
            for k, v in state_dict.items()
            if k in names and v.shape != own[names[k]].shape
        ]
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise VoxDeskError(f"flow.pt does not fit its cosyvoice3.yaml: it has {problems[0]}{more}.")
        self.load_state_dict({names[k]: v for k, v in state_dict.items()}, strict=True)

    def frames(
        self, token_len: torch.Tensor, prompt_token_len: torch.Tensor, finalize: torch.Tensor
    ) -> torch.Tensor:
        """Per row, the mel frames the solver runs over: 2 per prompt and new token, less the 3
        look-ahead tokens of a row that does not finalize. The rows of :meth:`inference`'s output
        hold the frames after the prompt's: ``frames(...) - prompt_feat_len``."""
        kept = prompt_token_len + token_len - self.lookahead * (~finalize).long()
        return kept * self.token_mel_ratio

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
        """``token`` [B, N], ``prompt_token`` [B, S], ``prompt_feat`` [B, Tp, 80], ``embedding``
        [B, 192], lengths [B] -> the mel after each row's prompt frames [B, 80, T], zeros past a
        row's ``frames(...) - prompt_feat_len``. ``finalize`` may differ per row;
        ``streaming`` (chunk attention masks) holds for the batch."""
        device = self.input_embedding.weight.device
        dtype = self.spk_embed_affine_layer.weight.dtype
        b = token.shape[0]
        token_len = token_len.to(device).long()
        prompt_len = prompt_token_len.to(device).long()
        feat_len = prompt_feat_len.to(device).long()
        final = torch.as_tensor(finalize, dtype=torch.bool, device=device).expand(b)
        spks = self.spk_embed_affine_layer(F.normalize(embedding.to(device, dtype), dim=1))

        # prompt tokens then new tokens, each row packed to the left
        total = prompt_len + token_len
        width = int(total.max())
        pos = torch.arange(width, device=device).unsqueeze(0)
        joined = torch.cat([prompt_token.to(device).long(), token.to(device).long()], dim=1)
        shift = torch.where(pos < prompt_len[:, None], pos, pos - prompt_len[:, None] + prompt_token.shape[1])
        ids = joined.gather(1, shift.clamp(0, joined.shape[1] - 1))
        valid = (pos < total[:, None]).unsqueeze(-1)
        x = self.input_embedding(ids.clamp(min=0)) * valid.to(dtype)
        h = self.pre_lookahead_layer(x).repeat_interleave(self.token_mel_ratio, dim=1)

        frames = self.frames(token_len, prompt_len, final)
        length = int(frames.max())
        h = h[:, :length]
        mel_pos = torch.arange(length, device=device).unsqueeze(0)
        mask = (mel_pos < frames[:, None]).to(dtype).unsqueeze(1)
        feat = prompt_feat.to(device, dtype)[:, :length]
        in_prompt = (mel_pos[:, : feat.shape[1]] < feat_len[:, None]).unsqueeze(-1)
        cond = torch.zeros(b, length, cfm.MEL_BINS, device=device, dtype=dtype)
        cond[:, : feat.shape[1]] = feat * in_prompt
        noise = self.noise[:, :, :length].expand(b, -1, -1)
        mu, cond = h.transpose(1, 2), cond.transpose(1, 2)
        steps, rate = self.n_timesteps, self.cfg_rate
        estimator = self.graphed or self.estimator
        mel = cfm.solve(estimator, noise, mu, mask, spks, cond, steps, rate, streaming=streaming)

        out_len = (frames - feat_len).clamp(min=0)
        out_pos = torch.arange(int(out_len.max()), device=device).unsqueeze(0)
        src = (feat_len[:, None] + out_pos).clamp(max=length - 1)
        out = mel.gather(2, src.unsqueeze(1).expand(-1, mel.shape[1], -1))
        return out * (out_pos < out_len[:, None]).unsqueeze(1).to(out.dtype)
