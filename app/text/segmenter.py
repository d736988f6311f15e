"""Free text → the segments VoxDesk synthesises one by one.

Rules, in order:

1. The text is read line by line. A line may start with a voice tag, ``[Alice] Hello.``; the tag
   names the voice for that line's segments (a dialogue). Untagged lines use the default voice
   (``Segment.voice is None``). A tag is a bracketed name at the very start of a line; brackets
   elsewhere are ordinary text, except pause tags (rule 4). After a ``|`` the tag may give the
   line an emotion (IndexTTS-2.5; app/voices/emotion.py has the forms): ``[Anna|angry]``,
   ``[Anna|happy 0.5, surprised 0.3]``, ``[Anna|@Bob]`` (Bob's recording's emotion),
   ``[Anna|"a quiet whisper"]``; ``[|angry]`` keeps the default voice. An emotion that cannot be
   read leaves the line without one (``Segment.emotion`` none), and :func:`line_tag`'s
   ``problem`` says why, for the window.
2. Each line is split into sentences after ``。！？；…!?;`` and after ``.`` when a space or the end
   of the line follows (so ``3.14`` and ``e.g.`` inside a sentence stay together). Closing quotes
   and brackets stay with the sentence they close.
3. A sentence longer than ``max_chars`` is split at commas and colons (``，、,:：``; the Latin
   ones only before a space, so ``1,000`` and ``10:30`` stay whole), the pieces
   packed back together up to ``max_chars``; a piece still too long is cut at a space, or hard at
   ``max_chars`` for text without spaces. VoxCPM2 distorts on inputs past ~300 characters, hence
   the default of 200.

4. Pauses. ``[pause 800ms]`` or ``[pause 1.5s]`` anywhere in a line (up to 60 s; the word is
   case-blind) ends the segment before it there, and that segment is followed by exactly that
   much silence (several tags in a row add up). A tag before any speech has no segment to follow
   and is not kept. Every other segment is followed by the script's gap for its *boundary*:
   ``"sentence"`` (the next sentence or line), ``"paragraph"`` (a blank line follows, or it ends
   a heading) or ``"chapter"`` (the next line is a Markdown heading ``# Title``, ``## Title``...:
   a heading starts a chapter; its text is spoken without the ``#`` marks). The window and the
   export turn boundaries into seconds (``ScriptSettings``); the last segment has none after it.

Nothing but whitespace and the tags (voice and emotion tags, pause tags, a heading's ``#`` marks) is ever
dropped: the segments, joined, hold every other character of the input in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from app.errors import VoxDeskError
from app.voices.emotion import EmotionSpec, parse_emotion

DEFAULT_MAX_CHARS = 200
MIN_MAX_CHARS = 20

# [voice] or [voice|emotion]: the voice part (up to 64 characters, may be empty before a '|'), the
# emotion part (a description in quotes may be long)
_TAG = re.compile(r"^\s*\[([^\[\]\n|]{0,64})(?:\|([^\[\]\n]{0,300}))?\]")
# A sentence ends at a run of terminators plus any closing quotes/brackets. A '.' only ends one
# when whitespace or the end of the line follows.
_CLOSERS = "\"'”’」』）)】]》"
_END = re.compile(
    rf"(?:[。！？；…!?;]+|\.+(?=\s|$)|\.+(?=[{re.escape(_CLOSERS)}]+(?:\s|$)))[{re.escape(_CLOSERS)}]*"
)
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "st", "vs", "etc", "e.g", "i.e", "jr", "sr"}
_LONGEST_ABBREVIATION = max(map(len, _ABBREVIATIONS))
# Latin commas and colons only count when a space follows, so "1,000" and "10:30" stay whole.
_SOFT_BREAK = re.compile(r"[，、：]+|[,:]+(?=\s|$)")
_SPACES = re.compile(r"\s+")
_PAUSE = re.compile(r"\[\s*pause\s+(\d{1,5}(?:\.\d{1,3})?)\s*(ms|s)\s*\]", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}[ \t]+(?=\S)")
MAX_PAUSE_S = 60.0
BOUNDARIES = ("sentence", "paragraph", "chapter")  # in rising order: a stronger one wins


@dataclass(frozen=True)
class Segment:
    """One unit of synthesis: a sentence (or part of one) and who speaks it."""

    text: str
    voice: str | None = None  # the line's voice tag; None: the script's default voice
    line: int = 0  # 0-based line of the input it came from
    pause: float | None = None  # seconds of silence after it from [pause] tags (rule 4)
    boundary: str = "sentence"  # what follows it when it has no pause tag (rule 4)
    # the line's emotion tag; none: the script-wide choice applies
    emotion: EmotionSpec = field(default_factory=EmotionSpec)


@dataclass(frozen=True)
class LineTag:
    """A line's leading tag: ``[Anna]``, ``[Anna|angry]`` or ``[|angry]``."""

    start: int  # of the "["
    end: int  # after the "]"
    voice: str | None  # None: the script's default voice ("[|angry]")
    emotion: EmotionSpec  # none when there is none, or when it could not be read
    problem: str = ""  # why the emotion part could not be read ("": it could, or there is none)


def split_script(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Segment]:
    """Split a whole script into segments in reading order (see the module docstring)."""
    if max_chars < MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_MAX_CHARS}, got {max_chars}")
    segments: list[Segment] = []

    def close(boundary: str) -> None:  # the segment so far is followed by at least `boundary`
        last = segments[-1] if segments else None
        if last is not None and BOUNDARIES.index(boundary) > BOUNDARIES.index(last.boundary):
            segments[-1] = replace(last, boundary=boundary)

    for number, raw in enumerate(text.splitlines()):
        if not raw.strip():
            close("paragraph")
            continue
        heading = _HEADING.match(raw)
        if heading is not None:
            close("chapter")
            voice, emotion, body = None, EmotionSpec(), raw[heading.end() :]
        else:
            tag = line_tag(raw)
            voice, emotion = (None, EmotionSpec()) if tag is None else (tag.voice, tag.emotion)
            body = raw if tag is None else raw[tag.end :]
        for words, pause in split_pauses(body):
            for piece in split_sentences(words, max_chars):
                segments.append(Segment(piece, voice, number, emotion=emotion))
            if pause is not None and segments:
                last = segments[-1]
                segments[-1] = replace(last, pause=min((last.pause or 0.0) + pause, MAX_PAUSE_S))
        if heading is not None:
            close("paragraph")
    return segments


def split_pauses(line: str) -> list[tuple[str, float | None]]:
    """``"Hi [pause 1s] there"`` → ``[("Hi ", 1.0), (" there", None)]``: the text between pause
    tags, each with the pause that follows it in seconds."""
    out: list[tuple[str, float | None]] = []
    start = 0
    for match in _PAUSE.finditer(line):
        out.append((line[start : match.start()], pause_seconds(match)))
        start = match.end()
    out.append((line[start:], None))
    return out


def pause_seconds(match: re.Match[str]) -> float:
    value = float(match.group(1)) / (1000.0 if match.group(2).lower() == "ms" else 1.0)
    return min(value, MAX_PAUSE_S)


def pause_spans(line: str) -> list[tuple[int, int]]:
    """Where a line's pause tags are (start, end), for the window's highlighter."""
    return [m.span() for m in _PAUSE.finditer(line)]


_PAUSE_LIKE = re.compile(r"\[\s*pause\b[^\[\]\n]{0,40}\]", re.IGNORECASE)


def bad_pause_tags(line: str) -> list[str]:
    """Bracketed text that starts like a pause tag but is not one (``[pause 5min]``, ``[pause]``):
    it would be read out, so the window points it out."""
    return [m.group() for m in _PAUSE_LIKE.finditer(line) if not _PAUSE.fullmatch(m.group())]


def is_heading(line: str) -> bool:
    """Whether ``line`` is a Markdown heading (``# Title``): it starts a chapter."""
    return _HEADING.match(line) is not None


def line_tag(line: str) -> LineTag | None:
    """A line's leading ``[Voice]`` / ``[Voice|emotion]`` / ``[|emotion]`` tag, None without one.
    A pause tag at the start of a line is not a voice tag; an emotion that cannot be read is none,
    with the reason in ``problem``."""
    match = _tag_match(line)
    if match is None:
        return None
    part = match.group(2)
    emotion, problem = (EmotionSpec(), "") if part is None else _read_emotion(part)
    return LineTag(match.start(1) - 1, match.end(), match.group(1).strip() or None, emotion, problem)


def _tag_match(line: str) -> re.Match[str] | None:
    match = _TAG.match(line)
    if match is None or _PAUSE.match(line, match.start(1) - 1):
        return None
    return match if match.group(1).strip() or match.group(2) is not None else None


@lru_cache(maxsize=4096)
def _read_emotion(part: str) -> tuple[EmotionSpec, str]:
    """A tag's emotion part read once (the editor checks every line at each key): the spec, or
    none and why it cannot be read."""
    try:
        return parse_emotion(part), ""
    except VoxDeskError as err:
        return EmotionSpec(), str(err)


def tag_span(line: str) -> tuple[int, int, str] | None:
    """Where a line's ``[Voice]`` tag is: ``(start, end, name)`` with ``end`` after the ``]``
    (an emotion part included). A pause tag, or ``[|angry]`` (no voice), is not a voice tag."""
    match = _tag_match(line)  # (not line_tag: the editor asks this of every line at each key)
    if match is None or not match.group(1).strip():
        return None
    return match.start(1) - 1, match.end(), match.group(1).strip()


def split_sentences(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Split one line into sentences no longer than ``max_chars`` (whitespace-normalised)."""
    out: list[str] = []
    for sentence in _sentences(text):
        out.extend(_fit(sentence, max_chars))
    return out


def _sentences(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _END.finditer(text):
        if match.group().startswith(".") and _is_abbreviation(text, match.start()):
            continue
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    out: list[str] = []
    for piece in (_SPACES.sub(" ", p).strip() for p in pieces):
        if not piece:
            continue
        if out and not any(ch.isalnum() for ch in piece):
            out[-1] = _join(out[-1], piece)  # a stray "?!" or "…" is not worth a segment of its own
        else:
            out.append(piece)
    return out


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the '.' at ``dot`` ends a known abbreviation or a single initial ("J. Smith").

    The word before the dot is found by stepping back at most a few characters (no abbreviation
    is longer), so a long line costs linear time, not a scan from its start per dot."""
    start = dot
    while start > 0 and dot - start <= _LONGEST_ABBREVIATION and _is_word_char(text[start - 1]):
        start -= 1
    if dot - start > _LONGEST_ABBREVIATION or start == dot:
        return False
    token = text[start:dot]
    return token.lower() in _ABBREVIATIONS or (len(token) == 1 and token.isalpha() and token.isupper())


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_."


def _fit(sentence: str, max_chars: int) -> list[str]:
    if len(sentence) <= max_chars:
        return [sentence]
    # Clauses keep their comma; pack them greedily back up to max_chars.
    clauses: list[str] = []
    start = 0
    for match in _SOFT_BREAK.finditer(sentence):
        clauses.append(sentence[start : match.end()])
        start = match.end()
    clauses.append(sentence[start:])
    out: list[str] = []
    current = ""
    for clause in (c for c in clauses if c.strip()):
        for part in _cut(clause.strip(), max_chars):
            joined = _join(current, part)
            if current and len(joined) > max_chars:
                out.append(current)
                current = part
            else:
                current = joined
    if current:
        out.append(current)
    return out


def _join(left: str, right: str) -> str:
    if not left:
        return right
    # CJK text has no spaces between clauses; Latin text does.
    return left + right if _is_cjk(left[-1]) or _is_cjk(right[0]) else f"{left} {right}"


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" or "\u3000" <= ch <= "\u303f"


def _cut(text: str, max_chars: int) -> list[str]:
    """Cut text with no usable punctuation: at the last space that fits, else hard."""
    out: list[str] = []
    pos, end = 0, len(text)
    while end - pos > max_chars:  # an index walks the text: no copy of the rest per piece
        space = text.rfind(" ", pos, pos + max_chars + 1)
        cut = space if space - pos > max_chars // 2 else pos + max_chars
        out.append(text[pos:cut].strip())
        pos = cut
        while pos < end and text[pos].isspace():
            pos += 1
    if pos < end:
        out.append(text[pos:])
    return out
