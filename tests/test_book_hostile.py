"""Hostile and broken EPUBs: one plain line each, never a traceback, nothing read from outside."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from test_book_import import CONTAINER, _zip, opf, page

from app.errors import VoxDeskError
from app.longform.book import import_book

SPINE_ONE = '<itemref idref="c"/>'
ITEM = '<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/>'


def _book(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    """A one-page EPUB with ``files`` added or replaced."""
    base = {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": opf(ITEM, SPINE_ONE)}
    return _zip(tmp_path / "hostile.epub", base | files)


def _refused(path: Path, words: str) -> str:
    with pytest.raises(VoxDeskError, match=words) as err:
        import_book(path)
    message = str(err.value)
    assert "\n" not in message and path.name in message
    return message


def test_not_a_zip(tmp_path):
    path = tmp_path / "fake.epub"
    path.write_bytes(b"%PDF-1.4 this is not an epub" * 10)
    _refused(path, "not a zip archive")
    path.write_bytes(b"PK\x03\x04" + b"\0" * 60)  # a zip's magic, then nothing
    _refused(path, "not a zip archive")


def test_zip_bomb_and_huge_entries(tmp_path):
    bomb = _book(tmp_path, {"OEBPS/c.xhtml": b"<p>" + b" " * (24 * 2**20) + b"</p>"})  # 24 MB of spaces
    assert bomb.stat().st_size < 200_000
    _refused(bomb, "too large")
    cover = opf(
        ITEM + '<item id="i" href="i.jpg" media-type="image/jpeg" properties="cover-image"/>', SPINE_ONE
    )
    jpeg = b"\xff\xd8" + b"\0" * (17 * 2**20)
    big_cover = _book(
        tmp_path, {"OEBPS/content.opf": cover, "OEBPS/c.xhtml": page("<p>Text.</p>"), "OEBPS/i.jpg": jpeg}
    )
    book = import_book(big_cover)  # a cover that is a bomb is left out; the text is still read
    assert book.cover is None and book.chapters[0].text == "Text."


def test_lying_size_in_the_zip_header(tmp_path):
    path = _book(tmp_path, {"OEBPS/c.xhtml": page("<p>" + "word " * 2000 + "</p>")})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("OEBPS/c.xhtml")
    # the central directory says 100 bytes; the stream inflates to 10 kB
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(b"OEBPS/c.xhtml"))
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    assert info.file_size > 100
    _refused(path, "too large|damaged")


def test_too_many_entries(tmp_path):
    path = tmp_path / "many.epub"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(10_001):
            z.writestr(f"x/{i}", b"")
    _refused(path, "files inside")


def test_drm_is_named(tmp_path):
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/c.xhtml"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    _refused(_book(tmp_path, {"META-INF/encryption.xml": enc, "OEBPS/c.xhtml": b"\x93\x11garbage"}), "DRM")
    font = enc.replace("http://www.w3.org/2001/04/xmlenc#aes128-cbc", "http://www.idpf.org/2008/embedding")
    book = import_book(
        _book(tmp_path, {"META-INF/encryption.xml": font, "OEBPS/c.xhtml": page("<p>Fine.</p>")})
    )
    assert book.chapters[0].text == "Fine."  # obfuscated fonts are not DRM
    _refused(_book(tmp_path, {"META-INF/rights.xml": "<rights/>", "OEBPS/c.xhtml": page("<p>x</p>")}), "DRM")


def test_missing_parts(tmp_path):
    path = _zip(tmp_path / "bare.epub", {"OEBPS/c.xhtml": page("<p>x</p>")})
    _refused(path, "container.xml is missing")
    _refused(_zip(tmp_path / "noopf.epub", {"META-INF/container.xml": CONTAINER}), "package file")
    _refused(_book(tmp_path, {"OEBPS/content.opf": opf(ITEM, "")}), "no readable pages")
    _refused(_book(tmp_path, {"META-INF/container.xml": "<<<not xml"}), "damaged|package file|not XML")
    _refused(_book(tmp_path, {"OEBPS/c.xhtml": b"\x00\x01\x02\x03\x9f\x80"}), "no text")


def test_paths_never_leave_the_book(tmp_path):
    secret = tmp_path / "secret.xhtml"
    secret.write_text(page("<p>SECRET OUTSIDE THE BOOK</p>"), encoding="utf-8")
    escape = '<item id="c" href="../../secret.xhtml" media-type="application/xhtml+xml"/>'
    absolute = f'<item id="d" href="{secret}" media-type="application/xhtml+xml"/>'
    inside = '<item id="e" href="e.xhtml" media-type="application/xhtml+xml"/>'
    spine = '<itemref idref="c"/><itemref idref="d"/><itemref idref="e"/>'
    files = {
        "OEBPS/content.opf": opf(escape + absolute + inside, spine),
        "OEBPS/e.xhtml": page("<p>Inside.</p>"),
    }
    book = import_book(_book(tmp_path, files))
    assert "SECRET" not in "".join(c.text for c in book.chapters)
    assert [c.text for c in book.chapters] == ["Inside."]


def test_deep_nesting_and_entities(tmp_path):
    deep = page("<div>" * 5000 + "<p>Deep.</p>" + "</div>" * 5000)
    try:  # read as far as the parser goes, or refused in one line: never a crash
        assert import_book(_book(tmp_path, {"OEBPS/c.xhtml": deep})).chapters
    except VoxDeskError as exc:
        assert "no text" in str(exc)
    lol = (
        '<?xml version="1.0"?><!DOCTYPE html [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&c; &x; Plain.</p></body></html>'
    )
    text = import_book(_book(tmp_path, {"OEBPS/c.xhtml": lol})).chapters[0].text
    assert "root:" not in text and len(text) < 1000
