"""Books in: EPUB 2/3 (built here with ebooklib), TXT and Markdown → title, author, cover, chapters."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from ebooklib import epub  # noqa: E402

from app.errors import VoxDeskError
from app.longform.book import import_book, read_markdown, read_plain

COVER = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4  # a JPEG's first bytes, then anything


def make_epub(
    path: Path,
    chapters: int = 3,
    *,
    cover: bool = True,
    nav: bool = True,
    ncx: bool = True,
    image: bytes = COVER,
) -> Path:
    book = epub.EpubBook()
    book.set_identifier("voxdesk-test")
    book.set_title("The Lighthouse Keeper")
    book.set_language("en")
    book.add_author("Ada Writer")
    if cover:
        book.set_cover("images/cover.png" if image.startswith(b"\x89PNG") else "images/cover.jpg", image)
    docs = []
    for i in range(1, chapters + 1):
        doc = epub.EpubHtml(title=f"Chapter {i}: Night {i}", file_name=f"text/ch{i}.xhtml", lang="en")
        doc.content = (
            f"<html><head><title>c{i}</title><style>p {{ color: red }}</style></head><body>"
            f"<h1>Chapter {i}: Night {i}</h1>"
            f"<p>The lamp was lit at dusk on night {i}.<sup>{i}</sup> It burned till dawn.</p>"
            f"<script>document.write('not spoken')</script>"
            f'<p>The <em>keeper</em> watched the sea<a epub:type="noteref" href="#n{i}">*</a>.</p>'
            f'<aside epub:type="footnote" id="n{i}"><p>A note that is not read.</p></aside>'
            "</body></html>"
        )
        book.add_item(doc)
        docs.append(doc)
    book.toc = docs
    if ncx:
        book.add_item(epub.EpubNcx())
    if nav:
        book.add_item(epub.EpubNav())
    book.spine = (["nav"] if nav else []) + docs
    epub.write_epub(str(path), book)
    return path


def test_epub_with_cover_and_three_chapters(tmp_path):
    book = import_book(make_epub(tmp_path / "keeper.epub"))
    assert book.title == "The Lighthouse Keeper" and book.author == "Ada Writer" and book.language == "en"
    assert book.cover == COVER and book.cover_mime == "image/jpeg"
    assert [c.title for c in book.chapters] == [
        "Chapter 1: Night 1",
        "Chapter 2: Night 2",
        "Chapter 3: Night 3",
    ]
    assert (
        book.chapters[1].text
        == "The lamp was lit at dusk on night 2. It burned till dawn.\nThe keeper watched the sea."
    )


@pytest.mark.parametrize("nav, ncx", [(False, True), (True, False)])
def test_epub2_ncx_or_epub3_nav_alone(tmp_path, nav, ncx):
    book = import_book(make_epub(tmp_path / "b.epub", nav=nav, ncx=ncx))
    assert [c.title for c in book.chapters] == [f"Chapter {i}: Night {i}" for i in (1, 2, 3)]


def _zip(path: Path, files: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            z.writestr(name, data)
    return path


CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def opf(manifest: str, spine: str, meta: str = "<dc:title>Hand Made</dc:title>", toc: str = "") -> str:
    return (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">{meta}</metadata>'
        f"<manifest>{manifest}</manifest><spine{toc}>{spine}</spine></package>"
    )


def page(body: str) -> str:
    return (
        f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>{body}</body></html>'
    )


def test_two_chapters_in_one_file_are_cut_at_their_anchors(tmp_path):
    nav = page(
        '<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol>'
        '<li><a href="all.xhtml#a">First</a></li><li><a href="all.xhtml#b">Second</a></li></ol></nav>'
    )
    files = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf(
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
            '<item id="all" href="all.xhtml" media-type="application/xhtml+xml"/>',
            '<itemref idref="all"/>',
        ),
        "OEBPS/nav.xhtml": nav,
        "OEBPS/all.xhtml": page(
            '<h2 id="a">First</h2><p>One.</p><p>Two.</p><h2 id="b">Second</h2><p>Three.</p>'
        ),
    }
    book = import_book(_zip(tmp_path / "one.epub", files))
    assert [(c.title, c.text) for c in book.chapters] == [("First", "One.\nTwo."), ("Second", "Three.")]
    assert book.title == "Hand Made" and book.cover is None


def test_no_table_of_contents_falls_back_to_the_spine(tmp_path):
    files = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf(
            '<item id="p1" href="p1.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="p2" href="p2.xhtml" media-type="application/xhtml+xml"/>',
            '<itemref idref="p1"/><itemref idref="p2"/>',
        ),
        "OEBPS/p1.xhtml": page("<h1>Opening</h1><p>Hello there.</p>"),
        "OEBPS/p2.xhtml": page("<p>No heading here.</p>"),
    }
    book = import_book(_zip(tmp_path / "spine.epub", files))
    assert [(c.title, c.text) for c in book.chapters] == [
        ("Opening", "Hello there."),
        ("t", "No heading here."),
    ]


def test_plain_text_chapters_from_heading_lines(tmp_path):
    text = (
        'THE SEA BOOK\n\nCHAPTER I\n\nIt was a dark\nand stormy night.\n\n"STOP!" he cried.\n\n'
        "Chapter Two: Morning\n\nThe sun rose.\n\n第三章 夜晚\n\n天黑了。\n"
    )
    path = tmp_path / "sea.txt"
    path.write_text(text, encoding="utf-8")
    book = import_book(path)
    assert book.title == "THE SEA BOOK"
    assert [c.title for c in book.chapters] == ["CHAPTER I", "Chapter Two: Morning", "第三章 夜晚"]
    assert book.chapters[0].text == 'It was a dark and stormy night.\n"STOP!" he cried.'
    assert read_plain("Just one paragraph.\n\nAnd another.", "notes").chapters[0].title == "notes"
    assert len(read_plain("Part of the deal was this.\n\nAnd more.", "x").chapters) == 1


def test_markdown_chapters_at_the_repeated_heading_level():
    text = (
        "# The Handbook\n\nIntro *words* and a [link](http://example.com).\n\n## Setup\n\nInstall it.\n"
        "Really.\n\n```\ncode is not read\n```\n\n### Details\n\n![image](a.png)Fine print[^1].\n\n"
        "## Use\n\n- Speak it.\n\n[^1]: A footnote.\n"
    )
    book = read_markdown(text, "file")
    assert book.title == "The Handbook"
    assert [(c.title, c.text) for c in book.chapters] == [
        ("The Handbook", "Intro words and a link."),
        ("Setup", "Install it. Really.\nDetails\nFine print."),
        ("Use", "Speak it."),
    ]


def test_unreadable_text_is_one_line(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(VoxDeskError, match="not UTF-8"):
        import_book(bad)
    with pytest.raises(VoxDeskError, match="open an .epub, .txt or .md"):
        import_book(tmp_path / "book.pdf")
    empty = tmp_path / "empty.md"
    empty.write_text("\n\n# \n", encoding="utf-8")
    with pytest.raises(VoxDeskError, match="no text"):
        import_book(empty)
