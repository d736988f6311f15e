"""Project files (save/load/autosave/results), exports (WAV/FLAC/SRT), atomic writes, user dirs."""

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app import atomic, paths
from app.errors import VoxDeskError
from app.export import (
    Clip,
    ExportExists,
    export_merged,
    export_segments,
    export_srt,
    merge,
    project_clips,
    srt_time,
    to_srt,
)
from app.project import Project, SegmentOverride, autosaves
from app.takes import Made, take_changes
from app.text.pronunciation import PronunciationList, Rule

RATE = 16000


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _clips() -> list[Clip]:
    rng = np.random.default_rng(0)
    return [
        Clip("First line.", rng.uniform(-0.5, 0.5, 8000).astype(np.float32)),
        Clip("Second,\nsplit line.", rng.uniform(-0.5, 0.5, 12345).astype(np.float32)),
        Clip("Third.", rng.uniform(-0.5, 0.5, 4000).astype(np.float32)),
    ]


# --- paths and atomic writes ---------------------------------------------------------------


def test_paths_follow_voxdesk_home(home):
    assert paths.data_dir() == home / "data" and paths.data_dir().is_dir()
    assert paths.voices_dir().parent == home / "data"
    assert paths.cache_dir() == home / "cache" and paths.log_dir() == home / "logs"


def test_atomic_write_replaces_and_cleans_up(tmp_path, monkeypatch):
    target = tmp_path / "doc.json"
    atomic.write_json(target, {"a": "é"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": "é"}

    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(VoxDeskError, match="disk is full"):
        atomic.write_json(target, {"a": "new"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": "é"}  # old content intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]  # no temp left behind


def test_atomic_writer_exception_keeps_old_file(tmp_path):
    target = tmp_path / "x.bin"
    atomic.write_bytes(target, b"old")

    def writer(f):
        f.write(b"half")
        raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        atomic.write_with(target, writer)
    assert target.read_bytes() == b"old" and len(list(tmp_path.iterdir())) == 1


def test_atomic_permission_error_is_plain(tmp_path, monkeypatch):
    def denied(*_a, **_k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", denied)
    with pytest.raises(VoxDeskError, match="not allowed to write"):
        atomic.write_text(tmp_path / "y.txt", "hi")


# --- export --------------------------------------------------------------------------------


def test_srt_time_format():
    assert srt_time(0) == "00:00:00,000"
    assert srt_time(3661.0419) == "01:01:01,042"
    assert srt_time(59.9996) == "00:01:00,000"  # rounding carries into the minutes
    assert srt_time(100 * 3600) == "100:00:00,000"


def test_merge_and_srt_timings_include_gaps():
    clips = _clips()
    merged = merge(clips, RATE, gap_seconds=0.25)
    gap = 4000
    assert len(merged) == 8000 + gap + 12345 + gap + 4000
    assert np.array_equal(merged[:8000], clips[0].samples)
    assert not merged[8000 : 8000 + gap].any()
    assert np.array_equal(merged[12000 : 12000 + 12345], clips[1].samples)
    srt = to_srt(clips, RATE, gap_seconds=0.25)
    assert srt == (
        "1\n00:00:00,000 --> 00:00:00,500\nFirst line.\n\n"
        "2\n00:00:00,750 --> 00:00:01,522\nSecond,\nsplit line.\n\n"
        "3\n00:00:01,772 --> 00:00:02,022\nThird.\n"
    )


@pytest.mark.parametrize("fmt", ["WAV", "FLAC"])
def test_export_files_and_overwrite_protection(tmp_path, fmt):
    clips = _clips()
    out = tmp_path / f"all.{fmt.lower()}"
    export_merged(out, clips, RATE, gap_seconds=0.1, fmt=fmt)
    data, rate = sf.read(out, dtype="float32")
    assert rate == RATE and len(data) == 8000 + 12345 + 4000 + 2 * 1600
    assert np.allclose(data[:8000], clips[0].samples, atol=1e-4)
    with pytest.raises(ExportExists) as err:
        export_merged(out, clips[:1], RATE, fmt=fmt)
    assert isinstance(err.value, FileExistsError) and isinstance(err.value, VoxDeskError)
    assert err.value.paths == [out] and "already exists" in str(err.value)
    assert len(sf.read(out)[0]) == len(data)  # untouched
    export_merged(out, clips[:1], RATE, fmt=fmt, overwrite=True)
    assert len(sf.read(out)[0]) == 8000

    folder = tmp_path / "parts"
    files = export_segments(folder, clips, RATE, fmt=fmt)
    assert [f.name for f in files] == [f"segment_00{i}.{fmt.lower()}" for i in (1, 2, 3)]
    assert [len(sf.read(f)[0]) for f in files] == [8000, 12345, 4000]
    files[2].unlink()
    with pytest.raises(ExportExists) as err:
        export_segments(folder, clips, RATE, fmt=fmt)
    assert len(err.value.paths) == 2 and not files[2].exists()  # refused before writing anything


def test_export_srt_and_nothing_to_export(tmp_path):
    path = export_srt(tmp_path / "subs.srt", _clips(), RATE, gap_seconds=0)
    assert path.read_text(encoding="utf-8").startswith("1\n00:00:00,000 --> 00:00:00,500\nFirst line.\n")
    with pytest.raises(ExportExists):
        export_srt(path, _clips(), RATE)
    with pytest.raises(VoxDeskError, match="nothing to export"):
        export_merged(tmp_path / "none.wav", [], RATE)


# --- project -------------------------------------------------------------------------------


def _project() -> Project:
    project = Project(text="[Alice] Hello there. Hello there.\nPlain narrator line.")
    project.rules = PronunciationList([Rule("narrator", "NARRATOR")])
    project.with_settings(default_voice="Bob", voice_design="calm", cfg_value=2.5)
    return project


def test_jobs_apply_settings_overrides_and_pronunciation():
    project = _project()
    jobs = project.jobs()
    assert [j.voice for j in jobs] == ["Alice", "Alice", "Bob"]
    assert jobs[0].key != jobs[1].key  # repeated sentence, separate keys
    assert jobs[2].text == "(calm)Plain NARRATOR line." and jobs[2].display_text == "Plain narrator line."
    project.set_override(
        jobs[1].key, SegmentOverride(seed=7, cfg_value=1.5, inference_timesteps=4, voice_design="")
    )
    job = project.jobs()[1]
    assert (job.seed, job.cfg_value, job.inference_timesteps, job.text) == (7, 1.5, 4, "Hello there.")
    project.set_override(jobs[1].key, SegmentOverride())
    assert project.overrides == {}
    with pytest.raises(VoxDeskError, match="not valid"):
        project.with_settings(cfg_value=99)


def test_results_follow_edits_and_go_stale():
    project = _project()
    job = project.jobs()[2]
    wav = project.audio_path(job, seed=11, context="vox2")
    wav.write_bytes(b"x")
    project.mark(job, "done", context="vox2", audio_file=str(wav), duration=1.5, seed=11)
    assert project.result(job, "vox2").status == "done"
    assert project.result(job, "other-model").status == "queued"
    project.text = "A new first line.\n" + project.text  # edits elsewhere keep the result
    moved = project.jobs()[3]
    assert moved.key == job.key and project.result(moved, "vox2").status == "done"
    project.set_override(job.key, SegmentOverride(seed=11))  # pinning the seed it used: still valid
    assert project.result(project.jobs()[3], "vox2").status == "done"
    project.set_override(job.key, SegmentOverride(seed=12))
    assert project.result(project.jobs()[3], "vox2").status == "queued"
    project.set_override(job.key, SegmentOverride())
    project.with_settings(cfg_value=3.0)
    assert project.result(project.jobs()[3], "vox2").status == "queued"
    project.with_settings(cfg_value=2.5)
    wav.unlink()
    assert project.result(project.jobs()[3], "vox2").status == "queued"  # audio file gone


def test_save_load_round_trip_backup_and_tolerance(tmp_path):
    project = _project()
    job = project.jobs()[0]
    project.set_override(job.key, SegmentOverride(seed=3))
    wav = project.audio_path(job, 3)
    wav.write_bytes(b"x")
    project.mark(job, "done", audio_file=str(wav), duration=0.5, seed=3)
    project.mark(project.jobs()[1], "generating")
    path = project.save(tmp_path / "story")
    assert path.name == "story.voxdesk"
    loaded = Project.load(path)
    assert loaded.text == project.text and loaded.settings == project.settings and loaded.id == project.id
    assert loaded.rules.rules == project.rules.rules and loaded.overrides == project.overrides
    assert loaded.result(loaded.jobs()[0]).status == "done"
    assert loaded.result(loaded.jobs()[1]).status == "queued"  # "generating" is not saved

    loaded.text = "changed"
    loaded.save()
    assert Project.load(path.with_name("story.voxdesk.bak")).text == project.text

    data = json.loads(path.read_text())
    data["future"] = {"x": 1}
    data["settings"]["future_setting"] = True
    del data["settings"]["gap_seconds"]
    path.write_text(json.dumps(data))
    assert Project.load(path).settings.gap_seconds == 0.3

    for bad in (
        "{broken",
        json.dumps({"format": "other"}),
        json.dumps({"format": "voxdesk-project", "settings": 5}),
    ):
        path.write_text(bad)
        with pytest.raises(VoxDeskError):
            Project.load(path)
        assert path.read_text() == bad  # a bad file is never rewritten
    with pytest.raises(VoxDeskError, match="does not exist"):
        Project.load(tmp_path / "missing.voxdesk")


def test_autosave_recovery(tmp_path):
    project = _project()
    project.save(tmp_path / "mine.voxdesk")
    project.text += "\nUnsaved sentence."
    copy = project.autosave()
    assert autosaves() == [copy]
    recovered = Project.load(copy)
    assert recovered.text.endswith("Unsaved sentence.") and recovered.path == tmp_path / "mine.voxdesk"
    project.discard_autosave()
    assert autosaves() == []


def test_project_clips_in_script_order():
    project = Project(text="One. Two.")
    jobs = project.jobs()
    with pytest.raises(VoxDeskError, match="2 of 2 segments are not generated"):
        project_clips(project, RATE)
    for i, job in enumerate(jobs):
        wav = project.audio_path(job, seed=i)
        sf.write(wav, np.full(1000 * (i + 1), 0.1 * (i + 1), np.float32), RATE)
        project.mark(job, "done", audio_file=str(wav), duration=0.1, seed=i)
    clips = project_clips(project, RATE)
    assert [c.text for c in clips] == ["One.", "Two."] and [len(c.samples) for c in clips] == [1000, 2000]
    project.with_settings(cfg_value=3.0)  # takes made with other settings still export
    assert [len(c.samples) for c in project_clips(project, RATE)] == [1000, 2000]


def test_a_take_made_with_other_settings_is_kept_and_says_what_it_was_made_with(tmp_path):
    project = _project()
    job = project.jobs()[2]
    wav = project.audio_path(job, seed=11, context="vox2")
    wav.write_bytes(b"x")
    project.mark(job, "done", context="vox2", audio_file=str(wav), duration=1.5, seed=11)
    assert project.results[job.key].made == Made.of(job, "vox2")
    assert take_changes(project.take(job).made, 11, job, "vox2") == {}

    project.with_settings(cfg_value=1.9, inference_timesteps=4)
    now = project.jobs()[2]
    assert project.result(now, "vox2").status == "queued"  # not current any more...
    take = project.take(now)  # ...but kept, with what it was made with
    assert take is not None and take.audio_file == str(wav)
    assert take_changes(take.made, take.seed, now, "vox2") == {"cfg_value": 2.5, "inference_timesteps": 10}
    assert take_changes(take.made, take.seed, now, "") == {"cfg_value": 2.5, "inference_timesteps": 10}
    assert "context" in take_changes(take.made, take.seed, now, "int8-model")
    project.set_override(now.key, SegmentOverride(seed=12))
    assert take_changes(take.made, take.seed, project.jobs()[2], "vox2")["seed"] == 11

    # What it was made with survives saving and loading; a damaged record loses only the mark.
    loaded = Project.load(project.save(tmp_path / "kept"))
    assert loaded.take(loaded.jobs()[2]).made == take.made
    data = json.loads((tmp_path / "kept.voxdesk").read_text())
    data["results"][job.key]["made"] = {"cfg_value": "not a number"}
    damaged = Project.from_dict(data)
    assert damaged.take(damaged.jobs()[2]).made is None
    assert take_changes(None, 11, damaged.jobs()[2], "vox2") == {"settings": None, "seed": 11}
    wav.unlink()
    assert project.take(project.jobs()[2]) is None  # audio gone: nothing to keep


def test_a_self_contained_project_moves_to_another_folder_with_its_takes(tmp_path):
    project = Project(text="One. Two.")
    for i, job in enumerate(project.jobs()):
        wav = project.audio_path(job, seed=i)
        sf.write(wav, np.full(1000 * (i + 1), 0.1 * (i + 1), np.float32), RATE)
        project.mark(job, "done", audio_file=str(wav), duration=0.1, seed=i)
    saved = project.save(tmp_path / "here" / "story", self_contained=True)
    takes = tmp_path / "here" / "story_takes"
    assert sorted(p.name for p in takes.iterdir()) == sorted(
        Path(r.audio_file).name for r in project.results.values()
    )
    assert all(Path(r.audio_file).parent == takes for r in project.results.values())
    assert str(tmp_path) not in saved.read_text()  # no absolute path in the file

    # Another computer: the folder moved, this one's cache is empty.
    moved = tmp_path / "elsewhere" / "copy"
    moved.parent.mkdir()
    (tmp_path / "here").rename(moved)
    for wav in project.audio_dir().iterdir():
        wav.unlink()
    opened = Project.load(moved / "story.voxdesk")
    assert opened.self_contained and all(opened.result(job).status == "done" for job in opened.jobs())
    assert [len(c.samples) for c in project_clips(opened, RATE)] == [1000, 2000]
    opened.text += " Three."  # saving again keeps it self-contained, relative
    opened.save()
    data = json.loads((moved / "story.voxdesk").read_text())
    assert data["takes"] == "story_takes" and all(
        r["audio_file"].startswith("story_takes/") for r in data["results"].values()
    )
