"""Speaking rate by time-scale modification: Signalsmith Stretch (MIT, through ``python-stretch``),
pitch unchanged."""

from __future__ import annotations

import numpy as np


def change_rate(audio: np.ndarray, sample_rate: int, rate: float) -> np.ndarray:
    """``audio`` (mono float32) spoken ``rate`` times as fast (0.5–2.0), pitch kept; the result
    has ``round(len(audio) / rate)`` samples. The input is padded with the stretcher's latency in
    silence so its last sound is flushed out rather than cut."""
    import python_stretch as ps

    if not 0.5 <= rate <= 2.0:
        raise ValueError(f"rate must be between 0.5 and 2.0, got {rate}")
    samples = np.asarray(audio, np.float32).reshape(-1)
    want = int(round(len(samples) / rate))
    if rate == 1.0 or len(samples) == 0:
        return samples.copy()
    stretch = ps.Signalsmith.Stretch()
    stretch.preset(1, float(sample_rate))
    stretch.setTimeFactor(float(rate))
    pad = int(stretch.inputLatency() + stretch.outputLatency() * rate)
    padded = np.concatenate([samples, np.zeros(pad, np.float32)])[np.newaxis, :]
    out = stretch.process(padded)[0]
    return np.ascontiguousarray(out[:want], dtype=np.float32)
