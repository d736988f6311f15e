"""Per-request state the scheduler and the model runner share.

A sequence is the prefill positions (text ids and prompt-audio patches) followed by the patches
it has generated so far. Every position is one KV slot in both LMs. Generated patches are kept
(as float32 on the host) so a preempted request can be recomputed from its content alone: the
KV of a position depends only on the positions before it, so a recompute rebuilds the same cache.
"""

from __future__ import annotations

import hashlib
import time
from enum import Enum, auto
from itertools import count
from typing import Any

import numpy as np

from app.engine.request import SynthRequest


class Status(Enum):
    WAITING = auto()
    RUNNING = auto()
    FINISHED = auto()


_ids = count(1)


class Sequence:
    """One request in flight.

    ``ids[i]`` is the text id at position i (0 at audio positions) and ``patches[i]`` the
    ``[P, D]`` float32 patch there (``None`` at text positions). The runner keeps the device-side
    carry (last ``lm_h``, ``res_h``, previous patch) in rows indexed by ``vae_slot``.
    """

    def __init__(
        self,
        request: SynthRequest,
        ids: list[int],
        patches: list[np.ndarray | None],
        max_patches: int,
        seed: int,
        block_size: int,
        request_id: int | None = None,
        salt: bytes = b"",
    ) -> None:
        if len(ids) != len(patches) or not ids:
            raise ValueError("a sequence needs one patch slot per id and at least one position")
        self.id = next(_ids) if request_id is None else request_id
        self.request = request
        self.ids = list(ids)
        self.patches = list(patches)
        self.num_prompt = len(ids)
        self.max_patches = max_patches
        self.bad_case_at = max_patches + 1  # patches from which a take is drawn again (see engine)
        self.take = 1
        self.seed = seed
        self.block_size = block_size
        self.status = Status.WAITING
        self.block_table: list[int] = []
        self.num_cached_tokens = 0  # positions whose KV came from the prefix cache
        self.num_computed = 0  # positions whose KV is in the cache (cached or computed)
        self.vae_slot = -1
        self.salt = salt  # starts the block hash chain: KV computed with a LoRA is its own
        self.lora: Any = None  # the LoRA the request speaks with (app/models/voxcpm/lora.py)
        self.adapter = 0  # its adapter slot in the runner's LoRA bank; 0: none
        self.context: Any = None  # latents [D, n] that warm the streaming VAE (continuation)
        self.generator: Any = None
        self.n_chunks = 0
        self.stretcher: Any = None  # RateStretcher when the engine applies request.speed
        self.stop_pending = False
        self.cancelled = False
        self.prefill_tokens = 0
        self.t_submit = time.perf_counter()
        self.t_start = 0.0
        self.t_first = 0.0
        self._block_keys: list[bytes] = []

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def num_generated(self) -> int:
        return len(self.ids) - self.num_prompt

    @property
    def num_blocks(self) -> int:
        return (len(self.ids) + self.block_size - 1) // self.block_size

    def append_patch(self, patch: np.ndarray) -> None:
        """Record a generated patch as a new audio position."""
        self.ids.append(0)
        self.patches.append(patch)

    def restart(self) -> None:
        """Drop the generated patches: the next take starts again from the prefill positions.
        Hashes of blocks that lie wholly in the prompt stay valid (they depend on it alone)."""
        del self.ids[self.num_prompt :], self.patches[self.num_prompt :]
        del self._block_keys[self.num_prompt // self.block_size :]
        self.take += 1
        self.n_chunks = 0

    def block_hash(self, i: int) -> bytes:
        """Chained content hash of full block ``i`` (ids, audio flags and patch bytes, in order).

        Two sequences share block ``i``'s KV exactly when all positions up to its end agree and
        they speak with the same LoRA (``salt``).
        """
        while len(self._block_keys) <= i:
            j = len(self._block_keys)
            lo, hi = j * self.block_size, (j + 1) * self.block_size
            if hi > len(self.ids):
                raise ValueError("only full blocks are hashed")
            h = hashlib.blake2b(self._block_keys[j - 1] if j else self.salt, digest_size=16)
            h.update(np.asarray(self.ids[lo:hi], dtype=np.int64).tobytes())
            for patch in self.patches[lo:hi]:
                h.update(b"\x00" if patch is None else b"\x01" + np.asarray(patch, np.float32).tobytes())
            self._block_keys.append(h.digest())
        return self._block_keys[i]
