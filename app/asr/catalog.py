"""Which recognizer models VoxDesk knows, where they are installed, and how to fetch one.

Fetching reuses the VoxCPM model download (:mod:`app.models.download`): Hugging Face, a mirror of
it or ModelScope, with progress, resume of ``.part`` files, size and checksum checks. Nothing here
touches the network unless :func:`download_recognizer` is called — by the model manager, when the
user presses Download.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.asr import sensevoice
from app.errors import VoxDeskError
from app.models import download as dl
from app.models.licenses import FUNASR_MODEL, License


@dataclass(frozen=True)
class KnownRecognizer:
    key: str  # folder name under recognizers_dir()
    title: str
    hf_repo: str
    ms_repo: str
    files: tuple[str, ...]  # the repository files VoxDesk needs (the rest is docs and test audio)
    size_mb: int
    license: License


SENSEVOICE_SMALL = KnownRecognizer(
    key="SenseVoiceSmall",
    title="SenseVoice Small (Chinese, English, Japanese, Korean, Cantonese)",
    hf_repo="csukuangfj/sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17",
    ms_repo="csukuangfj/sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17",
    files=("model.int8.onnx", "tokens.txt"),
    size_mb=240,
    license=FUNASR_MODEL,
)
KNOWN_RECOGNIZERS = (SENSEVOICE_SMALL,)


def recognizers_dir() -> Path:
    """``<models folder>/speech-recognition``: downloaded recognizers, one folder each."""
    from app.paths import models_dir

    path = models_dir() / "speech-recognition"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_folder(model: KnownRecognizer = SENSEVOICE_SMALL) -> Path:
    return recognizers_dir() / model.key


def validate_recognizer_dir(folder: str | Path) -> list[str]:
    """What keeps ``folder`` from being a usable recognizer (empty: it is one)."""
    return sensevoice.check_folder(folder)


def find_recognizer(chosen: str | Path | None = None) -> Path | None:
    """The recognizer folder to use: ``chosen`` (a setting) when given, else the downloaded one.

    Returns None when neither exists; an existing but damaged folder is returned, so that
    loading it reports what is wrong instead of recognition silently vanishing.
    """
    for folder in ([Path(chosen)] if chosen else []) + [default_folder(m) for m in KNOWN_RECOGNIZERS]:
        if folder.is_dir() and any(folder.iterdir()):
            return folder
    return None


def download_recognizer(
    model: KnownRecognizer,
    source: dl.Source,
    dest: str | Path | None = None,
    progress: Callable[[dl.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """List, download and check ``model`` from ``source`` (network access); returns its folder."""
    repo = model.ms_repo if source.kind == "modelscope" else model.hf_repo
    listed = {f.path: f for f in dl.list_files(repo, source)}
    missing = [name for name in model.files if name not in listed]
    if missing:
        raise VoxDeskError(f"{source.title} does not have {', '.join(missing)} for {model.title}. "
                           "Try another source.")  # fmt: skip
    folder = dl.download([listed[name] for name in model.files], dest or default_folder(model), progress,
                         cancel)  # fmt: skip
    problems = validate_recognizer_dir(folder)
    if problems:
        raise VoxDeskError(f"The download finished but the recognizer is unusable: {problems[0]}.")
    return folder
