"""Loudness and peak of a long mono stream, measured chunk by chunk (a 10-hour book never in memory).

Integrated loudness follows ITU-R BS.1770-4 as pyloudnorm implements it (the K-weighting as two
biquads designed for the stream's own rate with the Audio EQ Cookbook's shelf and high-pass, 400 ms
gating blocks every 100 ms, the -70 LUFS absolute and -10 LU relative gates), so the figure equals
``pyloudnorm.Meter(rate).integrated_loudness`` on the whole array (tests/test_audiobook_export.py).
The biquads run in FFmpeg (PyAV's filter graph, 64-bit), which carries their state from chunk to
chunk; the energy is kept per 100 ms hop (one float per hop: 3 MB for 10 hours), from which every
gating block is summed. So the export needs neither SciPy nor pyloudnorm at run time.

The peak is the true peak of BS.1770-4 Annex 2: the stream upsampled 4x (soxr, streaming) and
its largest magnitude, which catches the inter-sample overs a lossy encoder reproduces.
"""

from __future__ import annotations

import math
from array import array

import av
import numpy as np
import soxr

BLOCK_S = 0.4  # gating block (BS.1770-4)
HOP_S = 0.1  # 75 % overlap
ABSOLUTE_GATE = -70.0
RELATIVE_GATE = -10.0
OVERSAMPLE = 4


def _k_weighting(rate: int) -> list[tuple[float, ...]]:
    """The K-weighting stages' (b0, b1, b2, a0, a1, a2) at ``rate``: a +4 dB high shelf at 1,500 Hz
    (Q 1/sqrt 2) and a 38 Hz high-pass (Q 0.5), with the Cookbook's formulas, normalised to a0 = 1."""
    stages = []
    for kind, gain_db, q, fc in (("shelf", 4.0, 1 / math.sqrt(2), 1500.0), ("highpass", 0.0, 0.5, 38.0)):
        a = 10 ** (gain_db / 40)
        w0 = 2 * math.pi * fc / rate
        cos, alpha = math.cos(w0), math.sin(w0) / (2 * q)
        if kind == "shelf":
            root = 2 * math.sqrt(a) * alpha
            b = (
                a * (a + 1 + (a - 1) * cos + root),
                -2 * a * (a - 1 + (a + 1) * cos),
                a * (a + 1 + (a - 1) * cos - root),
            )
            den = (a + 1 - (a - 1) * cos + root, 2 * (a - 1 - (a + 1) * cos), a + 1 - (a - 1) * cos - root)
        else:
            b = ((1 + cos) / 2, -(1 + cos), (1 + cos) / 2)
            den = (1 + alpha, -2 * cos, 1 - alpha)
        stages.append(tuple(x / den[0] for x in (*b, *den)))
    return stages


class _Filter:
    """The K-weighting biquads as an FFmpeg filter graph, fed and drained chunk by chunk."""

    def __init__(self, rate: int) -> None:
        self._graph = av.filter.Graph()
        chain = [self._graph.add_abuffer(format="dbl", sample_rate=rate, layout="mono")]
        for coefficients in _k_weighting(rate):
            names = ("b0", "b1", "b2", "a0", "a1", "a2")
            args = ":".join(f"{k}={v:.17g}" for k, v in zip(names, coefficients, strict=True))
            chain.append(self._graph.add("biquad", args + ":precision=f64"))
        chain.append(self._graph.add("abuffersink"))
        for source, sink in zip(chain[:-1], chain[1:], strict=True):
            source.link_to(sink)
        self._graph.configure()
        self._rate, self._pts = rate, 0

    def __call__(self, samples: np.ndarray | None) -> np.ndarray:
        """The filtered samples that are ready; ``None`` flushes the graph."""
        if samples is None:
            self._graph.push(None)
        else:
            frame = av.AudioFrame.from_ndarray(
                samples.astype(np.float64)[None, :], format="dbl", layout="mono"
            )
            frame.sample_rate, frame.pts = self._rate, self._pts
            self._pts += len(samples)
            self._graph.push(frame)
        out = []
        while True:
            try:
                out.append(self._graph.pull().to_ndarray().reshape(-1))
            except (av.error.BlockingIOError, av.error.EOFError):
                return np.concatenate(out) if out else np.zeros(0)


class LoudnessMeter:
    """Feed mono float samples with :meth:`add`; read :meth:`integrated` and :attr:`true_peak`."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.samples = 0
        self.true_peak = 0.0  # linear: the larger of the samples' and the 4x oversampled stream's
        self._filter = _Filter(rate)
        self._hops = array("d")  # energy (sum of squares) of each 100 ms hop
        self._partial = 0.0  # energy since the last hop boundary
        self._upsampler = soxr.ResampleStream(rate, rate * OVERSAMPLE, 1, dtype="float32", quality="HQ")

    def _boundary(self, k: int) -> int:
        """First sample of hop ``k``, computed as pyloudnorm computes its block bounds."""
        return int(BLOCK_S * (k * HOP_S / BLOCK_S) * self.rate)

    def add(self, samples: np.ndarray) -> None:
        if not len(samples):
            return
        samples = np.asarray(samples, np.float32)
        self._peak(samples)  # the samples themselves too: soxr's filter slightly dulls the top octave
        self._peak(self._upsampler.resample_chunk(samples, last=False))
        self._energy(self._filter(samples))

    def _energy(self, weighted: np.ndarray) -> None:
        """Add K-weighted samples to the hops' energies."""
        if not len(weighted):
            return
        energy = np.concatenate([[0.0], np.cumsum(weighted * weighted)])
        start, end = self.samples, self.samples + len(weighted)
        cut = 0
        while (bound := self._boundary(len(self._hops) + 1)) <= end:
            i = bound - start
            self._hops.append(self._partial + energy[i] - energy[cut])
            self._partial, cut = 0.0, i
        self._partial += energy[-1] - energy[cut]
        self.samples = end

    def _peak(self, samples: np.ndarray) -> None:
        if len(samples):
            self.true_peak = max(self.true_peak, float(np.max(np.abs(samples))))

    def finish(self) -> None:
        """Flush the filters and the oversampler; call once after the last :meth:`add`."""
        self._energy(self._filter(None))
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
