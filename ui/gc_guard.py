"""Python's cyclic garbage collector runs on the GUI thread only.

Left automatic, a collection runs in whichever thread allocates when a threshold is crossed:
often the engine thread, which allocates a great deal while it builds a model. A collection
there that frees a cycle holding Qt objects (a closed window, a finished dialog) deletes them
off the GUI thread, which Qt does not allow (a window test crashed, most likely this way, with a
segmentation fault inside an unrelated allocation on the engine thread). So automatic collection
is turned off and a GUI-thread timer does its work: a few times a second it compares the
allocation counts with the usual thresholds and collects the generation that is due.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 200


class GuiThreadCollector(QObject):
    """Owned by the application; one per process (see :func:`install`)."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(INTERVAL_MS)

    def collect_due(self) -> None:
        """The collection Python itself would have run by now, if any."""
        count, limit = gc.get_count(), self.thresholds
        generation = -1
        for gen in range(3):
            if limit[gen] and count[gen] > limit[gen]:
                generation = gen
            else:
                break
        if generation >= 0:
            gc.collect(generation)


def install() -> GuiThreadCollector | None:
    """Start the GUI-thread collector once per application (from the GUI thread)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    found = app.findChild(GuiThreadCollector)
    return found if found is not None else GuiThreadCollector(app)
