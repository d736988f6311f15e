"""Continuous batching: who is prefilled and who decodes in the next engine step.

New requests are admitted whenever a stream slot, KV blocks and the step's token budget allow,
so they join requests already decoding. When the KV blocks run out during decode, the newest
running request is preempted: its blocks are freed and it goes back to the head of the queue,
to be recomputed from its content (prompt plus the patches it already made) when memory allows.
A preempted request keeps its streaming-decoder slot, so its audio continues seamlessly.
A request restarted for a bad-case retry goes back the same way, without its generated patches,
and so does a preempted request with several beams (its beams' positions are not the sequence's).
"""

from __future__ import annotations

from collections import deque

from app.engine.block_manager import BlockManager
from app.engine.sequence import Sequence, Status


class Scheduler:
    def __init__(self, block_manager: BlockManager, max_num_seqs: int, max_num_batched_tokens: int) -> None:
        if max_num_seqs < 1 or max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be positive")
        self.blocks = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.free_slots: list[int] = list(range(max_num_seqs - 1, -1, -1))
        self.num_preempted = 0

    def __len__(self) -> int:
        return len(self.waiting) + len(self.running)

    def add(self, seq: Sequence) -> None:
        seq.status = Status.WAITING
        self.waiting.append(seq)

    def schedule_prefill(self) -> list[Sequence]:
        """Admit waiting sequences in order: blocks allocated, status RUNNING. The first one is
        always admitted when memory allows, however long, so no request starves."""
        batch: list[Sequence] = []
        tokens = 0
        while self.waiting and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            if seq.vae_slot < 0 and not self.free_slots:
                break
            cached = self.blocks.match(seq)
            new_tokens = len(seq) - len(cached) * self.blocks.block_size
            if batch and tokens + new_tokens > self.max_num_batched_tokens:
                break
            # keep one free block per running sequence, so admitting this one does not force a
            # preemption at the very next decode (which would thrash)
            reserve = sum(s.width for s in self.running)
            if not self.blocks.can_allocate(seq, cached, reserve):
                break
            self.blocks.allocate(seq, cached)
            if seq.vae_slot < 0:
                seq.vae_slot = self.free_slots.pop()
            seq.prefill_tokens += new_tokens
            tokens += new_tokens
            self.waiting.popleft()
            seq.status = Status.RUNNING
            self.running.append(seq)
            batch.append(seq)
        return batch

    def schedule_decode(self) -> list[Sequence]:
        """Every running sequence that got a slot for its next position; preempts the newest
        running sequences when blocks run out."""
        batch: list[Sequence] = []
        queue = list(self.running)
        while queue:
            seq = queue.pop(0)
            while not self.blocks.can_append(seq):
                victim = queue.pop() if queue else seq
                self.preempt(victim)
                if victim is seq:
                    break
            else:
                self.blocks.may_append(seq)
                batch.append(seq)
        return batch

    def preempt(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.blocks.deallocate(seq)
        if seq.width > 1:  # the beams' own positions are not kept: drawn again from the prompt
            seq.rewind()
        seq.status = Status.WAITING
        self.waiting.appendleft(seq)
        self.num_preempted += 1

    def restart(self, seq: Sequence) -> None:
        """Start ``seq`` over from its prompt (a bad-case retry): its blocks are freed, and it is
        prefilled again, first in the queue, reusing its prompt's blocks from the prefix cache
        while they are not handed out. It keeps its stream slot (the runner resets it)."""
        seq.restart()
        self.requeue(seq)

    def requeue(self, seq: Sequence) -> None:
        """Free ``seq``'s blocks and put it first in the queue to be prefilled again from its
        positions as they are now (a retry, or the next part of a long text); it keeps its
        stream slot."""
        self.running.remove(seq)
        self.blocks.deallocate(seq)
        seq.status = Status.WAITING
        self.waiting.appendleft(seq)

    def finish(self, seq: Sequence) -> None:
        """Drop ``seq`` wherever it is and return its blocks and stream slot."""
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        self.blocks.deallocate(seq)
        if seq.vae_slot >= 0:
            self.free_slots.append(seq.vae_slot)
            seq.vae_slot = -1
        seq.status = Status.FINISHED

    def find(self, request_id: int) -> Sequence | None:
        for seq in (*self.running, *self.waiting):
            if seq.id == request_id:
                return seq
        return None
