"""Cut a recording into training clips at its pauses.

Energy-based, on 30 ms frames: a frame is silent when it is more than :data:`RELATIVE_DB`
below the recording's loud frames (their 95th percentile) or under :data:`FLOOR_DB` dBFS.
That is enough for what this is given — one speaker reading into one microphone, where the
pauses are the quietest parts by far — so no voice-activity model is downloaded or bundled
(the deps hold none: sherpa-onnx's VAD needs a Silero model file, webrtcvad is unmaintained).

Clips are grown pause by pause while they stay within :data:`MAX_SECONDS`; a stretch with no
pause at all is cut at its quietest frame. Each clip keeps :data:`MARGIN_S` of its pauses so
no word onset is cut. Clips shorter than :data:`MIN_SECONDS` (a lone word between long pauses)
are returned too: the data set flags them rather than dropping anything silently.
"""

from __future__ import annotations

import numpy as np

MIN_SECONDS, MAX_SECONDS = 3.0, 15.0
FRAME_S = 0.03
MIN_PAUSE_S = 0.25  # a silent run this long is a place to cut
MARGIN_S = 0.1
RELATIVE_DB, FLOOR_DB = 35.0, -50.0


def frame_db(samples: np.ndarray, rate: int) -> np.ndarray:
    """Level of each 30 ms frame in dBFS."""
    n = max(1, int(FRAME_S * rate))
    count = max(1, len(samples) // n)
    frames = np.zeros((count, n), np.float32)
    usable = samples[: count * n]
    frames.reshape(-1)[: len(usable)] = usable
    rms = np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-10))


def voiced_frames(samples: np.ndarray, rate: int) -> np.ndarray:
    """Bool per 30 ms frame: loud enough to be speech."""
    db = frame_db(samples, rate)
    loud = float(np.percentile(db, 95))
    return db > max(FLOOR_DB, loud - RELATIVE_DB)


def _pauses(voiced: np.ndarray, min_frames: int) -> list[tuple[int, int]]:
    """``(start, end)`` frame ranges of silent runs of at least ``min_frames``."""
    runs, start = [], None
    for i, v in enumerate(np.append(voiced, True)):
        if not v and start is None:
            start = i
        elif v and start is not None:
            if i - start >= min_frames:
                runs.append((start, i))
            start = None
    return runs


def slice_on_silence(
    samples: np.ndarray, rate: int, max_seconds: float = MAX_SECONDS
) -> list[tuple[int, int]]:
    """Sample ranges ``(start, end)`` of the clips in ``samples`` (mono), in order."""
    voiced = voiced_frames(samples, rate)
    if not voiced.any():
        return []
    frame = max(1, int(FRAME_S * rate))
    limit = int(max_seconds / FRAME_S)
    margin = int(MARGIN_S / FRAME_S)
    # Speech stretches between pauses, in frames.
    stretches, pos = [], 0
    for a, b in _pauses(voiced, int(MIN_PAUSE_S / FRAME_S)) + [(len(voiced), len(voiced))]:
        if a > pos:
            stretches.append((pos, a))
        pos = b
    stretches = [(a, b) for a, b in stretches if voiced[a:b].any()]
    clips: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for a, b in stretches:
        while b - a > limit - 2 * margin:  # no pause for too long: cut at the quietest frame
            db = frame_db(samples[a * frame : (a + limit) * frame], rate)
            low = (limit * 3) // 5
            cut = a + low + int(np.argmin(db[low : limit - 2 * margin]))
            if cur is not None:
                clips.append(cur)
                cur = None
            clips.append((a, cut))
            a = cut
        if cur is not None and b - cur[0] + 2 * margin <= limit:
            cur = (cur[0], b)
        else:
            if cur is not None:
                clips.append(cur)
            cur = (a, b)
    if cur is not None:
        clips.append(cur)
    total = len(samples)
    return [(max(0, (a - margin) * frame), min(total, (b + margin) * frame)) for a, b in clips]
