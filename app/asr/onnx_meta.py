"""Read an ONNX file's metadata (``metadata_props``) without onnx or onnxruntime.

sherpa-onnx ends the whole process (``_Exit``) when a SenseVoice model lacks a metadata key, so
VoxDesk reads the keys itself first. An ONNX file is a protobuf ``ModelProto``; its top-level
fields are walked with seeks (the graph, hundreds of MB, is skipped, never read), and each
``metadata_props`` entry (field 14: key = 1, value = 2) is decoded. A truncated file shows up as
a field running past the end.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

METADATA_FIELD = 14
_MAX_ENTRY = 1 << 20  # one metadata entry (neg_mean is ~6 KB); larger means a damaged file


class OnnxFormatError(ValueError):
    """The file is not a complete ONNX model."""


def _varint(f: BinaryIO) -> int | None:
    shift = value = 0
    while True:
        byte = f.read(1)
        if not byte:
            if shift == 0:
                return None
            raise OnnxFormatError("the file ends inside a field header")
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value
        shift += 7
        if shift > 63:
            raise OnnxFormatError("a field header is malformed")


def _entry(data: bytes) -> tuple[str, str]:
    key = value = ""
    pos = 0
    while pos < len(data):
        tag, pos = _varint_bytes(data, pos)
        length, pos = _varint_bytes(data, pos)
        if tag & 7 != 2 or pos + length > len(data):
            raise OnnxFormatError("a metadata entry is malformed")
        text = data[pos : pos + length].decode("utf-8", errors="replace")
        pos += length
        if tag >> 3 == 1:
            key = text
        elif tag >> 3 == 2:
            value = text
    return key, value


def _varint_bytes(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while pos < len(data):
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise OnnxFormatError("a metadata entry is malformed")


def read_metadata(path: str | Path) -> dict[str, str]:
    """The ``metadata_props`` of the ONNX model at ``path``; raises OnnxFormatError or OSError."""
    size = os.path.getsize(path)
    meta: dict[str, str] = {}
    seen_graph = False
    with open(path, "rb") as f:
        while True:
            tag = _varint(f)
            if tag is None:
                break
            field, wire = tag >> 3, tag & 7
            if wire == 0:
                if _varint(f) is None:
                    raise OnnxFormatError("the file ends inside a field")
            elif wire == 2:
                length = _varint(f)
                if length is None or f.tell() + length > size:
                    raise OnnxFormatError("the file is cut short")
                if field == METADATA_FIELD:
                    if length > _MAX_ENTRY:
                        raise OnnxFormatError("a metadata entry is implausibly large")
                    key, value = _entry(f.read(length))
                    meta[key] = value
                else:
                    seen_graph |= field == 7
                    f.seek(length, os.SEEK_CUR)
            elif wire == 5:
                f.seek(4, os.SEEK_CUR)
            elif wire == 1:
                f.seek(8, os.SEEK_CUR)
            else:
                raise OnnxFormatError("the file is not an ONNX model")
            if f.tell() > size:
                raise OnnxFormatError("the file is cut short")
    if not seen_graph:
        raise OnnxFormatError("the file holds no network")
    return meta
