"""Sizing a training run to the card (real VoxCPM2/1.5 shapes: only config.json is read)."""

from __future__ import annotations

import json

import pytest
import torch

from app.errors import VoxDeskError
from app.models.voxcpm.checkpoint import preset_config
from app.train.plan import EFFECTIVE_BATCH, GiB, plan_training, training_device


def _model(tmp_path, preset: str):
    folder = tmp_path / preset
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(preset_config(preset)))
    return folder


@pytest.mark.parametrize(("preset", "card_gb"), [("voxcpm2", 12), ("voxcpm1.5", 8)])
def test_the_promised_cards_fit(tmp_path, preset, card_gb):
    free = int((card_gb - 0.8) * GiB)  # what a desktop leaves free on such a card
    plan = plan_training(_model(tmp_path, preset), "cuda", free)
    assert plan.estimated_peak_bytes <= free
    assert plan.batch_size * plan.grad_accum == EFFECTIVE_BATCH
    assert plan.basis in ("estimated", "measured on H200")


def test_smaller_cards_get_smaller_batches_then_checkpointing(tmp_path):
    folder = _model(tmp_path, "voxcpm2")
    plans = [plan_training(folder, "cuda", gb * GiB) for gb in (24, 12, 8)]
    peaks = [p.estimated_peak_bytes for p in plans]
    assert peaks == sorted(peaks, reverse=True) and peaks[0] > peaks[-1]
    assert plans[0].batch_size > plans[1].batch_size
    assert not plans[0].checkpointing and plans[-1].checkpointing
    with pytest.raises(VoxDeskError, match="free GPU memory"):
        plan_training(folder, "cuda", 4 * GiB)


def test_cpu_plan_and_device_message(tmp_path):
    plan = plan_training(_model(tmp_path, "voxcpm1.5"), "cpu", None)
    assert (plan.device, plan.batch_size, plan.checkpointing) == ("cpu", 1, False)
    device, text = training_device()
    if torch.cuda.is_available():
        assert device == "cuda" and "free" in text
    else:
        assert device is None and text.startswith("Training needs an NVIDIA GPU") and "--device cpu" in text
