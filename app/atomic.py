"""Atomic writes of user data: a crash or a full disk never leaves a half-written file.

The data goes to a temporary file in the destination folder, is flushed and fsync'ed, then
``os.replace`` swaps it in. On any failure the temporary file is removed and the old file (if any)
is untouched. Out-of-space and permission errors become a plain :class:`VoxDeskError`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from app.errors import VoxDeskError

# mkstemp creates 0600 files; finished files get the usual permissions instead (read once, at import,
# because reading the umask means setting it).
_UMASK = os.umask(0)
os.umask(_UMASK)


def friendly_error(exc: OSError, path: Path) -> VoxDeskError | None:
    """The plain message for a full disk or a refused write to ``path``; None for other errors."""
    if exc.errno == errno.ENOSPC:
        return VoxDeskError(f"The disk is full: could not save {path.name}. Free some space and try again.")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return VoxDeskError(
            f"VoxDesk is not allowed to write to {path.parent}. "
            "Choose another folder or check its permissions."
        )
    return None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on clean exit it is fsync'ed and moved onto ``path``.

    For writers that want a file name (e.g. soundfile). The temporary name is hidden
    (``.name.tmp-XXXX.ext``) and ends with ``suffix`` (default: the target's), so writers that pick
    the format from the extension still work.
    """
    target = Path(path)
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            prefix=f".{target.stem}.tmp-",
            suffix=target.suffix if suffix is None else suffix,
            dir=target.parent,
        )
        os.close(fd)
        tmp = Path(name)
        yield tmp
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~_UMASK)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = None
        fsync_dir(target.parent)
    except OSError as exc:
        friendly = friendly_error(exc, target)
        if friendly is not None:
            raise friendly from exc
        raise
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def fsync_dir(folder: Path) -> None:
    """Persist the rename itself (POSIX only; Windows cannot open directories)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_with(path: str | os.PathLike[str], writer: Callable[[BinaryIO], None]) -> None:
    """Atomically write ``path`` by calling ``writer(file)`` on an open binary file."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        writer(f)
        f.flush()


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Atomically replace ``path`` with ``data``."""
    write_with(path, lambda f: f.write(data))


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Atomically replace ``path`` with UTF-8 ``text``."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Atomically replace ``path`` with ``obj`` as indented UTF-8 JSON."""
    write_text(path, json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
