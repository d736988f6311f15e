"""Voice library: import, record, edit, list, latent cache, prompt building."""

import json
import math

import numpy as np
import pytest
import soundfile as sf

from app import atomic
from app.errors import VoxDeskError
from app.voices import cloning, latents
from app.voices.library import VoiceLibrary


def _tone(seconds: float, rate: int, amp: float = 0.25, freq: float = 220.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _tree(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def lib(tmp_path):
    return VoiceLibrary(tmp_path / "voices")


def test_import_stereo_wav_keeps_rate_and_goes_mono(lib, tmp_path):
    left = _tone(2.0, 22050)
    src = tmp_path / "Alice sample.wav"
    sf.write(src, np.stack([left, left * 0.5], axis=1), 22050)
    voice = lib.import_file(src, transcript="  hello there ")
    assert voice.name == "Alice sample" and voice.transcript == "hello there"
    assert voice.sample_rate == 22050 and voice.n_samples == len(left)
    data, rate = sf.read(lib.folder(voice) / "audio.flac", dtype="float32")
    assert rate == 22050 and data.ndim == 1
    assert np.allclose(data, 0.75 * left, atol=1e-3)
    meta = json.loads((lib.folder(voice) / "voice.json").read_text())
    assert meta["id"] == voice.id and meta["created"]
    assert [v.id for v in lib.list()] == [voice.id]
    assert len(lib.audio(voice, 16000)) == pytest.approx(2.0 * 16000, abs=2)


@pytest.mark.parametrize("kind", ["garbage", "missing", "too_long", "silent"])
def test_bad_imports_change_nothing(lib, tmp_path, kind):
    lib.create_from_samples(_tone(1.0, 16000), 16000, "Existing")
    before = _tree(lib.root)
    src = tmp_path / "bad.wav"
    if kind == "garbage":
        src.write_bytes(b"RIFF\x00\x00garbage" * 50)
    elif kind == "too_long":
        sf.write(src, _tone(61.0, 8000), 8000)
    elif kind == "silent":
        sf.write(src, np.zeros(16000, np.float32), 16000)
    with pytest.raises(VoxDeskError) as err:
        lib.import_file(src)
    assert "\n" not in str(err.value) and "Traceback" not in str(err.value)
    assert _tree(lib.root) == before


def test_failed_write_leaves_no_staging(lib, monkeypatch):
    def boom(path, obj):
        raise VoxDeskError("The disk is full")

    monkeypatch.setattr(atomic, "write_json", boom)
    with pytest.raises(VoxDeskError):
        lib.create_from_samples(_tone(1.0, 16000), 16000, "X")
    assert _tree(lib.root) == []


def test_names_unique_rename_and_delete(lib):
    a = lib.create_from_samples(_tone(1.0, 16000), 16000, "Alice")
    a2 = lib.create_from_samples(_tone(1.0, 16000), 16000, " alice ")
    assert a2.name == "alice (2)"
    with pytest.raises(VoxDeskError, match="already exists"):
        lib.rename(a2, "ALICE")
    with pytest.raises(VoxDeskError, match=r"\["):
        lib.rename(a2, "[Bob]")
    bob = lib.rename(a2, "Bob")
    assert [v.name for v in lib.list()] == ["Alice", "Bob"]
    assert lib.find("bob").id == bob.id and lib.find("nobody") is None
    assert lib.rename(a, "alice").name == "alice"  # changing only its own case is fine
    lib.delete(bob)
    assert [v.name for v in lib.list()] == ["alice"]
    with pytest.raises(VoxDeskError, match="no longer exists"):
        lib.get(bob.id)


def test_trim_and_normalise(lib):
    samples = np.concatenate([np.zeros(8000, np.float32), _tone(2.0, 16000, amp=0.1)])
    voice = lib.create_from_samples(samples, 16000, "V")
    trimmed = lib.trim(voice, 0.5, 2.0)
    assert trimmed.duration == pytest.approx(1.5)
    assert trimmed.content_hash != voice.content_hash
    assert len(lib.audio(trimmed)) == 24000
    assert np.allclose(lib.audio(trimmed), samples[8000:32000], atol=1e-3)
    with pytest.raises(VoxDeskError, match="outside"):
        lib.trim(voice, 2.0, 9.0)
    with pytest.raises(VoxDeskError, match="at least"):
        lib.trim(voice, 1.0, 1.1)
    loud = lib.normalise(trimmed)
    peak = float(np.max(np.abs(lib.audio(loud))))
    assert 20 * math.log10(peak) == pytest.approx(-1.0, abs=0.05)
    assert loud.normalised and lib.get(voice.id).gain_db == loud.gain_db
    assert lib.reset_gain(loud).gain_db == 0.0
    silent = lib.create_from_samples(np.r_[np.zeros(16000, np.float32), _tone(1, 16000)], 16000, "S")
    with pytest.raises(VoxDeskError, match="silent"):
        lib.normalise(lib.trim(silent, 0.0, 0.9))


def test_damaged_metadata_is_set_aside_and_the_voice_rebuilt(lib):
    good = lib.create_from_samples(_tone(1.0, 16000), 16000, "Good")
    bad = lib.create_from_samples(_tone(1.0, 16000), 16000, "Bad")
    odd = lib.create_from_samples(_tone(1.0, 16000), 16000, "Odd")
    (lib.folder(bad) / "voice.json").write_text("{not json")
    meta = json.loads((lib.folder(odd) / "voice.json").read_text())
    meta["trim_end"] = "soon"
    (lib.folder(odd) / "voice.json").write_text(json.dumps(meta))
    listed = {v.id: v.name for v in lib.list()}
    assert listed == {good.id: "Good", bad.id: f"Recovered voice {bad.id[:6]}", odd.id: "Odd"}
    assert len(lib.problems) == 2 and bad.id in " ".join(lib.problems) and odd.id in " ".join(lib.problems)
    for voice in (bad, odd):
        assert len(list(lib.folder(voice).glob("voice.json.damaged-*"))) == 1
        assert lib.get(voice.id).n_samples == 16000
    assert len(lib.list()) == 3 and lib.problems == []  # rebuilt once, read normally from then on


def test_latent_cache(lib):
    voice = lib.create_from_samples(_tone(3.0, 16000), 16000, "V")
    lat = np.random.default_rng(0).standard_normal((5, 4, 8)).astype(np.float32)
    assert latents.load(lib, voice, "openbmb/VoxCPM2", "prompt") is None
    path = latents.store(lib, voice, "openbmb/VoxCPM2", "prompt", lat)
    assert path.parent == lib.folder(voice) / "latents"
    assert np.array_equal(latents.load(lib, voice, "openbmb/VoxCPM2", "prompt"), lat)
    assert latents.load(lib, voice, "openbmb/VoxCPM2", "reference") is None
    assert latents.load(lib, voice, "openbmb/VoxCPM1.5", "prompt") is None
    trimmed = lib.trim(voice, 0.0, 2.0)
    assert latents.load(lib, trimmed, "openbmb/VoxCPM2", "prompt") is None  # stale after an edit
    assert latents.prune(lib, trimmed) == 1
    # A pickled object array must never be loaded: treated as damaged and removed.
    bad = latents.store(lib, trimmed, "m", "prompt", lat)
    np.save(bad, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    assert latents.load(lib, trimmed, "m", "prompt") is None and not bad.exists()
    with pytest.raises(ValueError):
        latents.load(lib, trimmed, "m", "bogus")


def test_modes_and_hints(lib):
    with_text = lib.create_from_samples(_tone(1.0, 16000), 16000, "T", transcript="hello")
    no_text = lib.create_from_samples(_tone(1.0, 16000), 16000, "N")
    assert cloning.resolve_mode(with_text, "voxcpm2") == "continuation"
    assert cloning.resolve_mode(no_text, "voxcpm2") == "reference"
    assert cloning.resolve_mode(with_text, "voxcpm2", "both") == "both"
    assert cloning.resolve_mode(with_text, "voxcpm") == "continuation"
    with pytest.raises(VoxDeskError, match="transcript"):
        cloning.resolve_mode(no_text, "voxcpm")
    with pytest.raises(VoxDeskError, match="VoxCPM2"):
        cloning.resolve_mode(with_text, "voxcpm", "reference")
    with pytest.raises(VoxDeskError, match="transcript"):
        cloning.resolve_mode(no_text, "voxcpm2", "both")
    assert cloning.mode_hint(no_text, "voxcpm2").startswith("Reference")
    assert "transcript" in cloning.mode_hint(no_text, "voxcpm")


def test_indextts_copies_a_voice_from_its_recording_alone(lib):
    """A family with "reference" and without "prompt" (IndexTTS-2.5) never needs a transcript, and
    speaks from the recording at its own rate even when the voice has one."""
    from app.models.indextts.runner import CONTROLS as IX

    with_text = lib.create_from_samples(_tone(1.0, 44100), 44100, "T", transcript="hello")
    no_text = lib.create_from_samples(_tone(1.0, 44100), 44100, "N")
    for voice in (with_text, no_text):
        assert cloning.resolve_mode(voice, "indextts25", controls=IX) == "reference"
        prompt = cloning.to_voice_prompt(lib, voice, 16000, architecture="indextts25", controls=IX)
        assert prompt.prompt_audio is None and prompt.sample_rate == 44100
        assert len(prompt.reference_audio) == voice.n_samples
    assert cloning.mode_hint(no_text, "indextts25", controls=IX).startswith("Reference: the model copies")
    for mode in ("continuation", "both"):
        with pytest.raises(VoxDeskError, match="from the recording alone"):
            cloning.resolve_mode(with_text, "indextts25", mode, IX)


def test_to_voice_prompt(lib):
    voice = lib.create_from_samples(_tone(2.0, 44100), 44100, "V", transcript="the words")
    prompt = cloning.to_voice_prompt(lib, voice, 16000, "both", "voxcpm2")
    assert prompt.prompt_text == "the words"
    assert prompt.prompt_audio.dtype == np.float32 and len(prompt.prompt_audio) == pytest.approx(32000, abs=2)
    assert prompt.reference_audio is not None and prompt.prompt_latents is None
    lat = np.ones((2, 4, 8), np.float32)
    latents.store(lib, voice, "vox2", "reference", lat)
    cached = cloning.to_voice_prompt(lib, voice, 16000, "auto", "voxcpm2", model_id="vox2")
    assert cached.reference_audio is None and cached.prompt_latents is None  # auto → continuation
    ref = cloning.to_voice_prompt(lib, voice, 16000, "reference", "voxcpm2", model_id="vox2")
    assert np.array_equal(ref.reference_latents, lat) and ref.prompt_audio is None


def test_a_cancelled_import_or_recording_leaves_the_library_unchanged(tmp_path):
    import threading

    from app.audio.io import AudioCancelled

    lib = VoiceLibrary(tmp_path / "voices")
    path = tmp_path / "Anna.wav"
    sf.write(str(path), _tone(2.0, 16000), 16000)
    kept = lib.import_file(path)
    before = _tree(lib.root)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(AudioCancelled):
        lib.import_file(path, "Ben", cancel=cancel)
    with pytest.raises(AudioCancelled):  # decoded already: the cancel is seen before the rename
        lib.create_from_samples(_tone(2.0, 16000), 16000, "Take", cancel=cancel)
    assert _tree(lib.root) == before and [v.id for v in lib.list()] == [kept.id]
