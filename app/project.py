"""The script project: text, pronunciation rules, settings, per-segment overrides and results.

Saved as versioned JSON (``*.voxdesk``). Loading is tolerant: unknown keys are ignored and missing
ones take defaults, so files from older and newer versions open; a damaged file raises a plain
:class:`VoxDeskError` and is left untouched. Saving keeps the previous file as ``<name>.bak``.
The window calls :meth:`Project.autosave` after each change, so a crash loses nothing;
:func:`app.autosave.autosaves` lists what can be recovered at the next start.

Segments are identified by a key made from their voice and text (plus a counter for repeats), so
overrides and finished audio follow a sentence when the text around it is edited. A result is
current only while its *fingerprint* (what was synthesised: text after pronunciation, voice, cfg,
timesteps, voice design, speaking rate, emotion (a line's ``[Voice|angry]``), and a
caller-supplied context such as the model id) still matches; the key does not hold the emotion, so
a line whose tag changes keeps its overrides and its take, marked stale.

The speaking rate of a segment is its line's override, else its voice's own rate
(``Project.voice_rates``, from the voice library), else the script's (``ScriptSettings.rate``).
The silence after a segment is its ``[pause]`` tag's, else the script's gap for what follows it:
``gap_seconds`` (next sentence), ``paragraph_gap_seconds`` (a blank line) or
``chapter_gap_seconds`` (a ``# heading``); see app/text/segmenter.py. A take
made with other settings is never hidden: it stays playable and exportable, and what it was made
with is kept with it (app/takes.py), so the window can mark it stale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from app import atomic, quarantine, readback, takes
from app.audio.stretch import check_rate
from app.autosave import _saved_path, _unsaved, autosave_dir
from app.autosave import autosaves as autosaves  # (callers list them as app.project.autosaves)
from app.errors import VoxDeskError
from app.takes import Made
from app.text.pronunciation import PronunciationList, compile_rule
from app.text.segmenter import DEFAULT_MAX_CHARS, MIN_MAX_CHARS, Segment, split_script
from app.voices.emotion import EmotionSpec

VERSION = 1
SUFFIX = ".voxdesk"
STATUSES = ("queued", "generating", "done", "failed")
# Ids and segment keys read from a file become file names: only these shapes are accepted.
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KEY = re.compile(r"[0-9a-f]{12}-[0-9]{1,6}")
_LANGUAGE = re.compile(r"[a-z]{2,3}")  # a language code (SynthRequest.language), "" = from the text
MAX_TEXT = 10_000_000  # characters; a bigger "script" is a damaged file, not a script
MAX_FILE_BYTES = 128 * 2**20  # a full-length script (even written as escapes) and its results
MAX_CAST = 1000  # characters mapped to voices in one script; more is a damaged file

log = logging.getLogger(__name__)


def _pick(cls: type, data: Any) -> Any:
    """A dataclass from a dict, ignoring unknown keys; ValueError/TypeError for non-dicts."""
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object")
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class ScriptSettings:
    """Settings of the whole script; segments may override some of them."""

    cfg_value: float = 2.0
    inference_timesteps: int = 10
    voice_design: str = ""  # VoxCPM2: a description of the voice, sent as "(description)text"
    instruction: str = ""  # CosyVoice: how to speak ("请用四川话表达。"), SynthRequest.instruction
    emotion: EmotionSpec = EmotionSpec()  # IndexTTS-2.5: how lines without their own feel
    language: str = ""  # IndexTTS-2.5: the language the text is read in; "" = detected from it
    default_voice: str | None = None  # voice name for untagged lines; None: the model's own voice
    gap_seconds: float = 0.3  # silence between sentences when playing and exporting
    paragraph_gap_seconds: float = 0.8  # after a paragraph (a blank line follows)
    chapter_gap_seconds: float = 2.0  # before a chapter (a "# heading" line)
    rate: float = 1.0  # speaking rate of the script, 0.5-2.0 (a voice's or a line's own wins)
    max_chars: int = DEFAULT_MAX_CHARS
    normalize: bool = True  # numbers, dates, money, units... read as words (app/text/normalize.py)
    seed: int | None = None  # locked for the whole script; None: a new seed per take

    def gap(self, boundary: str) -> float:
        """Seconds of silence after a segment followed by ``boundary`` (see the segmenter)."""
        if boundary == "chapter":
            return self.chapter_gap_seconds
        return self.paragraph_gap_seconds if boundary == "paragraph" else self.gap_seconds

    def __post_init__(self) -> None:
        # Coerce (files may hold 10.0 for 10 or "2" for 2.0), then check the ranges.
        if self.seed is not None:
            object.__setattr__(self, "seed", int(self.seed))
            if not 0 <= self.seed < 2**63:
                raise ValueError(f"seed must be between 0 and 2**63-1, got {self.seed}")
        for name, kind in (
            ("cfg_value", float),
            ("inference_timesteps", int),
            ("gap_seconds", float),
            ("paragraph_gap_seconds", float),
            ("chapter_gap_seconds", float),
            ("rate", float),
        ):
            object.__setattr__(self, name, kind(getattr(self, name)))
        object.__setattr__(self, "max_chars", int(self.max_chars))
        object.__setattr__(self, "voice_design", str(self.voice_design))
        object.__setattr__(self, "instruction", str(self.instruction))
        object.__setattr__(self, "emotion", _emotion(self.emotion))
        object.__setattr__(self, "language", _language(self.language))
        if not isinstance(self.normalize, bool):
            raise ValueError(f"normalize must be true or false, got {self.normalize!r}")
        if self.default_voice is not None:
            object.__setattr__(self, "default_voice", str(self.default_voice) or None)
        if not 0.0 <= self.cfg_value <= 10.0:
            raise ValueError(f"cfg_value must be between 0 and 10, got {self.cfg_value}")
        if not 1 <= self.inference_timesteps <= 100:
            raise ValueError(f"inference_timesteps must be between 1 and 100, got {self.inference_timesteps}")
        for name in ("gap_seconds", "paragraph_gap_seconds", "chapter_gap_seconds"):
            if not 0.0 <= getattr(self, name) <= 10.0:
                raise ValueError(f"{name} must be between 0 and 10, got {getattr(self, name)}")
        if not 0.5 <= self.rate <= 2.0:
            raise ValueError(f"rate must be between 0.5 and 2, got {self.rate}")
        if not MIN_MAX_CHARS <= self.max_chars <= 1000:
            raise ValueError(f"max_chars must be between {MIN_MAX_CHARS} and 1000, got {self.max_chars}")


@dataclass(frozen=True)
class SegmentOverride:
    """Per-segment values; None means "use the script's setting" (seed None: a random one)."""

    seed: int | None = None
    cfg_value: float | None = None
    inference_timesteps: int | None = None
    voice_design: str | None = None
    instruction: str | None = None
    rate: float | None = None  # this line's speaking rate (wins over its voice's and the script's)
    emotion: EmotionSpec | None = None  # wins over the line's [Name|emotion] tag and the script's
    language: str | None = None

    def __post_init__(self) -> None:
        for name, kind in (
            ("seed", int),
            ("cfg_value", float),
            ("inference_timesteps", int),
            ("voice_design", str),
            ("instruction", str),
            ("rate", float),
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, kind(value))
        if self.emotion is not None:
            object.__setattr__(self, "emotion", _emotion(self.emotion))
        if self.language is not None:
            object.__setattr__(self, "language", _language(self.language))
        if self.rate is not None:
            try:
                check_rate(self.rate)
            except VoxDeskError as exc:
                raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class SegmentResult:
    """What happened to a segment. ``audio_file`` is a WAV in the project's cache folder."""

    status: str = "queued"
    duration: float = 0.0
    seed: int | None = None  # the seed actually used
    audio_file: str | None = None
    error: str = ""
    fingerprint: str = ""
    made: Made | None = None  # what the take was made with (None: a file from before this was kept)

    def __post_init__(self) -> None:
        if isinstance(self.made, dict):
            try:
                object.__setattr__(self, "made", _pick(Made, self.made))
            except (TypeError, ValueError, OverflowError):
                object.__setattr__(self, "made", None)  # only the mark is lost, not the take
        elif not isinstance(self.made, Made):
            object.__setattr__(self, "made", None)
        object.__setattr__(self, "duration", float(self.duration))
        if self.seed is not None:
            object.__setattr__(self, "seed", int(self.seed))
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


@dataclass(frozen=True)
class SegmentJob:
    """Everything needed to synthesise one segment (the engine's SynthRequest is built from it)."""

    key: str
    index: int
    text: str  # for the model: pronunciation applied, voice design prefixed
    display_text: str  # as written in the script
    voice: str | None
    seed: int | None
    cfg_value: float
    inference_timesteps: int
    normalize: bool = False  # numbers and symbols spelled out (app/text/normalize.py) before speaking
    rate: float = 1.0  # speaking rate (line > voice > script, resolved by Project.jobs)
    instruction: str = ""  # how to speak, for families with the "instruction" control (CosyVoice)
    # how it feels (IndexTTS-2.5): the segment's own, else its line's [Voice|emotion], else the script's
    emotion: EmotionSpec = field(default_factory=EmotionSpec)
    language: str = ""  # the language it is read in ("" = detected from the text)
    # seconds of silence after it when playing and exporting; not part of the take itself
    pause_after: float = field(default=0.0, compare=False)

    def fingerprint(self, context: str = "") -> str:
        """Hash of what determines the audio, apart from the seed (checked separately)."""
        parts = [self.text, self.voice or "", f"{self.cfg_value:.4f}", str(self.inference_timesteps), context]
        if self.normalize:
            parts.append("normalize")
        if self.rate != 1.0:  # (so takes made before rates existed stay current)
            parts.append(f"rate {self.rate:.4f}")
        if self.instruction:
            parts.append(f"instruction {self.instruction}")
        if not self.emotion.is_none():
            parts.append(f"emotion {self.emotion.key()}")
        if self.language:
            parts.append(f"language {self.language}")
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


@dataclass
class Project:
    """A script being edited. Mutable; the GUI thread owns it."""

    text: str = ""
    rules: PronunciationList = field(default_factory=PronunciationList)
    settings: ScriptSettings = field(default_factory=ScriptSettings)
    overrides: dict[str, SegmentOverride] = field(default_factory=dict)
    results: dict[str, SegmentResult] = field(default_factory=dict)
    # The cast: a ``[Character]`` tag -> the voice that speaks it, so a character without a voice
    # of its own name gets one without the script being rewritten.
    cast: dict[str, str] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    path: Path | None = None  # where it was last saved or loaded from; not stored in the file
    # What loading had to repair (a rule turned off, unusable entries dropped); not stored.
    problems: list[str] = field(default_factory=list)
    # Loaded from an autosave that holds changes never saved to the script's file; not stored.
    unsaved: bool = field(default=False, compare=False)
    # A voice's own speaking rate (casefolded voice name -> rate), from the voice library; the
    # window keeps it up to date. Not stored: it belongs to the voice.
    voice_rates: dict[str, float] = field(default_factory=dict, compare=False)
    # The loaded model family's controls (app/engine/family.py): a voice design is put before
    # the text only for a family with "voice_design", an instruction sent only to one with
    # "instruction", an emotion and a language to one with "emotion" and "language"; None (no
    # model yet, export, the command line) means VoxCPM2's. Not stored.
    controls: frozenset[str] | None = field(default=None, compare=False)
    # Self-contained: saving copies the takes into "<name>_takes" beside the file, referred to
    # by relative paths, so the file and that folder can move to another computer together.
    self_contained: bool = False
    # The last split: (text, max_chars, segments); jobs(), keys() and to_dict() each need it.
    split_cache: tuple[str, int, list[Segment]] | None = field(default=None, repr=False, compare=False)

    # --- segments ---------------------------------------------------------------------------

    def segments(self) -> list[Segment]:
        """The script split into segments (see app/text/segmenter.py); split once per text."""
        cached = self.split_cache
        if cached is None or cached[1] != self.settings.max_chars or cached[0] != self.text:
            cached = (self.text, self.settings.max_chars, split_script(self.text, self.settings.max_chars))
            self.split_cache = cached
        return list(cached[2])

    def keys(self) -> list[str]:
        """A stable key per segment: voice + text, with a counter for repeated sentences."""
        seen: dict[str, int] = {}
        keys = []
        for seg in self.segments():
            base = hashlib.sha1(f"{seg.voice or ''}\x00{seg.text}".encode()).hexdigest()[:12]
            seen[base] = seen.get(base, 0) + 1
            keys.append(f"{base}-{seen[base]}")
        return keys

    def jobs(self) -> list[SegmentJob]:
        """One job per segment, in script order, with overrides and pronunciation applied."""
        jobs = []
        cast = {k.casefold(): v for k, v in self.cast.items()}
        segments = self.segments()
        for index, (key, seg) in enumerate(zip(self.keys(), segments, strict=True)):
            over = self.overrides.get(key, SegmentOverride())
            design = self.settings.voice_design if over.voice_design is None else over.voice_design
            if self.controls is not None and "voice_design" not in self.controls:
                design = ""
            instruction = self.settings.instruction if over.instruction is None else over.instruction
            if self.controls is None or "instruction" not in self.controls:
                instruction = ""
            if over.emotion is not None:
                emotion = over.emotion
            else:
                emotion = self.settings.emotion if seg.emotion.is_none() else seg.emotion
            emotion = self._emotion(emotion, cast)
            language = self.settings.language if over.language is None else over.language
            if self.controls is None or "language" not in self.controls:
                language = ""
            spoken = self.rules.apply(seg.text)
            text = f"({design.strip()}){spoken}" if design.strip() else spoken
            voice = cast.get(seg.voice.casefold(), seg.voice) if seg.voice else self.settings.default_voice
            last = index == len(segments) - 1
            jobs.append(
                SegmentJob(
                    key=key,
                    index=index,
                    text=text,
                    display_text=seg.text,
                    voice=voice,
                    seed=over.seed if over.seed is not None else self.settings.seed,
                    cfg_value=self.settings.cfg_value if over.cfg_value is None else over.cfg_value,
                    inference_timesteps=(
                        self.settings.inference_timesteps
                        if over.inference_timesteps is None
                        else over.inference_timesteps
                    ),
                    normalize=self.settings.normalize,
                    rate=self.rate_of(over, voice),
                    instruction=instruction.strip(),
                    emotion=emotion,
                    language=language,
                    pause_after=0.0 if last else self._pause(seg),
                )
            )
        return jobs

    def rate_of(self, override: SegmentOverride, voice: str | None) -> float:
        """A segment's speaking rate: its own, else its voice's, else the script's."""
        if override.rate is not None:
            return override.rate
        own = self.voice_rates.get((voice or "").casefold())
        return own if own is not None else self.settings.rate

    def _emotion(self, emotion: EmotionSpec, cast: dict[str, str]) -> EmotionSpec:
        """A segment's emotion (its own, its line's or the script's) as its job gets it: none for a
        family without the "emotion" control (the editor says it is ignored); a clip voice named by
        a character goes through the cast."""
        if self.controls is None or "emotion" not in self.controls:
            return EmotionSpec()
        if emotion.kind == "clip" and emotion.voice.casefold() in cast:
            return replace(emotion, voice=cast[emotion.voice.casefold()])
        return emotion

    def _pause(self, seg: Segment) -> float:
        return seg.pause if seg.pause is not None else self.settings.gap(seg.boundary)

    def set_cast(self, character: str, voice: str | None) -> None:
        """Have ``voice`` speak the lines tagged ``[character]`` (None: the tag names the voice again)."""
        self.cast = {k: v for k, v in self.cast.items() if k.casefold() != character.casefold()}
        if voice:
            self.cast[character] = voice

    def set_override(self, key: str, override: SegmentOverride) -> None:
        """Set (or with an all-None override, clear) a segment's overrides."""
        if override == SegmentOverride():
            self.overrides.pop(key, None)
        else:
            self.overrides[key] = override

    # --- results ----------------------------------------------------------------------------

    def result(self, job: SegmentJob, context: str = "") -> SegmentResult:
        """The segment's current result; "queued" when none, or when the text/settings/seed changed
        since it was made, or when its audio file is gone."""
        res = self.results.get(job.key)
        if res is None or res.fingerprint != job.fingerprint(context):
            return SegmentResult()
        if res.status == "done" and job.seed is not None and res.seed != job.seed:
            return SegmentResult()
        if res.status == "done" and (res.audio_file is None or not Path(res.audio_file).is_file()):
            return SegmentResult()
        return res

    def take(self, job: SegmentJob) -> SegmentResult | None:
        """The segment's last finished take whatever it was made with (a settings change keeps
        it; :func:`app.takes.take_changes` says whether it is current); None when there is none or its
        audio file is gone."""
        res = self.results.get(job.key)
        if res is None or res.status != "done" or res.audio_file is None:
            return None
        return res if Path(res.audio_file).is_file() else None

    def mark(self, job: SegmentJob, status: str, context: str = "", **values: Any) -> SegmentResult:
        """Record a status change, e.g. ``mark(job, "done", audio_file=..., duration=..., seed=...)``
        or ``mark(job, "failed", error=message)``. A finished take records what it was made with."""
        made = Made.of(job, context) if status == "done" else None
        res = SegmentResult(status=status, fingerprint=job.fingerprint(context), made=made, **values)
        self.results[job.key] = res
        return res

    def audio_path(self, job: SegmentJob, seed: int, context: str = "") -> Path:
        """Where to write a segment's audio: unique per content and seed, so results never clash."""
        return self.audio_dir() / f"{job.key}-{job.fingerprint(context)}-{seed}.wav"

    def audio_dir(self) -> Path:
        """Cache folder for this project's segment audio."""
        if not _ID.fullmatch(self.id):
            raise _damaged_id()
        folder = _segments_root() / self.id
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    # --- files ------------------------------------------------------------------------------

    def to_dict(self, path: Path | None = None) -> dict[str, Any]:
        """The JSON document; results and overrides of segments no longer in the text are dropped.
        With ``path`` (where it is written) a self-contained project refers to its takes folder
        beside that file by relative paths."""
        live = set(self.keys())
        results = {
            k: asdict(v) for k, v in self.results.items() if k in live and v.status in ("done", "failed")
        }
        bundle = takes.folder(path) if self.self_contained and path is not None else None
        if bundle is not None:
            for item in results.values():
                audio = item["audio_file"]
                if audio is not None and takes.inside(Path(audio), bundle):
                    item["audio_file"] = f"{bundle.name}/{Path(audio).name}"
        document = {
            "format": "voxdesk-project",
            "version": VERSION,
            "id": self.id,
            "text": self.text,
            "settings": {**asdict(self.settings), "emotion": self.settings.emotion.to_dict()},
            "pronunciation": self.rules.to_list(),
            "cast": dict(self.cast),
            "overrides": {k: _override_dict(v) for k, v in self.overrides.items() if k in live},
            "results": results,
        }
        if bundle is not None:
            document["takes"] = bundle.name
        return document

    @classmethod
    def from_dict(cls, data: Any, base: Path | None = None) -> Project:
        """Parse a project document; VoxDeskError if it is not one.

        What can be repaired is, and is listed in ``problems``: a pronunciation rule that does not
        compile is turned off, overrides/results under keys VoxDesk never makes are dropped, an id
        that is not a plain name is replaced (ids and keys become file names). ``base``: the
        folder of a self-contained project's file (its takes folder is in it)."""
        if not isinstance(data, dict) or data.get("format") != "voxdesk-project":
            raise VoxDeskError("This file is not a VoxDesk project. Open a .voxdesk file.")
        problems: list[str] = []
        try:
            text = data.get("text", "")
            if not isinstance(text, str) or len(text) > MAX_TEXT:
                raise ValueError("its text is not a script")
            rules = PronunciationList.from_list(data.get("pronunciation"))
            rules.set_rules(_usable_rules(rules, problems))
            overrides = {
                str(k): _pick(SegmentOverride, v) for k, v in dict(data.get("overrides") or {}).items()
            }
            results = {str(k): _pick(SegmentResult, v) for k, v in dict(data.get("results") or {}).items()}
            project = cls(
                text=text,
                rules=rules,
                settings=_pick(ScriptSettings, data.get("settings") or {}),
                overrides={k: v for k, v in overrides.items() if _KEY.fullmatch(k)},
                results={k: v for k, v in results.items() if _KEY.fullmatch(k)},
                cast=_read_cast(data.get("cast"), problems),
            )
        except (TypeError, ValueError, OverflowError) as exc:
            raise VoxDeskError(
                f"This project file is damaged ({exc}). Open its .bak copy if there is one."
            ) from None
        if len(project.overrides) + len(project.results) < len(overrides) + len(results):
            problems.append("segment entries with unknown keys were dropped")
        file_id = data.get("id")
        if isinstance(file_id, str) and _ID.fullmatch(file_id):
            project.id = file_id
        elif file_id is not None:
            problems.append("its id was not a plain name and was replaced")
        # Finished audio counts only when it is in this project's own cache folder, or (a
        # self-contained project) a take's name in the takes folder beside its file.
        folder = _segments_root() / project.id
        bundle = takes.bundle(data.get("takes"), base)
        project.self_contained = bundle is not None
        for key, res in list(project.results.items()):
            audio = res.audio_file
            if audio is None or takes.inside(Path(audio), folder):
                continue
            found = takes.in_bundle(audio, bundle) if bundle is not None else None
            if found is not None:
                project.results[key] = replace(res, audio_file=str(found))
            else:
                del project.results[key]
        project.problems = problems
        return project

    def save(self, path: str | Path | None = None, self_contained: bool | None = None) -> Path:
        """Save atomically (default: where it came from); the previous file is kept as ``.bak``.
        ``self_contained`` (None: as before): copy the takes into the folder beside the file."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("save() needs a path for a project that was never saved")
        if target.suffix != SUFFIX:
            target = target.with_name(target.name + SUFFIX)
        if self_contained is not None:
            self.self_contained = self_contained
        if self.self_contained:
            live = set(self.keys())
            for key, res in list(self.results.items()):
                if key in live and res.status == "done" and res.audio_file is not None:
                    copy = takes.copy_into(Path(res.audio_file), takes.folder(target))
                    self.results[key] = replace(res, audio_file=str(copy))
        document = json.dumps(self.to_dict(target), ensure_ascii=False, indent=2) + "\n"
        if target.is_file():
            atomic.write_bytes(target.with_name(target.name + ".bak"), target.read_bytes())
        atomic.write_text(target, document)
        self.path = target
        return target

    @classmethod
    def load(cls, path: str | Path) -> Project:
        """Open a saved project (or an autosave)."""
        path = Path(path)
        in_autosaves = path.resolve().parent == autosave_dir().resolve()
        try:
            # Bounded, regular files only; a link is followed only for a file the user picked.
            data = readback.read_json(path if in_autosaves else path.resolve(), MAX_FILE_BYTES)
        except FileNotFoundError:
            raise VoxDeskError(f"{path.name} does not exist. Pick another project file.") from None
        except (OSError, ValueError, RecursionError, MemoryError) as exc:
            plain = (OSError, UnicodeError, json.JSONDecodeError, RecursionError, MemoryError)
            why = "" if isinstance(exc, plain) else f" ({exc})"
            raise VoxDeskError(
                f"{path.name} could not be read{why}: it is damaged. Open its .bak copy if there is one."
            ) from None
        saved = _saved_path(data) if in_autosaves else path
        project = cls.from_dict(data, saved.parent if saved is not None else None)
        if in_autosaves and _ID.fullmatch(path.stem):
            project.id = path.stem  # an autosave is named after its project
        project.path = saved
        project.unsaved = in_autosaves and _unsaved(data, project)
        return project

    def autosave(self, unsaved: bool = False) -> Path:
        """Write the autosave copy (cheap; call after every change). Returns its path.
        ``unsaved``: it holds changes not saved to the script's file (a restart says so)."""
        data = self.to_dict(self.path)
        data["saved_path"] = str(self.path) if self.path else None
        data["unsaved"] = unsaved
        target = self._autosave_path()
        atomic.write_json(target, data)
        return target

    def discard_autosave(self) -> None:
        """Remove the autosave copy (after a clean save-and-close)."""
        self._autosave_path().unlink(missing_ok=True)

    def _autosave_path(self) -> Path:
        if not _ID.fullmatch(self.id):  # never a path outside the autosave folder
            raise _damaged_id()
        return autosave_dir() / f"{self.id}{SUFFIX}"

    def with_settings(self, **changes: Any) -> None:
        """Change script settings, validated (e.g. ``with_settings(cfg_value=2.5)``)."""
        try:
            self.settings = replace(self.settings, **changes)
        except (TypeError, ValueError) as exc:
            raise VoxDeskError(f"That setting is not valid ({exc}).") from None


def _emotion(value: Any) -> EmotionSpec:
    """An emotion from a file (``EmotionSpec.to_dict``'s shape); ValueError when it is not one."""
    if isinstance(value, EmotionSpec):
        return value
    try:
        return EmotionSpec.from_dict(value) if value else EmotionSpec()
    except VoxDeskError as exc:
        raise ValueError(str(exc)) from None


def _language(value: Any) -> str:
    code = str(value).strip().lower()
    if code and not _LANGUAGE.fullmatch(code):
        raise ValueError(f"language must be a language code such as en or zh, got {value!r}")
    return code


def _override_dict(override: SegmentOverride) -> dict[str, Any]:
    data = asdict(override)
    if override.emotion is not None:
        data["emotion"] = override.emotion.to_dict()
    return data


def _read_cast(data: Any, problems: list[str]) -> dict[str, str]:
    """The cast from a file: an object of names; entries that are not names are dropped."""
    if data is None:
        return {}
    if not isinstance(data, dict) or len(data) > MAX_CAST:
        raise ValueError("its cast is not a list of characters and voices")
    cast = {k: v for k, v in data.items() if _is_name(k) and _is_name(v)}
    if len(cast) < len(data):
        problems.append("cast entries that were not voice names were dropped")
    return cast


def _is_name(value: Any) -> bool:
    """A character or voice name as a ``[tag]`` can hold it (no brackets, line breaks or edges)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 64
        and value == value.strip()
        and not any(c in "[]" or not c.isprintable() for c in value)
    )


def _damaged_id() -> VoxDeskError:
    return VoxDeskError("This script's id is damaged, so it cannot be saved here. Save it as a file.")


def _usable_rules(rules: PronunciationList, problems: list[str]) -> list[Any]:
    """The rules, with any that does not compile turned off (and said so in ``problems``)."""
    out = []
    for i, rule in enumerate(rules.rules):
        if rule.enabled and rule.find:
            try:
                compile_rule(rule, i)
            except VoxDeskError as err:
                problems.append(f"{err} It was turned off")
                rule = replace(rule, enabled=False)
        out.append(rule)
    return out


def _segments_root() -> Path:
    from app.paths import cache_dir

    return cache_dir() / "segments"


def clean_leftovers() -> None:
    """At start: remove temporary files a killed writer left in the autosave and segment folders."""
    quarantine.clean_leftovers(autosave_dir())
    root = _segments_root()
    if root.is_dir():
        for folder in root.iterdir():
            if folder.is_dir():
                quarantine.clean_leftovers(folder)
