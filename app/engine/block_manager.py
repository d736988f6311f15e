"""KV block bookkeeping with prefix caching: the control plane, no tensors.

Both LMs advance position by position together, so one block table per sequence indexes both
paged caches. A full block is registered under the chained hash of its content
(:meth:`Sequence.block_hash`); a later sequence whose leading blocks hash the same reuses them
instead of recomputing their KV. Freed blocks keep their hash until they are handed out again,
oldest first, so a voice's prefix survives as long as memory allows.

A request decoded as several beams (``Sequence.width`` > 1) holds one block table per beam. The
beams start on the prompt's blocks, shared by reference count; after each step the family says
which beam each new beam continues and :meth:`BlockManager.reorder` re-points the tables (a
table is a list of shared blocks, so this moves counts, not KV). A block about to be written
while another table also holds it is copied first (:meth:`BlockManager.may_append` records the
copy in ``Sequence.copies``; the runner copies the KV before its write): copy on write, as vLLM
forks sequences.
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
        ``reserve`` blocks free (and, for beams, the copies of a shared last block)."""
        reused_free = sum(1 for b in cached if self.blocks[b].ref_count == 0)
        new = self.blocks_for(len(seq)) - len(cached)
        forks = (seq.width - 1) * (1 if len(seq) % self.block_size else 0)
        return new + reused_free + forks + reserve <= len(self.free)

    def allocate(self, seq: Sequence, cached: list[int]) -> None:
        """Give ``seq`` blocks for all its positions, reusing ``cached`` (from :meth:`match`);
        its other beams' tables share them. Call only after :meth:`can_allocate` said yes."""
        if any(seq.block_tables):
            raise RuntimeError("sequence already holds blocks")
        table = seq.block_tables[0]
        for block_id in cached:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                self.free.remove(block_id)
            block.ref_count += 1
            table.append(block_id)
        for _ in range(self.blocks_for(len(seq)) - len(cached)):
            table.append(self._take())
        seq.block_tables[1:] = [self._share(table) for _ in range(seq.width - 1)]
        self.hits += len(cached)
        seq.num_cached_tokens = len(cached) * self.block_size
        seq.num_computed = seq.num_cached_tokens

    def _share(self, table: list[int]) -> list[int]:
        for block_id in table:
            self.blocks[block_id].ref_count += 1
        return list(table)

    def _drop(self, table: list[int]) -> None:
        for block_id in reversed(table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free.append(block_id)

    def _take(self) -> int:
        block_id = self.free.popleft()
        block = self.blocks[block_id]
        if block.hash is not None and self.by_hash.get(block.hash) == block_id:
            del self.by_hash[block.hash]
        block.hash = None
        block.ref_count = 1
        return block_id

    def deallocate(self, seq: Sequence) -> None:
        for table in seq.block_tables:
            self._drop(table)
        seq.block_tables = [[]]
        seq.copies.clear()
        seq.num_cached_tokens = seq.num_computed = 0

    def _copies_needed(self, seq: Sequence) -> int:
        """Copies :meth:`may_append` makes: a block the coming decode may write (from the first
        uncomputed position) held by ``k`` of the beams' tables is copied for each of them, or
        for all but the last when no one else holds it."""
        first = seq.num_computed // self.block_size
        held: dict[int, int] = {}
        for table in seq.block_tables:
            for b in table[first:]:
                held[b] = held.get(b, 0) + 1
        return sum(k if self.blocks[b].ref_count > k else k - 1 for b, k in held.items())

    def can_append(self, seq: Sequence) -> bool:
        """Whether the slot for ``seq``'s next position (written by the coming decode) exists,
        for every beam, counting the copies of shared blocks it would write into."""
        need = self.blocks_for(len(seq) + 1)
        new = sum(need - len(t) for t in seq.block_tables) + self._copies_needed(seq)
        return new <= len(self.free)

    def may_append(self, seq: Sequence) -> None:
        """Give every beam the slot for its next position, and its own copy of any shared block
        it would write into (recorded in ``seq.copies`` for the runner)."""
        need = self.blocks_for(len(seq) + 1)
        first = seq.num_computed // self.block_size
        for table in seq.block_tables:
            for i in range(first, len(table)):
                if self.blocks[table[i]].ref_count > 1:
                    self.blocks[table[i]].ref_count -= 1
                    dst = self._take()
                    seq.copies.append((table[i], dst))
                    table[i] = dst
            while len(table) < need:
                table.append(self._take())

    def reorder(self, seq: Sequence, parents: list[int]) -> None:
        """Beam ``i`` continues beam ``parents[i]``: it takes that beam's table (shared; copied on
        the next write). The tables' blocks change hands, no KV moves."""
        if len(parents) != seq.width or any(not 0 <= p < seq.width for p in parents):
            raise ValueError(f"need {seq.width} parents in 0..{seq.width - 1}, got {parents}")
        if parents == list(range(seq.width)):
            return
        old = seq.block_tables
        seq.block_tables = [self._share(old[p]) for p in parents]
        for table in old:
            self._drop(table)

    def hash_blocks(self, seq: Sequence) -> None:
        """Register every full block whose KV is computed, so later sequences can reuse it (for
        beams, the prompt's: the beams' own positions are not the sequence's ids)."""
        computed = seq.num_computed if seq.width == 1 else min(seq.num_computed, seq.num_prompt)
        for i in range(computed // self.block_size):
            block = self.blocks[seq.block_table[i]]
            if block.hash is not None:
                continue
            h = seq.block_hash(i)
            block.hash = h
            self.by_hash.setdefault(h, block.id)
