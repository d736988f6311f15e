"""CosyVoice's frontend against the official one: the model input of every golden mode, the
features against the libraries the official code calls, the voice-clip rules and bad folders.

The goldens' ``input_*`` arrays are what the official frontend gave ``model.tts`` for
tests/data/cosyvoice/prompt.wav on folders written by the same writer with seed 0;
``frontend_features.npz`` holds torchaudio's Resample, whisper's log-mel, Kaldi fbank and the
matcha mel of that prompt (tools/cosyvoice_goldens.py ``features``).
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch

from app.errors import VoxDeskError
from app.models.cosyvoice import features
from app.models.cosyvoice.checkpoint import write_checkpoint
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.frontend import Frontend
from app.models.cosyvoice.text import SYSTEM, request_texts
from app.models.cosyvoice.tokenizer import CosyTokenizer
from app.models.cosyvoice.weights import check_folder, load_pt

DATA = Path(__file__).parent / "data" / "cosyvoice"
FAMILIES = ("cosyvoice2", "cosyvoice3")
# what the official frontend_cross_lingual / frontend_instruct2 delete from frontend_zero_shot's
# input (the goldens recorded the zero-shot dict before those deletions)
DROPPED = {
    "zero_shot": set(),
    "cross_lingual": {"prompt_text", "prompt_text_len", "llm_prompt_speech_token",
                      "llm_prompt_speech_token_len"},
    "instruct2": {"llm_prompt_speech_token", "llm_prompt_speech_token_len"},
}


@pytest.fixture(scope="module", params=FAMILIES)
def folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp(request.param), f"{request.param}-tiny", seed=0)


@pytest.fixture(scope="module")
def prompt() -> tuple[np.ndarray, int]:
    audio, rate = soundfile.read(DATA / "prompt.wav", dtype="float32")
    return audio, rate


def _user_inputs(family: str, mode: dict) -> tuple[str, str, str]:
    """What a user types for a golden mode: the text, transcript and instruction without the
    CosyVoice3 system prompt and <|endofprompt|> that the goldens' calls spelled out."""
    head = SYSTEM + "<|endofprompt|>"
    text, transcript = mode["text"].removeprefix(head), mode.get("prompt_text", "").removeprefix(head)
    instruction = mode.get("instruct", "").removesuffix("<|endofprompt|>").removeprefix(SYSTEM + " ")
    return text, transcript, instruction


def test_model_input_equals_the_official_frontend_in_every_mode(folder: Path, prompt) -> None:
    torch.set_num_threads(2)
    files = check_folder(folder)
    frontend = Frontend(files, load_config(files.yaml))
    tokenizer = CosyTokenizer(files.tokenizer_dir, files.family)
    voice = frontend.voice_features(*prompt)
    assert voice.speech_tokens.dtype == np.int64 and voice.embedding.shape == (192,)
    assert voice.prompt_feat.shape == (2 * voice.speech_tokens.size, 80)
    index = json.loads((DATA / f"{files.family}.json").read_text(encoding="utf-8"))
    for name, mode in index["modes"].items():
        call = mode["call"]
        user = _user_inputs(files.family, mode)
        pieces, prompt_text = request_texts(files.family, call, *user, encode=tokenizer.encode)
        assert len(pieces) == 1, name
        got = frontend.model_input(call, tokenizer.encode(pieces[0]), tokenizer.encode(prompt_text), voice)
        golden = np.load(DATA / f"{files.family}_{name}.npz")
        expected = {k.removeprefix("input_") for k in golden.files if k.startswith("input_")}
        assert set(got) == expected - DROPPED[call], name
        for key, value in got.items():
            ref = golden[f"input_{key}"]
            assert value.dtype == ref.dtype and value.shape == ref.shape, (name, key)
            if ref.dtype.kind == "f":
                np.testing.assert_allclose(value, ref, atol=1e-4, rtol=0, err_msg=f"{name} {key}")
            else:
                assert np.array_equal(value, ref), (name, key)


RATES = [(16000, 24000), (44100, 16000), (22050, 24000), (48000, 16000), (24000, 16000)]


@pytest.mark.parametrize("src,dst", RATES)
def test_resampling_as_torchaudio(src: int, dst: int, prompt) -> None:
    """The prompt's first 0.25 s read as ``src`` Hz, as the golden's torchaudio Resample saw it."""
    audio = torch.from_numpy(prompt[0])[None, : src // 4]
    ref = np.load(DATA / "frontend_features.npz")[f"resample_{src}_{dst}"]
    got = features.resample(audio, src, dst)[0].numpy()
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, atol=1e-5, rtol=0)


def test_features_as_whisper_kaldi_and_matcha(prompt) -> None:
    ref = np.load(DATA / "frontend_features.npz")
    speech = torch.from_numpy(prompt[0])[None]
    speech24 = features.resample(speech, 16000, 24000)
    got = {
        "whisper_logmel": features.whisper_log_mel(speech)[0],
        "fbank": features.kaldi_fbank(speech[0]),
        "matcha_v2": features.matcha_mel(speech24, 8000)[0],
        "matcha_v3": features.matcha_mel(speech24, None)[0],
    }
    for key, value in got.items():
        assert value.shape == ref[key].shape, key
        np.testing.assert_allclose(value.numpy(), ref[key], atol=1e-4, rtol=0, err_msg=key)


def test_voice_clip_rules(folder: Path, prompt) -> None:
    files = check_folder(folder)
    frontend = Frontend(files, load_config(files.yaml))
    audio, rate = prompt
    with pytest.raises(VoxDeskError, match="8000 Hz.*at least 16000"):
        frontend.voice_features(audio[::2], 8000)
    with pytest.raises(VoxDeskError, match="unusual rate \\(44101 Hz\\)"):  # a 706 M-value kernel
        frontend.voice_features(audio, 44101)
    with pytest.raises(VoxDeskError, match="31.0 s long.*at most 30 s"):
        frontend.voice_features(np.tile(audio, 31), rate)
    with pytest.raises(VoxDeskError, match="shorter than 0.1 s"):
        frontend.voice_features(audio[:800], rate)
    with pytest.raises(VoxDeskError, match="NaN"):
        frontend.voice_features(np.where(np.arange(audio.size) == 5, np.nan, audio), rate)
    mono = frontend.voice_features(audio, rate)
    stereo = frontend.voice_features(np.stack([audio, audio], axis=1), rate)  # soundfile's [n, channels]
    assert np.array_equal(mono.speech_tokens, stereo.speech_tokens)
    np.testing.assert_allclose(mono.prompt_feat, stereo.prompt_feat, atol=1e-6)
    # another rate goes through both resamplers; 30 s exactly is accepted
    up = features.resample(torch.from_numpy(audio)[None], rate, 44100)[0].numpy()
    at44 = frontend.voice_features(up, 44100)
    assert at44.prompt_feat.shape == (2 * at44.speech_tokens.size, 80)
    assert frontend.voice_features(np.tile(audio, 30), rate).speech_tokens.size == 750


# ---- bad folders and files ------------------------------------------------------------------
def _copy(folder: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(folder, dst)
    return dst


MISSING = ["llm.pt", "hift.pt", "campplus.onnx", "TOKENIZER", "CosyVoice-BlankEN/merges.txt"]


@pytest.mark.parametrize("missing", MISSING)
def test_a_missing_file_is_named(folder: Path, tmp_path: Path, missing: str) -> None:
    root = _copy(folder, tmp_path)
    family = check_folder(root).family
    if missing == "TOKENIZER":
        missing = "speech_tokenizer_v2.onnx" if family == "cosyvoice2" else "speech_tokenizer_v3.onnx"
    (root / missing).unlink()
    with pytest.raises(VoxDeskError, match=f"{Path(missing).name} is missing") as err:
        check_folder(root)
    assert "\n" not in str(err.value)


def test_not_a_folder_or_no_yaml(tmp_path: Path) -> None:
    with pytest.raises(VoxDeskError, match="does not exist"):
        check_folder(tmp_path / "nothing")
    with pytest.raises(VoxDeskError, match="no cosyvoice2.yaml or cosyvoice3.yaml"):
        check_folder(tmp_path)


def test_an_onnx_file_that_is_not_onnx_is_named(folder: Path, tmp_path: Path) -> None:
    root = _copy(folder, tmp_path)
    files = check_folder(root)
    cfg = load_config(files.yaml)
    for path in (files.campplus, files.speech_tokenizer):
        original = path.read_bytes()
        path.write_bytes(b"PK\x03\x04 this is not a model" * 20)
        with pytest.raises(VoxDeskError, match=f"{path.name} in .* is not an ONNX model") as err:
            Frontend(files, cfg)
        assert "\n" not in str(err.value)
        path.write_bytes(original[: len(original) // 3])  # cut short
        with pytest.raises(VoxDeskError, match=f"{path.name} in .* is not an ONNX model"):
            Frontend(files, cfg)
        path.write_bytes(original)
    # the two files swapped: each opens, but neither has the other's inputs
    files.campplus.rename(tmp_path / "c")
    files.speech_tokenizer.rename(files.campplus)
    (tmp_path / "c").rename(files.speech_tokenizer)
    with pytest.raises(VoxDeskError, match="does not have the inputs and outputs"):
        Frontend(files, cfg)


def test_a_speaker_model_of_another_shape_is_named(folder: Path, tmp_path: Path, prompt) -> None:
    """An ONNX file that opens but gives 80 values instead of CAM++'s 192."""
    import onnx
    from onnx import TensorProto, helper

    root = _copy(folder, tmp_path)
    files = check_folder(root)
    node = helper.make_node("ReduceMean", ["input"], ["pred"], axes=[1], keepdims=0)
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, "T", 80])]
    outputs = [helper.make_tensor_value_info("pred", TensorProto.FLOAT, [1, 80])]
    graph = helper.make_graph([node], "other", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    files.campplus.write_bytes(model.SerializeToString())
    onnx.checker.check_model(onnx.load(files.campplus))
    frontend = Frontend(files, load_config(files.yaml))
    with pytest.raises(VoxDeskError, match="campplus.onnx in .* does not have the inputs and outputs"):
        frontend.voice_features(*prompt)


class _Payload:
    """Unpickling this would create a marker file (the attack weights_only=True refuses)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_pt_with_pickled_code_is_refused_without_running_it(folder: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    bad = tmp_path / "flow.pt"
    state = load_pt(folder / "flow.pt")
    torch.save({**state, "extra": _Payload(marker)}, bad)
    with pytest.raises(VoxDeskError, match="flow.pt in .* holds Python objects other than tensors") as err:
        load_pt(bad)
    assert "nothing of it was run" in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()
    torch.save([1, 2, 3], bad)
    with pytest.raises(VoxDeskError, match="flow.pt .* does not hold a table of named tensors"):
        load_pt(bad)


def test_a_truncated_or_foreign_pt_is_named(folder: Path, tmp_path: Path) -> None:
    data = (folder / "hift.pt").read_bytes()
    cut = tmp_path / "hift.pt"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VoxDeskError, match="hift.pt in .* is damaged or incomplete"):
        load_pt(cut)
    cut.write_bytes(b"\x80\x02garbage" * 50)
    with pytest.raises(VoxDeskError, match="hift.pt in .* is damaged or incomplete"):
        load_pt(cut)
    with pytest.raises(VoxDeskError, match="llm.pt is missing"):
        load_pt(tmp_path / "llm.pt")
    assert set(load_pt(folder / "hift.pt")) == set(torch.load(folder / "hift.pt", weights_only=True))


def test_the_yaml_stays_data(folder: Path, tmp_path: Path) -> None:
    """A hostile tag in the folder's yaml is refused by the reader, naming the file."""
    root = _copy(folder, tmp_path)
    files = check_folder(root)
    marker = tmp_path / "yaml-ran"
    text = files.yaml.read_text(encoding="utf-8")
    hostile = f"\nboom: !!python/object/apply:os.system ['touch {marker}']\n"
    files.yaml.write_text(text + hostile, encoding="utf-8")
    with pytest.raises(VoxDeskError, match=files.yaml.name):
        load_config(files.yaml)
    files.yaml.write_text(text + f"\nboom: !apply:os.system ['touch {marker}']\n", encoding="utf-8")
    with pytest.raises(VoxDeskError, match="would run code"):
        load_config(files.yaml)
    assert not marker.exists()
