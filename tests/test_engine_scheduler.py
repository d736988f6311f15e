"""Block manager and scheduler bookkeeping: prefix hits, preemption, cancel, no leaked blocks."""

import numpy as np

from app.engine.block_manager import BlockManager
from app.engine.request import SynthRequest
from app.engine.scheduler import Scheduler
from app.engine.sequence import Sequence, Status

BS = 4


def _seq(ids, patches=None, max_patches=50):
    patches = patches if patches is not None else [None] * len(ids)
    return Sequence(SynthRequest(text="x"), ids, patches, max_patches, seed=0, block_size=BS)


def _voice_seq(voice_patches, text_ids):
    """Reference-mode layout: 103 [A_ref] 104 tok(target) 101."""
    ids = [103] + [0] * len(voice_patches) + [104] + text_ids + [101]
    patches = [None, *voice_patches, None] + [None] * (len(text_ids) + 1)
    return _seq(ids, patches)


def _run_prefill(sched, seqs):
    for seq in seqs:
        seq.num_computed = len(seq)
        sched.blocks.hash_blocks(seq)


def _decode_once(sched):
    batch = sched.schedule_decode()
    for seq in batch:
        seq.append_patch(np.full((2, 3), seq.id, np.float32))
        seq.num_computed = len(seq)
        sched.blocks.hash_blocks(seq)
    return batch


def test_same_voice_reuses_the_prefix_blocks():
    rng = np.random.default_rng(0)
    voice = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(9)]
    sched = Scheduler(BlockManager(32, BS), max_num_seqs=4, max_num_batched_tokens=1000)
    first = _voice_seq(voice, [7, 8, 9])
    sched.add(first)
    assert sched.schedule_prefill() == [first]
    assert first.num_cached_tokens == 0
    _run_prefill(sched, [first])
    second = _voice_seq(voice, [5, 6])  # other text, same voice
    sched.add(second)
    assert sched.schedule_prefill() == [second]
    # 103 + 9 patches + 104 = 11 shared positions: two full blocks of 4
    assert second.num_cached_tokens == 8
    assert second.block_table[:2] == first.block_table[:2]
    assert second.block_table[2:] != first.block_table[2:]
    # a different voice misses
    other = [p + 1 for p in voice]
    third = _voice_seq(other, [5, 6])
    sched.add(third)
    sched.schedule_prefill()
    assert third.num_cached_tokens == 0


def test_cached_blocks_survive_their_owner_until_reused():
    sched = Scheduler(BlockManager(8, BS), max_num_seqs=4, max_num_batched_tokens=1000)
    a = _seq(list(range(1, 11)))
    sched.add(a)
    sched.schedule_prefill()
    _run_prefill(sched, [a])
    sched.finish(a)
    assert sched.blocks.num_free == 8
    b = _seq(list(range(1, 11)))
    sched.add(b)
    sched.schedule_prefill()
    assert b.num_cached_tokens == 8  # the last position is always computed
    assert sched.blocks.num_free == 5


def test_whole_block_prompt_still_computes_its_last_position():
    sched = Scheduler(BlockManager(8, BS), max_num_seqs=4, max_num_batched_tokens=1000)
    a = _seq(list(range(1, 9)))
    sched.add(a)
    sched.schedule_prefill()
    _run_prefill(sched, [a])
    b = _seq(list(range(1, 9)))
    sched.add(b)
    sched.schedule_prefill()
    assert b.num_cached_tokens == 4


def test_token_budget_and_seq_cap():
    sched = Scheduler(BlockManager(64, BS), max_num_seqs=3, max_num_batched_tokens=10)
    seqs = [_seq([1 + i] * 6) for i in range(5)]
    for s in seqs:
        sched.add(s)
    assert sched.schedule_prefill() == seqs[:1]  # 6 + 6 > 10
    assert sched.schedule_prefill() == seqs[1:2]
    assert sched.schedule_prefill() == seqs[2:3]
    assert sched.schedule_prefill() == []  # max_num_seqs
    assert len(sched.waiting) == 2
    # a prompt longer than the budget is admitted alone rather than starved
    big = Scheduler(BlockManager(64, BS), max_num_seqs=3, max_num_batched_tokens=4)
    s = _seq([1] * 20)
    big.add(s)
    assert big.schedule_prefill() == [s]


def test_preemption_frees_blocks_and_recompute_resumes():
    blocks = BlockManager(6, BS)
    sched = Scheduler(blocks, max_num_seqs=4, max_num_batched_tokens=1000)
    a, b = _seq([1, 2, 3]), _seq([4, 5, 6])
    for s in (a, b):
        sched.add(s)
    assert sched.schedule_prefill() == [a, b]
    _run_prefill(sched, [a, b])
    preempted_at = None
    for step in range(12):
        batch = _decode_once(sched)
        if b.status is Status.WAITING and preempted_at is None:
            preempted_at = step
            assert batch == [a] and b.block_table == []
            assert sched.waiting[0] is b and b.vae_slot >= 0
        used = {blk for s in sched.running for blk in s.block_table}
        assert len(used) + blocks.num_free == 6
    assert preempted_at is not None and sched.num_preempted >= 1
    n_b = len(b)
    sched.finish(a)
    assert sched.schedule_prefill() == [b]
    assert len(b) == n_b  # recomputed from prompt plus its generated patches
    sched.finish(b)
    assert blocks.num_free == 6 and sorted(sched.free_slots) == [0, 1, 2, 3]


def test_cancel_waiting_and_running_leaks_nothing():
    blocks = BlockManager(16, BS)
    sched = Scheduler(blocks, max_num_seqs=2, max_num_batched_tokens=1000)
    seqs = [_seq([i + 1] * 5) for i in range(3)]
    for s in seqs:
        sched.add(s)
    sched.schedule_prefill()
    _run_prefill(sched, seqs[:2])
    _decode_once(sched)
    for s in seqs:
        assert sched.find(s.id) is s
        sched.finish(s)
        assert s.status is Status.FINISHED
    assert len(sched) == 0 and blocks.num_free == 16 and len(sched.free_slots) == 2
    assert all(b.ref_count == 0 for b in blocks.blocks)


def test_block_hash_depends_on_patch_content_and_order():
    p, q = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    a = _seq([0, 0, 5, 6], [p, q, None, None])
    b = _seq([0, 0, 5, 6], [q, p, None, None])
    c = _seq([0, 0, 5, 6], [p, q, None, None])
    assert a.block_hash(0) != b.block_hash(0)
    assert a.block_hash(0) == c.block_hash(0)
