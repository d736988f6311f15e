"""An EPUB's XHTML as the paragraphs a reader hears.

Block elements (``p``, ``div``, headings, list items, ``br``…) end a paragraph; scripts, styles,
the head, footnote markers (``<a epub:type="noteref">``, a ``<sup>`` holding a note number) and
the notes themselves (``<aside epub:type="footnote">``) are dropped. Ids named in ``anchors``
report the paragraph they start, so a file that holds several chapters can be cut at them.
"""

from __future__ import annotations

import re

from lxml import etree, html

_BLOCKS = {
    "p", "div", "section", "article", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt",
    "dd", "blockquote", "pre", "tr", "table", "figure", "figcaption", "header", "footer", "hr", "br",
    "body", "main", "nav", "caption", "td", "th",
}  # fmt: skip
_DROP = {"script", "style", "head", "title", "noscript", "svg", "math", "rt", "rp", "img", "object", "iframe"}
_NOTE_TYPES = {"noteref", "footnote", "endnote", "rearnote", "footnotes", "endnotes", "rearnotes", "note"}
_NOTE_MARK = re.compile(r"^\W{0,2}(?:\d{1,4}|[ivxlc]{1,6}|[a-z]|\*{1,3}|†|‡)\W{0,2}$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")  # a damaged page's bytes
_HEADINGS = ("h1", "h2", "h3")


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""  # comments, processing instructions
    return tag.rsplit("}", 1)[-1].lower()


def _epub_type(el: etree._Element) -> set[str]:
    for key, value in el.attrib.items():
        if key.rsplit("}", 1)[-1].rsplit(":", 1)[-1] in ("type",) and ("epub" in key or ":" in key):
            return set(value.lower().split())
        if key == "role" and value.startswith("doc-"):
            return {value[4:].lower()}
    return set()


def _is_note(el: etree._Element, name: str) -> bool:
    if _epub_type(el) & _NOTE_TYPES:
        return True
    if name in ("sup", "a") and len(el) <= 1:
        text = "".join(el.itertext()).strip()
        if name == "sup" and _NOTE_MARK.match(text):
            return True
        href = el.get("href", "")
        if (
            name == "a"
            and href.startswith("#")
            and _NOTE_MARK.match(text)
            and "note" in (href + el.get("class", "")).lower()
        ):
            return True
    return False


def parse(data: bytes) -> etree._Element | None:
    """The document's root; XHTML first (no DTDs, entities or network), else the forgiving HTML
    parser; None for something that is neither."""
    parser = etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        root = None
    if root is None or _local(root.tag) != "html":
        try:
            root = html.document_fromstring(data, parser=html.HTMLParser(no_network=True, recover=True))
        except (etree.ParserError, ValueError):
            return None
    return root


def paragraphs(root: etree._Element, anchors: set[str] = frozenset()) -> tuple[list[str], dict[str, int]]:
    """The text's paragraphs in order, and for each id in ``anchors`` found, the index of the
    first paragraph at or after it."""
    out: list[str] = []
    found: dict[str, int] = {}
    words: list[str] = []

    def end() -> None:
        text = _SPACES.sub(" ", _CONTROL.sub("", "".join(words))).strip()
        words.clear()
        if text and any(ch.isalnum() for ch in text):
            out.append(text)

    def walk(el: etree._Element) -> None:
        name = _local(el.tag)
        if name in _DROP or not name or _is_note(el, name):
            return
        ident = el.get("id")
        if ident in anchors and ident not in found:
            end()
            found[ident] = len(out)
        block = name in _BLOCKS
        if block:
            end()
        if el.text:
            words.append(el.text)
        for child in el:
            walk(child)
            if child.tail:
                words.append(child.tail)
        if block:
            end()

    body = next((el for el in root.iter() if _local(el.tag) == "body"), root)
    walk(body)
    end()
    return out, found


def heading(root: etree._Element) -> str:
    """The document's first h1–h3 (or its <title>): a chapter's name when the book has no TOC."""
    for el in root.iter():
        if _local(el.tag) in _HEADINGS:
            text = _SPACES.sub(" ", "".join(el.itertext())).strip()
            if text:
                return text[:200]
    for el in root.iter():
        if _local(el.tag) == "title":
            return _SPACES.sub(" ", "".join(el.itertext())).strip()[:200]
    return ""
