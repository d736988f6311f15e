"""KV block bookkeeping with prefix caching: the control plane, no tensors.

Both LMs advance position by position together, so one block table per sequence indexes both
paged caches. A full block is registered under the chained hash of its content
(:meth:`Sequence.block_hash`); a later sequence whose leading blocks hash the same reuses them
instead of recomputing their KV. Freed blocks keep their hash until they are handed out again,
oldest first, so a voice's prefix survives as long as memory allows.
"""

from __future__ import annotations

from collections import deque

from app.engine.sequence import Sequence


class Block:
    __slots__ = ("id", "ref_count", "hash")

    def __init__(self, block_id: int) -> None:
        self.id = block_id
        self.ref_count = 0
        self.hash: bytes | None = None


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError("need at least one block of at least one slot")
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.by_hash: dict[bytes, int] = {}
        self.free: deque[int] = deque(range(num_blocks))
        self.hits = 0  # blocks served from the prefix cache, for stats

    @property
    def num_free(self) -> int:
        return len(self.free)

    def blocks_for(self, num_tokens: int) -> int:
        return (num_tokens + self.block_size - 1) // self.block_size

    def match(self, seq: Sequence) -> list[int]:
        """Block ids holding ``seq``'s leading full blocks; the last position is always computed
        (its hidden states start the decode), so at most ``(len-1) // block_size`` blocks."""
        found = []
        for i in range((len(seq) - 1) // self.block_size):
            block_id = self.by_hash.get(seq.block_hash(i))
            if block_id is None:
                break
            found.append(block_id)
        return found

    def can_allocate(self, seq: Sequence, cached: list[int], reserve: int = 0) -> bool:
        """Whether ``seq`` fits, given the cached blocks :meth:`match` found for it, leaving
        ``reserve`` blocks free."""
        reused_free = sum(1 for b in cached if self.blocks[b].ref_count == 0)
        new = self.blocks_for(len(seq)) - len(cached)
        return new + reused_free + reserve <= len(self.free)

    def allocate(self, seq: Sequence, cached: list[int]) -> None:
        """Give ``seq`` blocks for all its positions, reusing ``cached`` (from :meth:`match`).
        Call only after :meth:`can_allocate` said yes."""
        if seq.block_table:
            raise RuntimeError("sequence already holds blocks")
        for block_id in cached:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                self.free.remove(block_id)
            block.ref_count += 1
            seq.block_table.append(block_id)
        for _ in range(self.blocks_for(len(seq)) - len(cached)):
            seq.block_table.append(self._take())
        self.hits += len(cached)
        seq.num_cached_tokens = len(cached) * self.block_size
        seq.num_computed = seq.num_cached_tokens

    def _take(self) -> int:
        block_id = self.free.popleft()
        block = self.blocks[block_id]
        if block.hash is not None and self.by_hash.get(block.hash) == block_id:
            del self.by_hash[block.hash]
        block.hash = None
        block.ref_count = 1
        return block_id

    def deallocate(self, seq: Sequence) -> None:
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free.append(block_id)
        seq.block_table.clear()
        seq.num_cached_tokens = seq.num_computed = 0

    def can_append(self, seq: Sequence) -> bool:
        """Whether the slot for ``seq``'s next position (written by the coming decode) exists."""
        return self.blocks_for(len(seq) + 1) - len(seq.block_table) <= len(self.free)

    def may_append(self, seq: Sequence) -> None:
        while len(seq.block_table) < self.blocks_for(len(seq) + 1):
            seq.block_table.append(self._take())

    def hash_blocks(self, seq: Sequence) -> None:
        """Register every full block whose KV is computed, so later sequences can reuse it."""
        for i in range(seq.num_computed // self.block_size):
            block = self.blocks[seq.block_table[i]]
            if block.hash is not None:
                continue
            h = seq.block_hash(i)
            block.hash = h
            self.by_hash.setdefault(h, block.id)
