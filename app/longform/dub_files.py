"""A dub's result files: the timeline track, the per-cue files, the SRT as spoken, the report.

The track is as long as the video (the last cue's end, or a longer ``duration``), silence
between cues, each cue's fitted take at its cue's start. It is written block by block straight
into the (atomic) file: the whole track is never held in memory. A take that overruns its slot
still plays whole (over the next cue if it reaches it, reported in ``report.json``/``report.txt``);
what runs past the end of the track is cut there, and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app import atomic
from app.errors import VoxDeskError
from app.export import ExportExists, srt_time
from app.longform.dub import CueResult
from app.longform.subtitles import Cue

TRACK = "track.wav"
CUES = "cues"
SPOKEN_SRT = "spoken.srt"
REPORT_JSON = "report.json"
REPORT_TXT = "report.txt"
BLOCK_S = 10.0  # seconds of track assembled at a time
WAV_LIMIT = 4_000_000_000  # bytes: past this a WAV header overflows, RF64 holds it


@dataclass(frozen=True)
class DubFiles:
    track: Path | None
    cues: list[Path]
    srt: Path | None
    report_json: Path | None
    report_txt: Path | None


def track_seconds(cues: Sequence[Cue], duration: float | None) -> float:
    """The track's length: ``duration`` (the video's), or the last cue's end; a duration shorter
    than the subtitles is refused."""
    end = max((c.end for c in cues), default=0.0)
    if duration is None:
        return end
    if duration < end:
        raise VoxDeskError(
            f"The duration {duration:g} s is shorter than the subtitles (the last cue ends at "
            f"{srt_time(end)}): give the video's full length, or leave it out."
        )
    return float(duration)


def existing(folder: Path, cues: Sequence[Cue]) -> list[Path]:
    """The result files a dub of ``cues`` into ``folder`` would replace (checked before a run)."""
    paths = [folder / n for n in (TRACK, SPOKEN_SRT, REPORT_JSON, REPORT_TXT)]
    paths += [cue_path(folder, c.number, len(cues)) for c in cues]
    return [p for p in paths if p.exists()]


def cue_path(folder: Path, number: int, count: int) -> Path:
    return folder / CUES / f"cue_{number:0{max(4, len(str(count)))}d}.wav"


def overruns(results: Sequence[CueResult]) -> list[CueResult]:
    return [r for r in results if r.status == "overrun"]


def amount(seconds: float) -> str:
    """An overrun as people read it: '0.4 s', or '7 ms' under a tenth of a second."""
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def summary(results: Sequence[CueResult]) -> str:
    """'48 of 50 cues fit; 2 overrun: #12 by 0.4 s, #31 by 1.1 s' (plus silent/failed counts)."""
    spoken = [r for r in results if r.status in ("fit", "overrun")]
    over = overruns(results)
    text = f"{len(spoken) - len(over)} of {len(spoken)} cues fit"
    if over:
        items = ", ".join(f"#{r.cue.number} by {amount(r.overrun)}" for r in over)
        text += f"; {len(over)} overrun: {items}"
    extra = [
        f"{n} {what}"
        for what in ("silent", "failed", "cancelled")
        if (n := sum(r.status == what for r in results))
    ]
    return text + (f" ({', '.join(extra)})" if extra else "")


def export_dub(
    folder: str | Path,
    results: Sequence[CueResult],
    sample_rate: int,
    duration: float | None = None,
    *,
    track: bool = True,
    cues: bool = True,
    spoken_srt: bool = True,
    report: bool = True,
    overwrite: bool = False,
) -> DubFiles:
    """Write the chosen files into ``folder``; existing ones raise :class:`ExportExists` first
    (nothing written) unless ``overwrite``."""
    folder = Path(folder)
    seconds = track_seconds([r.cue for r in results], duration)
    voiced = [r for r in results if r.audio is not None and len(r.audio)]
    cue_files = [cue_path(folder, r.cue.number, len(results)) for r in voiced] if cues else []
    named = [folder / n for n, on in ((TRACK, track), (SPOKEN_SRT, spoken_srt), (REPORT_JSON, report),
                                      (REPORT_TXT, report)) if on]  # fmt: skip
    existing = [p for p in named + cue_files if p.exists()]
    if existing and not overwrite:
        raise ExportExists(existing)
    from app.audio.io import write_audio

    for r, path in zip(voiced, cue_files, strict=True):
        write_audio(path, r.audio, sample_rate)
    if track:
        write_track(folder / TRACK, results, sample_rate, seconds)
    if spoken_srt:
        atomic.write_text(folder / SPOKEN_SRT, to_spoken_srt(results))
    if report:
        atomic.write_json(folder / REPORT_JSON, report_data(results, sample_rate, seconds))
        atomic.write_text(folder / REPORT_TXT, report_text(results, seconds))
    return DubFiles(
        folder / TRACK if track else None,
        cue_files,
        folder / SPOKEN_SRT if spoken_srt else None,
        folder / REPORT_JSON if report else None,
        folder / REPORT_TXT if report else None,
    )


def write_track(path: Path, results: Sequence[CueResult], sample_rate: int, seconds: float) -> None:
    """The timeline, streamed: each block sums the takes that reach into it (16-bit PCM)."""
    import soundfile as sf

    total = int(round(seconds * sample_rate))
    placed = sorted(
        (int(round(r.cue.start * sample_rate)), r.audio)
        for r in results
        if r.audio is not None and len(r.audio)
    )
    fmt = "RF64" if total * 2 > WAV_LIMIT else "WAV"
    block = int(BLOCK_S * sample_rate)
    with (
        atomic.atomic_path(path) as tmp,
        sf.SoundFile(tmp, "w", samplerate=sample_rate, channels=1, format=fmt, subtype="PCM_16") as f,
    ):
        nxt, active = 0, []
        for pos in range(0, total, block):
            end = min(pos + block, total)
            buf = np.zeros(end - pos, np.float32)
            while nxt < len(placed) and placed[nxt][0] < end:
                active.append(placed[nxt])
                nxt += 1
            for start, audio in active:
                a, b = max(pos, start), min(end, start + len(audio))
                if a < b:
                    buf[a - pos : b - pos] += audio[a - start : b - start]
            active = [(s, a) for s, a in active if s + len(a) > end]
            f.write(np.clip(buf, -1.0, 1.0))


def to_spoken_srt(results: Sequence[CueResult]) -> str:
    """The cues with the timing they are spoken at (start, start + spoken length); a cue with
    nothing spoken keeps its own timing."""
    out = []
    for n, r in enumerate(results, 1):
        end = r.spoken_end if r.spoken > 0 else r.cue.end
        text = _tag(r.cue) + r.cue.text
        out.append(f"{n}\n{srt_time(r.cue.start)} --> {srt_time(end)}\n{text.strip() or ' '}\n")
    return "\n".join(out)


def _tag(cue: Cue) -> str:
    """A cue's voice and emotion tag as the file had it ("[Anna|angry] "), "" for neither."""
    emotion = cue.emotion.tag()
    if emotion:
        return f"[{cue.voice or ''}|{emotion}] "
    return f"[{cue.voice}] " if cue.voice else ""


def report_data(results: Sequence[CueResult], sample_rate: int, seconds: float) -> dict:
    cues = []
    for r in results:
        entry = {
            "number": r.cue.number,
            "start": round(r.cue.start, 3),
            "end": round(r.cue.end, 3),
            "slot": round(r.cue.slot, 3),
            "voice": r.cue.voice,
            "text": r.cue.text,
            "status": r.status,
            "spoken": round(r.spoken, 3),
            "rate": round(r.rate, 4),
            "overrun": round(r.overrun, 3),
            "takes": [round(t, 3) for t in r.takes],
            "seed": r.seed,
        }
        if not r.cue.emotion.is_none():
            entry["emotion"] = r.cue.emotion.to_dict()
        if r.score is not None:
            entry["check"] = {"metric": r.score.metric, "score": round(r.score.value, 4),
                              "heard": r.score.heard, "flagged": r.flagged}  # fmt: skip
        if r.message:
            entry["message"] = r.message
        if r.spoken and r.spoken_end > seconds:
            entry["cut_at_track_end"] = round(r.spoken_end - seconds, 3)
        cues.append(entry)
    return {
        "format": "voxdesk-dub-report",
        "version": 1,
        "sample_rate": sample_rate,
        "track_seconds": round(seconds, 3),
        "summary": summary(results),
        "overruns": [{"number": r.cue.number, "overrun": round(r.overrun, 3)} for r in overruns(results)],
        "cues": cues,
    }


def report_text(results: Sequence[CueResult], seconds: float) -> str:
    lines = [summary(results), ""]
    for r in results:
        if r.status == "overrun":
            lines.append(
                f"#{r.cue.number} {srt_time(r.cue.start)}: overruns its {r.cue.slot:.2f} s slot by "
                f"{r.overrun:.2f} s at {r.rate:.2f}x ({len(r.takes)} takes): {r.cue.text}"
            )
        elif r.status in ("failed", "cancelled"):
            lines.append(f"#{r.cue.number} {srt_time(r.cue.start)}: {r.status}: {r.message or r.cue.text}")
        if r.spoken and r.spoken_end > seconds:
            lines.append(f"#{r.cue.number}: cut {r.spoken_end - seconds:.2f} s short at the end of the track")
        if r.flagged and r.score is not None:
            lines.append(f"#{r.cue.number}: the back-check heard “{r.score.heard}” ({r.score.label()})")
    return "\n".join(lines).rstrip() + "\n"
