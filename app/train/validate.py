"""Speak the validation sentence with the LoRA being trained and score it.

Two numbers show when training starts to overfit (the official FAQ warns of it): the
recognizer's error rate on the spoken sentence (intelligibility falls apart first) and the
cosine similarity of its speaker embedding to the held-out clips' (the voice should get closer,
then stop improving). The sentence goes through the same ``Synthesizer`` the app speaks with,
with a fixed seed, so successive checkpoints differ only by their weights; the random state of
training is saved and restored around it, so validating never changes the training steps.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app.audio.io import read_audio, write_audio
from app.errors import VoxDeskError
from app.train.clips import Clip

log = logging.getLogger(__name__)
MAX_PATCHES = 400


def _installed_recognizer() -> Any:
    from app.asr import RecognizerUnavailable, load_recognizer

    try:
        return load_recognizer()
    except RecognizerUnavailable:
        return None


def _installed_speaker() -> Any:
    from app.train.speaker import SpeakerModelUnavailable, load_speaker_model

    try:
        return load_speaker_model()
    except SpeakerModelUnavailable:
        return None


class Validator:
    def __init__(
        self,
        folder: Path,
        model: Any,
        tokenizer: Any,
        text: str,
        references: list[Clip],
        recognizer: Any,
        speaker: Any,
        seed: int,
    ) -> None:
        self.folder, self.model, self.tokenizer, self.text, self.seed = (
            Path(folder),
            model,
            tokenizer,
            text,
            seed,
        )
        self.references = references
        self._recognizer, self._speaker = recognizer, speaker
        self._loaded = recognizer is not None and speaker is not None
        self._reference_embedding: np.ndarray | None = None

    def _tools(self) -> None:
        if not self._loaded:
            self._recognizer = self._recognizer or _installed_recognizer()
            self._speaker = self._speaker or _installed_speaker()
            self._loaded = True

    def speak(self) -> tuple[np.ndarray, int]:
        from app.models.voxcpm.generate import Synthesizer
        from app.models.voxcpm.prompt import normalize_text

        cpu = torch.get_rng_state()
        cuda = torch.cuda.get_rng_state(self.model.device) if self.model.device.type == "cuda" else None
        self.model.eval()
        try:
            with torch.inference_mode():
                syn = Synthesizer(self.model, self.tokenizer)
                out = syn.synthesize(normalize_text(self.text), None, seed=self.seed, max_len=MAX_PATCHES)
        finally:
            self.model.train()
            torch.set_rng_state(cpu)
            if cuda is not None:
                torch.cuda.set_rng_state(cuda, self.model.device)
        return out.audio, out.sample_rate

    def score(self, step: int):
        from app.backcheck.score import score
        from app.train.job import ValidationScore

        audio, rate = self.speak()
        path = self.folder / f"step_{step:06d}.wav"
        if len(audio):
            write_audio(path, audio, rate)
        self._tools()
        cer = similarity = math.nan
        if self._recognizer is not None:
            cer = self._cer(audio, rate, score)
        if self._speaker is not None and self.references and len(audio):
            try:
                similarity = self._similarity(audio, rate)
            except VoxDeskError as exc:  # e.g. a sentence cut too short to embed
                log.warning("validation speaker similarity failed: %s", exc)
        return ValidationScore(step, cer, similarity, path)

    def _cer(self, audio: np.ndarray, rate: int, score) -> float:
        from app.asr import NoSpeechError

        if not len(audio):
            return 1.0
        try:
            heard = self._recognizer.transcribe(audio, rate, "auto").text
        except NoSpeechError:
            return 1.0
        except VoxDeskError as exc:
            log.warning("validation transcript failed: %s", exc)
            return math.nan
        return round(score(self.text, heard).value, 4)

    def _similarity(self, audio: np.ndarray, rate: int) -> float:
        if self._reference_embedding is None:
            refs = [self._speaker.embed(*read_audio(c.path, reject_silence=False)) for c in self.references]
            mean = np.mean(refs, axis=0)
            self._reference_embedding = mean / max(float(np.linalg.norm(mean)), 1e-9)
        emb = self._speaker.embed(audio, rate)
        return round(float(np.dot(emb, self._reference_embedding) / max(float(np.linalg.norm(emb)), 1e-9)), 4)
