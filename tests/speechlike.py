"""A speech-like test signal: voiced syllables (a glottal pulse train with a moving pitch through
formant resonators), unvoiced noise bursts and short gaps, and a pitch estimator for it."""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

FORMANTS = ((700, 1200, 2600), (400, 2000, 2800), (300, 900, 2400), (550, 1700, 2500))


def _resonator(x: np.ndarray, freq: float, bw: float, sr: int) -> np.ndarray:
    r = np.exp(-np.pi * bw / sr)
    a = [1.0, -2 * r * np.cos(2 * np.pi * freq / sr), r * r]
    return lfilter([1.0 - r], a, x)


def speech_like(sr: int = 24000, syllables: int = 8, f0: float = 140.0, seed: int = 0) -> np.ndarray:
    """About 0.3 s per syllable: a noise burst (a consonant), a vowel whose pitch glides ±15 %
    around ``f0``, then a short gap. Mono float32, peak about 0.5."""
    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    for i in range(syllables):
        burst = rng.normal(0, 0.05, int(0.05 * sr)) * np.hanning(int(0.05 * sr))
        n = int(0.22 * sr)
        t = np.arange(n) / sr
        pitch = f0 * (1 + 0.15 * np.sin(2 * np.pi * (1.5 + 0.3 * i) * t + i))
        phase = np.cumsum(pitch / sr)
        pulses = np.diff(np.floor(phase), prepend=0.0)  # one impulse per period
        vowel = np.zeros(n)
        for freq, bw in zip(FORMANTS[i % len(FORMANTS)], (80, 100, 150), strict=True):
            vowel += _resonator(pulses, freq, bw, sr)
        vowel *= np.hanning(n)
        vowel /= np.abs(vowel).max() + 1e-9
        parts += [burst, 0.5 * vowel, np.zeros(int(0.03 * sr))]
    return np.concatenate(parts).astype(np.float32)


def pitch_hz(x: np.ndarray, sr: int, lo: float = 70.0, hi: float = 400.0) -> float:
    """Median autocorrelation pitch of the loud (voiced) 40 ms frames."""
    frame = int(0.04 * sr)
    frames = [x[i : i + frame] for i in range(0, len(x) - frame, frame // 2)]
    loud = max(float(np.sqrt(np.mean(f**2))) for f in frames)
    estimates = []
    for f in frames:
        if np.sqrt(np.mean(f**2)) < 0.3 * loud:
            continue
        f = f - f.mean()
        ac = np.correlate(f, f, "full")[frame - 1 :]
        a, b = int(sr / hi), int(sr / lo)
        lag = a + int(np.argmax(ac[a:b]))
        estimates.append(sr / lag)
    return float(np.median(estimates))


def active_seconds(x: np.ndarray, sr: int, floor: float = 0.01) -> float:
    """From the first to the last sample above ``floor``: the duration of what is said."""
    idx = np.flatnonzero(np.abs(x) > floor)
    return (idx[-1] - idx[0] + 1) / sr if len(idx) else 0.0
