"""EPUB 2 and 3 books, read with the standard zipfile and lxml (no EPUB library in the bundle:
the usual one, EbookLib, is AGPL).

What is read: ``META-INF/container.xml`` → the package (OPF): title, author, language, the cover
image (EPUB 3 ``properties="cover-image"``, EPUB 2 ``<meta name="cover">``), the spine, and the
book's own chapter list — the EPUB 3 nav document's ``toc``, else the EPUB 2 NCX, else one chapter
per spine document. Chapters run from their TOC entry to the next one (several chapters in one
file are cut at their anchors).

A hostile file gets one plain line: not a zip, too many or too large entries, a zip bomb (the
sizes are checked from the central directory and again while reading, so a lying header does not
help), DRM (``META-INF/encryption.xml`` encrypting more than fonts, or ``rights.xml``), a missing
package. Paths inside the EPUB are only ever names inside the zip: nothing is written from them.
"""

from __future__ import annotations

import logging
import posixpath
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

from lxml import etree

from app.errors import VoxDeskError
from app.longform import xhtml
from app.longform.book import Book, Chapter

log = logging.getLogger(__name__)

MAX_ENTRIES = 10_000
MAX_ENTRY_BYTES = 32 * 2**20  # one chapter or image
MAX_TOTAL_BYTES = 512 * 2**20  # what is read of the whole book
MAX_RATIO = 200  # deflate reaches ~1000:1 only on degenerate data: a bomb
MAX_COVER_BYTES = 16 * 2**20
_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
    "enc": "http://www.w3.org/2001/04/xmlenc#",
}
_XML = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, load_dtd=False)
_IMAGE_TYPES = {"image/jpeg", "image/png"}


class _Bad(Exception):
    """A reason the book cannot be read, said in a few words."""


@dataclass(frozen=True)
class _TocEntry:
    title: str
    href: str  # zip name of the document
    anchor: str  # fragment, "" for the top of the document


class _Zip:
    """Read-only access to the EPUB's entries under the size limits."""

    def __init__(self, path: Path) -> None:
        try:
            self.zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise _Bad("it is not an EPUB (not a zip archive)") from exc
        infos = self.zf.infolist()
        if len(infos) > MAX_ENTRIES:
            raise _Bad(f"it has {len(infos):,} files inside")
        self.infos = {i.filename: i for i in infos}
        self.read_total = 0

    def has(self, name: str) -> bool:
        return name in self.infos

    def read(self, name: str, limit: int = MAX_ENTRY_BYTES) -> bytes:
        info = self.infos.get(name)
        if info is None:
            raise KeyError(name)
        if info.flag_bits & 0x1:
            raise _Bad("it is encrypted (DRM)")
        if info.file_size > limit or info.file_size > MAX_RATIO * max(info.compress_size, 1024):
            raise _Bad(f"{posixpath.basename(name)} inside it is too large")
        with self.zf.open(info) as f:  # the header may lie: read no more than it claims, plus one
            data = f.read(min(info.file_size, limit) + 1)
        if len(data) > info.file_size or len(data) > limit:
            raise _Bad(f"{posixpath.basename(name)} inside it is too large")
        self.read_total += len(data)
        if self.read_total > MAX_TOTAL_BYTES:
            raise _Bad("it holds too much data")
        return data

    def xml(self, name: str) -> etree._Element:
        root = etree.fromstring(self.read(name), _XML)
        if root is None:
            raise _Bad(f"{posixpath.basename(name)} inside it is not XML")
        return root

    def close(self) -> None:
        self.zf.close()


def read_epub(path: Path) -> Book:
    """The book in ``path``; any failure is one :class:`VoxDeskError` line (details in the log)."""
    try:
        z = _Zip(path)
    except _Bad as exc:
        raise VoxDeskError(f"Cannot open {path.name}: {exc}. Open another EPUB.") from None
    try:
        return _read(z, path)
    except _Bad as exc:
        raise VoxDeskError(f"Cannot open {path.name}: {exc}. Open another EPUB.") from None
    except (KeyError, ValueError, etree.LxmlError, zipfile.BadZipFile, OSError, EOFError, RecursionError,
            NotImplementedError, RuntimeError) as exc:  # fmt: skip
        log.warning("reading %s failed", path, exc_info=True)
        raise VoxDeskError(
            f"Cannot open {path.name}: the EPUB is damaged ({type(exc).__name__}). Open another EPUB."
        ) from None
    finally:
        z.close()


def _read(z: _Zip, path: Path) -> Book:
    _check_drm(z)
    if not z.has("META-INF/container.xml"):
        raise _Bad("META-INF/container.xml is missing")
    rootfile = z.xml("META-INF/container.xml").find(".//c:rootfile", _NS)
    opf_name = _clean(rootfile.get("full-path", "") if rootfile is not None else "")
    if not opf_name or not z.has(opf_name):
        raise _Bad("its package file (OPF) is missing")
    opf = z.xml(opf_name)
    base = posixpath.dirname(opf_name)
    manifest: dict[str, tuple[str, str, set[str]]] = {}  # id -> (zip name, media type, properties)
    for item in opf.iterfind(".//opf:manifest/opf:item", _NS):
        href = item.get("href")
        if item.get("id") and href:
            name = _join(base, href)
            manifest[item.get("id")] = (
                name,
                item.get("media-type", ""),
                set(item.get("properties", "").split()),
            )
    spine_el = opf.find(".//opf:spine", _NS)
    spine = [manifest[r.get("idref")][0] for r in (spine_el if spine_el is not None else [])
             if r.get("idref") in manifest and manifest[r.get("idref")][1].endswith("html+xml")
             and "nav" not in manifest[r.get("idref")][2]]  # fmt: skip
    if not spine:
        raise _Bad("it has no readable pages")
    title = _meta(opf, "title") or path.stem
    toc = _nav_toc(z, manifest) or _ncx_toc(z, manifest, spine_el)
    chapters = _chapters(z, spine, toc) if toc else []
    if not any(c.text for c in chapters):
        chapters = _spine_chapters(z, spine)
    cover, mime = _cover(z, opf, manifest)
    return Book(title=title, author=_meta(opf, "creator"), language=_meta(opf, "language"),
                chapters=tuple(c for c in chapters if c.text), cover=cover, cover_mime=mime)  # fmt: skip


def _clean(name: str) -> str:
    """A zip member name from an href: percent-decoded, normalised, never above the root."""
    name = posixpath.normpath(unquote(name).replace("\\", "/")).lstrip("/")
    return "" if name.startswith("..") or name == "." else name


def _join(base: str, href: str) -> str:
    return _clean(posixpath.join(base, urldefrag(href)[0]))


def _check_drm(z: _Zip) -> None:
    if z.has("META-INF/rights.xml"):
        raise _Bad("it is protected by DRM")
    if z.has("META-INF/encryption.xml"):
        root = z.xml("META-INF/encryption.xml")
        for data in root.iterfind(".//enc:EncryptedData", _NS):
            method = data.find("enc:EncryptionMethod", _NS)
            if method is None or method.get("Algorithm") not in _FONT_OBFUSCATION:
                raise _Bad("it is protected by DRM")


def _meta(opf: etree._Element, name: str) -> str:
    el = opf.find(f".//opf:metadata/dc:{name}", _NS)
    text = "".join(el.itertext()).strip() if el is not None else ""
    return " ".join(text.split())[:300]


def _nav_toc(z: _Zip, manifest: dict) -> list[_TocEntry]:
    nav = next((name for name, _t, props in manifest.values() if "nav" in props), None)
    if nav is None or not z.has(nav):
        return []
    root = xhtml.parse(z.read(nav))
    if root is None:
        return []
    toc_nav = None
    for el in root.iter():
        if xhtml._local(el.tag) == "nav":
            if "toc" in xhtml._epub_type(el):
                toc_nav = el
                break
            toc_nav = toc_nav if toc_nav is not None else el
    if toc_nav is None:
        return []
    base = posixpath.dirname(nav)
    return [_entry(base, a.get("href", ""), "".join(a.itertext())) for a in toc_nav.iter()
            if xhtml._local(a.tag) == "a" and a.get("href")]  # fmt: skip


def _ncx_toc(z: _Zip, manifest: dict, spine_el) -> list[_TocEntry]:
    ncx_id = spine_el.get("toc") if spine_el is not None else None
    ncx = manifest.get(ncx_id, (None,))[0] if ncx_id else None
    ncx = ncx or next((n for n, t, _p in manifest.values() if t == "application/x-dtbncx+xml"), None)
    if ncx is None or not z.has(ncx):
        return []
    base = posixpath.dirname(ncx)
    out = []
    for point in z.xml(ncx).iter("{%s}navPoint" % _NS["ncx"]):  # noqa: UP031 - document order
        label = point.find("ncx:navLabel/ncx:text", _NS)
        content = point.find("ncx:content", _NS)
        if content is not None and content.get("src"):
            out.append(
                _entry(base, content.get("src"), "".join(label.itertext()) if label is not None else "")
            )
    return out


def _entry(base: str, href: str, title: str) -> _TocEntry:
    doc, frag = urldefrag(href)
    return _TocEntry(" ".join(title.split())[:200], _join(base, doc), unquote(frag))


def _chapters(z: _Zip, spine: list[str], toc: list[_TocEntry]) -> list[Chapter]:
    """Each TOC entry's text, up to the next entry, in spine order; pages before the first
    entry (cover, title page) are left out, pages after the last belong to it."""
    order = {name: i for i, name in enumerate(spine)}
    toc = [e for e in toc if e.href in order]
    toc.sort(key=lambda e: order[e.href])  # stable: entries of one file keep their order
    if not toc:
        return []
    anchors: dict[str, set[str]] = {}
    for e in toc:
        if e.anchor:
            anchors.setdefault(e.href, set()).add(e.anchor)
    starts: list[tuple[int, int]] = []  # (spine index, paragraph index) where each entry starts
    pages: dict[int, list[str]] = {}
    for i, name in enumerate(spine):
        if i < order[toc[0].href] or not z.has(name):
            continue
        root = xhtml.parse(z.read(name))
        paras, found = xhtml.paragraphs(root, anchors.get(name, set())) if root is not None else ([], {})
        pages[i] = paras
        for e in toc:
            if e.href == name:
                starts.append((i, found.get(e.anchor, 0) if e.anchor else 0))
    chapters: list[Chapter] = []
    for k, e in enumerate(toc):
        s_page, s_para = starts[k]
        e_page, e_para = starts[k + 1] if k + 1 < len(starts) else (len(spine), 0)
        body: list[str] = []
        for i in range(s_page, min(e_page, len(spine) - 1) + 1):
            paras = pages.get(i, [])
            lo = s_para if i == s_page else 0
            hi = e_para if i == e_page else len(paras)
            body.extend(paras[lo:hi])
        if body and body[0] == e.title:
            body = body[1:]  # the heading is the chapter's title, not its first line
        chapters.append(Chapter(e.title or f"Chapter {k + 1}", "\n".join(body)))
    return chapters


def _spine_chapters(z: _Zip, spine: list[str]) -> list[Chapter]:
    chapters = []
    for name in spine:
        if not z.has(name):
            continue
        root = xhtml.parse(z.read(name))
        if root is None:
            continue
        paras, _ = xhtml.paragraphs(root)
        if paras:
            title = xhtml.heading(root) or f"Chapter {len(chapters) + 1}"
            if paras[0] == title:
                paras = paras[1:]
            chapters.append(Chapter(title, "\n".join(paras)))
    return chapters


def _cover(z: _Zip, opf: etree._Element, manifest: dict) -> tuple[bytes | None, str]:
    candidates = [(n, t) for n, t, props in manifest.values() if "cover-image" in props]
    meta = opf.find(".//opf:metadata/opf:meta[@name='cover']", _NS)
    if meta is not None and meta.get("content") in manifest:
        name, mtype, _ = manifest[meta.get("content")]
        candidates.append((name, mtype))
    for name, mtype in candidates:
        if mtype in _IMAGE_TYPES and z.has(name):
            try:
                return z.read(name, MAX_COVER_BYTES), mtype
            except _Bad:
                log.warning("cover %s skipped: too large", name)
    return None, "image/jpeg"
