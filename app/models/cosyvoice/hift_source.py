"""The excitation half of CosyVoice's HiFT vocoder: mel → F0 → a harmonic source signal.

As the official code computes it (FunAudioLLM/CosyVoice ``cosyvoice/hifigan/f0_predictor.py``
and ``generator.py`` at ace7c47) for 24 kHz models, where both CosyVoice2 and CosyVoice3 take
``SineGen2`` (``SineGen`` is CosyVoice1's, at 22.05 kHz):

- the F0 predictor: five weight-normed convs with ELU, a linear layer, ``abs``; CosyVoice3's
  convs are causal (the first looks 3 frames ahead) and the whole predictor runs in float64;
- the source: F0 upsampled ×480 (nearest) and its 9 harmonics; each harmonic's phase
  increment is averaged down to one value per frame (linear interpolation), summed, and
  stretched back (CosyVoice2: linear, CosyVoice3: nearest); ``sin`` × 0.1, zero where F0 ≤ 10,
  plus noise (0.003 voiced, 0.1/3 unvoiced); merged by ``tanh(linear(·))`` into one channel;
- the random numbers: CosyVoice2 draws an initial phase ``rand(B, 9)`` and ``randn`` noise at
  every call, then one more ``randn`` of the uv shape whose values are unused (it still moves
  the generator). CosyVoice3 uses tables drawn when the official model is built
  (:class:`SourceTables`).
"""

from __future__ import annotations

import math
import threading

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError

SINE_AMP = 0.1
NOISE_STD = 0.003
TABLE_SAMPLES = 300 * 24000  # CosyVoice3's tables: 300 s at 24 kHz


class CausalConv1d(nn.Conv1d):
    """A stride-1 conv padded on one side only (official ``CausalConv1d``): ``left`` looks back,
    ``right`` looks ahead. The pad is zeros unless ``context`` (the frames past that edge) is given."""

    def __init__(self, cin: int, cout: int, kernel: int, dilation: int = 1, side: str = "left") -> None:
        super().__init__(cin, cout, kernel, dilation=dilation)
        self.pad = (kernel * dilation - dilation) // 2 * 2 + (kernel + 1) % 2
        self.side = side

    def forward(self, x: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        if context is None:
            context = x.new_zeros(x.shape[0], x.shape[1], self.pad)
        return super().forward(torch.cat([context, x] if self.side == "left" else [x, context], dim=2))


class F0Predictor(nn.Module):
    """``ConvRNNF0Predictor`` (``causal=False``) / ``CausalConvRNNF0Predictor``: mel [B, 80, T] →
    F0 [B, T] (the causal one without ``finalize`` has no zero look-ahead: [B, T - 3])."""

    def __init__(self, in_channels: int, channels: int, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        if causal:
            convs = [CausalConv1d(in_channels, channels, 4, side="right")]
            convs += [CausalConv1d(channels, channels, 3) for _ in range(4)]
        else:
            convs = [nn.Conv1d(in_channels if i == 0 else channels, channels, 3, padding=1) for i in range(5)]
        # Official names: condnet.0, .2, .4, .6, .8 are the convs (ELUs in between).
        self.condnet = nn.Sequential(*(m for conv in convs for m in (conv, nn.ELU())))
        self.classifier = nn.Linear(channels, 1)

    @property
    def look_ahead(self) -> int:
        first = self.condnet[0]
        return first.pad if isinstance(first, CausalConv1d) else 0

    def forward(self, mel: torch.Tensor, finalize: bool = True) -> torch.Tensor:
        x = mel
        if self.causal and not finalize:
            n = self.look_ahead
            x = self.condnet[0](x[:, :, :-n], x[:, :, -n:])
        else:
            x = self.condnet[0](x)
        for layer in self.condnet[1:]:
            x = layer(x)
        return torch.abs(self.classifier(x.transpose(1, 2)).squeeze(-1))


class SourceTables:
    """CosyVoice3's construction-time noise: ``rand_ini`` [1, 9] and ``sine_waves`` [1, 7.2M, 9],
    as the official loader draws them from torch's global generator.

    The official ``CausalConditionalCFM`` calls ``set_all_random_seed(0)`` and draws its noise
    table; the loader then builds, in yaml order, the flow's ``input_embedding`` and
    ``spk_embed_affine_layer``, the HiFT's F0 predictor, and inside the HiFT's source module
    ``rand_ini`` then ``sine_waves`` (then ``l_linear`` and a ``uv`` table that only feeds the
    source module's noise output, which HiFT discards). :meth:`replay` makes the same draws (the
    same torch init calls on tensors of the same shapes) on a generator of its own and keeps the
    generator state where ``sine_waves`` starts: CPU ``rand`` fills a tensor serially, so the
    first ``n`` rows drawn from that state are the table's first ``n`` rows. :meth:`take` draws
    them on demand and keeps the longest prefix drawn so far: memory follows the longest
    utterance vocoded instead of 260 MB at load, and the values are identical.
    """

    def __init__(self, rand_ini: torch.Tensor, sine_state: torch.Tensor) -> None:
        self.rand_ini = rand_ini
        self._state = sine_state
        self._cache: torch.Tensor | None = None
        self._lock = threading.Lock()

    @classmethod
    def replay(cls, vocab: int, token_dim: int, spk_dim: int, mel_dim: int, f0_in: int, f0_channels: int,
               harmonics: int) -> SourceTables:  # fmt: skip
        """``vocab``/``token_dim``: the flow's ``input_embedding``; ``spk_dim``/``mel_dim``: its
        ``spk_embed_affine_layer``; ``f0_in``/``f0_channels``: the F0 predictor's widths;
        ``harmonics``: ``nb_harmonics + 1``."""
        gen = torch.Generator().manual_seed(0)
        torch.randn([1, 80, 50 * 300], generator=gen)  # the CFM's noise table (cfm.noise_table)
        nn.init.normal_(torch.empty(vocab, token_dim), generator=gen)  # nn.Embedding
        _default_init((mel_dim, spk_dim), gen)
        _default_init((f0_channels, f0_in, 4), gen)
        for _ in range(4):
            _default_init((f0_channels, f0_channels, 3), gen)
        _default_init((1, f0_channels), gen)
        rand_ini = torch.rand(1, harmonics, generator=gen)
        rand_ini[:, 0] = 0
        return cls(rand_ini, gen.get_state())

    def take(self, n: int) -> torch.Tensor:
        """The first ``n`` rows of ``sine_waves``: [1, n, 9] float32 on the CPU."""
        if n > TABLE_SAMPLES:
            raise VoxDeskError(f"CosyVoice3's vocoder takes at most {TABLE_SAMPLES // 24000} s of audio per "
                               "call: split the text into shorter pieces.")  # fmt: skip
        with self._lock:
            if self._cache is None or self._cache.shape[1] < n:
                have = 0 if self._cache is None else self._cache.shape[1]
                gen = torch.Generator()
                gen.set_state(self._state)
                self._cache = torch.rand(1, min(TABLE_SAMPLES, max(n, 2 * have)), self.rand_ini.shape[1],
                                         generator=gen)  # fmt: skip
            return self._cache[:, :n]


def _default_init(shape: tuple[int, ...], gen: torch.Generator) -> None:
    """The draws of ``nn.Linear`` / ``nn.Conv1d``'s default init (weight, then bias) for ``shape``."""
    weight = torch.empty(shape)
    nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=gen)
    bound = 1 / math.sqrt(math.prod(shape[1:]))
    nn.init.uniform_(torch.empty(shape[0]), -bound, bound, generator=gen)


class SourceModule(nn.Module):
    """``SourceModuleHnNSF`` with ``SineGen2``: upsampled F0 [B, S, 1] → source [B, S, 1]."""

    def __init__(self, sample_rate: int, upsample: int, harmonics: int, threshold: float,
                 tables: SourceTables | None) -> None:  # fmt: skip
        super().__init__()
        self.sample_rate, self.upsample, self.threshold = sample_rate, upsample, threshold
        self.harmonics = harmonics
        self.tables = tables
        self.l_linear = nn.Linear(harmonics, 1)

    def forward(self, f0: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        with torch.no_grad():
            sines = self._sines(f0, generator)
        return torch.tanh(self.l_linear(sines))

    def _sines(self, f0: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        b, n, _ = f0.shape
        orders = torch.arange(1, self.harmonics + 1, dtype=torch.float32, device=f0.device)
        rad = (f0 * orders / self.sample_rate) % 1
        if self.tables is not None:
            rand_ini = self.tables.rand_ini.to(rad.device)
        else:
            rand_ini = torch.rand(b, self.harmonics, generator=generator).to(rad.device)
            rand_ini[:, 0] = 0
        rad[:, 0, :] = rad[:, 0, :] + rand_ini
        # one phase increment per frame, integrated, then stretched back to samples
        per_frame = F.interpolate(rad.transpose(1, 2), scale_factor=1 / self.upsample, mode="linear")
        phase = torch.cumsum(per_frame, dim=2) * 2 * math.pi
        mode = "nearest" if self.tables is not None else "linear"
        phase = F.interpolate(phase * self.upsample, scale_factor=self.upsample, mode=mode)
        sines = torch.sin(phase.transpose(1, 2)) * SINE_AMP
        uv = (f0 > self.threshold).type(torch.float32)
        amp = uv * NOISE_STD + (1 - uv) * SINE_AMP / 3
        if self.tables is not None:
            noise = self.tables.take(sines.shape[1]).to(sines.device)
        else:
            # The official ``randn_like`` keeps the sines' transposed layout, and torch fills a
            # non-contiguous tensor element by element in memory order with another algorithm than
            # a contiguous one: draw into the same layout to get the same numbers.
            noise = (
                torch.empty(b, self.harmonics, n)
                .transpose(1, 2)
                .normal_(generator=generator)
                .to(sines.device)
            )
            torch.empty(b, n, 1).normal_(generator=generator)  # the official noise branch: unused, but drawn
        return sines * uv + amp * noise
