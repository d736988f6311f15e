"""The main window end to end, through its widgets, on a tiny real model (offscreen)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import soundfile
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication
from ui_fixtures import (  # noqa: F401
    GuiThreadWatcher,
    HoldAfterFirstAudio,
    ScriptedDialogs,
    home,
    open_window,
    played,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from app.export import Clip, merge
from app.voices import latents
from app.voices.library import VoiceLibrary

SCRIPT = "Hello there. How are you today?\n[Bob] I am fine, thank you."


def import_voice(qtbot, window, dialogs, path: Path) -> None:
    dialogs.files.append(path)
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)
    wait_for_imports(qtbot, window)


def type_script(qtbot, window, text: str) -> None:
    editor = window.script.editor
    editor.setFocus()
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(editor, Qt.Key.Key_Return)
        qtbot.keyClicks(editor, line)
    window.script.flush()


def speak_and_wait(qtbot, window) -> None:
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def test_speak_two_voices_in_order_then_export(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav", 220))
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Bob.wav", 330))
    assert [window.voices.list.item(i).text() for i in range(2)] == ["Anna", "Bob"]
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    type_script(qtbot, window, SCRIPT)
    rows = window.script.table.rows()
    assert [(r.voice, r.text) for r in rows] == [
        ("Anna", "Hello there."),
        ("Anna", "How are you today?"),
        ("Bob", "I am fine, thank you."),
    ]

    speak_and_wait(qtbot, window)
    assert dialogs.errors == []
    segs = window.session.segments
    assert [s.status for s in segs] == ["done"] * 3
    assert all(len(s.samples()) > 0 for s in segs)
    rate, gap = window.session.sample_rate, window.project.settings.gap_seconds
    expected = merge([Clip(s.job.display_text, s.samples()) for s in segs], rate, gap)
    heard = played(window)
    np.testing.assert_array_equal(heard[: len(expected)], expected)  # script order, gaps between
    assert not np.any(heard[len(expected) :])
    assert window.script.table.cell_text(2, 3) == "Done"

    out = tmp_path / "out" / "speech.wav"
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    dialog = window.actions.dialog
    assert dialog is not None
    dialog.path.setText(str(out))
    dialog.segments.setChecked(True)
    dialog.accept()
    info = soundfile.info(str(out))
    assert info.samplerate == rate == 48000
    total = sum(len(s.samples()) for s in segs) + round(gap * rate) * 2
    assert info.frames == total
    srt = out.with_suffix(".srt").read_text(encoding="utf-8")
    assert srt.count(" --> ") == 3 and "I am fine, thank you." in srt
    per_segment = sorted((out.parent / "speech_segments").glob("*.wav"))
    assert [soundfile.info(str(p)).frames for p in per_segment] == [len(s.samples()) for s in segs]

    # A second export to the same name asks first; "no" leaves the files alone.
    before = out.stat().st_mtime_ns
    dialogs.answers.append(False)
    assert window.actions.run_export(dialog.options()) == []
    assert "Replace" in dialogs.questions[-1] and out.stat().st_mtime_ns == before


def test_event_loop_stays_responsive_while_loading_and_generating(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    window.activateWindow()  # what the window manager does when a dialog closes
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, " ".join(f"Sentence number {i} is here." for i in range(12)))
    lateness: list[float] = []
    last = [time.perf_counter()]

    def ping() -> None:
        now = time.perf_counter()
        lateness.append(now - last[0] - 0.010)
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(ping)
    timer.start()
    watcher = GuiThreadWatcher(last)
    started = time.perf_counter()
    window.load_model(ui_model)  # the model loads on the engine thread
    assert window.engine_label.text().startswith("Engine: loading")
    qtbot.waitUntil(lambda: window.model.ready, timeout=30_000)
    loaded = len(lateness)
    speak_and_wait(qtbot, window)
    timer.stop()
    heavy = watcher.stop()
    assert [s.status for s in window.session.segments] == ["done"] * 12
    assert loaded > 3 and len(lateness) - loaded > 10, "too short to measure"
    worst = max(lateness)
    elapsed = time.perf_counter() - started
    print(f"event loop: {len(lateness)} pings over {elapsed:.2f} s, max late {worst * 1000:.1f} ms")
    # What the GUI thread ran, sampled every 2 ms: never the model, the engine's step or torch.
    assert heavy == [], heavy[:3]
    # The stack samples above are the check that cannot be fooled by the machine. The timer is
    # the user's view: almost every tick on time, and no hold long enough to notice. A single
    # tick may be late on a shared 2-core CI machine (one was 293 ms in CI while the samples
    # found nothing heavy), which a timer cannot tell from a block; a model load or a run of
    # generation steps on the GUI thread would hold it for seconds. A failure lists each stall's
    # GUI-thread stack.
    typical = float(np.percentile(lateness, 95))
    print(f"event loop: 95th percentile late {typical * 1000:.1f} ms")
    assert typical < 0.050, watcher.stalls
    assert worst < 1.0, watcher.stalls


def test_faster_cpu_weights_from_settings_reload_the_engine_and_speak(qtbot, home, ui_model, tmp_path):  # noqa: F811
    """Settings > On the CPU > Faster: the engine reloads with int8 Linear weights, the status
    bar says so, the exact model's takes are kept but marked as made with another model, and
    regenerating them works; back to Exact, the int8 model's are marked the same way. The status
    bar names the automatic choice and its reason first."""
    from app.cpu_precision import decide
    from ui.engine_host import describe_device

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    assert window.device_label.text() == describe_device("cpu", decide())
    automatic = (
        "fp32: no native bf16 on this CPU",
        "bf16: this CPU has AMX",
        "bf16: this CPU has AVX512-BF16",
    )
    assert window.device_label.text() in [f"CPU · {why}" for why in automatic]
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "Hello there. How are you?")
    speak_and_wait(qtbot, window)
    exact = [s.samples() for s in window.session.segments]

    def choose(weights: str) -> None:
        window.actions.open_settings()
        dialog = window.actions.dialog
        dialog.cpu.combo.setCurrentIndex(dialog.cpu.combo.findData(weights))
        dialog.accept()
        window.activateWindow()  # what the window manager does when a dialog closes
        assert window.engine_label.text().startswith("Engine: loading")
        qtbot.waitUntil(lambda: window.model.ready and QApplication.activeWindow() is window, timeout=30_000)
        assert window.settings.cpu_precision == weights

    choose("int8")
    assert window.device_label.text() == "CPU · 8-bit weights: chosen in Settings"
    assert [s.status for s in window.session.segments] == ["done", "done"]
    assert [list(s.stale) for s in window.session.segments] == [["context"]] * 2
    assert "Made with another model" in window.script.table.cell_text(1, 3)
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        window.regenerate_stale()
    assert [s.status for s in window.session.segments] == ["done", "done"] and dialogs.errors == []
    assert window.session.stale_indices() == []
    assert not np.array_equal(window.session.segments[0].samples(), exact[0])
    choose("float32")
    assert window.device_label.text() == "CPU · fp32: chosen in Settings"
    assert window.session.stale_indices() == [0, 1]  # nor the other way round


def test_measure_on_this_computer_runs_off_the_gui_thread_recommends_and_stops(qtbot, home, ui_model):  # noqa: F811
    """Settings > On the CPU > Measure on this computer: each path is timed on the loaded model on
    the engine thread (the GUI thread runs no engine or torch code meanwhile), the result names
    every path and the recommendation, which is selected; a second run can be stopped."""
    from app.cpu_precision import native_bf16

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    qtbot.waitUntil(lambda: window.model.ready, timeout=30_000)
    window.actions.open_settings()
    box = window.actions.dialog.cpu
    assert box.button.isEnabled() and box.button.text() == "Measure on this computer"
    watcher = GuiThreadWatcher()
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert box.running and box.button.text() == "Stop" and box.result.text().startswith("Measuring")
    qtbot.waitUntil(lambda: not box.running, timeout=120_000)
    assert watcher.stop() == []
    lines = box.result.text().split("\n")
    names = ["32-bit", "bf16", "8-bit weights"] if native_bf16() else ["32-bit", "8-bit weights"]
    assert [line.split(":")[0] for line in lines[:-1]] == names, lines
    assert "ms per step" in lines[0] and "away from the exact voice" in lines[-2]
    assert lines[-1].startswith("Recommended: ") and box.combo.currentText() in lines[-1]
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)  # Stop
    qtbot.waitUntil(lambda: not box.running, timeout=60_000)
    assert box.result.text() == "Measurement stopped." and box.button.isEnabled()
    window.actions.dialog.reject()
    assert dialogs.errors == []


def test_stop_cancels_mid_run(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, " ".join(f"This is sentence {i}." for i in range(20)))
    with HoldAfterFirstAudio(window):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: any(s.chunks for s in window.session.segments), timeout=30_000)
        assert window.session.busy()
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    # the engine goes on: its late events for the cancelled requests come below
    assert not window.session.busy()
    statuses = [s.status for s in window.session.segments]
    assert "cancelled" in statuses
    assert window.transport.speak_button.isEnabled() and not window.transport.stop_button.isEnabled()
    qtbot.wait(300)  # late events of cancelled requests must change nothing
    assert [s.status for s in window.session.segments] == statuses
    assert window.playback.playlist is None


def test_corrupt_import_shows_message_and_changes_nothing(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    dialogs.errors.clear()
    library = VoiceLibrary()
    before = sorted(p.name for p in library.root.iterdir())
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk")
    import_voice(qtbot, window, dialogs, bad)
    assert len(dialogs.errors) == 1 and "broken.wav" in dialogs.errors[0]
    assert "Traceback" not in dialogs.errors[0]
    assert window.voices.list.count() == 0
    assert sorted(p.name for p in library.root.iterdir()) == before


def test_restart_restores_voices_script_and_audio(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.voices.transcript.setPlainText("hello")
    type_script(qtbot, window, "One sentence. Two sentences.")
    speak_and_wait(qtbot, window)
    audio = [s.samples() for s in window.session.segments]
    voice = VoiceLibrary().list()[0]
    cached = latents.load(VoiceLibrary(), voice, window.model.model_id, "prompt")
    assert cached is not None and cached.dtype == np.float32  # encoded once, kept for next time
    dialogs.unsaved_answers.append("save")  # closing asks about the never-saved script
    dialogs.files.append(tmp_path / "story.voxdesk")
    window.close()
    assert (tmp_path / "story.voxdesk").is_file()

    again = open_window(qtbot, ui_model, ScriptedDialogs())
    assert again.script.text() == "One sentence. Two sentences."
    assert again.voices.list.count() == 1 and again.voices.selected().transcript == "hello"
    assert again.script.default_voice() == "Anna"
    assert [s.status for s in again.session.segments] == ["done", "done"]
    for seg, before in zip(again.session.segments, audio, strict=True):
        np.testing.assert_allclose(seg.samples(), before, atol=1 / 32768)


def test_regenerate_with_fixed_and_new_seed(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "Just one sentence here.")
    speak_and_wait(qtbot, window)
    first = window.session.segments[0]
    seed, audio = first.seed, first.samples()
    window.script.table.selectRow(0)
    with qtbot.waitSignal(window.session.runFinished, timeout=30_000):
        qtbot.mouseClick(window.script.again_row, Qt.MouseButton.LeftButton)
    same = window.session.segments[0]
    assert same.seed == seed
    np.testing.assert_array_equal(same.samples(), audio)
    assert window.script.table.rows()[0].custom  # the seed is now fixed for this segment
    with qtbot.waitSignal(window.session.runFinished, timeout=30_000):
        qtbot.mouseClick(window.script.new_take_row, Qt.MouseButton.LeftButton)
    assert window.session.segments[0].seed != seed


def test_editing_the_script_while_it_speaks(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    sentences = [f"This is sentence {i}." for i in range(10)]
    type_script(qtbot, window, " ".join(sentences))
    qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: any(s.chunks for s in window.session.segments), timeout=30_000)
    with qtbot.waitSignal(window.session.runFinished, timeout=30_000):
        window.script.set_text(" ".join(sentences[:2]))  # the other eight are edited away
        window.script.scriptChanged.emit()
    assert [s.status for s in window.session.segments] == ["done", "done"]
    assert not window.session.busy() and window.transport.speak_button.isEnabled()
    segs = window.session.segments
    gap = round(window.project.settings.gap_seconds * window.session.sample_rate)
    heard = played(window)
    assert len(heard) >= len(segs[0].samples()) + gap + len(segs[1].samples())


def test_unknown_voice_tag_fails_that_segment_only(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "[Nobody] Who is this?\nAnna speaks here.")
    speak_and_wait(qtbot, window)
    first, second = window.session.segments
    assert first.status == "failed" and "Nobody" in first.message
    assert second.status == "done"
    assert window.script.table.cell_text(0, 3) == f"Failed: {first.message}"
    assert window.script.table.cell(0, 3).toolTip() == first.message
    assert window.transport.speak_button.isEnabled()
