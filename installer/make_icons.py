"""Render resources/voxdesk.svg into the PNG and Windows ICO files the bundle and window use.

Run from the repository root after changing the SVG, and commit the results:

    python installer/make_icons.py

Qt renders the SVG; the ICO container is written here (no Pillow needed). Sizes below 256 px
are stored as 32-bit DIBs, which every Windows shell and Inno Setup read; 256 px as PNG.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "voxdesk.svg"
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
PNG_SIZES = (32, 64, 128, 256, 512)


def render(size: int):
    """The SVG drawn on a transparent ``size``x``size`` non-premultiplied ARGB image."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SVG}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def png_bytes(image) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def dib_bytes(image) -> bytes:
    """An ICO image entry as BITMAPINFOHEADER + bottom-up BGRA rows + an empty AND mask."""
    size = image.width()
    stride = image.bytesPerLine()
    bits = bytes(image.constBits())[: stride * size]
    # Format_ARGB32 is B, G, R, A in memory on little-endian machines: the DIB byte order.
    rows = [bits[y * stride : y * stride + size * 4] for y in range(size)]
    mask_stride = ((size + 31) // 32) * 4
    mask = bytes(mask_stride * size)
    pixels = b"".join(reversed(rows))
    header = struct.pack("<IiiHHIIiiII", 40, size, 2 * size, 1, 32, 0, len(pixels) + len(mask), 0, 0, 0, 0)
    return header + pixels + mask


def ico_bytes(images: dict[int, object]) -> bytes:
    entries = [(size, png_bytes(img) if size >= 256 else dib_bytes(img)) for size, img in images.items()]
    offset = 6 + 16 * len(entries)
    directory = struct.pack("<HHH", 0, 1, len(entries))
    blobs = b""
    for size, blob in entries:
        dim = 0 if size >= 256 else size
        directory += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset + len(blobs))
        blobs += blob
    return directory + blobs


def main() -> int:
    if sys.byteorder != "little":
        raise SystemExit("the ICO writer assumes a little-endian machine")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (Qt needs it alive)
    out = SVG.parent
    for size in PNG_SIZES:
        name = "voxdesk.png" if size == 256 else f"voxdesk-{size}.png"
        (out / name).write_bytes(png_bytes(render(size)))
    (out / "voxdesk.ico").write_bytes(ico_bytes({size: render(size) for size in ICO_SIZES}))
    print(f"wrote icons to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
