"""Measuring a reference recording for preparation: where the speech starts and ends, and how
loud it is.

Both use 20 ms frames and their RMS level. A frame is *speech* when it is within
``SPEECH_RANGE_DB`` of the loudest frame and above ``FLOOR_DBFS`` (so room noise, breath and a
quiet hiss are not speech, while soft words next to loud ones are). Loudness is the mean power
of the speech frames only (the idea of an "active speech level", ITU-T P.56), so pauses do not
make a recording look quieter than it sounds.
"""

from __future__ import annotations

import math

import numpy as np

FRAME_S = 0.02
SPEECH_RANGE_DB = 40.0
FLOOR_DBFS = -60.0
PAD_S = 0.15  # kept around the speech: cutting at the first loud frame clips soft onsets
TARGET_DBFS = -20.0  # speech level after normalising (typical of broadcast speech)
PEAK_CEILING_DBFS = -1.0


def _frame_db(samples: np.ndarray, rate: int) -> tuple[np.ndarray, int]:
    hop = max(1, int(round(FRAME_S * rate)))
    n = len(samples) // hop
    if n == 0:
        return np.zeros(0), hop
    frames = np.asarray(samples[: n * hop], np.float64).reshape(n, hop)
    power = np.mean(frames * frames, axis=1)
    return 10 * np.log10(np.maximum(power, 1e-12)), hop


def _speech_frames(db: np.ndarray) -> np.ndarray:
    if not len(db):
        return np.zeros(0, bool)
    return db >= max(float(db.max()) - SPEECH_RANGE_DB, FLOOR_DBFS)


def speech_bounds(samples: np.ndarray, rate: int, pad_s: float = PAD_S) -> tuple[int, int] | None:
    """(start, end) in samples of the span from the first to the last speech frame, widened by
    ``pad_s`` each side; None when there is no speech at all."""
    db, hop = _frame_db(samples, rate)
    speech = _speech_frames(db)
    if not speech.any():
        return None
    idx = np.flatnonzero(speech)
    pad = int(round(pad_s * rate))
    return max(0, idx[0] * hop - pad), min(len(samples), (idx[-1] + 1) * hop + pad)


def speech_level_db(samples: np.ndarray, rate: int) -> float | None:
    """Mean power of the speech frames in dBFS (a full-scale sine is -3 dB); None when silent."""
    db, _ = _frame_db(samples, rate)
    speech = _speech_frames(db)
    if not speech.any():
        return None
    return 10 * math.log10(float(np.mean(10 ** (db[speech] / 10))))


def loudness_gain_db(
    samples: np.ndarray, rate: int, target_dbfs: float = TARGET_DBFS, ceiling_dbfs: float = PEAK_CEILING_DBFS
) -> float | None:
    """The gain that brings the speech level to ``target_dbfs``, lowered if needed so the peak
    stays at or below ``ceiling_dbfs`` (no clipping); None when there is no speech."""
    level = speech_level_db(samples, rate)
    if level is None:
        return None
    peak = float(np.max(np.abs(samples), initial=0.0))
    gain = target_dbfs - level
    if peak > 0:
        gain = min(gain, ceiling_dbfs - 20 * math.log10(peak))
    return gain
