"""IndexTTS-2.5's prompt audio against the official code: the two resampling paths and the 15 s
cut, the CAMPPlus fbank and style, the S2Mel prompt mel, and the rules for odd clips.

``tests/data/indextts/prompt_feats.npz`` holds what the official functions made of clips that
``tools/indextts_golden_prompt.py`` synthesises (``prompt_clip``; these tests make the same
samples) on the tiny folder written with seed 0 (tests/data/indextts/README.md).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.errors import VoxDeskError
from app.models.cosyvoice.features import matcha_mel
from app.models.indextts.audio_in import (
    MAX_SECONDS,
    PromptAudio,
    campplus_fbank,
    load_emotion,
    load_prompt,
    ref_mel,
)
from app.models.indextts.campplus import CAMPPlus, load_campplus
from app.models.indextts.presets import TINY, preset

DATA = Path(__file__).parent / "data" / "indextts"
TOL = 1e-3


def _tool():
    path = Path(__file__).parents[1] / "tools" / "indextts_golden_prompt.py"
    spec = importlib.util.spec_from_file_location("indextts_golden_prompt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(DATA / "prompt_feats.npz") as data:
        return {k.replace("__", "/"): data[k] for k in data.files}


@pytest.fixture(scope="module")
def prompts() -> dict[str, tuple[PromptAudio, int]]:
    out = {}
    for name, (rate, seconds, channels, seed, _) in TOOL.CASES.items():
        samples = TOOL.prompt_clip(rate, seconds, channels, seed).astype(np.float32) / 32768
        out[name] = (load_prompt(samples, rate), rate)
    return out


def _close(ours: np.ndarray | torch.Tensor, ref: np.ndarray) -> float:
    ours = ours.detach().numpy() if isinstance(ours, torch.Tensor) else np.asarray(ours)
    assert ours.shape == ref.shape
    diff = float(np.abs(ours - ref).max()) if ref.size else 0.0
    assert diff < TOL
    return diff


@pytest.mark.parametrize("name", list(TOOL.CASES))
def test_both_resampling_paths_and_the_cut_match_the_official(name: str, golden, prompts) -> None:
    prompt, _ = prompts[name]
    kept = TOOL.CASES[name][4]
    for key in ("audio_22k", "audio_16k", "emo_16k"):
        ours = getattr(prompt, key)
        assert ours.dtype == np.float32 and ours.ndim == 1
        assert ours.size == golden[f"{name}/{key}_len"]
        _close(ours[-TOOL.TAIL :], golden[f"{name}/{key}_tail"])
        if kept != "tails":
            _close(ours[:: TOOL.AUDIO_STEP], golden[f"{name}/{key}"])
    if kept == "tails":  # cut at 15 s after resampling, on every path
        assert prompt.audio_22k.size == 15 * 22050
        assert prompt.audio_16k.size == prompt.emo_16k.size == 15 * 16000


def test_the_two_paths_give_different_16k_samples(prompts) -> None:
    """The emotion path (soxr) and the speaker path (soxr to 22 050, then sinc) differ, as in the
    official code: finding 7 of docs/indextts_plan.md."""
    prompt, _ = prompts["mono24k"]
    assert prompt.audio_16k.shape == prompt.emo_16k.shape
    assert 1e-4 < np.abs(prompt.audio_16k - prompt.emo_16k).max() < 0.2


def test_load_emotion_is_the_emotion_path(prompts) -> None:
    rate, seconds, channels, seed, _ = TOOL.CASES["stereo44k"]
    samples = TOOL.prompt_clip(rate, seconds, channels, seed).astype(np.float32) / 32768
    assert np.array_equal(load_emotion(samples, rate), prompts["stereo44k"][0].emo_16k)


@pytest.mark.parametrize("name", list(TOOL.CASES))
def test_fbank_and_reference_mel_match_the_official(name: str, golden, prompts) -> None:
    prompt, _ = prompts[name]
    fbank = campplus_fbank(prompt.audio_16k)
    mel = ref_mel(prompt.audio_22k, preset(TINY))
    assert mel.shape[0] == 1 and mel.shape[1] == 80
    frames = mel[0].T
    for key, ours in (("fbank", fbank), ("ref_mel", frames)):
        assert tuple(ours.shape) == tuple(golden[f"{name}/{key}_shape"])
        tail = golden[f"{name}/{key}_tail"]
        _close(ours[-len(tail) :], tail)
        if TOOL.CASES[name][4] != "tails":
            _close(ours[:: TOOL.FRAME_STEP], golden[f"{name}/{key}"])
    assert torch.allclose(fbank.mean(dim=0), torch.zeros(80), atol=1e-4)


@pytest.fixture(scope="module")
def campplus(tiny_ix: Path) -> CAMPPlus:  # noqa: F811
    return load_campplus(tiny_ix / "hf_cache" / "campplus_cn_common.bin")


@pytest.mark.parametrize("name", ["mono24k", "stereo44k"])  # long16k's 15 s cost more than they prove
def test_style_matches_the_official(name: str, golden, prompts, campplus: CAMPPlus) -> None:
    prompt, _ = prompts[name]
    with torch.inference_mode():
        style = campplus(campplus_fbank(prompt.audio_16k).unsqueeze(0))
    assert style.shape == (1, 192)
    _close(style, golden[f"{name}/style"])


def test_a_speaker_model_that_does_not_fit_is_named(tiny_ix: Path, tmp_path: Path) -> None:  # noqa: F811
    state = torch.load(tiny_ix / "hf_cache" / "campplus_cn_common.bin", weights_only=True)
    del state["xvector.block2.tdnnd7.cam_layer.linear2.bias"]
    torch.save(state, tmp_path / "campplus_cn_common.bin")
    with pytest.raises(VoxDeskError, match="campplus_cn_common.bin .*tdnnd7.cam_layer.linear2.bias") as err:
        load_campplus(tmp_path / "campplus_cn_common.bin")
    assert "\n" not in str(err.value)
    torch.save([torch.zeros(3)], tmp_path / "list.bin")
    with pytest.raises(VoxDeskError, match="list.bin"):
        load_campplus(tmp_path / "list.bin")


# ---- odd clips ---------------------------------------------------------------------------------
def _tone(rate: int, seconds: float) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def test_silence_gives_the_official_finite_result(campplus: CAMPPlus) -> None:
    prompt = load_prompt(np.zeros(24000, np.float32), 24000)
    assert not prompt.audio_22k.any() and not prompt.audio_16k.any() and not prompt.emo_16k.any()
    fbank = campplus_fbank(prompt.audio_16k)
    assert torch.isfinite(fbank).all() and torch.isfinite(ref_mel(prompt.audio_22k, preset(TINY))).all()
    with torch.inference_mode():
        assert torch.isfinite(campplus(fbank.unsqueeze(0))).all()


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 48000, 96000])
def test_usual_and_odd_rates_give_the_official_lengths(rate: int) -> None:
    prompt = load_prompt(_tone(rate, 0.5), rate)
    n22 = int(np.ceil(0.5 * rate * 22050 / rate))
    assert prompt.audio_22k.size == n22
    assert prompt.audio_16k.size == int(np.ceil(n22 * 16000 / 22050))
    assert prompt.emo_16k.size == 8000
    assert np.abs(prompt.audio_16k).max() > 0.2 and np.abs(prompt.emo_16k).max() > 0.2


def test_channels_are_averaged_and_a_column_is_mono() -> None:
    left, right = _tone(24000, 0.3), _tone(24000, 0.3)[::-1].copy()
    both = load_prompt(np.stack([left, right], axis=1), 24000)
    mean = load_prompt((left + right) / 2, 24000)
    assert np.array_equal(both.audio_22k, mean.audio_22k)
    column = load_prompt(left[:, None], 24000)
    assert np.array_equal(column.emo_16k, load_prompt(left, 24000).emo_16k)


def test_the_shortest_clip_works_and_a_shorter_one_is_refused(campplus: CAMPPlus) -> None:
    prompt = load_prompt(_tone(16000, 0.1), 16000)
    fbank = campplus_fbank(prompt.audio_16k)
    assert fbank.shape[0] >= 8 and ref_mel(prompt.audio_22k, preset(TINY)).shape[-1] >= 8
    with torch.inference_mode():
        assert torch.isfinite(campplus(fbank.unsqueeze(0))).all()
    with pytest.raises(VoxDeskError, match="shorter than 0.1 s"):
        load_prompt(_tone(16000, 0.09), 16000)
    with pytest.raises(VoxDeskError, match="emotion clip is shorter"):
        load_emotion(np.zeros(0, np.float32), 16000)


@pytest.mark.parametrize(
    ("samples", "rate", "message"),
    [
        (np.full(16000, np.nan, np.float32), 16000, "NaN or infinity"),
        (np.r_[np.zeros(8000), np.inf].astype(np.float32), 16000, "NaN or infinity"),
        (np.zeros((2, 8000, 2), np.float32), 16000, "not mono or multi-channel"),
        (np.zeros(16000, np.float32), 0, "sample rate of 0 Hz"),
        (np.zeros(16000, np.float32), 500_000, "sample rate"),
        (np.zeros(16000, np.float32), 16000.5, "sample rate"),
    ],
)
def test_bad_clips_get_one_plain_line(samples: np.ndarray, rate, message: str) -> None:
    with pytest.raises(VoxDeskError, match=message) as err:
        load_prompt(samples, rate)
    assert "\n" not in str(err.value)


def test_nan_past_the_cut_is_never_read() -> None:
    clip = np.r_[_tone(16000, MAX_SECONDS + 2), np.nan].astype(np.float32)
    assert load_prompt(clip, 16000).emo_16k.size == MAX_SECONDS * 16000


def test_the_fmax_quirk_and_a_bad_config() -> None:
    """fmax is None only for the text "None"; YAML null or a number means 8000 (quirk 14)."""
    audio = _tone(22050, 0.5)
    tree = preset(TINY)
    spect = tree["s2mel"]["preprocess_params"]["spect_params"]
    assert spect["fmax"] == "None"
    full = ref_mel(audio, tree)
    settings = {"n_fft": 1024, "num_mels": 80, "sampling_rate": 22050, "hop_size": 256, "win_size": 1024}
    assert torch.equal(full, matcha_mel(torch.from_numpy(audio)[None], None, **settings))
    for value in (None, 11025):
        spect["fmax"] = value
        assert torch.equal(ref_mel(audio, tree), matcha_mel(torch.from_numpy(audio)[None], 8000, **settings))
    spect["n_fft"] = "1024"
    with pytest.raises(VoxDeskError, match="config.yaml: s2mel.preprocess_params.spect_params.n_fft") as err:
        ref_mel(audio, tree)
    assert "\n" not in str(err.value)
