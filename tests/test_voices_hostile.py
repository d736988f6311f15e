"""The voice library against hostile files and names: what it reads back is bounded and never
followed out of the library, and names are one Unicode form without invisible characters."""

from __future__ import annotations

import json
import os
import stat
import unicodedata

import numpy as np
import pytest
import soundfile as sf
from audio_bombs import claim_frames, flac_constant
from read_only import make_read_only, undo_read_only

from app import paths, quarantine, readback
from app.errors import VoxDeskError
from app.voices import latents
from app.voices.library import AUDIO, META, STORE_MAX_RATE, VoiceLibrary
from app.voices.names import clean_name

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/zero, plain links: POSIX")


def tone(seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.25 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


@pytest.fixture
def lib(tmp_path) -> VoiceLibrary:
    quarantine.take_notices()
    return VoiceLibrary(tmp_path / "voices")


def one_line(call, *args) -> str:
    with pytest.raises(VoxDeskError) as err:
        call(*args)
    assert "\n" not in str(err.value)
    return str(err.value)


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed,kept",
    [
        ("Ann\x00a", "Anna"),
        ("\u202eAnna", "Anna"),  # right-to-left override
        ("An\u200bna\ufeff", "Anna"),  # zero-width space, byte order mark
        ("Anna\u2028Lee", "Anna Lee"),  # line separator: white space
        ("  Zoë \t ", "Zoë"),
        ("e\u0301mile", "\u00e9mile"),  # decomposed (NFD) becomes composed (NFC)
        ("👩\u200d💻 coder", "👩💻 coder"),
    ],
)
def test_names_are_nfc_without_control_or_invisible_characters(lib, typed, kept) -> None:
    assert clean_name(typed) == kept
    voice = lib.create_from_samples(tone(), 16000, typed)
    assert voice.name == kept and unicodedata.is_normalized("NFC", voice.name)
    assert lib.get(voice.id).name == kept and lib.find(typed) == voice


@pytest.mark.parametrize("invisible", ["\u200b\u200b", "\u202e", "\x00\x01", "\u3164", "\u2800 \u200d"])
def test_a_name_of_only_invisible_characters_is_refused(lib, invisible) -> None:
    assert "invisible" in one_line(lib.create_from_samples, tone(), 16000, invisible)
    assert "needs a name" in one_line(lib.create_from_samples, tone(), 16000, "  ")
    assert lib.list() == []


def test_a_file_named_with_only_invisible_characters_imports_under_a_plain_name(lib, tmp_path) -> None:
    src = tmp_path / "\u200b\u202e.wav"
    sf.write(str(src), tone(), 16000)
    assert lib.import_file(src).name == "Imported voice"


def test_nfc_and_nfd_twins_are_one_name(lib) -> None:
    nfc, nfd = "Zo\u00eb", "Zoe\u0308"
    first = lib.create_from_samples(tone(), 16000, nfc)
    second = lib.create_from_samples(tone(), 16000, nfd)
    assert first.name == nfc and second.name == f"{nfc} (2)"
    assert "already exists" in one_line(lib.rename, second, nfd)
    assert lib.find(nfd) == first


def test_names_read_back_are_cleaned(lib) -> None:
    voice = lib.create_from_samples(tone(), 16000, "Anna")
    meta = lib.folder(voice) / META
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "name": "A\u202enn\u200ba"}))
    assert [v.name for v in lib.list()] == ["Anna"]


# --- files read back -----------------------------------------------------------------------


@posix_only
def test_voice_json_linked_to_dev_zero_is_set_aside_and_the_voice_rebuilt(lib) -> None:
    voice = lib.create_from_samples(tone(), 16000, "Anna")
    meta = lib.folder(voice) / META
    meta.unlink()
    meta.symlink_to("/dev/zero")
    listed = lib.list()
    assert [v.id for v in listed] == [voice.id] and listed[0].name.startswith("Recovered voice")
    kept = list(meta.parent.glob(f"{META}.damaged-*"))
    assert len(kept) == 1 and kept[0].is_symlink()  # the link itself was renamed, nothing followed
    assert "link" in quarantine.message(quarantine.take_notices())
    assert json.loads(meta.read_text())["id"] == voice.id


@posix_only
def test_voice_json_that_is_a_fifo_or_too_large_is_never_read_whole(lib, tmp_path) -> None:
    voice = lib.create_from_samples(tone(), 16000, "Anna")
    meta = lib.folder(voice) / META
    meta.unlink()
    os.mkfifo(meta)
    assert [v.id for v in lib.list()] == [voice.id]  # rebuilt; opening the FIFO would have hung
    assert stat.S_ISFIFO(next(meta.parent.glob(f"{META}.damaged-*")).lstat().st_mode)
    big = tmp_path / "big.json"
    big.write_text(" " * 2000 + "{}")
    with pytest.raises(ValueError, match="at most 1,000"):
        readback.read_json(big, 1000)


def test_lone_surrogates_are_refused_on_reading_back(tmp_path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"name": "\\ud800"}')
    with pytest.raises(ValueError, match="surrogate"):
        readback.read_json(path)


def test_a_recording_claiming_2_36_frames_sets_its_voice_aside(lib) -> None:
    voice = lib.create_from_samples(tone(), 16000, "Anna")
    other = lib.create_from_samples(tone(), 16000, "Bob")
    audio = lib.folder(voice) / AUDIO
    before = audio.stat()
    claim_frames(audio, 2**36 - 1)
    # as when both writes fall in one timestamp tick (4 ms on kernels before 6.13): same inode,
    # size and mtime, so only the header's bytes tell the library's check cache it changed
    os.utime(audio, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert audio.stat().st_size == before.st_size < 40_000 and audio.stat().st_ino == before.st_ino
    with pytest.raises(VoxDeskError, match="damaged"):
        lib.audio(voice)  # never a 2 TiB request
    assert [v.id for v in lib.list()] == [other.id]
    assert len(list(lib.root.glob(f"{voice.id}.damaged-*"))) == 1
    assert str(lib.folder(voice)) in quarantine.message(quarantine.take_notices())


def test_a_checked_recording_locked_for_a_moment_is_not_set_aside(lib, monkeypatch) -> None:
    """The check reads the header's bytes for its cache key; a recording that cannot be opened
    just now (another program's sharing lock on Windows) keeps the verdict it had."""
    from pathlib import Path

    voice = lib.create_from_samples(tone(), 16000, "Anna")
    audio = lib.folder(voice) / AUDIO
    assert [v.id for v in lib.list()] == [voice.id]
    real_open = Path.open

    def locked(self, *args, **kw):
        if self == audio:
            raise PermissionError(13, "The process cannot access the file")
        return real_open(self, *args, **kw)

    monkeypatch.setattr(Path, "open", locked)
    assert [v.id for v in lib.list()] == [voice.id]
    assert lib.problems == []  # nothing rebuilt, nothing set aside, no message
    assert sorted(p.name for p in lib.root.iterdir()) == [voice.id]


def test_a_recording_that_disagrees_with_its_metadata_is_rebuilt_from_it(lib) -> None:
    voice = lib.create_from_samples(tone(1.0), 16000, "Anna")
    sf.write(str(lib.folder(voice) / AUDIO), tone(2.0), 16000, format="FLAC")
    (rebuilt,) = lib.list()
    assert rebuilt.name == "Anna" and rebuilt.n_samples == 32000
    assert len(lib.audio(rebuilt)) == 32000


@posix_only
def test_a_voice_folder_linking_out_of_the_library_is_set_aside_not_followed(lib, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    real = lib.create_from_samples(tone(), 16000, "Anna")
    os.rename(lib.folder(real), outside)  # a complete voice, but outside the library
    link = lib.root / real.id
    link.symlink_to(outside, target_is_directory=True)
    before = sorted(p.name for p in outside.iterdir())
    assert lib.list() == []
    assert not link.exists() and next(lib.root.glob(f"{real.id}.damaged-*")).is_symlink()
    assert "link" in quarantine.message(quarantine.take_notices())
    link.symlink_to(outside, target_is_directory=True)  # linked again while running
    with pytest.raises(VoxDeskError, match="link"):
        latents.store(lib, real, "model", "prompt", np.zeros((2, 4, 8), np.float32))
    assert sorted(p.name for p in outside.iterdir()) == before


@posix_only
def test_a_latent_cache_folder_that_is_a_link_is_neither_read_nor_written(lib, tmp_path) -> None:
    voice = lib.create_from_samples(tone(), 16000, "Anna")
    target = tmp_path / "target"
    target.mkdir()
    (lib.folder(voice) / "latents").symlink_to(target, target_is_directory=True)
    with pytest.raises(VoxDeskError, match="link"):
        latents.store(lib, voice, "model", "prompt", np.zeros((2, 4, 8), np.float32))
    assert latents.load(lib, voice, "model", "prompt") is None
    assert list(target.iterdir()) == []


# --- what comes in -------------------------------------------------------------------------


def test_imports_above_48_khz_are_stored_at_48_khz(lib, tmp_path) -> None:
    src = flac_constant(tmp_path / "hi.flac", 192_000, 4, 2.0)
    voice = lib.import_file(src)
    assert voice.sample_rate == STORE_MAX_RATE and voice.n_samples == 2 * STORE_MAX_RATE
    recorded = lib.create_from_samples(tone(1.0, 96000), 96000, "Rec")
    assert recorded.sample_rate == STORE_MAX_RATE and len(lib.audio(recorded)) == STORE_MAX_RATE


def test_bombs_are_refused_on_import_and_nothing_is_written(lib, tmp_path) -> None:
    bomb = flac_constant(tmp_path / "bomb.flac", 655_000, 8, 59.9)
    assert "655,000 Hz" in one_line(lib.import_file, bomb)
    assert "rate" in one_line(lib.create_from_samples, tone(1.0, 1000)[:900], 500, "Low")
    assert list(lib.root.iterdir()) == []


# --- the data folder -----------------------------------------------------------------------


def test_a_read_only_data_folder_is_one_plain_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    paths.check_writable()  # creates what is missing; all writable
    data = tmp_path / "home" / "data"
    if not make_read_only(data):
        pytest.skip("this machine cannot make a folder read-only")
    try:
        message = one_line(paths.check_writable)
        assert str(data) in message and "VOXDESK_HOME" in message
    finally:
        undo_read_only(data)


def test_serve_with_a_read_only_data_folder_says_so_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    from app.cli import main

    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    data = paths.data_dir()
    if not make_read_only(data):
        pytest.skip("this machine cannot make a folder read-only")
    try:
        code = main(["serve", "--model", str(tmp_path / "no-model")])
    finally:
        undo_read_only(data)
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "cannot write to its folder" in err and "internal error" not in err and "loading" not in err
