"""A book as VoxDesk reads it: title, author, cover and chapters of plain paragraphs.

:func:`import_book` reads TXT, Markdown and EPUB (app/longform/epub.py). A chapter's text is
one paragraph per line, so the segmenter's line numbers (``Segment.line``) tell sentence
breaks from paragraph breaks.

TXT and Markdown: paragraphs are blocks separated by blank lines (hard-wrapped lines are joined).
Chapters start at heading-like paragraphs — "Chapter 1", "CHAPTER IV", "Part Two", "Prologue",
"第一章", "第12回", a short line in capitals, or a ``#`` line in Markdown; a text without any is
one chapter named after the book.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import VoxDeskError

MAX_TEXT_BYTES = 64 * 2**20  # a long novel is ~2 MB; 64 MB is no book
BOOK_SUFFIXES = (".epub", ".txt", ".md", ".markdown")


@dataclass(frozen=True)
class Chapter:
    title: str
    text: str  # one paragraph per line


@dataclass(frozen=True)
class Book:
    title: str
    chapters: tuple[Chapter, ...]
    author: str = ""
    language: str = ""
    cover: bytes | None = field(default=None, repr=False)
    cover_mime: str = "image/jpeg"

    @property
    def chars(self) -> int:
        return sum(len(c.text) for c in self.chapters)


def import_book(path: str | Path) -> Book:
    """Read a TXT, Markdown or EPUB book; bad input raises :class:`VoxDeskError` (one line)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in BOOK_SUFFIXES:
        raise VoxDeskError(f"{path.name} is not a book VoxDesk reads: open an .epub, .txt or .md file.")
    if not path.is_file():
        raise VoxDeskError(f"Book file {path} not found.")
    if suffix == ".epub":
        from app.longform.epub import read_epub

        book = read_epub(path)
    else:
        text = _read_text(path)
        book = read_markdown(text, path.stem) if suffix != ".txt" else read_plain(text, path.stem)
    if not any(c.text.strip() for c in book.chapters):
        raise VoxDeskError(f"{path.name} has no text to speak.")
    return book


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise VoxDeskError(f"{path.name} is {size / 2**20:.0f} MB, too large for a book: split it.")
        data = path.read_bytes()
    except OSError as exc:
        raise VoxDeskError(f"Cannot read {path.name} ({exc.strerror or type(exc).__name__}).") from None
    for bom, codec in ((b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            return data.decode(codec, errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise VoxDeskError(f"{path.name} is not UTF-8 text: save it as UTF-8 and open it again.") from None


# ---- plain text -------------------------------------------------------------------------------
_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last"
)
_NUMBER = rf"(?:\d+|[ivxlcdm]+|(?:{_WORDS})(?:-(?:{_WORDS}))?)"
_HEADING = re.compile(
    rf"^(?:(?:chapter|part|book|section|canto)\s+{_NUMBER}\b.{{0,70}}|prologue|epilogue|preface|foreword|"
    r"introduction|afterword|interlude)\W{0,3}.{0,60}$",
    re.IGNORECASE,
)
_CJK_HEADING = re.compile(r"^\s*第\s*[0-9０-９一二三四五六七八九十百千零〇两]+\s*[章回节卷部篇].{0,30}$")
_MAX_HEADING = 80


def is_heading(paragraph: str) -> bool:
    """A paragraph that looks like a chapter heading (see the module docstring)."""
    p = paragraph.strip()
    if not p or len(p) > _MAX_HEADING or "\n" in p:
        return False
    if _CJK_HEADING.match(p):
        return True
    if _HEADING.match(p) and not p.endswith((",", ";")):
        return len(p.split()) <= 12
    letters = [ch for ch in p if ch.isalpha()]
    # "THE LAST VOYAGE": capitals only, a few words, not a shout in the middle of dialogue
    return (
        len(letters) >= 4 and all(ch.isupper() for ch in letters) and len(p.split()) <= 8
        and not p.endswith(("!", "?", ",", "\"", "”")) and letters[0].isascii()
    )  # fmt: skip


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, each joined into one line (hard wraps undone)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
        if lines:
            out.append(_join_lines(lines))
    return out


def _join_lines(lines: list[str]) -> str:
    text = lines[0]
    for line in lines[1:]:
        cjk = _is_cjk(text[-1]) or _is_cjk(line[0])
        text = text + line if cjk else f"{text} {line}"
    return text


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" or "\u3000" <= ch <= "\u303f"


def read_plain(text: str, title: str) -> Book:
    """A TXT book: chapters at heading-like paragraphs; a single heading line on its own line also
    counts when the text has no blank lines between paragraphs."""
    paras = paragraphs(text)
    if len(paras) == 1 and "\n" in text.strip():  # no blank lines: one paragraph per line
        paras = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(paras) > 1 and len(paras[0]) <= _MAX_HEADING and is_heading(paras[1]):
        title, paras = paras[0], paras[1:]  # "The Title" above "Chapter 1"
    return _chapters_at(paras, is_heading, title)


def _chapters_at(paras: list[str], heading, title: str) -> Book:
    chapters: list[Chapter] = []
    current_title: str | None = None
    body: list[str] = []

    def close() -> None:  # a heading with nothing under it (a part's title) makes no chapter
        if body:
            name = current_title or (title if not chapters else f"Chapter {len(chapters) + 1}")
            chapters.append(Chapter(name, "\n".join(body)))

    for para in paras:
        if heading(para):
            close()
            current_title, body = para.strip(), []
        else:
            body.append(para)
    close()
    return Book(title=title, chapters=tuple(chapters))


# ---- Markdown ----------------------------------------------------------------------------------
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_MD_HTML = re.compile(r"<[^>\n]{1,200}>")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3}|~~|`+)(?=\S)(.+?)(?<=\S)\1")
_MD_LIST = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+")
_MD_QUOTE = re.compile(r"^\s{0,3}>\s?")
_MD_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")


def plain_markdown(line: str) -> str:
    """One Markdown line as the words it reads as (links keep their text, images go)."""
    line = _MD_IMAGE.sub("", line)
    line = _MD_FOOTNOTE.sub("", line)
    line = _MD_LINK.sub(r"\1", line)
    line = _MD_HTML.sub("", line)
    line = _MD_LIST.sub("", _MD_QUOTE.sub("", line))
    for _ in range(3):  # nested emphasis
        line = _MD_EMPHASIS.sub(r"\2", line)
    return line


def read_markdown(text: str, title: str) -> Book:
    """A Markdown book: chapters at the shallowest heading level used more than once (a single
    heading above that level is the book's title); other headings are read as lines; code blocks,
    images and footnote marks dropped."""
    blocks: list[tuple[int, str]] = []  # (heading level, text); level 0: a paragraph
    lines: list[str] = []
    fenced = False

    def flush() -> None:
        if lines:
            blocks.append((0, _join_lines(lines)))
            lines.clear()

    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if _MD_FENCE.match(raw):
            fenced = not fenced
            flush()
            continue
        if fenced or (raw.startswith(("    ", "\t")) and not lines):  # code
            continue
        match = _MD_HEADING.match(raw)
        if match:
            flush()
            blocks.append((len(match.group(1)), plain_markdown(match.group(2)).strip()))
        elif not raw.strip() or _MD_RULE.match(raw) or raw.lstrip().startswith("[^"):
            flush()
        else:
            line = plain_markdown(raw).strip()
            if line:
                lines.append(line)
    flush()
    levels = [lv for lv, _ in blocks if lv]
    repeated = [lv for lv in set(levels) if levels.count(lv) > 1]
    level = min(repeated) if repeated else 0
    top = min(levels) if levels else 0
    title_at = -1
    if top and levels.count(top) == 1 and (not level or top < level):
        title_at = next(i for i, (lv, _) in enumerate(blocks) if lv == top)
        title = blocks[title_at][1] or title
    chapters: list[Chapter] = []
    name: str | None = None
    body: list[str] = []
    for i, (lv, words) in enumerate(blocks + [(level or -1, "")]):
        if i == title_at or not words and lv != (level or -1):
            continue
        if lv and lv == level or lv == -1:
            if body:
                chapters.append(Chapter(name or (title if not chapters else f"Chapter {len(chapters) + 1}"),
                                        "\n".join(body)))  # fmt: skip
            name, body = words, []
        else:
            body.append(words)  # a paragraph, or a sub-heading read as a line
    return Book(title=title, chapters=tuple(chapters))
