"""Many LoRAs in one batch: per-row adapter slots over stacked low-rank weights.

Every adapted Linear is wrapped once in :class:`Adapted`, which holds the A and B matrices of
all ``S`` slots side by side (``A [S*R, in]``, ``B [out, S*R]``, rank ``R`` the largest loaded,
smaller ranks zero-padded). One call computes ``u = A x`` for every slot (``[rows, S*R]``),
multiplies it by the row's slot mask (the slot's ``alpha / r`` on its own ``r`` columns, zero
elsewhere; slot 0 is "no LoRA", an all-zero row) and adds ``B u``. The mask of each row comes from
``table.index_select(0, slots)``: a gather over the batch in plain torch ops, so it runs inside a
CUDA graph and the graph's only adapter input is the ``slots`` tensor. Dense over the slots rather
than a per-row gather of B (Punica's BGMV without its kernel): at decode the step is bound by
reading weights, and reading the S slots' B once costs less than materialising one B per row
once the batch has more rows than half the slots.

Loading a LoRA into a slot copies its weights into the stacked buffers in place, so captured
graphs see it without a recapture. Only a change of layout (a new adapted module, a larger rank)
reallocates; :meth:`LoRABank.ensure` reports it so the runner can recapture.

The packed projections (``qkv_proj``, ``gate_up_proj``) are wrapped as one Linear with one
piece per official module (its own rows of B and its own slice of ``u``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from app.models.voxcpm.lora import LoRA, linears
from app.models.voxcpm.minicpm import MLP, Attention
from app.models.voxcpm.model import VoxCPM

PACKED = {
    Attention: ("qkv_proj", ("q_proj", "k_proj", "v_proj")),
    MLP: ("gate_up_proj", ("gate_proj", "up_proj")),
}


class RowSlots:
    """Which slot each batch row uses, shared by every :class:`Adapted` layer of one model.

    ``table [S+1, S*R]`` is the mask of each slot; :meth:`select` gathers the rows' masks. The
    DiT runs the conditional and unconditional halves as one batch of twice the rows, which get
    the same masks in the same order."""

    def __init__(self, table: torch.Tensor) -> None:
        self.table = table
        self.mask: torch.Tensor | None = None
        self.mask2: torch.Tensor | None = None

    def select(self, slots: torch.Tensor) -> None:
        self.mask = self.table.index_select(0, slots)
        self.mask2 = torch.cat((self.mask, self.mask))

    def uniform(self, slot: int) -> None:
        """Every row in ``slot`` (the one-request loop)."""
        self.mask = self.mask2 = self.table[slot : slot + 1]

    def for_rows(self, n: int) -> torch.Tensor | None:
        if self.mask is None or self.mask.shape[0] in (1, n):
            return self.mask
        if self.mask2 is not None and self.mask2.shape[0] == n:
            return self.mask2
        raise RuntimeError(f"adapter masks for {self.mask.shape[0]} rows, called with {n}")


class Adapted(nn.Module):
    """``base(x)`` plus the slot-masked low-rank delta of each piece of its output."""

    def __init__(
        self, base: nn.Module, n_in: int, outs: list[int], width: int, rows: RowSlots, like: torch.Tensor
    ) -> None:
        super().__init__()
        self.base = base
        self.rows = rows
        self.width = width  # S * R
        self.outs = outs
        kw = dict(dtype=like.dtype, device=like.device)
        self.register_buffer("a", torch.zeros(len(outs) * width, n_in, **kw), persistent=False)
        self.register_buffer("b", torch.zeros(sum(outs), width, **kw), persistent=False)

    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        mask = self.rows.for_rows(x.shape[0])
        if mask is None:
            return y
        mask = mask.view(mask.shape[0], *([1] * (x.dim() - 2)), self.width)
        u = F.linear(x, self.a)
        if len(self.outs) == 1:
            return y + F.linear(u * mask, self.b)
        w, lo, parts = self.width, 0, []
        for i, n in enumerate(self.outs):
            parts.append(F.linear(u[..., i * w : (i + 1) * w] * mask, self.b[lo : lo + n]))
            lo += n
        return y + torch.cat(parts, dim=-1)


class LoRABank:
    """The adapters of one model: ``slots`` LoRAs resident at once, slot 0 meaning none."""

    def __init__(self, model: VoxCPM, slots: int) -> None:
        if slots < 1:
            raise ValueError("a LoRA bank needs at least one slot")
        self.model = model
        self.slots = slots
        self.rank = 0
        self.names: set[str] = set()  # official module names adapted
        self.modules: dict[str, tuple[Adapted, int]] = {}  # official name -> (wrapper, piece)
        self.resident: dict[int, LoRA] = {}
        self._wrapped: list[tuple[nn.Module, str, Adapted]] = []
        self.rows = RowSlots(self._table())

    def _table(self) -> torch.Tensor:
        m = self.model
        return torch.zeros(self.slots + 1, self.slots * self.rank, dtype=m.dtype, device=m.device)

    def ensure(self, lora: LoRA) -> bool:
        """Make room for ``lora``'s modules and rank; True when the layout changed (buffers were
        reallocated, so CUDA graphs captured before must be captured again)."""
        names = self.names | set(lora.weights)
        rank = max(self.rank, lora.rank)
        if names == self.names and rank == self.rank:
            return False
        self._unwrap()
        self.names, self.rank = names, rank
        self.rows.table = self._table()
        self._wrap()
        for slot, resident in self.resident.items():
            self._write(slot, resident)
        return True

    def load(self, slot: int, lora: LoRA) -> None:
        """Put ``lora`` in ``slot`` (1..slots), in place; call :meth:`ensure` first."""
        if not 1 <= slot <= self.slots:
            raise ValueError(f"slot {slot} out of 1..{self.slots}")
        if not set(lora.weights) <= self.names or lora.rank > self.rank:
            raise ValueError("ensure() the bank's layout before loading this LoRA")
        self.resident[slot] = lora
        self._write(slot, lora)

    @torch.no_grad()
    def _write(self, slot: int, lora: LoRA) -> None:
        r, c0 = lora.rank, (slot - 1) * self.rank
        w = self.slots * self.rank
        for name, (mod, piece) in self.modules.items():
            ca = piece * w + c0
            lo = sum(mod.outs[:piece])
            n_out = mod.outs[piece]
            mod.a[ca : ca + self.rank].zero_()
            mod.b[lo : lo + n_out, c0 : c0 + self.rank].zero_()
            if name in lora.weights:
                a, b = lora.weights[name]
                mod.a[ca : ca + r].copy_(a)
                mod.b[lo : lo + n_out, c0 : c0 + r].copy_(b)
        table = self.rows.table
        table[slot].zero_()
        table[slot, c0 : c0 + r] = lora.config.scale

    def _place(self, name: str) -> tuple[nn.Module, str, list[str]]:
        """Where official module ``name`` is computed: (parent, attribute, official names of the
        pieces of that attribute's output)."""
        parent_name, _, attr = name.rpartition(".")
        parent = self.model.get_submodule(parent_name) if parent_name else self.model
        packed = PACKED.get(type(parent))
        if packed is not None and getattr(parent, packed[0], None) is not None and attr in packed[1]:
            return parent, packed[0], [f"{parent_name}.{p}" for p in packed[1]]
        return parent, attr, [name]

    def _wrap(self) -> None:
        shapes = linears(self.model.cfg)
        like = self.model.stop_head.weight
        width = self.slots * self.rank
        done: set[tuple[int, str]] = set()
        for name in sorted(self.names):
            parent, attr, pieces = self._place(name)
            if (id(parent), attr) in done:
                continue
            done.add((id(parent), attr))
            n_in = shapes[pieces[0]][0]
            outs = [shapes[p][1] for p in pieces]
            mod = Adapted(getattr(parent, attr), n_in, outs, width, self.rows, like)
            setattr(parent, attr, mod)
            self._wrapped.append((parent, attr, mod))
            for i, p in enumerate(pieces):
                self.modules[p] = (mod, i)

    def _unwrap(self) -> None:
        for parent, attr, mod in self._wrapped:
            setattr(parent, attr, mod.base)
        self._wrapped, self.modules = [], {}
