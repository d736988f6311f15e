"""Ids and names read from files never become paths outside their folder, and what a killed
process left behind (temporary files, staging folders) is cleaned at start and never offered."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from ui_fixtures import ScriptedDialogs, home, open_window, write_voice_file  # noqa: F401

from app import atomic, paths, quarantine
from app import project as projects
from app.errors import VoxDeskError
from app.voices.library import META, VoiceLibrary

HOSTILE = "../../victim"


def age(path: Path, seconds: float = 3600) -> Path:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))
    return path


def hostile_autosave(text: str = "Hello there.") -> Path:
    path = projects.Project(text=text).autosave()
    data = json.loads(path.read_text())
    data["id"] = HOSTILE
    data["overrides"] = {"../../../etc/x": {"seed": 1}}
    data["results"] = {
        "../../evil": {"status": "done", "audio_file": "/etc/passwd", "fingerprint": "f"},
    }
    path.write_text(json.dumps(data))
    return path


def test_hostile_project_id_in_the_window_writes_and_deletes_nothing_outside(qtbot, home):  # noqa: F811
    victim = projects.autosave_dir() / f"{HOSTILE}{projects.SUFFIX}"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("precious")
    path = hostile_autosave()
    window = open_window(qtbot, None, ScriptedDialogs())
    assert window.script.text() == "Hello there."
    assert window.project.id == path.stem
    qtbot.keyClicks(window.script.editor, " More.")
    window.script.flush()
    window.autosave()
    assert window.project.audio_dir().parent == paths.cache_dir() / "segments"
    window.dialogs.unsaved_answers.append("discard")
    window.actions.files.new_script()
    assert victim.read_text() == "precious"
    assert window.script.text() == ""


def test_hostile_ids_and_keys_are_refused_or_replaced_when_loading(home, tmp_path):  # noqa: F811
    opened = projects.Project.load(hostile_autosave().rename(tmp_path / "script.voxdesk"))
    assert opened.id != HOSTILE and "/" not in opened.id
    assert opened.overrides == {} and opened.results == {}
    assert any("id" in p for p in opened.problems)
    opened.id = HOSTILE  # even set by code, it never becomes a path
    for call in (opened.autosave, opened.discard_autosave, opened.audio_dir):
        with pytest.raises(VoxDeskError):
            call()


def test_results_pointing_outside_the_project_cache_are_dropped(home):  # noqa: F811
    project = projects.Project(text="Hello there.")
    job = project.jobs()[0]
    inside = project.audio_path(job, 1)
    project.mark(job, "done", audio_file=str(inside), duration=1.0, seed=1)
    data = project.to_dict()
    assert projects.Project.from_dict(data).results[job.key].audio_file == str(inside)
    data["results"][job.key]["audio_file"] = str(inside.parent.parent / "other" / inside.name)
    assert projects.Project.from_dict(data).results == {}


def test_voice_ids_never_leave_the_library(home, tmp_path):  # noqa: F811
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.import_file(write_voice_file(tmp_path / "Anna.wav"))
    for bad in (HOSTILE, "..", "a/b", "", "x" * 65):
        with pytest.raises(VoxDeskError):
            library.get(bad)
    meta = library.folder(voice) / META
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "id": HOSTILE}))
    listed = library.list()  # an id that is not its folder's: metadata rebuilt, id = folder name
    assert [v.id for v in listed] == [voice.id]
    assert not (tmp_path / "victim").exists()


def test_crash_leftovers_are_cleaned_and_never_offered(home):  # noqa: F811
    real = projects.Project(text="Kept.").autosave()
    folder = real.parent
    stale = age_write(folder / f".{real.stem}.tmp-abc123{projects.SUFFIX}", real.read_text()[:20])
    fresh = folder / f".{real.stem}.tmp-zzz999{projects.SUFFIX}"  # another VoxDesk may be writing it
    fresh.write_text("{")
    assert projects.autosaves() == [real]
    projects.clean_leftovers()
    assert not stale.exists() and fresh.exists()
    assert projects.autosaves() == [real]


def test_voice_staging_folders_are_cleaned_and_never_listed(tmp_path):
    root = tmp_path / "voices"
    library = VoiceLibrary(root)
    voice = library.import_file(write_voice_file(tmp_path / "Anna.wav"))
    staging = root / ".new-0123456789ab"
    staging.mkdir()
    (staging / "audio.flac").write_bytes((library.folder(voice) / "audio.flac").read_bytes())
    graveyard = root / ".deleted-0123-abcd"
    graveyard.mkdir()
    temp = library.folder(voice) / ".voice.tmp-q1w2e3.json"
    temp.write_text("{")
    for path in (staging, graveyard, temp):
        age(path)
    assert [v.id for v in library.list()] == [voice.id]
    VoiceLibrary(root)  # opening the library cleans
    assert not staging.exists() and not graveyard.exists() and not temp.exists()


def test_leftovers_in_the_window_start(qtbot, home):  # noqa: F811
    real = projects.Project(text="The real script.").autosave()
    stale = age_write(real.parent / f".{real.stem}.tmp-abcdef{projects.SUFFIX}", "{}")
    window = open_window(qtbot, None, ScriptedDialogs())
    assert window.script.text() == "The real script."
    assert not stale.exists()
    qtbot.keyClick(window.script.editor, Qt.Key.Key_End)


def age_write(path: Path, text: str) -> Path:
    path.write_text(text)
    return age(path)


def test_the_voice_folder_rename_is_fsynced(tmp_path, monkeypatch):
    synced: list[Path] = []
    real = atomic.fsync_dir
    monkeypatch.setattr(atomic, "fsync_dir", lambda folder: (synced.append(Path(folder)), real(folder)))
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.import_file(write_voice_file(tmp_path / "Anna.wav"))
    assert library.root in synced  # after staging → <id>
    synced.clear()
    library.delete(voice)
    assert library.root in synced


def test_set_aside_keeps_the_file_and_names_it(tmp_path):
    bad = tmp_path / "thing.json"
    bad.write_text("x")
    quarantine.take_notices()
    notice = quarantine.set_aside(bad, "it is damaged")
    again = tmp_path / "thing.json"
    again.write_text("y")
    second = quarantine.set_aside(again, "also damaged")
    assert notice.kept.read_text() == "x" and second.kept.read_text() == "y" and notice.kept != second.kept
    text = quarantine.message(quarantine.take_notices())
    assert str(bad) in text and notice.kept.name in text and second.kept.name in text
    assert quarantine.take_notices() == []


def test_a_self_contained_project_reads_takes_only_from_its_takes_folder(home, tmp_path):  # noqa: F811
    project = projects.Project(text="Hello there. Second one.")
    jobs = project.jobs()
    for job in jobs:
        wav = project.audio_path(job, 1)
        wav.write_bytes(b"RIFF")
        project.mark(job, "done", audio_file=str(wav), duration=1.0, seed=1)
    saved = project.save(tmp_path / "a" / "story", self_contained=True)
    data = json.loads(saved.read_text())
    good = data["results"][jobs[0].key]["audio_file"]
    assert data["takes"] == "story_takes" and good.startswith("story_takes/")
    secret = tmp_path / "a" / "secret.wav"
    secret.write_bytes(b"RIFF")
    outside = tmp_path / "outside_takes"
    outside.mkdir()
    (outside / Path(good).name).write_bytes(b"RIFF")
    link = tmp_path / "a" / "story_takes" / f"{'0' * 12}-1-{'0' * 16}-1.wav"
    link.symlink_to(secret)
    for takes, audio in (
        ("story_takes", "story_takes/../secret.wav"),
        ("story_takes", "story_takes/" + link.name),  # a link out of the folder
        ("story_takes", "../outside_takes/" + Path(good).name),
        ("../outside_takes", "../outside_takes/" + Path(good).name),
        ("/etc_takes", "/etc_takes/" + Path(good).name),
        ("story_takes", str(secret)),
    ):
        hostile = dict(data, takes=takes)
        hostile["results"] = {jobs[0].key: dict(data["results"][jobs[0].key], audio_file=audio)}
        opened = projects.Project.from_dict(hostile, saved.parent)
        assert opened.results == {}, (takes, audio)
    opened = projects.Project.from_dict(data, saved.parent)
    assert opened.results[jobs[0].key].audio_file == str(saved.parent / good)
    assert projects.Project.from_dict(data).results == {}  # no folder given: no relative takes
