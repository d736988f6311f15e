"""``voxdesk --self-test``: prove that an installation can speak, without a real model or a sound card.

It loads a tiny random checkpoint (the frozen bundle ships one in ``selftest-model/``, written at
build time; a source checkout writes one to a temp folder), synthesises a sentence through the
engine exactly as the app does, writes the audio to a WAV file, reads it back and checks it:
the sample rate, a non-zero length, finite samples, and not silence. It also checks that the
native audio libraries (libsndfile, PortAudio) load. It prints a short report and returns 0, or
prints one ``SELF-TEST FAILED: ...`` line and returns 1. Random weights make noise, not speech:
this tests the installation, not the voice.
"""

from __future__ import annotations

import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.errors import VoxDeskError

SENTENCE = "VoxDesk self-test: one short sentence, spoken by a tiny model."
PRESET = "tiny-v2"
BUNDLED_MODEL = "selftest-model"
MIN_PATCHES = 8
MAX_PATCHES = 12
SILENCE_RMS = 1e-4


class SelfTestFailure(Exception):
    """A check did not pass; the message says which and why."""


def write_selftest_model(folder: str | Path) -> Path:
    """Write the tiny self-test checkpoint into ``folder`` (the bundle build calls this)."""
    from app.models.voxcpm.checkpoint import write_checkpoint

    return write_checkpoint(folder, preset=PRESET, seed=0)


def bundled_model_dir() -> Path | None:
    """The checkpoint shipped inside a frozen bundle, or None when not running from one."""
    base = getattr(sys, "_MEIPASS", None)
    return Path(base) / BUNDLED_MODEL if base else None


def synthesise(model_dir: Path, text: str, device: str) -> tuple[np.ndarray, int, dict[str, str]]:
    """Speak ``text`` through the engine; return (samples, sample rate, facts for the report)."""
    from app.cpu_precision import device_line
    from app.engine import Engine, EngineConfig, SynthRequest
    from app.engine.events import AudioChunk, RequestFailed, RequestFinished

    start = time.perf_counter()
    engine = Engine(EngineConfig(model_dir=str(model_dir), device=device, max_num_seqs=2, max_model_len=512))
    loaded = time.perf_counter()
    try:
        rid = engine.submit(
            SynthRequest(
                text=text, seed=1234, inference_timesteps=4, min_len=MIN_PATCHES, max_len=MAX_PATCHES
            )
        )
        chunks: list[np.ndarray] = []
        finished: RequestFinished | None = None
        for _ in range(10 * MAX_PATCHES):
            for event in engine.step():
                if event.request_id != rid:
                    continue
                if isinstance(event, AudioChunk):
                    chunks.append(np.asarray(event.samples, dtype=np.float32).reshape(-1))
                elif isinstance(event, RequestFailed):
                    raise SelfTestFailure(f"the engine refused the sentence: {event.message}")
                elif isinstance(event, RequestFinished):
                    finished = event
            if finished is not None:
                break
        if finished is None:
            raise SelfTestFailure(f"the engine did not finish the sentence in {10 * MAX_PATCHES} steps")
        rate = int(engine.sample_rate)
        facts = {
            "device": device_line(str(engine.device), engine.precision),
            "model": getattr(engine, "model_name", model_dir.name),
        }
    finally:
        engine.shutdown()
    done = time.perf_counter()
    samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
    facts["load"] = f"{loaded - start:.2f} s"
    facts["speech"] = (
        f"{finished.n_patches} patches, {1000 * samples.size / rate:.0f} ms of audio at {rate} Hz"
        f" in {done - loaded:.2f} s"
    )
    return samples, rate, facts


def check_file(path: Path, expected_rate: int, expected_frames: int) -> str:
    """Read the written file back and check it; return a one-line description."""
    import soundfile

    audio, rate = soundfile.read(str(path), dtype="float32", always_2d=False)
    if rate != expected_rate:
        raise SelfTestFailure(f"the WAV file says {rate} Hz, the model makes {expected_rate} Hz")
    if audio.size == 0 or audio.shape[0] != expected_frames:
        raise SelfTestFailure(f"the WAV file holds {audio.shape[0]} frames, expected {expected_frames}")
    if not np.isfinite(audio).all():
        raise SelfTestFailure("the WAV file contains NaN or infinite samples")
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
    if rms < SILENCE_RMS:
        raise SelfTestFailure(f"the audio is silent (RMS {rms:.2e})")
    peak = float(np.abs(audio).max())
    return f"{path.stat().st_size:,} bytes, {audio.shape[0]} frames, peak {peak:.3f}, RMS {rms:.4f}"


def audio_libraries() -> str:
    """Load libsndfile and PortAudio as the app does; say which files were used."""
    import soundfile

    try:
        import sounddevice
    except OSError as exc:
        raise SelfTestFailure(f"the PortAudio library does not load ({exc})") from exc
    portaudio = getattr(sounddevice, "_libname", "?")
    return f"libsndfile {soundfile.__libsndfile_version__}; PortAudio {portaudio}"


def run_checks(model_dir: Path | None, device: str, say: Callable[[str], None]) -> None:
    """Every check in order; raises on the first failure."""
    with tempfile.TemporaryDirectory(prefix="voxdesk-selftest-") as tmp:
        if model_dir is None:
            model_dir = bundled_model_dir()
            if model_dir is None:  # a source checkout: write the tiny checkpoint now
                model_dir = write_selftest_model(Path(tmp) / BUNDLED_MODEL)
        if not model_dir.is_dir():
            raise SelfTestFailure(f"the self-test model is missing: {model_dir} is not a folder")
        say(f"  model folder: {model_dir}")
        samples, rate, facts = synthesise(model_dir, SENTENCE, device)
        for key in ("model", "device", "load", "speech"):
            say(f"  {key + ':':13} {facts[key]}")
        if samples.size == 0:
            raise SelfTestFailure("the engine produced no audio")
        from app.audio.io import write_audio

        wav = Path(tmp) / "selftest.wav"
        write_audio(wav, samples, rate)
        say(f"  {'wav file:':13} {check_file(wav, rate, samples.size)}")
        say(f"  {'audio libs:':13} {audio_libraries()}")


def run_self_test(model_dir: str | Path | None = None, device: str = "auto") -> int:
    """Run the self-test, print the report to stdout; 0 when everything passed, else 1."""
    say = print
    say("VoxDesk self-test")
    start = time.perf_counter()
    try:
        run_checks(Path(model_dir) if model_dir is not None else None, device, say)
    except (SelfTestFailure, VoxDeskError) as exc:
        say(f"SELF-TEST FAILED: {exc}")
        return 1
    except Exception as exc:  # noqa: BLE001 - anything else is a broken installation too
        traceback.print_exc(file=sys.stdout)
        say(f"SELF-TEST FAILED: unexpected {type(exc).__name__}: {exc}")
        return 1
    say(f"SELF-TEST PASSED in {time.perf_counter() - start:.1f} s")
    return 0
