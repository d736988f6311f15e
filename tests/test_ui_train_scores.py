"""Which checkpoint the wizard calls best, when it warns of overfitting, and how the table and
the loss chart show it (the job's own Checkpoint/ValidationScore records, no training run)."""

from __future__ import annotations

import math
from pathlib import Path

from app.train.job import Checkpoint, ValidationScore
from ui.train import scores
from ui.train.checkpoint_table import CER, NOTE, SIMILARITY, CheckpointTable
from ui.train.loss_chart import LossChart, smoothed


def _checkpoint(step: int, loss: float, cer: float | None, similarity: float | None) -> Checkpoint:
    score = None if cer is None else ValidationScore(step, cer, similarity, Path(f"v{step}.wav"))
    return Checkpoint(step, loss, score, Path(f"step_{step:06d}"))


def test_the_best_checkpoint_and_the_overfitting_warning():
    improving = [_checkpoint(100, 1.0, 0.20, 0.70), _checkpoint(200, 0.8, 0.10, 0.80)]
    assert scores.best(improving).step == 200 and scores.overfitting(improving) is None
    # Validation worse by more than the margin while the loss kept falling: overfitting since 200.
    worse = [*improving, _checkpoint(300, 0.6, 0.15, 0.74)]
    assert scores.best(worse).step == 200 and scores.overfitting(worse).step == 200
    # Worse validation at a higher loss is not overfitting (the run is just noisy).
    assert scores.overfitting([*improving, _checkpoint(300, 0.9, 0.15, 0.74)]) is None
    # Within the margin: no warning.
    assert scores.overfitting([*improving, _checkpoint(300, 0.6, 0.11, 0.80)]) is None
    # Not measured (no recognizer, no speaker model: NaN) is left out; nothing measured, no best.
    nan = math.nan
    assert scores.best([_checkpoint(100, 1.0, nan, nan), _checkpoint(200, 0.9, None, None)]) is None
    partly = [_checkpoint(100, 1.0, 0.3, nan), _checkpoint(200, 0.9, 0.1, nan)]
    assert scores.best(partly).step == 200


def test_the_table_marks_the_best_and_shows_what_was_not_measured(qtbot):
    table = CheckpointTable()
    qtbot.addWidget(table)
    table.set_checkpoints(
        [
            _checkpoint(200, 0.8, 0.10, 0.80),
            _checkpoint(100, 1.0, 0.20, math.nan),
            _checkpoint(250, 0.7, None, None),
        ]
    )
    assert [c.step for c in table.checkpoints] == [100, 200, 250]
    assert [table.item(row, NOTE).text() for row in range(3)] == ["", "best", ""]
    assert table.item(1, NOTE).font().bold() and table.selected_step() == 200
    assert table.item(0, CER).text() == "20.0%" and table.item(0, SIMILARITY).text() == "—"
    assert table.item(2, CER).text() == "—"
    # The user's choice stays selected when the next checkpoint arrives.
    table.selectRow(0)
    table.set_checkpoints([*table.checkpoints, _checkpoint(300, 0.6, 0.05, 0.9)])
    assert table.selected_step() == 100 and table.best.step == 300


def test_the_loss_chart_keeps_one_point_per_step(qtbot):
    chart = LossChart()
    qtbot.addWidget(chart)
    chart.set_losses([(1, 2.0), (2, 1.5), (3, 1.4)], 10)
    chart.add_loss(3, 1.3)  # a resumed run takes step 3 again after a crash cut it
    chart.add_loss(4, 1.2)
    assert chart.points == [(1, 2.0), (2, 1.5), (3, 1.3), (4, 1.2)]
    chart.set_marks([2, 4], best=4)
    chart.resize(400, 200)
    chart.grab()  # paints without error
    assert smoothed([1.0, 1.0, 1.0]) == [1.0, 1.0, 1.0] and smoothed([2.0, 0.0])[1] < 1.0
