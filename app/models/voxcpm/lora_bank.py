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
piece per official module (its own block of A's rows, a diagonal block of B).
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
        self.pieces: set[int] = {1}  # the piece counts of the wrapped Linears
        self.masks: dict[int, torch.Tensor] = {}  # pieces -> [rows, pieces*S*R]
        self.masks2: dict[int, torch.Tensor] = {}  # the same for twice the rows (the DiT's CFG)

    def select(self, slots: torch.Tensor) -> None:
        self._set(self.table.index_select(0, slots), False)

    def uniform(self, slot: int) -> None:
        """Every row in ``slot`` (the one-request loop)."""
        self._set(self.table[slot : slot + 1], True)

    def _set(self, mask: torch.Tensor, uniform: bool) -> None:
        self.masks = {k: mask.repeat(1, k) if k > 1 else mask for k in sorted(self.pieces)}
        self.masks2 = self.masks if uniform else {k: torch.cat((m, m)) for k, m in self.masks.items()}

    def for_rows(self, n: int, pieces: int) -> torch.Tensor | None:
        mask = self.masks.get(pieces)
        if mask is None or mask.shape[0] in (1, n):
            return mask
        if self.masks2[pieces].shape[0] == n:
            return self.masks2[pieces]
        raise RuntimeError(f"adapter masks for {mask.shape[0]} rows, called with {n}")


class Adapted(nn.Module):
    """``base(x)`` plus the slot-masked low-rank delta of each piece of its output.

    With ``k`` pieces (a packed projection) ``A`` is the pieces' ``[S*R, in]`` blocks stacked and
    ``B [out, k*S*R]`` block-diagonal, so the delta stays three kernels (``A x``, the mask, and
    ``addmm``) whatever the packing; the zero blocks add a few percent to the B read."""

    def __init__(
        self, base: nn.Module, n_in: int, outs: list[int], width: int, rows: RowSlots, like: torch.Tensor
    ) -> None:
        super().__init__()
        self.base = base
        self.rows = rows
        self.width = width  # S * R
        self.outs = outs
        rows.pieces.add(len(outs))
        kw = dict(dtype=like.dtype, device=like.device)
        self.register_buffer("a", torch.zeros(len(outs) * width, n_in, **kw), persistent=False)
        self.register_buffer("b", torch.zeros(sum(outs), len(outs) * width, **kw), persistent=False)

    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        mask = self.rows.for_rows(x.shape[0], len(self.outs))
        if mask is None:
            return y
        u = F.linear(x, self.a) * mask.view(mask.shape[0], *([1] * (x.dim() - 2)), mask.shape[-1])
        return torch.addmm(y.reshape(-1, y.shape[-1]), u.reshape(-1, u.shape[-1]), self.b.t()).view(y.shape)


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
        self.rows.pieces, self.rows.masks, self.rows.masks2 = {1}, {}, {}
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
            c = piece * w + c0  # the slot's columns in this piece's block
            lo = sum(mod.outs[:piece])
            n_out = mod.outs[piece]
            mod.a[c : c + self.rank].zero_()
            mod.b[lo : lo + n_out, c : c + self.rank].zero_()
            if name in lora.weights:
                a, b = lora.weights[name]
                mod.a[c : c + r].copy_(a)
                mod.b[lo : lo + n_out, c : c + r].copy_(b)
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
