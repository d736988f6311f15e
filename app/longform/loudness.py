"""Loudness and peak of a long mono stream, measured chunk by chunk (a 10-hour book never in memory).

Integrated loudness follows ITU-R BS.1770-4 as pyloudnorm implements it (the K-weighting biquads
from pyloudnorm's own filter designer, 400 ms gating blocks every 100 ms, the -70 LUFS absolute
and -10 LU relative gates), so the figure equals ``pyloudnorm.Meter(rate).integrated_loudness``
on the whole array. The filter state is carried between chunks and the energy is kept per
100 ms hop (one float per hop: 3 MB for 10 hours), from which every gating block is summed.

The peak is the true peak of BS.1770-4 Annex 2: the stream upsampled 4x (soxr, streaming) and
its largest magnitude, which catches the inter-sample overs a lossy encoder reproduces.
"""

from __future__ import annotations

import math
from array import array

import numpy as np
import soxr
from pyloudnorm.iirfilter import IIRfilter
from scipy.signal import sosfilt

BLOCK_S = 0.4  # gating block (BS.1770-4)
HOP_S = 0.1  # 75 % overlap
ABSOLUTE_GATE = -70.0
RELATIVE_GATE = -10.0
OVERSAMPLE = 4


def _k_weighting(rate: int) -> np.ndarray:
    """The two K-weighting stages as second-order sections (pyloudnorm's 'K-weighting' designs)."""
    stages = (
        IIRfilter(4.0, 1 / math.sqrt(2), 1500.0, rate, "high_shelf"),
        IIRfilter(0.0, 0.5, 38.0, rate, "high_pass"),
    )
    return np.array([np.concatenate([f.b * f.passband_gain, f.a]) for f in stages])


class LoudnessMeter:
    """Feed mono float samples with :meth:`add`; read :meth:`integrated` and :attr:`true_peak`."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.samples = 0
        self.true_peak = 0.0  # linear: the larger of the samples' and the 4x oversampled stream's
        self._sos = _k_weighting(rate)
        self._zi = np.zeros((len(self._sos), 2))
        self._hops = array("d")  # energy (sum of squares) of each 100 ms hop
        self._partial = 0.0  # energy since the last hop boundary
        self._upsampler = soxr.ResampleStream(rate, rate * OVERSAMPLE, 1, dtype="float32", quality="HQ")

    def _boundary(self, k: int) -> int:
        """First sample of hop ``k``, computed as pyloudnorm computes its block bounds."""
        return int(BLOCK_S * (k * HOP_S / BLOCK_S) * self.rate)

    def add(self, samples: np.ndarray) -> None:
        if not len(samples):
            return
        weighted, self._zi = sosfilt(self._sos, samples.astype(np.float64), zi=self._zi)
        energy = np.concatenate([[0.0], np.cumsum(weighted * weighted)])
        start, end = self.samples, self.samples + len(samples)
        cut = 0
        while (bound := self._boundary(len(self._hops) + 1)) <= end:
            i = bound - start
            self._hops.append(self._partial + energy[i] - energy[cut])
            self._partial, cut = 0.0, i
        self._partial += energy[-1] - energy[cut]
        self.samples = end
        samples = np.asarray(samples, np.float32)
        self._peak(samples)  # the samples themselves too: soxr's filter slightly dulls the top octave
        self._peak(self._upsampler.resample_chunk(samples, last=False))

    def _peak(self, samples: np.ndarray) -> None:
        if len(samples):
            self.true_peak = max(self.true_peak, float(np.max(np.abs(samples))))

    def finish(self) -> None:
        """Flush the oversampler (the last few samples' peak); call once after the last :meth:`add`."""
        self._peak(self._upsampler.resample_chunk(np.zeros(0, np.float32), last=True))

    def integrated(self) -> float:
        """Gated integrated loudness in LUFS; ``-inf`` for silence or less than one 400 ms block."""
        seconds = self.samples / self.rate
        if seconds < BLOCK_S:
            return -math.inf
        hops = np.append(np.frombuffer(self._hops, dtype=np.float64), self._partial)
        per_block = round(BLOCK_S / HOP_S)
        count = int(round((seconds - BLOCK_S) / HOP_S)) + 1
        padded = np.concatenate([hops, np.zeros(per_block)])
        sums = np.cumsum(np.concatenate([[0.0], padded]))
        z = (sums[per_block : per_block + count] - sums[:count]) / (BLOCK_S * self.rate)
        with np.errstate(divide="ignore"):
            blocks = -0.691 + 10.0 * np.log10(z)
        gated = z[blocks >= ABSOLUTE_GATE]
        if not len(gated):
            return -math.inf
        relative = -0.691 + 10.0 * math.log10(gated.mean()) + RELATIVE_GATE
        kept = z[(blocks > relative) & (blocks > ABSOLUTE_GATE)]
        if not len(kept):
            return -math.inf
        return -0.691 + 10.0 * math.log10(kept.mean())

    @property
    def true_peak_db(self) -> float:
        return 20.0 * math.log10(self.true_peak) if self.true_peak > 0 else -math.inf
