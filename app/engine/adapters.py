"""Which LoRA sits in which adapter slot: an LRU over a fixed number of slots (a setting).

Pure bookkeeping on the host. A request with a LoRA pins its slot from admission to its end; a
LoRA not resident goes into a free slot, else into the least recently used unpinned one
(evicting the LoRA there), by copying its weights into the model's stacked buffers in place, so
no CUDA graph is captured again. Only a new layout (the first LoRA, a module or a rank no
resident LoRA had) reallocates the buffers; ``on_layout`` is then called (the engine recaptures).
Slot 0 is "no LoRA" and is never handed out.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path

from app.models.voxcpm.lora import LoRA, read_lora, weights_file
from app.models.voxcpm.lora_bank import LoRABank
from app.models.voxcpm.model import VoxCPM

log = logging.getLogger(__name__)


class Adapters:
    def __init__(self, model: VoxCPM, slots: int, on_layout: Callable[[LoRABank], None]) -> None:
        self.model = model
        self.slots = slots
        self.on_layout = on_layout
        self.bank: LoRABank | None = None
        self._read: OrderedDict[tuple[str, float, int], LoRA] = OrderedDict()  # read folders, newest last
        self._slot_of: dict[bytes, int] = {}  # LoRA digest -> slot
        self._users: Counter[int] = Counter()  # slot -> requests pinning it
        self._lru: OrderedDict[int, None] = OrderedDict((s, None) for s in range(1, slots + 1))

    def read(self, folder: str | Path) -> LoRA:
        """The checked LoRA in ``folder``; read again only when its weights file changed."""
        path = Path(folder).expanduser().resolve()
        weights = weights_file(path) if path.is_dir() else None
        stat = weights.stat() if weights is not None else None
        key = (str(path), stat.st_mtime if stat else 0.0, stat.st_size if stat else 0)
        lora = self._read.get(key)
        if lora is None:
            lora = read_lora(path, self.model.cfg)  # raises VoxDeskError naming the file
            self._read[key] = lora
            while len(self._read) > 2 * self.slots:
                self._read.popitem(last=False)
        self._read.move_to_end(key)
        return lora

    def acquire(self, lora: LoRA) -> int | None:
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
        return {slot: lora.name for slot, lora in (self.bank.resident.items() if self.bank else ())}

    def _load(self, slot: int, lora: LoRA) -> None:
        if self.bank is None:
            self.bank = LoRABank(self.model, self.slots)
        if self.bank.ensure(lora):
            log.info("LoRA layout now %d modules at rank %d", len(self.bank.names), self.bank.rank)
            self.on_layout(self.bank)
        old = self.bank.resident.get(slot)
        if old is not None:
            self._slot_of.pop(old.digest, None)
        self.bank.load(slot, lora)
        self._slot_of[lora.digest] = slot
