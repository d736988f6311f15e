"""Subtitle files (SRT, WebVTT) → the cues a dub speaks, each with its time slot.

Parsing is left to kept parsers (``srt``, ``webvtt-py``); this module checks what they give back
and turns each cue into a :class:`Cue`: its lines joined with a space, markup dropped (``<i>``,
``<font …>``, WebVTT ``<c.x>`` and timestamp tags, ASS overrides such as ``{\\an8}``, HTML
entities), and its speaker taken from a leading ``[Voice]`` tag (the script's tag syntax,
app/text/segmenter.py) or a WebVTT ``<v Voice>`` span; the tag's emotion part (``[Anna|angry]``)
is the cue's emotion (IndexTTS-2.5).

A file is refused whole, with one plain line naming what is wrong, rather than imported with
cues missing: a file that does not parse (or whose cue count does not match its timing lines),
a cue that ends before (or as) it starts, cues that overlap (a dub speaks one cue at a time), a
file that is not UTF-8/UTF-16 text, or one past :data:`MAX_BYTES` / :data:`MAX_CUES`. A cue with
nothing left to say (``[Music]``, ``♪``) stays in the list as a silent cue.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import VoxDeskError
from app.export import srt_time as clock
from app.text.segmenter import line_tag
from app.voices.emotion import EmotionSpec

MAX_BYTES = 20_000_000  # a feature film's subtitles are ~100 kB
MAX_CUES = 20_000
SHOWN_PROBLEMS = 3  # cues named in a refusal; the rest are counted

_ASS = re.compile(r"\{\\[^{}]*\}")
_TAG = re.compile(r"</?(?:[A-Za-z][\w.\-]*|\d)[^<>]*>")  # "<i>", "</font>", "<00:01.000>"; not "a < b"
_VOICE_SPAN = re.compile(r"<v(?:\.[\w.\-]+)?\s+([^<>]+)>")
_SPEAKABLE = re.compile(r"\w")
_TIMING = re.compile(r"-->")


class SubtitleError(VoxDeskError):
    """A subtitle file that cannot be dubbed as it is; the message says why and what to do."""


@dataclass(frozen=True)
class Cue:
    """One subtitle: ``number`` is its 1-based place in the file, times are in seconds."""

    number: int
    start: float
    end: float
    text: str  # what is spoken: markup and the voice tag dropped, lines joined
    voice: str | None = None  # the cue's [Voice] or <v Voice>; None: the dub's default voice
    emotion: EmotionSpec = field(default_factory=EmotionSpec)  # its [Voice|emotion]; none: none

    @property
    def slot(self) -> float:
        return self.end - self.start

    @property
    def speakable(self) -> bool:
        return bool(_SPEAKABLE.search(self.text))


def clean(raw: str) -> tuple[str | None, EmotionSpec, str]:
    """A cue's raw text → (voice or None, emotion, spoken text): markup out, lines joined, tag
    parsed (an emotion that cannot be read is none, as in a script)."""
    span = _VOICE_SPAN.search(raw)
    text = _TAG.sub("", _ASS.sub("", raw))
    text = html.unescape(" ".join(line.strip() for line in text.splitlines()))
    text = " ".join(text.split())
    tag = line_tag(text)
    voice, emotion = (None, EmotionSpec()) if tag is None else (tag.voice, tag.emotion)
    body = text if tag is None else text[tag.end :]
    if voice is None and span is not None:
        voice = span.group(1).strip() or None
    return voice, emotion, body.strip()


def load_subtitles(path: str | Path) -> list[Cue]:
    """The cues of an SRT or WebVTT file (chosen by its first line, else its extension)."""
    path = Path(path)
    text = _read(path)
    is_vtt = text.startswith("WEBVTT") or path.suffix.lower() == ".vtt"
    raw = _parse_vtt(text, path) if is_vtt else _parse_srt(text, path)
    if not raw:
        raise SubtitleError(f"{path.name} holds no subtitles: choose an SRT or WebVTT file with cues in it.")
    if len(raw) > MAX_CUES:
        raise SubtitleError(
            f"{path.name} holds {len(raw)} cues, more than the {MAX_CUES} one dub takes: split the file."
        )
    cues = []
    for number, (start, end, body) in enumerate(raw, 1):
        voice, emotion, spoken = clean(body)
        cues.append(Cue(number, start, end, spoken, voice, emotion))
    _check_timing(cues, path)
    return cues


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SubtitleError(
                f"{path.name} is {size / 1e6:.0f} MB, too large for a subtitle file "
                f"(at most {MAX_BYTES // 1_000_000} MB): is it the right file?"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise SubtitleError(f"Subtitle file {path} not found.") from None
    except IsADirectoryError:
        raise SubtitleError(f"{path} is a folder: choose an .srt or .vtt file.") from None
    except OSError as exc:
        raise SubtitleError(f"Cannot read {path} ({exc.strerror or exc}).") from None
    for encoding in ("utf-8-sig", "utf-16") if data[:2] not in (b"\xff\xfe", b"\xfe\xff") else ("utf-16",):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text:
            return text.replace("\r\n", "\n").replace("\r", "\n")
    raise SubtitleError(
        f"{path.name} is not UTF-8 text: save it as UTF-8 in a text editor and import it again."
    )


def _parse_srt(text: str, path: Path) -> list[tuple[float, float, str]]:
    import srt

    try:
        subs = list(srt.parse(text))
    except (srt.SRTParseError, ValueError) as exc:
        line = text.count("\n", 0, getattr(exc, "actual_start", 0)) + 1
        raise SubtitleError(
            f"{path.name} is not a readable SRT file (near line {line}): check the file, or save it "
            "again from your subtitle editor."
        ) from None
    _check_count(len(subs), text, path)
    return [(s.start.total_seconds(), s.end.total_seconds(), s.content) for s in subs]


def _parse_vtt(text: str, path: Path) -> list[tuple[float, float, str]]:
    import webvtt

    try:
        captions = webvtt.from_string(text).captions
    except Exception:  # noqa: BLE001 - webvtt-py raises several kinds; each means the same to the user
        raise SubtitleError(
            f"{path.name} is not a readable WebVTT file: check the file, or save it again from your "
            "subtitle editor."
        ) from None
    _check_count(len(captions), text, path)

    def seconds(t) -> float:
        return t.hours * 3600 + t.minutes * 60 + t.seconds + t.milliseconds / 1000

    return [(seconds(c.start_time), seconds(c.end_time), c.raw_text) for c in captions]


def _check_count(parsed: int, text: str, path: Path) -> None:
    """Every timing line must have become a cue: a parser that skips a damaged one loses it."""
    timings = [n for n, line in enumerate(text.split("\n"), 1) if _TIMING.search(line)]
    if parsed < len(timings):
        raise SubtitleError(
            f"{path.name}: {len(timings) - parsed} of its {len(timings)} cues could not be read "
            "(a damaged timing line?): fix the file and import it again."
        )


def _check_timing(cues: list[Cue], path: Path) -> None:
    problems = []
    for i, cue in enumerate(cues):
        if cue.end <= cue.start:
            problems.append(f"cue {cue.number} has no length ({clock(cue.start)} → {clock(cue.end)})")
        if i and cue.start < cues[i - 1].end:
            prev = cues[i - 1]
            problems.append(
                f"cue {cue.number} starts {cues[i - 1].end - cue.start:.2f} s before cue {prev.number} ends"
            )
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
        raise SubtitleError(
            f"{path.name}: {shown}{more}. A dub speaks one cue at a time in its own slot: fix the "
            "timing in the subtitle file and import it again."
        )
