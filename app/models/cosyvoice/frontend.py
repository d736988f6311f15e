"""A voice clip to what CosyVoice's LM and flow condition on, as the official frontend makes it.

:meth:`Frontend.voice_features` does the official ``_extract_speech_token`` (16 kHz, whisper
log-mel, ``speech_tokenizer_v2/_v3.onnx``: 25 tokens a second), ``_extract_spk_embedding``
(16 kHz, Kaldi fbank minus its mean, ``campplus.onnx``: 192 values) and ``_extract_speech_feat``
(24 kHz, the yaml's mel), then ``frontend_zero_shot``'s trim for 24 kHz models (mel frames =
2 x tokens). :meth:`Frontend.model_input` lays them out with the text ids as the official
``frontend_zero_shot`` / ``_cross_lingual`` / ``_instruct2`` return them.

The two networks run in onnxruntime as the official code runs them (one intra-op thread, all
graph optimizations; the speech tokenizer on CUDA when the model runs there): docs/DESIGN.md
"CosyVoice's frontend networks" has the measurements behind keeping onnxruntime.

A clip sampled under 16 kHz (the official code stops on an assertion) or longer than 30 s (the
official speech tokenizer refuses it) is refused with one line; a clip is not trimmed, because
a zero-shot voice's transcript must say what the clip says.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app.errors import VoxDeskError
from app.models.cosyvoice.config import CosyVoiceConfig, Tag
from app.models.cosyvoice.features import kaldi_fbank, matcha_mel, resample, resample_cost, whisper_log_mel
from app.models.cosyvoice.weights import CosyFolder

log = logging.getLogger(__name__)
MIN_RATE = 16000
MAX_SECONDS = 30.0
MIN_SECONDS = 0.1  # Kaldi's fbank needs one whole 25 ms frame; under 0.1 s there is no voice to copy
TOKEN_RATE = 16000  # speech tokens and the speaker embedding are computed at 16 kHz
MEL_RATE = 24000  # the official _extract_speech_feat always resamples to 24 kHz
SPEAKER_DIM = 192
MAX_KERNEL = 1 << 22  # resampling kernel values (16 MB): every usual rate needs far fewer
_MEL_KEYS = ("n_fft", "num_mels", "sampling_rate", "hop_size", "win_size", "fmin", "fmax")


@dataclass(frozen=True)
class VoiceFeatures:
    """What one voice clip gives: ``speech_tokens`` int64 [n], ``embedding`` float32 [192],
    ``prompt_feat`` float32 [T, 80] (for 24 kHz models T = 2n, both trimmed to fit)."""

    speech_tokens: np.ndarray
    embedding: np.ndarray
    prompt_feat: np.ndarray


def open_session(path: Path, cuda: bool = False):
    """An onnxruntime session with the official options; one line naming the file if it is not
    an ONNX model onnxruntime can run."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise VoxDeskError("onnxruntime is not installed: reinstall VoxDesk.") from None
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # errors are reported below, in one line
    providers = ["CPUExecutionProvider"]
    if cuda and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=providers)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
        reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise VoxDeskError(f"{path.name} in {path.parent} is not an ONNX model VoxDesk can run ({reason}): "
                           "download the model folder again.") from None  # fmt: skip


def _not_the_network(path: Path) -> VoxDeskError:
    return VoxDeskError(f"{path.name} in {path.parent} does not have the inputs and outputs of CosyVoice's "
                        f"{path.stem}: download the model folder again.")  # fmt: skip


def _mel_settings(cfg: CosyVoiceConfig) -> dict[str, Any]:
    tag = cfg.tree.get("feat_extractor")
    args = tag.args if isinstance(tag, Tag) and isinstance(tag.args, dict) else {}
    out = {k: args.get(k) for k in _MEL_KEYS}
    ints = ("n_fft", "num_mels", "sampling_rate", "hop_size", "win_size")
    number = (int, float)
    sane = all(type(out[k]) is int and 0 < out[k] <= 1 << 16 for k in ints)
    sane = sane and out["win_size"] <= out["n_fft"]
    sane = sane and type(out["fmin"]) in number and (out["fmax"] is None or type(out["fmax"]) in number)
    if not sane or args.get("center", False) is not False or out["sampling_rate"] != MEL_RATE:
        raise VoxDeskError(f"{cfg.family}.yaml: feat_extractor is not the mel VoxDesk computes "
                           "(matcha's mel_spectrogram at 24 kHz without centring).")  # fmt: skip
    return out


class Frontend:
    """The speech tokenizer and speaker model of one folder, and the prompt mel settings."""

    def __init__(self, folder: CosyFolder, cfg: CosyVoiceConfig, cuda: bool = False) -> None:
        self.family = folder.family
        self.sample_rate = cfg.sample_rate
        self.mel = _mel_settings(cfg)
        self.paths = {"tokenizer": folder.speech_tokenizer, "campplus": folder.campplus}
        self.tokenizer = open_session(folder.speech_tokenizer, cuda=cuda)
        self.campplus = open_session(folder.campplus)
        pairs = ((self.tokenizer, folder.speech_tokenizer, 2), (self.campplus, folder.campplus, 1))
        for session, path, count in pairs:
            if len(session.get_inputs()) != count or not session.get_outputs():
                raise _not_the_network(path)

    def _run(self, which: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
        try:
            return np.asarray(getattr(self, which).run(None, feeds)[0])
        except Exception:  # noqa: BLE001 - onnxruntime's own exception types; the traceback is logged
            log.exception("%s failed", self.paths[which].name)
            raise _not_the_network(self.paths[which]) from None

    def speech_tokens(self, speech16: torch.Tensor) -> np.ndarray:
        """The speech tokenizer's tokens (int64 [n]) of 16 kHz audio [1, samples]."""
        feat = whisper_log_mel(speech16).numpy()
        first, second = (i.name for i in self.tokenizer.get_inputs())
        out = self._run("tokenizer", {first: feat, second: np.array([feat.shape[2]], dtype=np.int32)})
        return out.reshape(-1).astype(np.int64)

    def speaker_embedding(self, speech16: torch.Tensor) -> np.ndarray:
        """CAM++'s 192 values (float32) for 16 kHz audio [1, samples]."""
        feat = kaldi_fbank(speech16[0])
        feat = feat - feat.mean(dim=0, keepdim=True)
        out = self._run("campplus", {self.campplus.get_inputs()[0].name: feat.unsqueeze(0).numpy()})
        if out.size != SPEAKER_DIM:
            raise _not_the_network(self.paths["campplus"])
        return out.astype(np.float32).reshape(-1)

    def voice_features(self, audio: np.ndarray, sample_rate: int) -> VoiceFeatures:
        """Tokens, speaker embedding and prompt mel of a clip: float samples in [-1, 1], mono [n]
        or [n, channels] (averaged), at ``sample_rate`` >= 16000 Hz, 0.1 to 30 s long."""
        data = np.asarray(audio, dtype=np.float32)
        if data.ndim == 2:
            data = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
        if data.ndim != 1:
            raise VoxDeskError("The voice clip is not mono or multi-channel audio: choose a sound file.")
        if sample_rate < MIN_RATE:
            raise VoxDeskError(f"The voice clip is sampled at {sample_rate} Hz; CosyVoice needs at least "
                               f"{MIN_RATE} Hz: record or export it at 16 kHz or more.")  # fmt: skip
        if max(resample_cost(sample_rate, TOKEN_RATE), resample_cost(sample_rate, MEL_RATE)) > MAX_KERNEL:
            raise VoxDeskError(f"The voice clip is sampled at an unusual rate ({sample_rate} Hz) that would "
                               "take gigabytes to resample: export it at 16, 24, 44.1 or 48 kHz.")
        seconds = data.size / sample_rate
        if seconds > MAX_SECONDS:
            raise VoxDeskError(f"The voice clip is {seconds:.1f} s long; CosyVoice takes at most "
                               f"{MAX_SECONDS:.0f} s: choose or cut a shorter clip (5-15 s is best).")
        if seconds < MIN_SECONDS:
            raise VoxDeskError("The voice clip is shorter than 0.1 s: choose a few seconds of speech.")
        if not np.isfinite(data).all():
            raise VoxDeskError("The voice clip holds invalid samples (NaN or infinity): choose another file.")
        speech = torch.from_numpy(np.ascontiguousarray(data))[None]
        speech16 = resample(speech, sample_rate, TOKEN_RATE)
        tokens = self.speech_tokens(speech16)
        embedding = self.speaker_embedding(speech16)
        feat = matcha_mel(resample(speech, sample_rate, MEL_RATE), **self.mel)[0].T.contiguous().numpy()
        if self.sample_rate == MEL_RATE:  # frontend_zero_shot: mel frames = 2 x tokens
            n = min(feat.shape[0] // 2, tokens.size)
            feat, tokens = feat[: 2 * n], tokens[:n]
        return VoiceFeatures(tokens, embedding, np.ascontiguousarray(feat, dtype=np.float32))

    def model_input(self, mode: str, text_ids: list[int], prompt_text_ids: list[int],
                    voice: VoiceFeatures) -> dict[str, np.ndarray]:  # fmt: skip
        """The official frontend's model input (batch of one, int32 ids and lengths) for ``mode``:
        zero-shot has everything; cross-lingual drops the prompt text and the LM's prompt tokens;
        instruct2 drops the LM's prompt tokens (``prompt_text_ids`` are then the instruction's)."""

        def ids(values) -> np.ndarray:
            return np.asarray(values, dtype=np.int32).reshape(1, -1)

        def length(array: np.ndarray) -> np.ndarray:
            return np.array([array.shape[1]], dtype=np.int32)

        text, prompt, tokens = ids(text_ids), ids(prompt_text_ids), ids(voice.speech_tokens)
        feat = voice.prompt_feat[None].astype(np.float32)
        embedding = voice.embedding.reshape(1, -1).astype(np.float32)
        out = {"text": text, "text_len": length(text),
               "prompt_text": prompt, "prompt_text_len": length(prompt),
               "llm_prompt_speech_token": tokens, "llm_prompt_speech_token_len": length(tokens),
               "flow_prompt_speech_token": tokens, "flow_prompt_speech_token_len": length(tokens),
               "prompt_speech_feat": feat, "prompt_speech_feat_len": length(feat),
               "llm_embedding": embedding, "flow_embedding": embedding}  # fmt: skip
        if mode == "cross_lingual":
            for key in ("prompt_text", "llm_prompt_speech_token"):
                del out[key], out[key + "_len"]
        elif mode == "instruct2":
            del out["llm_prompt_speech_token"], out["llm_prompt_speech_token_len"]
        elif mode != "zero_shot":
            raise VoxDeskError(f"Unknown CosyVoice mode '{mode}': use zero_shot, cross_lingual or instruct2.")
        return out
