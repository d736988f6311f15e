"""Speaking rate by time-scale modification: faster or slower speech at the same pitch.

Signalsmith Stretch (``python-stretch``, MIT) does the work: a phase vocoder with phase locking
that keeps the pitch and avoids the "phasey" sound of a plain vocoder at small factors
(docs/DESIGN.md, *Speaking rate*, has the figures). Its Python binding exposes one call,
``Stretch.process``, which renders a whole buffer on its own: it pre-rolls the stretcher on the
buffer's start and flushes its tail, so the output is exactly ``round(len / rate)`` samples with
the stretcher's latency compensated at both ends. :func:`change_rate` is that call.

:class:`RateStretcher` streams with the same call: it renders overlapping *pieces* of the input
(each with one analysis block of context on either side), cuts between pieces at the quietest
10 ms frame it can find (a breath or a consonant gap, where a seam is not heard) and crossfades
there. Playback starts after one piece (about a third of a second of speech) instead of after
the whole sentence, and the streamed total has the whole-buffer length exactly.
"""

from __future__ import annotations

import numpy as np

from app.errors import VoxDeskError

MIN_RATE = 0.5
MAX_RATE = 2.0
PIECE_S = 0.3  # input rendered per streamed piece, at least
FADE_S = 0.01  # crossfade at a seam between two pieces


def check_rate(rate: float) -> float:
    """``rate`` as a float, or :class:`VoxDeskError` when it is outside 0.5–2.0."""
    try:
        value = float(rate)
    except (TypeError, ValueError):
        raise VoxDeskError(f"The speaking rate must be a number from {MIN_RATE} to {MAX_RATE}.") from None
    if not MIN_RATE <= value <= MAX_RATE:  # also refuses NaN
        raise VoxDeskError(
            f"The speaking rate {rate} is out of range: choose a value from {MIN_RATE} to {MAX_RATE}."
        )
    return value


def _stretcher(sample_rate: int, rate: float):
    from python_stretch.Signalsmith import Stretch

    s = Stretch(0)  # a fixed seed: the same input always gives the same output
    s.preset(1, float(sample_rate))
    s.setTimeFactor(rate)
    return s


def _mono(audio: np.ndarray) -> np.ndarray:
    x = np.asarray(audio, dtype=np.float32)
    if x.ndim != 1:
        raise VoxDeskError("Only mono audio can change its speaking rate: mix it down first.")
    return x


def change_rate(audio: np.ndarray, sample_rate: int, rate: float) -> np.ndarray:
    """``audio`` (mono float32) spoken ``rate`` times as fast, pitch unchanged.

    The result has ``round(len(audio) / rate)`` samples; rate 1.0 returns the input as it is.
    """
    rate = check_rate(rate)
    x = _mono(audio)
    if rate == 1.0 or not len(x):
        return x
    out = _stretcher(sample_rate, rate).process(np.ascontiguousarray(x)[None, :])[0]
    return np.ascontiguousarray(out, dtype=np.float32)


class RateStretcher:
    """:func:`change_rate` for a stream: :meth:`push` each chunk as it comes, :meth:`flush` at
    the end. The concatenated output has ``round(total_in / rate)`` samples, like the whole
    buffer's; rate 1.0 passes every chunk through as it is."""

    def __init__(self, sample_rate: int, rate: float) -> None:
        self.rate = check_rate(rate)
        self.sample_rate = int(sample_rate)
        self._s = _stretcher(sample_rate, self.rate) if self.rate != 1.0 else None
        block = self._s.blockSamples() if self._s is not None else 0
        self._context = block  # input rendered before and after a piece, for the analysis window
        self._piece = max(int(PIECE_S * sample_rate), 2 * block)
        self._fade = max(int(FADE_S * sample_rate / self.rate), 1)  # output samples
        self._frame = max(int(0.01 * sample_rate), 1)
        self._reset()

    def _reset(self) -> None:
        self._buf = np.zeros(0, np.float32)  # input from self._base on
        self._base = 0  # absolute input index of self._buf[0]
        self._cut = 0  # input index up to which output has been emitted (before its tail)
        self._emitted = 0  # output samples emitted
        self._tail = np.zeros(0, np.float32)  # rendered past the last cut, to crossfade into
        self._total_in = 0

    def push(self, chunk: np.ndarray) -> np.ndarray:
        """Feed ``chunk``; returns the output ready so far (often empty at first)."""
        x = _mono(chunk)
        if self._s is None:
            return x
        self._buf = np.concatenate([self._buf, x])
        self._total_in += len(x)
        out: list[np.ndarray] = []
        while self._total_in - self._cut >= self._piece + self._context:
            out.append(self._render(self._quiet_cut()))
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def flush(self) -> np.ndarray:
        """The rest of the output; the stretcher can then be used for a new stream."""
        if self._s is None:
            return np.zeros(0, np.float32)
        out = self._render(self._total_in) if self._total_in > self._cut else None
        self._reset()
        return out if out is not None else np.zeros(0, np.float32)

    # ---- pieces -------------------------------------------------------------------------
    def _quiet_cut(self) -> int:
        """The input index to cut at: the start of the quietest 10 ms frame in the second half
        of the piece, so that a seam falls in a pause rather than inside a vowel."""
        lo = self._cut + self._piece // 2
        hi = self._total_in - self._context - self._frame
        span = self._buf[lo - self._base : hi - self._base + self._frame]
        n = len(span) // self._frame
        if n < 2:
            return hi
        energy = np.square(span[: n * self._frame].reshape(n, self._frame)).sum(axis=1)
        return lo + int(np.argmin(energy)) * self._frame

    def _render(self, cut: int) -> np.ndarray:
        """Emit the output for input ``[self._cut, cut)``, crossfaded into the previous tail;
        keep ``self._fade`` samples past it as the next tail (none at the end of the stream)."""
        final = cut >= self._total_in
        start = max(self._cut - self._context, 0)
        stop = self._total_in if final else min(cut + self._context, self._total_in)
        piece = self._buf[start - self._base : stop - self._base]
        self._s.setTimeFactor(self.rate)
        y = self._s.process(np.ascontiguousarray(piece)[None, :])[0]
        offset = round(start / self.rate)  # output index of y[0]
        end = round(self._total_in / self.rate) if final else round(cut / self.rate)
        keep = 0 if final else self._fade
        seg = y[self._emitted - offset : end + keep - offset]
        # the stretcher rounds its own length: pad a sample or two at the very end if it fell short
        want = end + keep - self._emitted
        if len(seg) < want:
            seg = np.concatenate([seg, np.zeros(want - len(seg), np.float32)])
        seg = seg.astype(np.float32, copy=True)
        n = min(len(self._tail), len(seg))
        if n:
            ramp = np.linspace(0.0, 1.0, n + 2, dtype=np.float32)[1:-1]
            seg[:n] = self._tail[:n] * (1.0 - ramp) + seg[:n] * ramp
        out, self._tail = seg[: len(seg) - keep], seg[len(seg) - keep :]
        self._emitted += len(out)
        self._cut = cut
        drop = max(cut - self._context - self._base, 0)  # input no later piece reads
        self._buf = self._buf[drop:]
        self._base += drop
        return out
