"""One LoRA training run in memory: the official optimizer, schedule and step, a resumable data order.

The official recipe (``scripts/train_voxcpm_finetune.py`` + ``conf/voxcpm_v2/voxcpm_finetune_lora.yaml``
@ OpenBMB/VoxCPM 616d3d3e): AdamW (lr 1e-4, weight decay 0.01) over the LoRA parameters, cosine
schedule with linear warmup (100 of 1000 steps: a tenth of the run here, at most 100), each step
accumulating ``grad_accum`` micro-batches of ``loss / grad_accum``, gradients clipped to norm 1.0,
bf16 autocast on CUDA. Differences, none of which changes a step's numbers: frozen weights are
held in bf16 on CUDA (autocast casts them to bf16 for every matmul anyway) and no GradScaler
(bf16 needs none; the official one only scales and unscales).

Everything a resume needs is in :meth:`Trainer.state`: LoRA tensors, optimizer, scheduler, the
CPU and CUDA random states and the data order's position, so a run resumed from a checkpoint
takes the same steps as one that never stopped.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import torch

from app.models.voxcpm.model import VoxCPM
from app.train.forward import losses, pack, total_loss
from app.train.lora import apply_lora

WEIGHT_DECAY = 0.01
MAX_GRAD_NORM = 1.0
MAX_WARMUP = 100

Sample = tuple[list[int], torch.Tensor]  # (text ids, audio patches [A, P, D])


def cosine_with_warmup(warmup: int, total: int):
    """The multiplier of ``transformers.get_cosine_schedule_with_warmup`` (half a cosine)."""

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, total - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))

    return factor


class DataOrder:
    """Shuffled batches of indices, epoch after epoch (the last incomplete batch dropped, as the
    official loader does); the order of epoch ``e`` depends only on ``seed`` and ``e``."""

    def __init__(self, n: int, batch: int, seed: int) -> None:
        self.n, self.batch, self.seed = n, max(1, min(batch, n)), seed
        self.epoch, self.position = 0, 0
        self._perm = self._permutation()

    def _permutation(self) -> list[int]:
        gen = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        return torch.randperm(self.n, generator=gen).tolist()

    def next(self) -> list[int]:
        if self.position + self.batch > self.n:
            self.epoch, self.position = self.epoch + 1, 0
            self._perm = self._permutation()
        out = self._perm[self.position : self.position + self.batch]
        self.position += self.batch
        return out

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def load(self, state: dict[str, int]) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])
        self._perm = self._permutation()


class Trainer:
    def __init__(
        self,
        model: VoxCPM,
        samples: list[Sample],
        *,
        steps: int,
        lr: float,
        r: int,
        alpha: float,
        targets: tuple[str, ...],
        batch_size: int,
        grad_accum: int,
        checkpointing: bool,
        seed: int,
    ) -> None:
        self.model, self.samples, self.steps = model, samples, steps
        self.grad_accum = max(1, grad_accum)
        self.params = apply_lora(model, r, alpha, targets)
        for stack in (
            model.base_lm,
            model.residual_lm,
            model.feat_encoder.encoder,
            model.feat_decoder.estimator.decoder,
        ):
            stack.checkpointing = checkpointing
        self.optimizer = torch.optim.AdamW(self.params, lr=lr, weight_decay=WEIGHT_DECAY)
        warmup = min(MAX_WARMUP, steps // 10)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, cosine_with_warmup(warmup, steps))
        self.order = DataOrder(len(samples), batch_size, seed)
        self.step_index = 0

    def _autocast(self):
        if self.model.device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step(self) -> float:
        """One optimizer step; returns the mean total loss of its micro-batches."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        total = 0.0
        progress = self.step_index / max(1, self.steps)
        for _ in range(self.grad_accum):
            batch = pack([self.samples[i] for i in self.order.next()]).to(self.model.device)
            with self._autocast():
                loss = total_loss(losses(self.model, batch, progress))
            (loss / self.grad_accum).backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(self.params, max_norm=MAX_GRAD_NORM)
        self.optimizer.step()
        self.scheduler.step()
        self.step_index += 1
        return total / self.grad_accum

    # ---- resume -----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        state = {
            "step": self.step_index,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "order": self.order.state(),
            "rng_cpu": torch.get_rng_state(),
        }
        if self.model.device.type == "cuda":
            state["rng_cuda"] = torch.cuda.get_rng_state(self.model.device)
        return state

    def load(self, state: dict[str, Any]) -> None:
        self.step_index = int(state["step"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.order.load(state["order"])
        torch.set_rng_state(state["rng_cpu"])
        if "rng_cuda" in state and self.model.device.type == "cuda":
            torch.cuda.set_rng_state(state["rng_cuda"], self.model.device)
