"""``voxdesk --self-test``: prove that an installation can speak, without a real model or a sound card.

For each model family VoxDesk runs (VoxCPM, CosyVoice, IndexTTS) it loads a tiny random checkpoint
(the frozen bundle ships VoxCPM's and CosyVoice's in ``selftest-model/`` and
``selftest-cosyvoice3/``, written at build time; IndexTTS's is written to a temp folder at
self-test time, as a source checkout writes all three: see :data:`SHIPPED`), synthesises a
sentence through the engine exactly as the app does (CosyVoice and IndexTTS with a synthetic voice
clip: they always clone one), writes the audio to a WAV file, reads it back and checks it: the
sample rate, a non-zero length, finite samples, and not silence; one line per family. It also
checks that the native audio libraries (libsndfile, PortAudio) load. It prints a short report and
returns 0, or prints one ``SELF-TEST FAILED: ...`` line and returns 1. Random weights make noise,
not speech: this tests the installation, not the voice. Given a model folder, it checks that one
model only.
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
NUMBERS = ("Chapter 12, page 3.", "第12章，第3页。")
PRESET = "tiny-v2"
BUNDLED_MODEL = "selftest-model"
COSYVOICE_PRESET = "cosyvoice3-tiny"
BUNDLED_COSYVOICE = "selftest-cosyvoice3"
INDEXTTS_FOLDER = "selftest-indextts"
# Which tiny folders the bundle ships. Not IndexTTS's: it is 329 MB, 255 MB of it the w2v-BERT
# encoder, whose width 1024 the official code hard-codes and whose 17 layers hidden state 17 needs
# (app/models/indextts/semantic.py), so no smaller folder in the official layout exists; writing
# it takes about 12 s (11 s of them w2v-BERT) on 2 CPU cores, measured for docs/bundle.md.
SHIPPED = (BUNDLED_MODEL, BUNDLED_COSYVOICE)
# positions per request: IndexTTS sets aside max_mel_tokens (1500) for each segment's codes
MAX_MODEL_LEN = 2048
MIN_PATCHES = 8
MAX_PATCHES = 12
MAX_STEPS = 2000  # CosyVoice stops on its own stop token, within 20 tokens per text token
SILENCE_RMS = 1e-4


class SelfTestFailure(Exception):
    """A check did not pass; the message says which and why."""


def write_selftest_model(folder: str | Path) -> Path:
    """Write the tiny self-test checkpoint into ``folder`` (the bundle build calls this)."""
    from app.models.voxcpm.checkpoint import write_checkpoint

    return write_checkpoint(folder, preset=PRESET, seed=0)


def write_selftest_cosyvoice(folder: str | Path) -> Path:
    """Write the tiny CosyVoice self-test folder into ``folder`` (the bundle build calls this).
    The Qwen weights of ``CosyVoice-BlankEN/`` are left out: ``llm.pt`` holds the LM, the
    tokenizer files are all VoxDesk reads there (as from a downloaded model)."""
    from app.models.cosyvoice.checkpoint import write_checkpoint

    out = write_checkpoint(folder, COSYVOICE_PRESET, seed=0)
    (out / "CosyVoice-BlankEN" / "model.safetensors").unlink(missing_ok=True)
    return out


def write_selftest_indextts(folder: str | Path) -> Path:
    """Write the tiny IndexTTS-2.5 self-test folder (every part, the official layout) into ``folder``."""
    from app.models.indextts.checkpoint import write_folder

    return write_folder(folder, seed=0)


def bundled_model_dir(name: str = BUNDLED_MODEL) -> Path | None:
    """A checkpoint shipped inside a frozen bundle, or None when not running from one."""
    base = getattr(sys, "_MEIPASS", None)
    return Path(base) / name if base else None


def voice_clip(rate: int = 16000, seconds: float = 2.0) -> np.ndarray:
    """A voiced-sounding synthetic clip (a gliding tone with harmonics) to clone from."""
    t = np.arange(int(rate * seconds)) / rate
    f0 = 140 + 40 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    clip = sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2)
    return (0.2 * clip).astype(np.float32)


def _request(engine, text: str):
    """The self-test's request for the loaded family: VoxCPM with a fixed short length, CosyVoice
    and IndexTTS cloning :func:`voice_clip` (CosyVoice cross-lingual: no transcript)."""
    from app.engine import SynthRequest
    from app.engine.voice import VoicePrompt

    if engine.info.has("timesteps"):
        return SynthRequest(text, seed=1234, inference_timesteps=4, min_len=MIN_PATCHES, max_len=MAX_PATCHES)
    voice = VoicePrompt(reference_audio=voice_clip(), sample_rate=16000)
    return SynthRequest(text=text, voice=voice, seed=1234)


def synthesise(model_dir: Path, text: str, device: str) -> tuple[np.ndarray, int, dict[str, str]]:
    """Speak ``text`` through the engine; return (samples, sample rate, facts for the report)."""
    from app.cpu_precision import device_line
    from app.engine import Engine, EngineConfig
    from app.engine.events import AudioChunk, RequestFailed, RequestFinished

    start = time.perf_counter()
    engine = Engine(EngineConfig(model_dir=str(model_dir), device=device, max_num_seqs=2,
                                 max_model_len=MAX_MODEL_LEN))  # fmt: skip
    loaded = time.perf_counter()
    try:
        rid = engine.submit(_request(engine, text))
        chunks: list[np.ndarray] = []
        finished: RequestFinished | None = None
        for _ in range(MAX_STEPS):
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
            raise SelfTestFailure(f"the engine did not finish the sentence in {MAX_STEPS} steps")
        rate = int(engine.sample_rate)
        facts = {
            "device": device_line(str(engine.device), engine.precision),
            "model": engine.info.label,
        }
    finally:
        engine.shutdown()
    done = time.perf_counter()
    samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
    facts["speech"] = (
        f"loaded in {loaded - start:.2f} s, {finished.n_patches} steps, {1000 * samples.size / rate:.0f} ms "
        f"of audio at {rate} Hz in {done - loaded:.2f} s"
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


def text_normalization() -> str:
    """Numbers read as words, English and Chinese, by the app's normalizer: wetext's grammars
    and inflect (which reads its own source at import) must both load from the installation.
    The report line stays ASCII (a Windows console may not print Chinese)."""
    from app.text.normalize import normalizer

    start = time.perf_counter()
    try:
        spoken = [normalizer().normalize(text) for text in NUMBERS]
    except Exception as exc:  # noqa: BLE001 - e.g. a bundle without wetext's grammars or inflect's source
        raise SelfTestFailure(f"text normalization does not load ({type(exc).__name__}: {exc})") from exc
    if any(ch.isdigit() for text in spoken for ch in text):
        raise SelfTestFailure(f"text normalization left digits: {ascii(spoken)}")
    took = time.perf_counter() - start
    example = f"{ascii(NUMBERS[0])} -> {ascii(spoken[0])}"
    return f"numbers read as words, English and Chinese ({example}) in {took:.2f} s"


def _models(model_dir: Path | None, tmp: Path, say: Callable[[str], None]) -> list[Path]:
    """The folders to check: the one given, else one tiny model per family (the bundle's, or
    written now: in a source checkout, and IndexTTS's always)."""
    if model_dir is not None:
        return [model_dir]
    models = []
    writers = ((BUNDLED_MODEL, write_selftest_model), (BUNDLED_COSYVOICE, write_selftest_cosyvoice),
               (INDEXTTS_FOLDER, write_selftest_indextts))  # fmt: skip
    for name, write in writers:
        folder = bundled_model_dir(name) if name in SHIPPED else None
        try:
            models.append(folder if folder is not None else write(tmp / name))
        except ImportError as exc:  # the CosyVoice writer builds its .onnx files with the onnx package
            say(f"  {name + ':':16} skipped: writing it needs {exc.name} (pip install -e '.[test]')")
    return models


def check_model(model_dir: Path, device: str, tmp: Path, say: Callable[[str], None], first: bool) -> None:
    """Speak with one model, write and read back its WAV file; one line (after the device's)."""
    if not model_dir.is_dir():
        raise SelfTestFailure(f"the self-test model is missing: {model_dir} is not a folder")
    samples, rate, facts = synthesise(model_dir, SENTENCE, device)
    if first:
        say(f"  {'device:':16} {facts['device']}")
    if samples.size == 0:
        raise SelfTestFailure(f"{facts['model']}: the engine produced no audio")
    from app.audio.io import write_audio

    wav = tmp / f"selftest-{model_dir.name}.wav"
    write_audio(wav, samples, rate)
    try:
        written = check_file(wav, rate, samples.size)
    except SelfTestFailure as exc:
        raise SelfTestFailure(f"{facts['model']}: {exc}") from None
    say(f"  {facts['model'] + ':':16} {facts['speech']}; wav file: {written}")


def run_checks(model_dir: Path | None, device: str, say: Callable[[str], None]) -> None:
    """Every check in order; raises on the first failure."""
    with tempfile.TemporaryDirectory(prefix="voxdesk-selftest-") as tmp:
        models = _models(model_dir, Path(tmp), say)
        say(f"  {'models:':16} {', '.join(str(m) for m in models)}")
        say(f"  {'text:':16} {text_normalization()}")
        for i, folder in enumerate(models):
            check_model(folder, device, Path(tmp), say, first=i == 0)
        say(f"  {'audio libs:':16} {audio_libraries()}")


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
