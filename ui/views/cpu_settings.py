"""Settings › On the CPU: the precision choice and *Measure on this computer*.

The choice is app/cpu_precision.py's (Automatic names what it picks here and why). The
measurement runs on the engine thread (:class:`ui.cpu_measure.CpuMeasure`): the button turns into
*Stop* while it runs, the line under it shows progress, then each path's time, int8's cost and gain,
and the recommendation, which is selected in the list (OK keeps it).
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.cpu_precision import decide
from app.engine.cpu_measure import Measurement
from ui.cpu_measure import CpuMeasure
from ui.engine_host import describe_precision


class CpuPrecisionBox(QWidget):
    """The combo (its data: a value of :data:`app.cpu_precision.CHOICES`), the measure button and
    its result line. ``measure`` is None, or ``model_dir`` empty, when there is no local model."""

    def __init__(
        self, current: str, measure: CpuMeasure | None, model_dir: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._measure = measure
        self._model_dir = model_dir
        self._running = False
        auto = decide("auto")
        self.combo = QComboBox()
        self.combo.addItem(self.tr("Automatic ({0})").format(describe_precision(auto)), "auto")
        self.combo.addItem(self.tr("Exact (32-bit)"), "float32")
        if auto.feature:
            self.combo.addItem(self.tr("bf16 (16-bit)"), "bfloat16")
        else:
            self.combo.addItem(self.tr("bf16 (16-bit; emulated on this CPU, slower)"), "bfloat16")
        self.combo.addItem(self.tr("Faster (8-bit weights)"), "int8")
        self.combo.setToolTip(
            self.tr(
                "Used when the model runs on the CPU. Automatic picks bf16 where the processor has "
                "native bf16 (AMX or AVX512-BF16) and exact 32-bit elsewhere. 8-bit weights are "
                "faster still; the voice is a close approximation of the exact model's."
            )
        )
        self.combo.setCurrentIndex(max(0, self.combo.findData(current)))
        self.button = QPushButton(self.tr("Measure on this computer"))
        self.button.clicked.connect(self._clicked)
        self.result = QLabel()
        self.result.setWordWrap(True)
        if measure is None or not model_dir:
            self.button.setEnabled(False)
            self.button.setToolTip(self.tr("Load a model on this computer first."))
        else:
            self.button.setToolTip(
                self.tr("Times a few steps of each CPU path on the loaded model (about a minute).")
            )
            measure.progress.connect(self._progress)
            measure.done.connect(self._done)
            measure.failed.connect(self._failed)
            measure.stopped.connect(self._stopped)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.combo, 1)
        row.addWidget(self.button)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addLayout(row)
        box.addWidget(self.result)
        self.result.hide()

    def choice(self) -> str:
        return self.combo.currentData()

    @property
    def running(self) -> bool:
        return self._running

    def stop(self) -> None:
        """Stop a measurement in progress (the dialog closes)."""
        if self._running and self._measure is not None:
            self._measure.stop()

    def _clicked(self) -> None:
        if self._running:
            self.stop()
            self.button.setEnabled(False)  # until the engine thread says it stopped
            return
        self._running = True
        self.button.setText(self.tr("Stop"))
        self._show(self.tr("Measuring…"))
        self._measure.start(self._model_dir)

    def _finish(self, text: str) -> None:
        self._running = False
        self.button.setText(self.tr("Measure on this computer"))
        self.button.setEnabled(True)
        self._show(text)

    def _show(self, text: str) -> None:
        self.result.setText(text)
        self.result.show()

    def _progress(self, percent: int, path: str) -> None:
        if self._running and path:
            self._show(self.tr("Measuring {0}… {1}%").format(self._name(path), percent))

    def _done(self, m: Measurement) -> None:
        if not self._running:
            return
        self._finish(self.summary(m))
        self.combo.setCurrentIndex(max(0, self.combo.findData(m.recommended)))

    def _failed(self, message: str) -> None:
        if self._running:
            self._finish(message)

    def _stopped(self) -> None:
        if self._running:
            self._finish(self.tr("Measurement stopped."))

    def _name(self, choice: str) -> str:
        return {"float32": self.tr("32-bit"), "bfloat16": "bf16", "int8": self.tr("8-bit weights")}[choice]

    def summary(self, m: Measurement) -> str:
        """Each path's time, int8's gain and cost, and the recommendation, one line each."""
        lines = []
        for t in m.timings:
            line = self.tr("{0}: {1} ms per step").format(self._name(t.choice), f"{t.ms_per_patch:.0f}")
            if t.choice != m.automatic:
                line += self.tr(" ({0}× the speed of Automatic)").format(f"{m.speedup(t.choice):.2f}")
            if t.deviation is not None:
                line += self.tr("; first steps {0}% away from the exact voice").format(
                    f"{100 * t.deviation:.1f}"
                )
            lines.append(line)
        chosen = self.combo.itemText(max(0, self.combo.findData(m.recommended)))
        lines.append(self.tr("Recommended: {0}. It is selected: OK keeps it.").format(chosen))
        return "\n".join(lines)
