"""Reading back a small file VoxDesk wrote itself (metadata, autosaves), without trusting it.

Only a regular file is read, never a link (a ``voice.json`` that points at ``/dev/zero`` or at a
file outside the data folder), a pipe or a device; its size is checked before it is read, and at
most ``limit`` bytes are read even if it grows meanwhile. Every refusal is a ``ValueError`` whose
text says what the file is, ready for :func:`app.quarantine.set_aside`.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

# A voice's metadata is about 1 KB; a project of 200,000 characters of script and its segment
# results stays well under this.
MAX_JSON_BYTES = 16 * 2**20


def describe(mode: int) -> str:
    """What a path that is not a regular file is, in words."""
    if stat.S_ISLNK(mode):
        return "a link (VoxDesk does not follow links in its data folder)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    FileNotFoundError when it is missing; ValueError when it is a link, a pipe, a device or too
    large; other OSErrors as they come."""
    path = Path(path)
    mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path.name} is {describe(mode)}")
    # O_NOFOLLOW, O_NONBLOCK: swapped for a link or a pipe since lstat(), it still fails at once
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path.name} is {describe(info.st_mode)}")
        if info.st_size > limit:
            raise ValueError(f"{path.name} is {info.st_size:,} bytes; such a file has at most {limit:,}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path.name} is more than {limit:,} bytes; such a file has at most {limit:,}")
    return data


def read_json(path: str | os.PathLike[str], limit: int = MAX_JSON_BYTES) -> Any:
    """Parsed JSON from a bounded regular file; ValueError (UnicodeDecodeError, JSONDecodeError
    included) when it is not one. Text with a lone surrogate (``"\\ud800"``, which no file can
    be written with) is refused too."""
    data = json.loads(read_bytes(path, limit).decode("utf-8"))
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("it holds text that is not valid Unicode (a lone surrogate)") from None
    return data
