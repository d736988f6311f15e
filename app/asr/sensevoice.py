"""SenseVoice Small through sherpa-onnx: the recognizer VoxDesk downloads.

A SenseVoice folder holds ``model.int8.onnx`` (or ``model.onnx``) and ``tokens.txt`` as
sherpa-onnx's exports publish them. :func:`check_folder` validates everything sherpa-onnx would
otherwise meet with ``_Exit`` or a crash (missing metadata keys, a CMVN vector of the wrong
length, a token list that does not match the model) before the library sees the files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from app.asr.base import Recognizer, RecognizerError, RecognizerUnavailable
from app.asr.onnx_meta import OnnxFormatError, read_metadata

MODEL_FILES = ("model.int8.onnx", "model.onnx")
TOKENS_FILE = "tokens.txt"
FEATURE_DIM = 80
LANGUAGES = ("auto", "zh", "en", "ja", "ko", "yue")
_INT_KEYS = (
    "vocab_size", "lfr_window_size", "lfr_window_shift", "normalize_samples", "with_itn", "without_itn",
    *(f"lang_{lang}" for lang in LANGUAGES),
)  # fmt: skip
_LANG_TOKEN = re.compile(r"<\|([a-z]+)\|>")
_TAG = re.compile(r"<\|[^|<>]*\|>")


def model_file(folder: Path) -> Path | None:
    for name in MODEL_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def _count_tokens(path: Path) -> int:
    ids = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\r\n").rsplit(maxsplit=1)
            if len(parts) != 2 or not parts[1].isdigit():
                raise ValueError(f"line {n} is not “symbol id”")
            ids.add(int(parts[1]))
    if not ids or ids != set(range(len(ids))):
        raise ValueError("its ids are not 0, 1, 2, …")
    return len(ids)


def check_folder(folder: str | Path) -> list[str]:
    """What keeps ``folder`` from being a usable SenseVoice model (empty list: nothing)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder} is not a folder."]
    problems = []
    partial = sorted(p.name for p in folder.glob("*.part"))
    if partial:
        problems.append(f"a download did not finish ({', '.join(partial)}); resume it")
    model = model_file(folder)
    n_tokens = None
    if not (folder / TOKENS_FILE).is_file():
        problems.append(f"{TOKENS_FILE} is missing")
    else:
        try:
            n_tokens = _count_tokens(folder / TOKENS_FILE)
        except (OSError, UnicodeDecodeError, ValueError) as err:
            problems.append(f"{TOKENS_FILE} is damaged ({err})")
    if model is None:
        problems.append("the model file (model.int8.onnx) is missing")
        return problems
    try:
        meta = read_metadata(model)
    except (OSError, OnnxFormatError) as err:
        problems.append(f"{model.name} is damaged or incomplete ({err})")
        return problems
    missing = [k for k in (*_INT_KEYS, "neg_mean", "inv_stddev") if not meta.get(k, "").strip()]
    if missing:
        problems.append(f"{model.name} is not a SenseVoice model (no {', '.join(missing[:3])} in it)")
        return problems
    try:
        ints = {k: int(meta[k]) for k in _INT_KEYS}
        dims = [len(meta[k].split(",")) for k in ("neg_mean", "inv_stddev")]
        [float(v) for k in ("neg_mean", "inv_stddev") for v in meta[k].split(",")]
    except ValueError:
        problems.append(f"{model.name} has damaged settings")
        return problems
    if min(ints.values()) < 0 or ints["lfr_window_size"] < 1 or ints["lfr_window_shift"] < 1:
        problems.append(f"{model.name} has damaged settings")
    elif dims != [FEATURE_DIM * ints["lfr_window_size"]] * 2:
        problems.append(f"{model.name} has damaged feature statistics")
    if n_tokens is not None and n_tokens != ints["vocab_size"]:
        problems.append(f"{TOKENS_FILE} ({n_tokens} tokens) does not belong to {model.name} "
                        f"({ints['vocab_size']})")  # fmt: skip
    return problems


def _threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class SenseVoiceRecognizer(Recognizer):
    """SenseVoice Small (Chinese, English, Japanese, Korean, Cantonese) with punctuation."""

    name = "SenseVoice"
    languages = LANGUAGES

    def __init__(self, folder: str | Path, num_threads: int | None = None) -> None:
        super().__init__()
        self.folder = Path(folder)
        problems = check_folder(self.folder)
        if problems:
            raise RecognizerUnavailable(
                f"The speech recognizer in {self.folder} is damaged or incomplete: {problems[0]}. "
                "Download it again from the model manager."
            )
        try:
            import sherpa_onnx
        except ImportError:
            raise RecognizerUnavailable(
                "Speech recognition needs the sherpa-onnx package (pip install sherpa-onnx)."
            ) from None
        self._sherpa = sherpa_onnx
        self._model = str(model_file(self.folder))
        self._tokens = str(self.folder / TOKENS_FILE)
        self._threads = num_threads or _threads()
        self._engines: dict[str, object] = {}
        self._engine("auto")  # load now, so a damaged model is reported at load time

    def _engine(self, language: str):
        """One sherpa-onnx recognizer per language (the language is fixed at construction)."""
        engine = self._engines.get(language)
        if engine is None:
            try:
                engine = self._sherpa.OfflineRecognizer.from_sense_voice(
                    model=self._model,
                    tokens=self._tokens,
                    num_threads=self._threads,
                    language="" if language == "auto" else language,
                    use_itn=True,
                )
            except Exception as exc:  # noqa: BLE001 - onnxruntime: RuntimeError "Protobuf parsing failed" …
                raise RecognizerUnavailable(
                    f"The speech recognizer in {self.folder} could not be loaded ({_short(exc)}). "
                    "Download it again from the model manager."
                ) from exc
            self._engines[language] = engine
        return engine

    def _decode(self, samples: np.ndarray, language: str) -> tuple[str, str]:
        engine = self._engine(language)
        stream = engine.create_stream()
        stream.accept_waveform(self.sample_rate, samples)
        engine.decode_stream(stream)
        result = stream.result
        if not result.lang:
            # sherpa-onnx logs an onnxruntime failure and returns an empty result; a working
            # model always emits its language/emotion/event tokens first.
            raise RecognizerError(
                "The speech recognizer failed on this audio (its model may be damaged; "
                "download it again from the model manager)."
            )
        match = _LANG_TOKEN.fullmatch(result.lang.strip())
        heard = match.group(1) if match else ""
        if heard == "nospeech":
            return "", ""
        return _TAG.sub("", result.text).strip(), heard


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else exc.__class__.__name__)[:160]
