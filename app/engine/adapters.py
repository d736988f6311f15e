"""Which LoRA sits in which adapter slot: an LRU over a fixed number of slots (a setting).

Pure bookkeeping on the host, whatever the family. A request with a LoRA pins its slot from
admission to its end; a LoRA not resident goes into a free slot, else into the least recently
used unpinned one (evicting the LoRA there). Reading a LoRA folder and putting its weights into a
slot are the family's (``FamilyRunner.read_lora`` / ``load_lora``: VoxCPM copies them into its
stacked buffers in place, so no CUDA graph is captured again unless the layout grows). A LoRA is
any object with a ``digest`` (bytes: what its KV is salted with) and a ``name``.
Slot 0 is "no LoRA" and is never handed out.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _stamp(path: Path) -> tuple:
    """Changes when any file of the folder changes, so an edited LoRA is read again."""
    if not path.is_dir():
        return ()
    files = sorted(p for p in path.iterdir() if p.is_file())
    return tuple((p.name, p.stat().st_mtime, p.stat().st_size) for p in files)


class Adapters:
    def __init__(self, slots: int, read: Callable[[Path], Any], load: Callable[[int, Any], None]) -> None:
        self.slots = slots
        self._reader = read
        self._loader = load
        self._read: OrderedDict[tuple, Any] = OrderedDict()  # read folders, newest last
        self._slot_of: dict[bytes, int] = {}  # LoRA digest -> slot
        self._names: dict[int, str] = {}  # slot -> name of the LoRA in it
        self._users: Counter[int] = Counter()  # slot -> requests pinning it
        self._lru: OrderedDict[int, None] = OrderedDict((s, None) for s in range(1, slots + 1))

    def read(self, folder: str | Path) -> Any:
        """The checked LoRA in ``folder``; read again only when one of its files changed."""
        path = Path(folder).expanduser().resolve()
        key = (str(path), _stamp(path))
        lora = self._read.get(key)
        if lora is None:
            lora = self._reader(path)  # raises VoxDeskError naming the file
            self._read[key] = lora
            while len(self._read) > 2 * self.slots:
                self._read.popitem(last=False)
        self._read.move_to_end(key)
        return lora

    def acquire(self, lora: Any) -> int | None:
        """Pin a slot holding ``lora`` (loading it if needed); None while every slot is pinned."""
        slot = self._slot_of.get(lora.digest)
        if slot is None:
            free = [s for s in self._lru if not self._users[s]]
            if not free:
                return None
            slot = free[0]
            self._load(slot, lora)
        self._users[slot] += 1
        self._lru.move_to_end(slot)
        return slot

    def release(self, slot: int) -> None:
        if slot > 0 and self._users[slot] > 0:
            self._users[slot] -= 1

    def resident(self) -> dict[int, str]:
        """Slot -> the name of the LoRA in it (for logs and tests)."""
        return dict(sorted(self._names.items()))

    def _load(self, slot: int, lora: Any) -> None:
        self._loader(slot, lora)
        old = [d for d, s in self._slot_of.items() if s == slot]
        for digest in old:
            del self._slot_of[digest]
        self._slot_of[lora.digest] = slot
        self._names[slot] = lora.name
