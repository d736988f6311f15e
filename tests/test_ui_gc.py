"""Cyclic garbage is collected on the GUI thread only, however much another thread allocates:
a collection on the engine thread that frees Qt objects deletes them off the GUI thread."""

from __future__ import annotations

import gc
import threading
import weakref

from ui_fixtures import ScriptedDialogs, home, open_window  # noqa: F401


class Node:
    pass


def test_collections_run_on_the_gui_thread_only(qtbot, home):  # noqa: F811
    open_window(qtbot, None, ScriptedDialogs())  # the window installs the collector
    assert not gc.isenabled()
    collecting: list[int] = []

    def record(phase: str, _info: dict) -> None:
        if phase == "start":
            collecting.append(threading.get_ident())

    def make_garbage() -> None:  # far past every threshold, as a model build is
        for _ in range(100_000):
            a, b = Node(), Node()
            a.other, b.other = b, a

    freed: list[int] = []
    gc.callbacks.append(record)
    try:
        worker = threading.Thread(target=make_garbage)
        worker.start()
        worker.join()
        assert collecting == []  # nothing ran on the worker
        cycle = Node()
        cycle.me = cycle
        weakref.finalize(cycle, lambda: freed.append(threading.get_ident()))
        del cycle
        qtbot.waitUntil(lambda: bool(freed), timeout=5_000)
    finally:
        gc.callbacks.remove(record)
    main = threading.main_thread().ident
    assert freed == [main] and set(collecting) == {main}
