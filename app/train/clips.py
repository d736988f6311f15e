"""The training data set: a folder of 3–15 s clips with transcripts, prepared resumably.

Layout::

    <folder>/dataset.json      sources done, clips with text/confidence/problem/choices (atomic)
    <folder>/clips/<id>.wav    16-bit WAV at the source's rate (at most 48 kHz)

``add_sources`` slices each source on its pauses (:mod:`app.train.slicer`) and saves after each
source, so a crash or a cancel loses at most the source being sliced; a source already done is
skipped when it comes again. ``transcribe`` fills the clips without text, saving after each.
``write_manifest`` writes the official trainer's JSONL: one ``{"audio": path, "text": ...}`` a line.

The recognizer reports no per-token probabilities, so a transcript's *confidence* is how
plausible its length is for the clip: people say 1.5–5 words or 2.5–8 CJK characters a second.
A transcript far below that (the recognizer heard only part of the clip) or far above it (it
invented text) is "unsure"; an edited transcript is the user's word and counts as 1.0.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app import atomic
from app.audio.io import READABLE_SUFFIXES, SILENCE_PEAK, audio_info, read_audio, write_audio
from app.errors import VoxDeskError
from app.train.slicer import MAX_SECONDS, MIN_SECONDS, slice_on_silence, voiced_frames

MIN_SPEECH_SECONDS = 120
RECOMMENDED_SPEECH_SECONDS = 600
MAX_RATE = 48_000
MAX_SOURCE_SECONDS = 3 * 3600
CLIPPED_FRACTION = 0.001  # more than 0.1 % of samples at full scale: the recording clipped
MIN_VOICED_FRACTION = 0.2
MIN_CONFIDENCE = 0.5
HELD_OUT = 3  # validation clips, when there are enough
FORMAT = 1

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]


@dataclass(frozen=True)
class Clip:
    id: str  # safe file-name id
    path: Path  # the clip's audio file inside the data folder
    seconds: float
    text: str  # transcript (recognizer's, or the user's edit)
    confidence: float  # recognizer confidence 0..1 (1.0 once the user edited the text)
    problem: (
        str | None
    )  # None = usable; else "too short", "too long", "clipped", "silent", "unsure transcript"
    excluded: bool = False  # the user's choice (or set from problem); excluded clips are not trained on
    held_out: bool = False  # validation clips (speaker similarity reference), not trained on

    @property
    def trainable(self) -> bool:
        """Trained on: the user's choice wins over a flagged problem (excluded defaults to it)."""
        return not self.excluded and not self.held_out and bool(self.text)


def audio_problem(samples: np.ndarray, rate: int) -> str | None:
    """What is wrong with a clip's audio alone, in words, or None."""
    seconds = len(samples) / rate
    if not len(samples) or float(np.abs(samples).max()) < SILENCE_PEAK:
        return "silent"
    if voiced_frames(samples, rate).mean() < MIN_VOICED_FRACTION:
        return "silent"
    if seconds < MIN_SECONDS:
        return "too short"
    if seconds > MAX_SECONDS + 0.5:
        return "too long"
    if np.mean(np.abs(samples) >= 0.999) > CLIPPED_FRACTION:
        return "clipped"
    return None


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def transcript_confidence(text: str, seconds: float) -> float:
    """0..1: how plausible ``text`` is as everything said in ``seconds`` of speech."""
    from app.backcheck.score import units

    found = units(text)
    if not found or seconds <= 0:
        return 0.0
    cjk = sum(1 for u in found if _CJK.fullmatch(u))
    low, high = (2.5, 8.0) if cjk * 2 >= len(found) else (1.5, 5.0)
    rate = len(found) / seconds
    if rate < low:
        return round(rate / low, 3)
    if rate > high:
        return round(high / rate, 3)
    return 1.0


def _source_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{int(st.st_mtime)}"


def _expand(sources: Sequence[Path]) -> list[Path]:
    """Files, and the audio files inside folders (sorted, not recursive)."""
    out: list[Path] = []
    for src in map(Path, sources):
        if src.is_dir():
            out += sorted(p for p in src.iterdir() if p.is_file() and p.suffix.lower() in READABLE_SUFFIXES)
        else:
            out.append(src)
    return out


class DataSet:
    """A folder: clips/ + dataset.json (atomic), resumable preparation."""

    def __init__(self, folder: Path, clips: list[Clip], sources: dict[str, list[str]]) -> None:
        self.folder = Path(folder)
        self.clips = clips
        self._sources = sources  # source key -> clip ids
        self._lock = threading.Lock()

    # ---- files --------------------------------------------------------------------------
    @classmethod
    def create(cls, folder: Path) -> DataSet:
        folder = Path(folder)
        if (folder / "dataset.json").exists():
            return cls.open(folder)
        (folder / "clips").mkdir(parents=True, exist_ok=True)
        ds = cls(folder, [], {})
        ds.save()
        return ds

    @classmethod
    def open(cls, folder: Path) -> DataSet:
        folder = Path(folder)
        path = folder / "dataset.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            clips = [Clip(**{**c, "path": folder / "clips" / f"{c['id']}.wav"}) for c in data["clips"]]
            sources = {str(k): list(v) for k, v in data["sources"].items()}
        except FileNotFoundError:
            raise VoxDeskError(f"{folder} is not a training data set (it has no dataset.json).") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise VoxDeskError(
                f"The training data set in {folder} is damaged ({exc.__class__.__name__}); prepare it again."
            ) from None
        return cls(folder, clips, sources)

    def save(self) -> None:
        clips = [{**asdict(c), "path": f"clips/{c.id}.wav"} for c in self.clips]
        atomic.write_json(
            self.folder / "dataset.json", {"format": FORMAT, "sources": self._sources, "clips": clips}
        )

    # ---- preparation --------------------------------------------------------------------
    def add_sources(
        self, sources: Sequence[Path], progress: Progress | None = None, cancel: Cancel | None = None
    ) -> list[str]:
        """Slice every source (a file, or a folder of files) into clips. Returns one plain
        line per source that could not be used; the others' clips are saved as each is done."""
        problems: list[str] = []
        files = _expand(sources)
        if not files:
            return [
                f"{Path(s).name}: no audio files found ({', '.join(READABLE_SUFFIXES)})." for s in sources
            ]
        for i, path in enumerate(files):
            if cancel is not None and cancel():
                break
            if progress is not None:
                progress(i / len(files), f"Cutting {path.name} into clips…")
            try:
                key = _source_key(path)
                if key in self._sources:
                    continue
                self._add_source(path, key, len(self._sources))
            except VoxDeskError as exc:
                problems.append(str(exc))
            except OSError as exc:
                problems.append(f"{path.name}: {exc.strerror or exc}.")
        if progress is not None:
            progress(1.0, "")
        return problems

    def _add_source(self, path: Path, key: str, index: int) -> None:
        info = audio_info(path)
        rate = min(info.sample_rate, MAX_RATE)
        samples, rate = read_audio(path, rate, max_seconds=MAX_SOURCE_SECONDS)
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem)[:32].strip("-") or "clip"
        new: list[Clip] = []
        for n, (a, b) in enumerate(slice_on_silence(samples, rate)):
            piece = samples[a:b]
            clip_id = f"{index:03d}-{stem}-{n:04d}"
            out = self.folder / "clips" / f"{clip_id}.wav"
            write_audio(out, piece, rate)
            problem = audio_problem(piece, rate)
            new.append(Clip(clip_id, out, round(len(piece) / rate, 3), "", 0.0, problem, problem is not None))
        if not new:
            raise VoxDeskError(f"{path.name} holds no speech VoxDesk could cut into clips.")
        with self._lock:
            self.clips = self.clips + new
            self._sources[key] = [c.id for c in new]
            self.save()

    def transcribe(
        self, recognizer: Any, progress: Progress | None = None, cancel: Cancel | None = None
    ) -> None:
        """Fill text, confidence and problem of every clip that has no text yet (saved after each),
        then choose the held-out clips if none are."""
        from app.asr import NoSpeechError

        todo = [c for c in self.clips if not c.text and c.problem != "silent"]
        for i, clip in enumerate(todo):
            if cancel is not None and cancel():
                return
            if progress is not None:
                progress(i / len(todo), f"Transcribing {clip.id}…")
            samples, rate = read_audio(clip.path, reject_silence=False)
            try:
                text = recognizer.transcribe(samples, rate, "auto").text
            except NoSpeechError:
                text = ""
            confidence = transcript_confidence(text, clip.seconds)
            problem = clip.problem or (None if confidence >= MIN_CONFIDENCE else "unsure transcript")
            self._replace(clip.id, text=text, confidence=confidence, problem=problem,
                          excluded=clip.excluded or problem is not None)  # fmt: skip
        self.choose_held_out()
        if progress is not None:
            progress(1.0, "")

    def choose_held_out(self, count: int = HELD_OUT) -> None:
        """Hold out ``count`` usable clips, spread over the set, when at least 4x as many are usable."""
        usable = [c for c in self.clips if c.problem is None and not c.excluded and c.text]
        if any(c.held_out for c in self.clips) or len(usable) < 4 * count:
            return
        picks = {usable[int((k + 0.5) * len(usable) / count)].id for k in range(count)}
        with self._lock:
            self.clips = [replace(c, held_out=c.id in picks) for c in self.clips]
            self.save()

    def update(self, clip_id: str, *, text: str | None = None, excluded: bool | None = None) -> None:
        """The user's edit: a new transcript (confidence 1.0) and/or the exclusion choice; saved."""
        clip = self._get(clip_id)
        changes: dict[str, Any] = {}
        if text is not None:
            text = " ".join(text.split())
            changes.update(text=text, confidence=1.0 if text else 0.0)
            if clip.problem == "unsure transcript" and text:
                changes["problem"] = None
        if excluded is not None:
            changes["excluded"] = excluded
        self._replace(clip_id, **changes)

    def _get(self, clip_id: str) -> Clip:
        for c in self.clips:
            if c.id == clip_id:
                return c
        raise VoxDeskError(f"There is no clip {clip_id} in this data set.")

    def _replace(self, clip_id: str, **changes: Any) -> None:
        self._get(clip_id)
        with self._lock:
            self.clips = [replace(c, **changes) if c.id == clip_id else c for c in self.clips]
            self.save()

    # ---- use ------------------------------------------------------------------------------
    def training_clips(self) -> list[Clip]:
        return [c for c in self.clips if c.trainable]

    def held_out_clips(self) -> list[Clip]:
        return [c for c in self.clips if c.held_out and c.problem is None]

    def speech_seconds(self) -> float:
        """Seconds of speech that will be trained on (usable, not excluded, not held out)."""
        return round(sum(c.seconds for c in self.training_clips()), 3)

    def write_manifest(self, path: Path) -> Path:
        """The official JSONL manifest of the training clips (absolute audio paths)."""
        lines = [json.dumps({"audio": str(c.path.resolve()), "text": c.text}, ensure_ascii=False)
                 for c in self.training_clips()]  # fmt: skip
        atomic.write_text(path, "".join(line + "\n" for line in lines))
        return Path(path)
