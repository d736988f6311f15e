"""Speaker embeddings for the training validation: how close a spoken sentence is to the voice.

sherpa-onnx (already a dependency, for the recognizer) runs 3D-Speaker / WeSpeaker / NeMo speaker
models from one ONNX file. The one VoxDesk downloads, from the model manager like the recognizer,
is 3D-Speaker's CAM++ trained on Chinese and English (Apache-2.0, 28 MB, 16 kHz); the folder
``<models folder>/speaker-embedding/<key>/`` holds ``model.onnx``. Tests build a tiny model in the
same format (``tests/tiny_speaker.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.errors import VoxDeskError
from app.models import download as dl
from app.models.licenses import APACHE_2, License

MODEL_FILE = "model.onnx"


class SpeakerModelUnavailable(VoxDeskError):
    """No speaker model installed, or it cannot be loaded."""


@dataclass(frozen=True)
class KnownSpeakerModel:
    key: str
    title: str
    hf_repo: str
    remote_file: str  # its name in the repository; saved as model.onnx
    size_mb: int
    license: License


CAMPPLUS_ZH_EN = KnownSpeakerModel(
    key="CAMPlusSpeaker",
    title="3D-Speaker CAM++ (Chinese and English speakers)",
    hf_repo="csukuangfj/speaker-embedding-models",
    remote_file="3dspeaker_speech_campplus_sv_zh_en_16k-common_advanced.onnx",
    size_mb=28,
    license=APACHE_2,
)
KNOWN_SPEAKER_MODELS = (CAMPPLUS_ZH_EN,)


def speaker_models_dir() -> Path:
    from app.paths import models_dir

    path = models_dir() / "speaker-embedding"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_folder(model: KnownSpeakerModel = CAMPPLUS_ZH_EN) -> Path:
    return speaker_models_dir() / model.key


def check_folder(folder: Path) -> list[str]:
    """What keeps ``folder`` from holding a speaker model (empty: nothing)."""
    return [] if (Path(folder) / MODEL_FILE).is_file() else [f"{MODEL_FILE} is missing"]


class SpeakerModel:
    """``embed(samples, rate)`` -> a float32 vector; thread-safe (one call at a time)."""

    def __init__(self, folder: str | Path, num_threads: int = 1) -> None:
        path = Path(folder) / MODEL_FILE
        if not path.is_file():
            raise SpeakerModelUnavailable(
                f"There is no speaker model in {folder}: download it in the model manager."
            )
        import sherpa_onnx

        try:
            config = sherpa_onnx.SpeakerEmbeddingExtractorConfig(model=str(path), num_threads=num_threads)
            self._extractor = sherpa_onnx.SpeakerEmbeddingExtractor(config)
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises RuntimeError with long text
            raise SpeakerModelUnavailable(
                f"The speaker model in {folder} could not be loaded ({exc.__class__.__name__}); "
                "download it again from the model manager."
            ) from exc
        self._lock = threading.Lock()

    def embed(self, samples: np.ndarray, rate: int) -> np.ndarray:
        audio = np.ascontiguousarray(samples, dtype=np.float32)
        with self._lock:
            stream = self._extractor.create_stream()
            stream.accept_waveform(rate, audio)
            stream.input_finished()
            if not self._extractor.is_ready(stream):
                raise VoxDeskError("The audio is too short for a speaker embedding.")
            return np.asarray(self._extractor.compute(stream), dtype=np.float32)


def load_speaker_model(folder: str | Path | None = None) -> SpeakerModel:
    """The speaker model in ``folder`` (default: the downloaded one)."""
    if folder is None:
        found = [
            default_folder(m) for m in KNOWN_SPEAKER_MODELS if (default_folder(m) / MODEL_FILE).is_file()
        ]
        if not found:
            raise SpeakerModelUnavailable(
                "No speaker model is installed: download one in the model manager to score voice similarity."
            )
        folder = found[0]
    return SpeakerModel(folder)


def download_speaker_model(
    model: KnownSpeakerModel,
    source: dl.Source,
    dest: str | Path | None = None,
    progress: Callable[[dl.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Fetch ``model`` from ``source`` (network access) and check that it loads; returns its folder."""
    listed = {f.path: f for f in dl.list_files(model.hf_repo, source)}
    if model.remote_file not in listed:
        raise VoxDeskError(
            f"{source.title} does not have {model.remote_file} for {model.title}. Try another source."
        )
    folder = dl.download([listed[model.remote_file]], dest or default_folder(model), progress, cancel)
    (folder / model.remote_file).replace(folder / MODEL_FILE)
    SpeakerModel(folder)
    return folder
