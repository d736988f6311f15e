"""Quality and speed of the speaking-rate stretch (app/audio/stretch.py) on speech-like audio.

Not a test: figures for docs/DESIGN.md ("Speaking rate"). CPU only, a few seconds:

    PYTHONPATH=. python tests/bench_stretch.py --out stretch.json

Per rate: duration error, pitch change (semitones), *periodicity* (normalised autocorrelation at
the pitch period over the voiced frames, as a ratio to the input's: a phase vocoder without phase
locking smears the harmonics, "phasiness", and this ratio drops), the same for a textbook phase
vocoder for comparison, the streamed output's distance to the whole-buffer one (mean |dB| over the
loud spectrogram cells) and the speed in times real time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.signal import istft, stft

sys.path.insert(0, str(Path(__file__).parent))
from speechlike import active_seconds, pitch_hz, speech_like  # noqa: E402

from app.audio.stretch import RateStretcher, change_rate  # noqa: E402

SR = 24000


def periodicity(x: np.ndarray) -> float:
    frame = int(0.04 * SR)
    frames = [x[i : i + frame] for i in range(0, len(x) - frame, frame // 2)]
    loud = max(float(np.sqrt(np.mean(f**2))) for f in frames)
    values = []
    for f in frames:
        if np.sqrt(np.mean(f**2)) < 0.3 * loud:
            continue
        f = f - f.mean()
        ac = np.correlate(f, f, "full")[frame - 1 :]
        values.append(ac[SR // 400 : SR // 70].max() / ac[0])
    return float(np.mean(values))


def plain_vocoder(x: np.ndarray, rate: float, n: int = 1024, hop: int = 256) -> np.ndarray:
    """A textbook phase vocoder (no phase locking, no transient handling): the baseline."""
    _, _, spec = stft(x, nperseg=n, noverlap=n - hop)
    steps = np.arange(0, spec.shape[1] - 1, rate)
    omega = 2 * np.pi * hop * np.arange(spec.shape[0]) / n
    phase = np.angle(spec[:, 0])
    out = np.empty((spec.shape[0], len(steps)), complex)
    for t, step in enumerate(steps):
        i = int(step)
        a, b = spec[:, i], spec[:, i + 1]
        mag = (1 - (step - i)) * np.abs(a) + (step - i) * np.abs(b)
        out[:, t] = mag * np.exp(1j * phase)
        delta = np.angle(b) - np.angle(a) - omega
        phase = phase + omega + (delta - 2 * np.pi * np.round(delta / (2 * np.pi)))
    return istft(out, nperseg=n, noverlap=n - hop)[1].astype(np.float32)


def log_spec(x: np.ndarray) -> np.ndarray:
    return 20 * np.log10(np.abs(stft(x, SR, nperseg=1024)[2]) + 1e-4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="stretch.json")
    args = parser.parse_args()
    x = speech_like(SR, syllables=24)
    base_period, base_pitch, said = periodicity(x), pitch_hz(x, SR), active_seconds(x, SR)
    rows = []
    for rate in (0.5, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0):
        t0 = time.perf_counter()
        y = change_rate(x, SR, rate)
        seconds = time.perf_counter() - t0
        st = RateStretcher(SR, rate)
        t0 = time.perf_counter()
        z = np.concatenate([st.push(x[i : i + 1920]) for i in range(0, len(x), 1920)] + [st.flush()])
        stream_seconds = time.perf_counter() - t0
        a, b = log_spec(y), log_spec(z)
        plain = periodicity(plain_vocoder(x, rate))
        loud = a > a.max() - 50
        rows.append(
            {
                "rate": rate,
                "duration_error_pct": round(100 * float(active_seconds(y, SR) * rate / said - 1), 2),
                "pitch_change_semitones": round(12 * float(np.log2(pitch_hz(y, SR) / base_pitch)), 2),
                "periodicity_ratio": round(periodicity(y) / base_period, 3),
                "plain_vocoder_periodicity_ratio": round(plain / base_period, 3),
                "stream_vs_whole_db": round(float(np.abs(a - b)[loud].mean()), 2),
                "whole_x_realtime": round(len(x) / SR / seconds, 1),
                "stream_x_realtime": round(len(x) / SR / stream_seconds, 1),
            }
        )
        print(rows[-1])
    Path(args.out).write_text(json.dumps({"input_seconds": len(x) / SR, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
