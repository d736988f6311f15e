"""A tiny speech recognizer in the exact SenseVoice format that sherpa-onnx loads, for tests.

:func:`write_tiny_sensevoice` writes ``model.int8.onnx`` (with the metadata sherpa-onnx reads:
``vocab_size``, ``lfr_window_size/shift``, ``normalize_samples``, ``neg_mean``, ``inv_stddev``,
``lang_*``, ``with_itn``/``without_itn``) and ``tokens.txt`` into a folder. The graph has the
official inputs ``x [N, T, 560]``, ``x_length``, ``language``, ``text_norm`` (int32) and output
``logits [N, T + 4, vocab]`` — four query frames (language, emotion, event, text-norm) before the
audio frames, as the exported SenseVoiceSmall has — so the real sherpa-onnx code runs end to end:
Kaldi fbank, LFR, CMVN, onnxruntime, CTC greedy search, the symbol table.

Unlike a random network it *hears* something: the 80 mel bins are split into :data:`N_BANDS`
groups and a frame whose loudest group is ``k`` (by a margin) emits token ``WORDS[k]``; a flat
spectrum (silence, white noise) emits the CTC blank. So a sequence of tones at
:func:`band_frequency` ``(k)`` is recognized as the matching words, exactly — see
:func:`tone_words`, which tests use to make audio whose transcript they know::

    folder = write_tiny_sensevoice(tmp_path / "asr")
    rec = load_recognizer(folder)
    audio = tone_words([0, 1])            # 16 kHz float32, two tones
    assert rec.transcribe(audio, 16000, "en").text == "hello world"

The ``tiny_asr`` session fixture (registered in conftest.py) is such a folder, written once.
Building the model needs the ``onnx`` package (a test dependency); loading it needs only
sherpa-onnx, like the real model.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

SAMPLE_RATE = 16000
N_MELS = 80
LFR_M, LFR_N = 7, 6
N_BANDS = 10
BAND = N_MELS // N_BANDS
# What each band "says": English word pieces (▁ = word start) and Chinese characters.
WORDS = ("▁hello", "▁world", "▁voice", "▁desk", "你", "好", "世", "界", "▁yes", "▁no")
SPECIALS = (
    "<unk>", "<s>", "</s>",
    "<|zh|>", "<|en|>", "<|yue|>", "<|ja|>", "<|ko|>", "<|nospeech|>",
    "<|NEUTRAL|>", "<|Speech|>", "<|withitn|>", "<|woitn|>",
)  # fmt: skip
TOKENS = SPECIALS + WORDS
# The query ids the official export uses (model.lid_dict / textnorm_dict of SenseVoiceSmall).
LANG_IDS = {"auto": 0, "zh": 3, "en": 4, "yue": 7, "ja": 11, "ko": 12, "nospeech": 13}
WITH_ITN, WITHOUT_ITN = 14, 15
N_QUERY = 16


def _mel(f: float) -> float:
    return 1127.0 * math.log(1.0 + f / 700.0)


def band_frequency(k: int, sample_rate: int = SAMPLE_RATE) -> float:
    """The centre frequency (Hz) of mel band group ``k`` (Kaldi fbank: 20 Hz to Nyquist)."""
    lo, hi = _mel(20.0), _mel(sample_rate / 2)
    delta = (hi - lo) / (N_MELS + 1)
    centre_bin = k * BAND + (BAND - 1) / 2 + 1
    return 700.0 * (math.exp((lo + centre_bin * delta) / 1127.0) - 1.0)


def tone_words(
    bands: list[int], seconds: float = 0.6, gap: float = 0.3, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """Audio the tiny model hears as ``WORDS[b] for b in bands``: a tone per band, silence between."""
    pieces = [np.zeros(int(gap * sample_rate), np.float32)]
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    ramp = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.02)  # 20 ms fades: no broadband clicks
    for b in bands:
        wave = 0.3 * ramp * np.sin(2 * np.pi * band_frequency(b, sample_rate) * t)
        pieces.append(wave.astype(np.float32))
        pieces.append(np.zeros(int(gap * sample_rate), np.float32))
    return np.concatenate(pieces)


def expected_text(bands: list[int]) -> str:
    """What sherpa-onnx returns for :func:`tone_words` ``(bands)`` (▁ becomes a space)."""
    return "".join(WORDS[b] for b in bands).replace("▁", " ").strip()


def build_model_proto(language_ids: dict[str, int] | None = None, scale: float = 4.0, margin: float = 3.0):
    """The ONNX ModelProto of the tiny recognizer (``onnx`` imported here only)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    vocab = len(TOKENS)
    first_word = len(SPECIALS)
    dim = N_MELS * LFR_M
    # Frame logits: word k = scale * mean(log-mel of band k over the 7 stacked frames);
    # blank = scale * (mean of all bins + margin); everything else can never win.
    w = np.zeros((dim, vocab), np.float32)
    bias = np.full((vocab,), -1e4, np.float32)
    for j in range(LFR_M):
        w[j * N_MELS : (j + 1) * N_MELS, 0] = scale / dim
        for k in range(N_BANDS):
            start = j * N_MELS + k * BAND
            w[start : start + BAND, first_word + k] = scale / (BAND * LFR_M)
    bias[0] = scale * margin
    bias[first_word : first_word + N_BANDS] = 0.0
    # Query frames: the language query emits that language's token (auto -> English), then
    # <|NEUTRAL|>, <|Speech|>, and <|withitn|> or <|woitn|>.
    onehot = {t: np.eye(vocab, dtype=np.float32)[TOKENS.index(t)] * 10.0 for t in TOKENS}
    lang_q = np.zeros((N_QUERY, vocab), np.float32)
    for name, qid in LANG_IDS.items():
        lang_q[qid] = onehot["<|en|>" if name == "auto" else f"<|{name}|>"]
    lang_q[WITH_ITN] = onehot["<|withitn|>"]
    lang_q[WITHOUT_ITN] = onehot["<|woitn|>"]
    event_q = np.tile(np.stack([onehot["<|NEUTRAL|>"], onehot["<|Speech|>"]])[None], (N_QUERY, 1, 1))

    inits = [
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(bias, "B"),
        numpy_helper.from_array(lang_q, "Q"),
        numpy_helper.from_array(event_q, "QE"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "B"], ["frames"]),
        helper.make_node("Gather", ["Q", "language"], ["lang_v"]),
        helper.make_node("Unsqueeze", ["lang_v", "axis1"], ["lang_q"]),
        helper.make_node("Gather", ["QE", "language"], ["event_q"]),
        helper.make_node("Gather", ["Q", "text_norm"], ["tn_v"]),
        helper.make_node("Unsqueeze", ["tn_v", "axis1"], ["tn_q"]),
        helper.make_node("Concat", ["lang_q", "event_q", "tn_q", "frames"], ["logits"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_sense_voice",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "T", dim]),
            helper.make_tensor_value_info("x_length", TensorProto.INT32, ["N"]),
            helper.make_tensor_value_info("language", TensorProto.INT32, ["N"]),
            helper.make_tensor_value_info("text_norm", TensorProto.INT32, ["N"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", "T4", vocab])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    ids = dict(LANG_IDS, **(language_ids or {}))
    meta = {
        "model_type": "sense_voice_ctc",
        "comment": "VoxDesk test model in the SenseVoiceSmall format",
        "vocab_size": vocab,
        "lfr_window_size": LFR_M,
        "lfr_window_shift": LFR_N,
        "normalize_samples": 0,
        "neg_mean": ",".join(["0"] * dim),
        "inv_stddev": ",".join(["1"] * dim),
        **{f"lang_{k}": v for k, v in ids.items()},
        "with_itn": WITH_ITN,
        "without_itn": WITHOUT_ITN,
    }
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model)
    return model


def write_tiny_sensevoice(directory: str | Path, language_ids: dict[str, int] | None = None) -> Path:
    """Write the tiny recognizer (``model.int8.onnx`` + ``tokens.txt``) into ``directory``.

    ``language_ids`` overrides query ids (e.g. ``{"ko": 99}`` makes Korean fail inside
    onnxruntime mid-run: an out-of-range Gather), for failure tests.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model = build_model_proto(language_ids)
    (directory / "model.int8.onnx").write_bytes(model.SerializeToString())
    (directory / "tokens.txt").write_text(
        "".join(f"{t} {i}\n" for i, t in enumerate(TOKENS)), encoding="utf-8"
    )
    return directory


@pytest.fixture(scope="session")
def tiny_asr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the tiny SenseVoice-format recognizer (written once per session)."""
    return write_tiny_sensevoice(tmp_path_factory.mktemp("tiny-asr"))
