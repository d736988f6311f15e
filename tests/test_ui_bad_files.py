"""Start the real window with one bad file at a time: it opens, one message names the file, the
file is kept (renamed ``*.damaged-<date>``) and everything else loads."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from audio_bombs import claim_frames, flac_constant, small_flac, vorbis_wide
from read_only import make_read_only, undo_read_only
from ui_fixtures import ScriptedDialogs, home, open_window, wait_for_imports, write_voice_file  # noqa: F401

from app import paths
from app import project as projects
from app.text.pronunciation import Rule
from app.voices.library import META, VoiceLibrary

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/zero, plain links: POSIX")


def two_voices(tmp_path: Path) -> tuple[VoiceLibrary, str, str]:
    library = VoiceLibrary(paths.voices_dir())
    anna = library.import_file(write_voice_file(tmp_path / "Anna.wav", 220))
    bob = library.import_file(write_voice_file(tmp_path / "Bob.wav", 330))
    return library, anna.id, bob.id


def start(qtbot, dialogs: ScriptedDialogs | None = None):
    dialogs = dialogs or ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    qtbot.waitUntil(lambda: any("set aside" in e or "could not read" in e for e in dialogs.errors))
    return window, dialogs


def voice_names(window) -> list[str]:
    return [window.voices.list.item(i).text() for i in range(window.voices.list.count())]


@pytest.mark.parametrize(
    "content",
    [
        "null",
        "[]",
        '{"id": "x", "name": 3}',
        "{not json",
        "SAMPLE_RATE",
        "TRIM_NAN",
        "GAIN_HUGE",
    ],
)
def test_damaged_voice_json_is_set_aside_and_the_voice_rebuilt(qtbot, home, tmp_path, content):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    meta = library.folder(anna) / META
    good = json.loads(meta.read_text())
    bad = {
        "SAMPLE_RATE": {**good, "sample_rate": 1e12},
        "TRIM_NAN": {**good, "trim_end": float("nan")},
        "GAIN_HUGE": {**good, "gain_db": 1e308},
    }
    meta.write_text(json.dumps(bad[content]) if content in bad else content)
    window, dialogs = start(qtbot)
    message = dialogs.errors[-1]
    assert str(meta) in message
    kept = list(meta.parent.glob(f"{META}.damaged-*"))
    written = json.dumps(bad[content]) if content in bad else content
    assert len(kept) == 1 and kept[0].read_text() == written
    names = voice_names(window)
    assert "Bob" in names and len(names) == 2  # the damaged voice did not vanish
    if content in bad:
        assert "Anna" in names  # its name was readable, so it was kept
        field = {"SAMPLE_RATE": "sample_rate", "TRIM_NAN": "trim_end", "GAIN_HUGE": "gain_db"}[content]
        assert field in message
    rebuilt = VoiceLibrary(paths.voices_dir()).get(anna)
    assert rebuilt.sample_rate == 16000 and rebuilt.trim_end is None and rebuilt.gain_db == 0.0
    assert len(VoiceLibrary(paths.voices_dir()).audio(rebuilt)) == rebuilt.n_samples


def test_missing_voice_json_does_not_make_the_voice_vanish(qtbot, home, tmp_path):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    (library.folder(anna) / META).unlink()
    window, dialogs = start(qtbot)
    assert str(library.folder(anna) / META) in dialogs.errors[-1]
    assert len(voice_names(window)) == 2


def test_unreadable_recording_sets_the_whole_voice_folder_aside(qtbot, home, tmp_path):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    folder = library.folder(anna)
    (folder / "audio.flac").write_bytes(b"not audio at all")
    (folder / META).write_text("null")
    window, dialogs = start(qtbot)
    assert str(folder) in dialogs.errors[-1]
    assert not folder.exists() and len(list(folder.parent.glob(f"{anna}.damaged-*"))) == 1
    assert voice_names(window) == ["Bob"]


def write_autosave(project: projects.Project, data: dict | None = None, age: float = 0.0) -> Path:
    path = project.autosave()
    if data is not None:
        path.write_text(json.dumps(data))
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_autosave_with_a_broken_regex_opens_with_the_rule_turned_off(qtbot, home):  # noqa: F811
    project = projects.Project(text="Hello there.")
    path = write_autosave(project)
    data = json.loads(path.read_text())
    data["pronunciation"] = [Rule("(unclosed", "x", regex=True).to_dict(), Rule("Hello", "Hi").to_dict()]
    path.write_text(json.dumps(data))
    window, dialogs = start(qtbot)
    assert window.script.text() == "Hello there."
    assert str(path) in dialogs.errors[-1] and "(unclosed" in dialogs.errors[-1]
    assert [r.enabled for r in window.project.rules.rules] == [False, True]
    assert [j.text for j in window.project.jobs()] == ["Hi there."]
    assert len(list(path.parent.glob(f"{path.name}.damaged-*"))) == 1  # kept as it was
    assert projects.Project.load(path).rules.rules[0].enabled is False  # saved again, repaired


def test_deeply_nested_autosave_is_set_aside_and_the_next_one_opens(qtbot, home):  # noqa: F811
    older = write_autosave(projects.Project(text="The older script."), age=60)
    nested = write_autosave(projects.Project(text="x"))
    nested.write_text('{"format": "voxdesk-project", "text": ' + "[" * 100_000 + "]" * 100_000 + "}")
    window, dialogs = start(qtbot)
    assert str(nested) in dialogs.errors[-1]
    assert window.script.text() == "The older script."
    assert not nested.exists() and len(list(nested.parent.glob(f"{nested.name}.damaged-*"))) == 1
    assert projects.autosaves() == [older]


def test_settings_with_a_bad_window_state_are_set_aside_and_the_rest_kept(qtbot, home):  # noqa: F811
    ini = paths.config_dir() / "settings.ini"
    ini.write_text("[ui]\ntheme=dark\n\n[window]\nstate=12\n")
    window, dialogs = start(qtbot)
    assert str(ini) in dialogs.errors[-1] and "window/state" in dialogs.errors[-1]
    assert window.settings.theme == "dark"
    assert window.settings.window_state()[1] is None
    assert [p.read_text() for p in ini.parent.glob("settings.ini.damaged-*")] == [
        "[ui]\ntheme=dark\n\n[window]\nstate=12\n"
    ]
    window.close()  # saving the window state again works


def test_every_bad_file_at_once_gives_one_message(qtbot, home, tmp_path):  # noqa: F811
    library, anna, bob = two_voices(tmp_path)
    (library.folder(anna) / META).write_text("[]")
    (library.folder(bob) / META).write_text("null")
    write_autosave(projects.Project(text="x")).write_text("{")
    (paths.config_dir() / "settings.ini").write_text("[window]\nstate=12\n")
    window, dialogs = start(qtbot)
    assert len(dialogs.errors) == 1 and "these 4 files" in dialogs.errors[0]
    assert len(voice_names(window)) == 2


# --- issue 23: files that stopped the window, and a data folder it cannot write ---------------


def poison_recording(library: VoiceLibrary, voice_id: str) -> Path:
    """The voice's audio.flac becomes a few hundred bytes that claim 2^36 frames (2 TiB decoded)."""
    audio = library.folder(voice_id) / "audio.flac"
    claim_frames(small_flac(audio), 2**36 - 1)
    return audio


def poison_meta_link(library: VoiceLibrary, voice_id: str) -> Path:
    meta = library.folder(voice_id) / META
    meta.unlink()
    meta.symlink_to("/dev/zero")
    return meta


def poison_autosave() -> Path:
    path = write_autosave(projects.Project(text="x"))
    path.write_text('{"format": "voxdesk-project", "text": "Hello \\ud800 there."}')
    return path


def poison_folder_link(library: VoiceLibrary, voice_id: str, outside: Path) -> Path:
    folder = library.folder(voice_id)
    os.rename(folder, outside)
    folder.symlink_to(outside, target_is_directory=True)
    return folder


def test_a_recording_claiming_2_36_frames_sets_its_voice_aside(qtbot, home, tmp_path):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    audio = poison_recording(library, anna)
    assert audio.stat().st_size < 1000
    window, dialogs = start(qtbot)
    assert str(library.folder(anna)) in dialogs.errors[-1]
    assert voice_names(window) == ["Bob"]
    assert len(list(library.root.glob(f"{anna}.damaged-*"))) == 1


@posix_only
def test_voice_json_linked_to_dev_zero_is_set_aside(qtbot, home, tmp_path):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    meta = poison_meta_link(library, anna)
    window, dialogs = start(qtbot)
    assert str(meta) in dialogs.errors[-1] and "link" in dialogs.errors[-1]
    assert len(voice_names(window)) == 2  # rebuilt from its recording
    assert next(meta.parent.glob(f"{META}.damaged-*")).is_symlink()


def test_autosave_with_a_lone_surrogate_is_set_aside(qtbot, home):  # noqa: F811
    older = write_autosave(projects.Project(text="The older script."), age=60)
    bad = poison_autosave()
    window, dialogs = start(qtbot)
    assert str(bad) in dialogs.errors[-1] and "surrogate" in dialogs.errors[-1]
    assert window.script.text() == "The older script."
    assert projects.autosaves() == [older]
    window.close()  # saving again works


@posix_only
def test_a_voice_folder_linking_out_of_the_library_is_set_aside(qtbot, home, tmp_path):  # noqa: F811
    library, anna, _bob = two_voices(tmp_path)
    outside = tmp_path / "outside"
    link = poison_folder_link(library, anna, outside)
    before = sorted(p.name for p in outside.rglob("*"))
    window, dialogs = start(qtbot)
    assert str(link) in dialogs.errors[-1]
    assert voice_names(window) == ["Bob"]
    window.close()
    assert sorted(p.name for p in outside.rglob("*")) == before  # nothing written through the link


@posix_only
def test_every_new_poison_at_once_gives_one_message(qtbot, home, tmp_path):  # noqa: F811
    library = VoiceLibrary(paths.voices_dir())
    names = (("Anna", 220), ("Bob", 330), ("Cleo", 440), ("Dan", 550))
    ids = [library.import_file(write_voice_file(tmp_path / f"{n}.wav", f)).id for n, f in names]
    poison_recording(library, ids[0])
    poison_meta_link(library, ids[1])
    poison_folder_link(library, ids[2], tmp_path / "outside")
    poison_autosave()
    window, dialogs = start(qtbot)
    assert len(dialogs.errors) == 1 and "these 4 files" in dialogs.errors[0]
    assert "Dan" in voice_names(window) and len(voice_names(window)) == 2


def test_a_read_only_data_folder_is_one_plain_message(qtbot, home, monkeypatch):  # noqa: F811
    import logging

    import ui.main

    data = paths.data_dir()
    if not make_read_only(data):
        pytest.skip("this machine cannot make a folder read-only")
    shown: list[str] = []
    monkeypatch.setattr(ui.main.QMessageBox, "critical", lambda _parent, _title, text: shown.append(text))
    handlers = list(logging.getLogger().handlers)
    try:
        assert ui.main.run([]) == 1
    finally:
        undo_read_only(data)
        for handler in set(logging.getLogger().handlers) - set(handlers):
            logging.getLogger().removeHandler(handler)
            handler.close()
    assert len(shown) == 1 and str(data) in shown[0] and "Traceback" not in shown[0]


def test_importing_decode_bombs_in_the_window_is_one_plain_message(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    dialogs.errors.clear()
    dialogs.files.append(flac_constant(tmp_path / "rate.flac", 655_000, 8, 59.9))
    dialogs.files.append(vorbis_wide(tmp_path / "wide.ogg"))
    window.voices.import_dialog()
    window.voices.import_dialog()
    wait_for_imports(qtbot, window)
    assert len(dialogs.errors) == 2
    assert "655,000 Hz" in dialogs.errors[0] and "255 channels" in dialogs.errors[1]
    assert all("\n" not in e and "Traceback" not in e for e in dialogs.errors)
    assert voice_names(window) == [] and list(paths.voices_dir().iterdir()) == []
