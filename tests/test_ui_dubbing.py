"""The subtitle view: File › Import subtitles… opens it beside the script; Dub speaks the cues
through the window's engine (the tiny model), the table shows each cue's fit and back-check, the
summary names the overruns; Export… writes the track, cue files, spoken SRT and report; Stop;
a bad file is one message; an unexported dub is not dropped unasked.
"""

from __future__ import annotations

import json

import soundfile
from PySide6.QtCore import Qt
from tiny_asr import write_tiny_sensevoice
from ui_fixtures import GuiThreadWatcher, ScriptedDialogs, home, open_window, ui_model  # noqa: F401

from app.asr import catalog
from ui.settings import Settings
from ui.views.subtitle_view import CHECK, FIT, SPOKEN, TEXT, VOICE

# the dub's own work, which belongs on its threads: reading the file, the takes, fitting, writing
DUB_WORK = GuiThreadWatcher.HEAVY + (
    "/app/longform/subtitles.py:load_subtitles",
    "/app/longform/dub.py:run",
    "/app/longform/dub.py:_event",
    "/app/longform/dub.py:_keep_best",
    "/app/longform/dub.py:fit",
    "/app/audio/stretch.py:change_rate",
    "/app/longform/dub_files.py:export_dub",
)

SUBS = (
    "1\n00:00:00,500 --> 00:00:05,000\n<i>Hello there.</i>\n\n"
    "2\n00:00:06,000 --> 00:00:06,001\nThis cue has one millisecond.\n\n"
    "3\n00:00:07,000 --> 00:00:08,000\n[Music]\n\n"
    "4\n00:00:09,000 --> 00:00:10,000\n[Nobody] Who speaks this?\n"
)


def _menu_action(window, text: str):
    for menu in window.menuBar().findChildren(type(window.menuBar().actions()[0].menu())):
        for action in menu.actions():
            if action.text() == text:
                return action
    raise AssertionError(text)


def _imported(qtbot, window, dialogs, path):
    dialogs.files.append(path)
    _menu_action(window, "Import subtitles…").trigger()
    qtbot.waitUntil(lambda: window.dubbing.view is not None and bool(window.dubbing.cues), timeout=10_000)
    return window.dubbing.view


def test_import_dub_and_export(qtbot, home, ui_model, tmp_path):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder())  # the back-check hears each cue
    Settings().check_auto = True
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    window.script.settings.steps.setValue(3)
    subs = tmp_path / "film.srt"
    subs.write_text(SUBS, encoding="utf-8")
    assert window.tabs.tabBar().isHidden()  # the script alone: no tab bar
    watcher = GuiThreadWatcher(heavy=DUB_WORK)
    view = _imported(qtbot, window, dialogs, subs)
    assert window.tabs.currentWidget() is view and window.tabs.count() == 2
    assert view.model.rowCount() == 4
    assert [view.cell(r, TEXT) for r in range(4)] == [
        "Hello there.", "This cue has one millisecond.", "[Music]", "Who speaks this?"
    ]  # fmt: skip
    assert view.cell(3, VOICE) == "Nobody" and view.cell(2, VOICE) == ""
    assert not view.table.isColumnHidden(CHECK)  # the back-check hears the cues
    view.takes_box.setValue(2)
    assert Settings().dub_takes == 2

    qtbot.mouseClick(view.dub_button, Qt.MouseButton.LeftButton)
    assert window.dubbing.busy() and not view.dub_button.isEnabled()
    qtbot.waitUntil(lambda: not window.dubbing.busy(), timeout=60_000)
    results = window.dubbing.results
    assert [r.status for r in results] == ["fit", "overrun", "silent", "failed"]
    assert view.cell(0, FIT) == "fits" and view.cell(0, SPOKEN).endswith(" s")
    assert view.cell(1, FIT).startswith("overruns by ") and results[1].rate == 1.25
    assert len(results[1].takes) == 2  # drawn again once, then sped up as far as allowed
    assert view.cell(2, FIT) == "nothing to say"
    assert view.cell(3, FIT) == "failed" and "Nobody" in view.cell(3, FIT, Qt.ItemDataRole.ToolTipRole)
    assert view.cell(0, CHECK) == "WER 100%"  # the tiny model's noise is heard as nothing
    summary = view.summary.text()
    assert (
        summary.startswith("1 of 2 cues fit; 1 overrun: #2 by ")
        and "(1 with nothing to say, 1 failed)" in summary
    )

    out = tmp_path / "out"
    view.length_box.setValue(5.0)  # shorter than the subtitles: one message, nothing asked or written
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    assert "shorter than the subtitles" in dialogs.errors[-1] and not out.exists()
    view.length_box.setValue(12.0)  # the video's length
    dialogs.folders.append(out)
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.dubbing.exported, timeout=20_000)
    assert sorted(p.name for p in out.iterdir()) == [
        "cues",
        "report.json",
        "report.txt",
        "spoken.srt",
        "track.wav",
    ]
    assert soundfile.info(out / "track.wav").duration == 12.0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [o["number"] for o in report["overruns"]] == [2]
    assert report["cues"][0]["check"]["flagged"] is True
    assert watcher.stop() == []  # the GUI thread read, dubbed and wrote nothing itself

    dialogs.folders.append(out)
    dialogs.answers.append(False)  # the folder holds a dub already: keep it
    before = (out / "report.json").stat().st_mtime_ns
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    assert "already holds a dub" in dialogs.questions[-1]
    assert (out / "report.json").stat().st_mtime_ns == before


def test_stop_and_an_unexported_dub_is_not_dropped_unasked(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    window.script.settings.steps.setValue(3)
    subs = tmp_path / "many.srt"
    subs.write_text(
        "\n".join(
            f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},500\nCue {n} has words.\n" for n in range(1, 40)
        ),
        encoding="utf-8",
    )
    view = _imported(qtbot, window, dialogs, subs)
    # Stop once a first cue is decided, on the dub's thread: queued to a busy GUI thread, the stop
    # could come after all 39 cues were decided
    window.dubbing._decided.connect(lambda *_: window.dubbing.stop(), Qt.ConnectionType.DirectConnection)
    qtbot.mouseClick(view.dub_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.dubbing.busy(), timeout=60_000)
    states = {r.status for r in window.dubbing.results}
    assert "cancelled" in states and states <= {"fit", "overrun", "cancelled"}
    assert "stopped)" in view.summary.text()
    qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)  # disabled: nothing happens

    dialogs.answers.append(False)  # "The dub … is not exported. Discard it?" No
    window.dubbing.import_subtitles()
    assert "is not exported" in dialogs.questions[-1]
    assert window.dubbing.results  # kept


def test_a_bad_subtitle_file_is_one_message(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    bad = tmp_path / "bad.srt"
    bad.write_text("1\n00:00:02,000 --> 00:00:01,000\nbackwards\n", encoding="utf-8")
    dialogs.files.append(bad)
    window.dubbing.import_subtitles()
    qtbot.waitUntil(lambda: bool(dialogs.errors), timeout=10_000)
    assert "cue 1 has no length" in dialogs.errors[0] and "\n" not in dialogs.errors[0]
    assert window.dubbing.view is None and window.tabs.count() == 1


def test_dub_through_a_speech_server(qtbot, home, ui_model, tmp_path):  # noqa: F811
    from server_fixtures import start_live

    served = start_live(ui_model, tmp_path / "server-voices")
    try:
        settings = Settings()
        settings.backend, settings.server_url = "server", served.url
        dialogs = ScriptedDialogs()
        window = open_window(qtbot, ui_model, dialogs)
        subs = tmp_path / "film.srt"
        subs.write_text(SUBS, encoding="utf-8")
        view = _imported(qtbot, window, dialogs, subs)
        view.takes_box.setValue(1)
        qtbot.mouseClick(view.dub_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not window.dubbing.busy(), timeout=60_000)
        assert [r.status for r in window.dubbing.results] == ["fit", "overrun", "silent", "failed"]
        assert served.health()["requests_total"] == 2  # cues 1 and 2 were made by the server
    finally:
        served.server.stop()
        served.host.close()
