"""The voice library on disk: one folder per voice, holding its audio and its metadata.

Layout under the library root (default: ``paths.voices_dir()``)::

    <id>/audio.flac     mono, at the rate of the file it came from, exactly as imported/recorded
    <id>/voice.json     metadata (:class:`Voice`), written atomically
    <id>/latents/       cached prompt latents (see app/voices/latents.py)
    <id>/lora/          an attached LoRA in the official format (lora_weights.*, lora_config.json)

Edits are non-destructive: trimming and normalising only change the metadata; :meth:`VoiceLibrary.audio`
applies them when the audio is read. A new voice is assembled in a hidden temporary folder and
renamed into place (and the folder fsync'ed), so a failed import leaves nothing behind; staging
folders a killed process left are removed when the library opens. A voice whose metadata is damaged
or missing is rebuilt from its recording, the bad file set aside (:mod:`app.quarantine`); a folder
whose recording is unreadable is set aside whole. Ids read from files are checked to be plain
folder names, so nothing outside the library is ever touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import shutil
import stat
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from app import atomic, quarantine, readback
from app.errors import VoxDeskError
from app.voices.names import check_name, clean_name
from app.voices.voice import MAX_RATE, MAX_STORED_SECONDS, MIN_RATE, Voice, is_safe_id

log = logging.getLogger(__name__)

META = "voice.json"
LORA = "lora"
AUDIO = "audio.flac"
MAX_SECONDS = 60.0
MIN_SECONDS = 0.5
# The one recommendation for a reference recording's length, shown by the record dialog, the
# guide under the waveform and the length warning (the UI reads it from here). Below ~5 s a few
# words carry too little of the voice; a longer reference seldom sounds more like the speaker,
# while every segment pays for it: the whole reference is prefilled for each one (about 6 patches
# of the model's context per second, and it counts against the positions a segment can use).
RECOMMENDED_SECONDS = (5.0, 15.0)
NORMALISE_PEAK_DBFS = -1.0
# Imports and recordings are stored at their own rate up to this: the models encode prompts at
# 16–44.1 kHz, and a 384 kHz file would otherwise be kept (and read back) at eight times the size.
STORE_MAX_RATE = 48_000
HEADER_BYTES = 4096  # of a recording, hashed into its check's cache key (FLAC's STREAMINFO is at 8-42)
MAX_META_BYTES = 256 * 2**10  # voice.json is about 1 KB; a 64-character name and a long transcript fit


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _seconds(value: float) -> str:
    """A length as people read it: "0.15 s", never "0.0 s"."""
    return f"{value * 1000:.0f} ms" if value < 0.05 else f"{value:.2f} s".replace(".00 s", " s")


def _hash_samples(samples: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()


class VoiceLibrary:
    """The voices in one folder. Not thread-safe: use it from one thread (the GUI's)."""

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            from app.paths import voices_dir

            root = voices_dir()
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.problems: list[str] = []  # from the last list(): voices that were rebuilt or set aside
        self._checked: dict[Path, tuple[Any, bytes | None, int, int]] = {}  # header verdicts
        self.clean_leftovers()

    # --- reading -------------------------------------------------------------------------

    def folder(self, voice: Voice | str) -> Path:
        """The folder holding a voice (by Voice or id); an id that is not a plain name is refused."""
        voice_id = voice if isinstance(voice, str) else voice.id
        if not is_safe_id(voice_id):
            raise VoxDeskError("That voice no longer exists. Pick another voice.")
        folder = self.root / voice_id
        if folder.is_symlink():  # never read or write through a link out of the library
            raise VoxDeskError(f"The voice folder {folder} is a link, which VoxDesk does not follow.")
        return folder

    def clean_leftovers(self) -> None:
        """Remove what a killed import, delete or metadata write left behind (staging folders,
        temporary files); they are never listed as voices."""
        quarantine.clean_leftovers(self.root)
        for folder in self._voice_folders():
            quarantine.clean_leftovers(folder)
            quarantine.clean_leftovers(folder / "latents")

    def _voice_folders(self) -> list[Path]:
        try:
            entries = sorted(self.root.iterdir())
        except OSError:
            return []
        folders = []
        for p in entries:
            if p.name.startswith(".") or quarantine.is_set_aside(p) or quarantine.is_leftover(p):
                continue
            if p.is_symlink():
                if p.is_dir():  # a voice folder that links elsewhere: set aside, never followed
                    notice = quarantine.set_aside(p, f"it is {readback.describe(stat.S_IFLNK)}")
                    self.problems.append(quarantine.message([notice]))
            elif p.is_dir():
                folders.append(p)
        return folders

    def list(self) -> list[Voice]:
        """All voices, sorted by name. A voice whose voice.json is damaged or missing is rebuilt from
        its recording (the bad file is set aside); a folder whose recording is unreadable is set
        aside whole. Either way the rest loads; ``problems`` describes what happened."""
        voices: list[Voice] = []
        self.problems = []
        for folder in self._voice_folders():
            meta, audio = folder / META, folder / AUDIO
            if not _present(meta) and not _present(audio):
                continue  # not a voice folder (nothing of ours in it)
            try:
                voice = Voice.from_dict(_read_json(meta))
                if voice.id != folder.name:
                    raise ValueError(f"its id {voice.id!r} does not match the folder")
                self._check_audio(voice, audio)
            except FileNotFoundError:
                recovered = self._recover(folder, voices, f"{META} is missing")
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                recovered = self._recover(folder, voices, str(exc))
            else:
                voices.append(voice)
                continue
            if recovered is not None:
                voices.append(recovered)
        return sorted(voices, key=lambda v: v.name.casefold())

    def _check_audio(self, voice: Voice, audio: Path) -> None:
        """ValueError unless ``audio`` is a regular file whose header agrees with ``voice``
        (mono, its rate, its length): a recording is never decoded on the word of its header
        alone (a 632-byte FLAC can claim 2^36 frames). Header reads are cached per file state."""
        from app.audio.io import audio_info

        try:
            st = audio.lstat()
        except FileNotFoundError:
            raise ValueError(f"{AUDIO} is missing") from None
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{AUDIO} is {readback.describe(st.st_mode)}")
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        cached = self._checked.get(audio)
        # the header's bytes too: a file rewritten in place within one timestamp tick (4 ms on
        # kernels before 6.13) keeps its inode, size and mtime. A file that cannot be opened
        # just now (a sharing lock on Windows) keeps its earlier verdict, as before the hash.
        try:
            with audio.open("rb") as f:
                head = hashlib.blake2b(f.read(HEADER_BYTES), digest_size=16).digest()
        except OSError:
            head = cached[1] if cached is not None and cached[0] == key else None
        if cached == (key, head, voice.sample_rate, voice.n_samples):
            return
        try:
            info = audio_info(audio)
        except VoxDeskError as err:
            raise ValueError(str(err)) from None
        shape = (info.channels, info.sample_rate, info.frames)
        if shape != (1, voice.sample_rate, voice.n_samples):
            raise ValueError(
                f"{AUDIO} does not match {META}: it says {info.duration:,.1f} s of {info.channels} "
                f"channel(s) at {info.sample_rate:,} Hz, not {voice.raw_duration:,.1f} s of mono "
                f"at {voice.sample_rate:,} Hz"
            )
        self._checked[audio] = (key, head, voice.sample_rate, voice.n_samples)

    def _recover(self, folder: Path, others: list[Voice], reason: str) -> Voice | None:
        """Rebuild voice.json from the recording (its name kept when readable), setting the bad
        metadata aside; without a readable recording the whole folder is set aside."""
        from app.audio.io import audio_info, load_audio

        meta, audio = folder / META, folder / AUDIO
        try:
            if not _present(audio) or not stat.S_ISREG(audio.lstat().st_mode):
                raise VoxDeskError(f"{AUDIO} is missing or is not a regular file")
            info = audio_info(audio)
            if not MIN_RATE <= info.sample_rate <= MAX_RATE or info.frames <= 0:
                raise VoxDeskError("the recording has an unusable sample rate or length")
            samples = load_audio(
                audio, info.sample_rate, max_seconds=MAX_STORED_SECONDS, reject_silence=False
            )
        except VoxDeskError as err:
            notice = quarantine.set_aside(folder, f"{reason}; the recording cannot be read either ({err})")
            self.problems.append(quarantine.message([notice]))
            return None
        try:
            old = _read_json(meta)
        except (OSError, ValueError, RecursionError):
            old = None
        old = old if isinstance(old, dict) else {}
        taken = {v.name.casefold() for v in others}
        try:
            name = check_name(old["name"]) if isinstance(old.get("name"), str) else ""
        except VoxDeskError:
            name = ""
        base = name or f"Recovered voice {folder.name[:6]}"
        name, n = base, 2
        while name.casefold() in taken:
            name, n = f"{base} ({n})", n + 1
        text = {k: old[k] for k in ("transcript", "created", "source") if isinstance(old.get(k), str)}
        voice = Voice(
            id=folder.name,
            name=name,
            sample_rate=int(info.sample_rate),
            n_samples=len(samples),
            audio_sha256=_hash_samples(samples),
            **text,
        )
        what = "damaged" if _present(meta) else "missing"
        if _present(meta):
            quarantine.set_aside(meta, f"{reason}; the voice “{name}” was rebuilt from its recording")
        else:
            quarantine.note(meta, f"{reason}; the voice “{name}” was rebuilt from its recording")
        try:
            atomic.write_json(meta, voice.to_dict())
        except (OSError, VoxDeskError) as exc:
            log.warning("Could not write the rebuilt %s: %s", meta, exc)
        self.problems.append(f"The metadata in {folder} was {what}; the voice “{name}” was rebuilt.")
        return voice

    def get(self, voice_id: str) -> Voice:
        """The voice with this id; VoxDeskError if it is gone or damaged."""
        meta = self.folder(voice_id) / META
        try:
            return Voice.from_dict(_read_json(meta))
        except FileNotFoundError:
            raise VoxDeskError("That voice no longer exists. Pick another voice.") from None
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            raise VoxDeskError(
                f"The voice in {meta.parent} is damaged ({exc}). Delete it and import the audio again."
            ) from None

    def find(self, name: str) -> Voice | None:
        """The voice with this name (case-insensitive), as scripts' ``[Name]`` tags refer to it."""
        key = clean_name(name).casefold()
        return next((v for v in self.list() if v.name.casefold() == key), None)

    def audio(self, voice: Voice, sample_rate: int | None = None) -> np.ndarray:
        """The voice's audio as used: trimmed, gain applied, mono float32 at ``sample_rate``
        (default: its own rate)."""
        from app.audio.io import load_audio

        rate = sample_rate or voice.sample_rate
        audio = self.folder(voice) / AUDIO
        try:
            self._check_audio(voice, audio)
        except ValueError as exc:
            raise VoxDeskError(
                f"The recording of “{voice.name}” is damaged ({exc}). "
                "Delete the voice and import the audio again."
            ) from None
        samples = load_audio(audio, rate, max_seconds=MAX_STORED_SECONDS, reject_silence=False)
        start = int(round(voice.trim_start * rate))
        end = None if voice.trim_end is None else int(round(voice.trim_end * rate))
        samples = samples[start:end]
        if voice.gain_db:
            samples = samples * np.float32(10 ** (voice.gain_db / 20))
        return np.ascontiguousarray(samples, dtype=np.float32)

    # --- creating --------------------------------------------------------------------------

    def unique_name(self, wanted: str, exclude_id: str | None = None) -> str:
        """``wanted``, or ``wanted (2)``, ``(3)``… if a voice already has that name."""
        base = check_name(wanted, new=True)
        taken = {v.name.casefold() for v in self.list() if v.id != exclude_id}
        name, n = base, 2
        while name.casefold() in taken:
            name = f"{base} ({n})"
            n += 1
        return name

    def import_file(
        self,
        path: str | Path,
        name: str | None = None,
        transcript: str = "",
        max_seconds: float = MAX_SECONDS,
        *,
        progress: Callable[[float], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Voice:
        """Import any audio file as a new voice (mono, at the file's own rate).

        Raises VoxDeskError with a plain message for unreadable, empty or too long files; nothing is
        written to the library in that case. ``progress`` and ``cancel`` are :func:`read_audio`'s
        hooks; a cancel that comes before the new voice is renamed into place also leaves nothing
        (``AudioCancelled``).
        """
        from app.audio.io import read_audio

        path = Path(path)
        samples, rate = read_audio(
            path, max_seconds=max_seconds, max_rate=STORE_MAX_RATE, progress=progress, cancel=cancel
        )
        wanted = name or clean_name(path.stem) or "Imported voice"  # a file name may be all invisible
        return self._add(samples, rate, wanted, transcript, path.name, max_seconds, cancel)

    def create_from_samples(
        self,
        samples: np.ndarray,
        sample_rate: int,
        name: str,
        transcript: str = "",
        max_seconds: float = MAX_SECONDS,
        *,
        cancel: threading.Event | None = None,
    ) -> Voice:
        """Save recorded (or generated) mono float32 samples as a new voice (``cancel``: as for
        :meth:`import_file`)."""
        samples = np.asarray(samples, dtype=np.float32)
        return self._add(samples, sample_rate, name, transcript, "recording", max_seconds, cancel)

    def _add(
        self,
        samples: np.ndarray,
        rate: int,
        name: str,
        transcript: str,
        source: str,
        max_seconds: float,
        cancel: threading.Event | None = None,
    ) -> Voice:
        if samples.ndim != 1:
            raise VoxDeskError("VoxDesk expected mono audio for a voice. Record or import one channel.")
        if not MIN_RATE <= rate <= MAX_RATE:
            raise VoxDeskError(
                f"That audio's sample rate ({rate:,} Hz) is outside {MIN_RATE:,}–{MAX_RATE:,} Hz. "
                "Convert it to 48 kHz and try again."
            )
        seconds = len(samples) / rate
        if seconds > max_seconds:
            raise _too_long(seconds, max_seconds)
        from app.audio.io import SILENCE_PEAK, AudioCancelled, resample, write_audio

        if rate > STORE_MAX_RATE:
            samples, rate = resample(samples, rate, STORE_MAX_RATE).astype(np.float32), STORE_MAX_RATE

        if len(samples) == 0:
            raise VoxDeskError("That audio is empty. Use a recording of a few seconds of speech.")
        if float(np.max(np.abs(samples))) < SILENCE_PEAK:
            raise VoxDeskError("That audio is silent. Use a recording in which someone speaks.")
        if seconds < MIN_SECONDS:
            raise VoxDeskError(
                f"That audio is too short ({_seconds(seconds)}). Use a recording of at least "
                f"{_seconds(MIN_SECONDS)} of speech; {_recommended()} is best."
            )
        if not np.all(np.isfinite(samples)):
            raise VoxDeskError("That audio contains invalid samples. Export it again from your audio editor.")
        samples = np.clip(samples, -1.0, 1.0)
        voice = Voice(
            id=uuid.uuid4().hex[:12],
            name=self.unique_name(name),
            sample_rate=int(rate),
            n_samples=len(samples),
            audio_sha256=_hash_samples(samples),
            transcript=transcript.strip(),
            created=_now(),
            source=source,
        )
        staging = self.root / f".new-{voice.id}"
        try:
            staging.mkdir()
            write_audio(staging / AUDIO, samples, voice.sample_rate, fmt="FLAC")
            atomic.write_json(staging / META, voice.to_dict())
            if cancel is not None and cancel.is_set():  # the last moment a cancel leaves nothing
                raise AudioCancelled(f"Importing “{voice.name}” was cancelled.")
            staging.rename(self.folder(voice))
            atomic.fsync_dir(self.root)  # the rename itself survives a power cut
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return voice

    # --- editing ---------------------------------------------------------------------------

    def _save(self, voice: Voice) -> Voice:
        atomic.write_json(self.folder(voice) / META, voice.to_dict())
        return voice

    def rename(self, voice: Voice, new_name: str) -> Voice:
        """Rename; VoxDeskError if another voice already has that name."""
        name = check_name(new_name, new=True)
        if any(v.name.casefold() == name.casefold() and v.id != voice.id for v in self.list()):
            raise VoxDeskError(f"A voice named “{name}” already exists. Choose another name.")
        return self._save(replace(self.get(voice.id), name=name))

    def set_transcript(self, voice: Voice, transcript: str, recognized: bool = False) -> Voice:
        """Set the words spoken in the voice's (trimmed) audio; enables continuation mode.

        ``recognized``: the text came from speech recognition (the window marks it as such)."""
        text = transcript.strip()
        return self._save(
            replace(self.get(voice.id), transcript=text, transcript_recognized=recognized and bool(text))
        )

    def set_rate(self, voice: Voice, rate: float | None) -> Voice:
        """Give the voice its own speaking rate in scripts (None: it speaks at the script's)."""
        from app.audio.stretch import check_rate

        value = None if rate is None else check_rate(rate)
        return self._save(replace(self.get(voice.id), rate=value))

    def trim(self, voice: Voice, start: float, end: float | None) -> Voice:
        """Use only ``start``–``end`` seconds of the stored audio (``end=None``: to its end).
        The range is absolute, not relative to an earlier trim."""
        current = self.get(voice.id)
        stop = current.raw_duration if end is None else end
        if not (0 <= start < stop <= current.raw_duration + 1e-6):
            raise VoxDeskError(
                f"The trim range {start:.2f}–{stop:.2f} s is outside the recording "
                f"(0–{current.raw_duration:.2f} s). Pick a range inside it."
            )
        if stop - start < MIN_SECONDS:
            raise VoxDeskError(f"Keep at least {MIN_SECONDS} seconds of audio when trimming.")
        trimmed = replace(current, trim_start=float(start), trim_end=None if end is None else float(stop))
        return self._save(trimmed)

    def normalise(self, voice: Voice, peak_dbfs: float = NORMALISE_PEAK_DBFS) -> Voice:
        """Set the gain so the trimmed audio peaks at ``peak_dbfs`` (default -1 dBFS)."""
        current = replace(self.get(voice.id), gain_db=0.0)
        peak = float(np.max(np.abs(self.audio(current)), initial=0.0))
        if peak <= 1e-6:
            raise VoxDeskError(
                "This voice's audio is silent, so it cannot be normalised. Trim it or record again."
            )
        gain = peak_dbfs - 20 * math.log10(peak)
        return self._save(replace(current, gain_db=round(gain, 4), normalised=True))

    def set_preparation(self, voice: Voice, **changes: Any) -> Voice:
        """Set trim and gain fields as given (``trim_start``, ``trim_end``, ``gain_db``,
        ``normalised``): how app/voices/prepare.py applies and undoes its steps."""
        allowed = {"trim_start", "trim_end", "gain_db", "normalised"}
        if not set(changes) <= allowed:
            raise TypeError(f"set_preparation() takes only {sorted(allowed)}")
        return self._save(replace(self.get(voice.id), **changes))

    def reset_gain(self, voice: Voice) -> Voice:
        """Undo normalising."""
        return self._save(replace(self.get(voice.id), gain_db=0.0, normalised=False))

    # --- LoRA ----------------------------------------------------------------------------

    def lora_folder(self, voice: Voice) -> Path | None:
        """The folder of the LoRA attached to ``voice``; None when it has none."""
        folder = self.folder(voice) / LORA
        return folder if voice.lora and folder.is_dir() and not folder.is_symlink() else None

    def attach_lora(
        self, voice: Voice | str, source: str | Path, model_dir: str | Path | None = None
    ) -> Voice:
        """Copy the official-format LoRA in ``source`` (its weights file and lora_config.json, not
        the optimizer state beside them) into the voice's folder, replacing one attached before.
        ``voice``: a Voice, or a voice's name or id. The copy is checked (readable, complete,
        nothing executed; against the model in ``model_dir`` too when given) before it replaces
        anything; VoxDeskError with one line naming the file otherwise."""
        from app.models.voxcpm.lora import CONFIG_FILE, check_lora_folder, weights_file

        current = self._resolve(voice)
        source = Path(source)
        weights = weights_file(source) if source.is_dir() else None
        if weights is None:
            raise VoxDeskError(
                f"{source} has no lora_weights.safetensors or lora_weights.ckpt: choose the folder "
                "the trainer wrote (a step_… folder)."
            )
        home = self.folder(current)
        staging = home / f".new-lora-{uuid.uuid4().hex[:8]}"
        try:
            staging.mkdir()
            shutil.copyfile(weights, staging / weights.name)
            if (source / CONFIG_FILE).is_file():
                shutil.copyfile(source / CONFIG_FILE, staging / CONFIG_FILE)
            check_lora_folder(staging, model_dir)
            name = source.name if source.name not in ("", "latest") else source.parent.name
            self._swap_lora(home, staging)
        except OSError as exc:
            raise atomic.friendly_error(exc, home) or VoxDeskError(
                f"The LoRA could not be copied into {home} ({exc.strerror or exc}): check the disk."
            ) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return self._save(replace(current, lora=name[:200] or "LoRA"))

    def remove_lora(self, voice: Voice | str) -> Voice:
        """Detach the voice's LoRA and delete its copy (the UI asks first)."""
        current = self._resolve(voice)
        saved = self._save(replace(current, lora=""))
        self._swap_lora(self.folder(current), None)
        return saved

    def _swap_lora(self, home: Path, staging: Path | None) -> None:
        """Put ``staging`` in place of ``home/lora`` (None: remove it), each step a rename."""
        target = home / LORA
        old = home / f".deleted-lora-{uuid.uuid4().hex[:8]}"
        if target.exists():
            target.rename(old)
        if staging is not None:
            staging.rename(target)
        atomic.fsync_dir(home)
        shutil.rmtree(old, ignore_errors=True)

    def _resolve(self, voice: Voice | str) -> Voice:
        if isinstance(voice, Voice):
            return self.get(voice.id)
        found = self.find(voice)
        return found if found is not None else self.get(voice)

    def delete(self, voice: Voice) -> None:
        """Remove the voice and its cached latents (the UI asks for confirmation first)."""
        folder = self.folder(voice)
        graveyard = self.root / f".deleted-{voice.id}-{uuid.uuid4().hex[:6]}"
        with contextlib.suppress(FileNotFoundError):
            folder.rename(graveyard)  # one atomic step: the voice vanishes from listings at once
            atomic.fsync_dir(self.root)
        shutil.rmtree(graveyard, ignore_errors=True)


def _read_json(path: Path) -> Any:
    """voice.json, bounded: a link, pipe, device or oversized file is a ValueError."""
    return readback.read_json(path, MAX_META_BYTES)


def _present(path: Path) -> bool:
    """True when anything (a file, a folder, a link, even a broken one) is at ``path``."""
    return os.path.lexists(path)


def _too_long(seconds: float, limit: float) -> VoxDeskError:
    return VoxDeskError(
        f"That audio is {seconds:.0f} s long; a voice sample can be at most {limit:.0f} s. "
        f"Cut it to a shorter clip ({_recommended()} of clear speech works best)."
    )


def _recommended() -> str:
    """The recommended length in words: "5–15 s"."""
    return "{:.0f}–{:.0f} s".format(*RECOMMENDED_SECONDS)
