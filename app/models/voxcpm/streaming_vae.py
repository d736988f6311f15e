"""Batched, slot-indexed streaming AudioVAE decoder, exactly equal to the full causal decode.

Every decoder convolution is causal, so the audio of frame ``t`` depends only on latents
``<= t``. Each convolution with left context keeps the last inputs it saw — ``left_pad`` frames
for a plain conv, ``(kernel-1)//stride`` frames for a transposed conv — in a buffer
``[max_slots, C, context]``. A call gathers the rows of its slots, prepends them to the new
input, runs the same module code as :meth:`AudioVAE.decode`, and scatters the new tails back.
A zeroed row is exactly the zero padding of a fresh full decode, so feeding a sequence in
chunks of any size reproduces ``decode(whole sequence)`` (up to float rounding of conv
algorithms, ~1e-6 in fp32).

CUDA graphs: for a fixed batch size and chunk length every call runs the same kernels on the
same shapes; state buffers are allocated once and updated in place (``index_select`` /
``index_copy_``); the V2 sample-rate bucket is a Python constant. To capture it, keep ``z`` and
``slots`` in static tensors and copy into them before replay. Nothing in the step reads a value
back to the host; the only host-side check (unique slots) runs for CPU ``slots`` tensors only.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from app.models.voxcpm.audio_vae import AudioVAE
from app.models.voxcpm.vae_layers import CausalConv


class StreamingDecoder:
    """Per-slot causal-conv state for up to ``max_slots`` concurrent sequences.

    ``decode(z [B, D, n], slots [B])`` returns ``[B, n * decoder_hop]`` and continues each row's
    slot. Slots start (and :meth:`reset` returns them) in the state of a fresh decode.
    """

    def __init__(
        self,
        vae: AudioVAE,
        max_slots: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        first = next(vae.parameters())
        self.vae = vae
        self.max_slots = max_slots
        self.device = torch.device(device) if device is not None else first.device
        self.dtype = dtype or first.dtype
        self.hop = vae.decoder_hop
        self._convs = {}
        self.states: list[torch.Tensor] = []
        for module in vae.decoder.modules():
            if isinstance(module, CausalConv) and module.context > 0:
                if module.transposed and module.kernel - module.trim != module.stride:
                    raise ValueError("a transposed conv must emit exactly `stride` samples per input")
                self._convs[module] = len(self.states)
                shape = (max_slots, module.cin, module.context)
                self.states.append(torch.zeros(shape, device=self.device, dtype=self.dtype))
        self._slots: torch.Tensor | None = None

    def _as_slots(self, slots: torch.Tensor | Sequence[int] | int) -> torch.Tensor:
        if isinstance(slots, int):
            slots = [slots]
        if not isinstance(slots, torch.Tensor):
            slots = torch.tensor(list(slots), dtype=torch.long)
        if slots.device.type == "cpu":
            if slots.numel() and not 0 <= int(slots.min()) <= int(slots.max()) < self.max_slots:
                raise IndexError(f"slot out of range 0..{self.max_slots - 1}: {slots.tolist()}")
            if slots.unique().numel() != slots.numel():
                raise ValueError(f"a slot appears twice in one call: {slots.tolist()}")
        return slots.to(self.device, torch.long)

    def reset(self, slots: torch.Tensor | Sequence[int] | int) -> None:
        """Forget the given slots' history: their next decode starts like a fresh sequence."""
        index = self._as_slots(slots)
        for state in self.states:
            state.index_fill_(0, index, 0)

    @torch.no_grad()
    def decode(self, z: torch.Tensor, slots: torch.Tensor | Sequence[int]) -> torch.Tensor:
        """Decode ``z [B, D, n]`` for ``B`` distinct slots; returns audio ``[B, n * hop]``."""
        index = self._as_slots(slots)
        if z.shape[0] != index.numel():
            raise ValueError(f"{z.shape[0]} latent rows for {index.numel()} slots")
        self._slots = index
        try:
            audio = self.vae.decode(z.to(self.device, self.dtype), stream=self)
        finally:
            self._slots = None
        return audio[:, 0, :]

    def warm(self, slot: int, latents: torch.Tensor) -> None:
        """Prime ``slot`` with context latents ``[D, n]`` (or ``[1, D, n]``); the audio is dropped.

        For continuation: the last prompt frames go here so the first generated patch is decoded
        with the prompt as its left context, as a full decode of prompt + generation would be.
        """
        if latents.ndim == 2:
            latents = latents.unsqueeze(0)
        if latents.shape[-1]:
            self.decode(latents, [slot])

    def extend(self, conv: CausalConv, x: torch.Tensor, context: int) -> torch.Tensor:
        """Called by each stateful conv: prepend its slots' stored inputs, store the new tail."""
        state = self.states[self._convs[conv]]
        full = torch.cat([state.index_select(0, self._slots), x], dim=-1)
        state.index_copy_(0, self._slots, full[..., full.shape[-1] - context :])
        return full
