"""A request decoded as several beams: the beams share the prompt's KV blocks, are re-pointed by
their parents after each step and copy a shared block before writing into it (copy on write).

The KV cache here is an array of token values, one per slot, written and copied exactly as a
runner writes and copies K/V: each beam reads back, through its own block table, the prompt
followed by the tokens of its own history, whatever the parents did.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.block_manager import BlockManager
from app.engine.request import SynthRequest
from app.engine.scheduler import Scheduler
from app.engine.sequence import Sequence, Status

BS = 4


def _seq(prompt: list[int], width: int) -> Sequence:
    seq = Sequence(SynthRequest(text="x"), prompt, [None] * len(prompt), 50, seed=0, block_size=BS)
    seq.width = width
    return seq


class _Cache:
    """Slots of token values standing in for K/V, written and copied as a runner does."""

    def __init__(self, num_blocks: int) -> None:
        self.kv = np.full((num_blocks, BS), -1, np.int64)

    def prefill(self, seq: Sequence) -> None:
        for p in range(seq.num_computed, len(seq)):
            self.kv[seq.block_table[p // BS], p % BS] = seq.ids[p]
        seq.num_computed = len(seq)

    def apply_copies(self, seq: Sequence) -> None:
        for src, dst in seq.copies:
            self.kv[dst] = self.kv[src]
        seq.copies.clear()

    def write(self, seq: Sequence, tokens: list[int]) -> None:
        """Beam ``b``'s token at the first uncomputed position, through its own table."""
        p = seq.num_computed
        for table, token in zip(seq.block_tables, tokens, strict=True):
            self.kv[table[p // BS], p % BS] = token
        seq.num_computed = p + 1

    def read(self, table: list[int], n: int) -> list[int]:
        return [int(self.kv[table[p // BS], p % BS]) for p in range(n)]


def _check_counts(bm: BlockManager, seqs: list[Sequence]) -> None:
    held: dict[int, int] = {}
    for seq in seqs:
        for table in seq.block_tables:
            for b in table:
                held[b] = held.get(b, 0) + 1
    for block in bm.blocks:
        assert block.ref_count == held.get(block.id, 0), block.id
    assert set(bm.free).isdisjoint(held) and len(bm.free) + len(held) == len(bm.blocks)


def _decode(sched: Scheduler, cache: _Cache, hist: dict[int, list[list[int]]], rng) -> None:
    """One engine step of the lazy scheme a beam runner follows: copy, write the tokens chosen
    last step, choose the next tokens and parents, re-point the tables."""
    for seq in sched.schedule_decode():
        cache.apply_copies(seq)
        beams = hist[seq.id]
        if seq.num_computed < len(seq):  # last step's choices: their KV goes in now
            cache.write(seq, [h[-1] for h in beams])
        for table, h in zip(seq.block_tables, beams, strict=True):
            assert cache.read(table, seq.num_computed) == h[: seq.num_computed]
        parents = [int(p) for p in rng.integers(0, seq.width, seq.width)]
        tokens = [int(t) for t in rng.integers(100, 1000, seq.width)]
        hist[seq.id] = [beams[p] + [t] for p, t in zip(parents, tokens, strict=True)]
        seq.ids.append(0)
        seq.patches.append(None)
        sched.blocks.reorder(seq, parents)


@pytest.mark.parametrize("prompt_len", [5, 8])  # a partial last prompt block, and a full one
def test_every_beam_reads_its_own_history_through_forks_and_reorders(prompt_len: int) -> None:
    rng = np.random.default_rng(prompt_len)
    bm = BlockManager(64, BS)
    sched = Scheduler(bm, max_num_seqs=4, max_num_batched_tokens=1000)
    cache = _Cache(64)
    seqs = [_seq(list(range(1, prompt_len + 1)), 3), _seq([7, 8, 9], 1)]
    for seq in seqs:
        sched.add(seq)
    assert sched.schedule_prefill() == seqs
    beamed = seqs[0]
    assert beamed.block_tables[0] == beamed.block_tables[1] == beamed.block_tables[2]
    assert all(bm.blocks[b].ref_count == 3 for b in beamed.block_table)
    hist = {s.id: [list(s.ids) for _ in range(s.width)] for s in seqs}
    for seq in seqs:
        cache.prefill(seq)
        bm.hash_blocks(seq)
    for _ in range(11):
        _decode(sched, cache, hist, rng)
        _check_counts(bm, seqs)
    assert len({tuple(t) for t in beamed.block_tables}) > 1  # the beams went their own ways
    # the prompt's full blocks stay shared: only the blocks written since were copied
    full = prompt_len // BS
    assert all(beamed.block_tables[0][:full] == t[:full] for t in beamed.block_tables)
    for seq in seqs:
        sched.finish(seq)
    _check_counts(bm, [])
    assert bm.num_free == 64


def test_preempting_a_beamed_request_rewinds_it_to_its_prompt() -> None:
    """Its beams' positions are not the sequence's ids, so it is drawn again from the prompt:
    ``started`` is cleared for the runner to set up its beams (and generator) again."""
    bm = BlockManager(8, BS)
    sched = Scheduler(bm, max_num_seqs=2, max_num_batched_tokens=1000)
    seq = _seq([1, 2, 3, 4, 5], 3)
    sched.add(seq)
    assert sched.schedule_prefill() == [seq]
    seq.num_computed = len(seq)
    seq.started = True
    for _ in range(3):
        seq.ids.append(0)
        seq.patches.append(None)
    sched.preempt(seq)
    assert seq.status is Status.WAITING and len(seq) == 5 and not seq.started
    assert bm.num_free == 8 and seq.block_tables == [[]] and seq.copies == []


def test_decode_preempts_when_the_beams_copies_do_not_fit() -> None:
    """The copies of shared blocks count: three beams about to write into their shared partial
    prompt block need two more blocks, and the newest request makes room."""
    bm = BlockManager(4, BS)
    sched = Scheduler(bm, max_num_seqs=2, max_num_batched_tokens=1000)
    old = _seq([1, 2, 3, 4, 5], 3)  # 2 blocks, the second shared by three tables
    sched.add(old)
    assert sched.schedule_prefill() == [old]
    old.num_computed = len(old)
    new = _seq([9], 1)
    sched.add(new)
    assert sched.schedule_prefill() == []  # its block plus the beams' copies do not fit
    assert sched.schedule_decode() == [old]
    assert len(old.copies) == 2 and bm.num_free == 0
    _check_counts(bm, [old])


def test_reorder_refuses_parents_that_are_not_beams() -> None:
    bm = BlockManager(8, BS)
    seq = _seq([1, 2, 3], 2)
    bm.allocate(seq, [])
    with pytest.raises(ValueError):
        bm.reorder(seq, [0, 2])
    with pytest.raises(ValueError):
        bm.reorder(seq, [0])
