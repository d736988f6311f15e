"""``[Voice]`` tags checked as the user types: unknown names get a red wavy underline.

The highlighter only colours; :func:`unknown_tags` lists the unknown names (in order of first use)
for the hint under the editor, which offers the quick fixes. A tag the script's cast maps to a
voice (``[Carol]`` spoken by Ben) is known; :func:`cast_tags` lists those for the same hint.
Pause tags (``[pause 800ms]``) are shown in italics and ``# heading`` lines (a chapter) in bold;
:func:`bad_pauses` lists what looks like a pause tag but is not one (it would be read out).
An emotion part (``[Anna|angry]``, ``[|sad]``) goes with the tag; :func:`emotion_tags` lists those
that cannot be read and those that can (a model without emotions ignores them).
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from app.text.segmenter import bad_pause_tags, is_heading, line_tag, pause_spans, tag_span
from app.voices.emotion import EmotionSpec

UNKNOWN_RED = QColor(200, 30, 30)
PAUSE_BLUE = QColor(20, 100, 160)


def cast_tags(text: str, cast: dict[str, str]) -> list[tuple[str, str]]:
    """(tag as written, voice) for each tag in ``text`` that the cast maps, in order of first use."""
    voices = {k.casefold(): v for k, v in cast.items()}
    seen: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        span = tag_span(line)
        if span is not None and span[2].casefold() in voices:
            seen.setdefault(span[2].casefold(), (span[2], voices[span[2].casefold()]))
    return list(seen.values())


def unknown_tags(text: str, known: set[str]) -> list[str]:
    """Tag names in ``text`` that name no voice in ``known`` (casefolded names); a broken pause
    tag is not one of them (:func:`bad_pauses`)."""
    seen: dict[str, str] = {}
    for line in text.splitlines():
        span = tag_span(line)
        if span is not None and span[2].casefold() not in known and not bad_pause_tags(line[: span[1]]):
            seen.setdefault(span[2].casefold(), span[2])
    return list(seen.values())


def bad_pauses(text: str) -> list[str]:
    """Broken pause tags in ``text`` (``[pause 5min]``), each once, in order of first use."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        for tag in bad_pause_tags(line):
            seen.setdefault(tag, None)
    return list(seen)


def emotion_tags(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, EmotionSpec]]]:
    """The emotion tags in ``text``, each once in order of first use: (tag as written, why) for
    those that cannot be read, and (tag as written, its emotion) for those that can. One pass, and
    none for a script without a ``|`` (this runs at every key)."""
    bad: dict[str, str] = {}
    good: dict[str, EmotionSpec] = {}
    if "|" not in text:
        return [], []
    for line in text.splitlines():
        tag = line_tag(line) if "|" in line else None
        if tag is not None and tag.problem:
            bad.setdefault(line[tag.start : tag.end], tag.problem)
        elif tag is not None and not tag.emotion.is_none():
            good.setdefault(line[tag.start : tag.end], tag.emotion)
    return list(bad.items()), list(good.items())


class TagHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.known: set[str] = set()
        self._unknown = QTextCharFormat()
        self._unknown.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SpellCheckUnderline)
        self._unknown.setUnderlineColor(UNKNOWN_RED)
        self._unknown.setForeground(UNKNOWN_RED)
        self._known = QTextCharFormat()
        self._known.setFontWeight(600)
        self._pause = QTextCharFormat()
        self._pause.setFontItalic(True)
        self._pause.setForeground(PAUSE_BLUE)
        self._heading = QTextCharFormat()
        self._heading.setFontWeight(700)

    def set_known(self, names: list[str]) -> None:
        known = {n.casefold() for n in names}
        if known != self.known:
            self.known = known
            self.rehighlight()

    def is_known(self, name: str) -> bool:
        return name.casefold() in self.known

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt name)
        if is_heading(text):
            self.setFormat(0, len(text), self._heading)
        for start, end in pause_spans(text):
            self.setFormat(start, end - start, self._pause)
        for tag in bad_pause_tags(text):
            start = text.find(tag)
            self.setFormat(start, len(tag), self._unknown)
        tag = line_tag(text)
        if tag is None or bad_pause_tags(text[: tag.end]):
            return
        if tag.problem or (tag.voice is not None and not self.is_known(tag.voice)):
            fmt = self._unknown
        else:  # a known voice in bold; "[|sad]" (the default voice) as a pause tag is shown
            fmt = self._pause if tag.voice is None else self._known
        self.setFormat(tag.start, tag.end - tag.start, fmt)


def tag_format_at(document: QTextDocument, line: int, column: int) -> QTextCharFormat | None:
    """The highlighter's format at a position (None when plain): what the user sees there."""
    block = document.findBlockByNumber(line)
    ranges = block.layout().formats()  # kept alive while its formats are copied out
    for rng in ranges:
        if rng.start <= column < rng.start + rng.length:
            return QTextCharFormat(rng.format)
    return None
