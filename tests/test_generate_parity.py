"""End-to-end parity with the official voxcpm 2.0.3 loop, every mode, both architectures.

Recipe (spec section 6): fp32 tiny checkpoints, optimize=False, retry_badcase=False (the
bad-case retry has its own tests at the end, with it on), the same seed (the official loop
after ``torch.manual_seed``, ours from its own generator) and a forced length
(min_len >= max_len). The official non-streaming output is what ``core.py`` returns: VoxCPM2
``generate``; for VoxCPM1 ``_generate_with_prompt_cache`` (its plain ``generate`` does not
trim the prompt context from the audio).
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch
from official import import_official
from tiny import set_stop_head, tone, write_tiny_checkpoint

from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.prompt import VoicePrompt, design_text

TEXT = "你好世界，Hello world 123! 今天天气很好。"
PROMPT_TEXT = "这是提示, a prompt."
LATENT_TOL, WAVE_TOL = 1e-4, 1e-3


@pytest.fixture(scope="module")
def audio_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("voices")
    prompt, ref = tone(150, freq=220.0, seed=1), tone(90, freq=330.0, seed=2)
    sf.write(folder / "prompt.wav", prompt, 16000, subtype="FLOAT")
    sf.write(folder / "ref.wav", ref, 16000, subtype="FLOAT")
    short = tone(5, seed=3)  # one VoxCPM1 patch (8 samples) after padding
    sf.write(folder / "short.wav", short, 16000, subtype="FLOAT")
    files = {"prompt": (prompt, "prompt.wav"), "ref": (ref, "ref.wav"), "short": (short, "short.wav")}
    return {k: (str(folder / name), wav) for k, (wav, name) in files.items()}


def _official(path, v2: bool):
    import_official()
    if v2:
        from voxcpm.model.voxcpm2 import VoxCPM2Model as cls
    else:
        from voxcpm.model.voxcpm import VoxCPMModel as cls
    return cls.from_local(str(path), optimize=False, device="cpu")


@pytest.fixture(scope="module")
def pair_v2(tiny_v2):
    return _official(tiny_v2, True), Synthesizer.from_dir(tiny_v2, "cpu")


@pytest.fixture(scope="module")
def pair_v1(tiny_v1):
    return _official(tiny_v1, False), Synthesizer.from_dir(tiny_v1, "cpu")


def _run_official(
    off,
    v2: bool,
    text: str,
    kw: dict,
    seed: int,
    min_len: int,
    max_len: int,
    retry: bool = False,
    timesteps: int = 10,
):
    """Official audio, generated patches (of every take) and prefill ids (captured with hooks)."""
    patches, ids = [], []
    h1 = off.feat_decoder.register_forward_hook(lambda m, i, o: patches.append(o.transpose(1, 2)[0].clone()))
    h2 = off.base_lm.embed_tokens.register_forward_hook(lambda m, i, o: ids.append(i[0][0].tolist()))
    try:
        torch.manual_seed(seed)
        opts = dict(min_len=min_len, max_len=max_len, retry_badcase=retry, inference_timesteps=timesteps)
        if v2 or "prompt_wav_path" not in kw:
            audio = off.generate(target_text=text, **opts, **kw)
        else:
            cache = off.build_prompt_cache(kw["prompt_text"], kw["prompt_wav_path"])
            audio, _, _ = next(off._generate_with_prompt_cache(text, cache, **opts))
    finally:
        h1.remove()
        h2.remove()
    return audio.squeeze(0).numpy(), torch.stack(patches).numpy(), ids[0]


def _modes(files):
    p_path, p_wav = files["prompt"]
    r_path, r_wav = files["ref"]
    s_path, s_wav = files["short"]
    cont = (dict(prompt_wav_path=p_path, prompt_text=PROMPT_TEXT), VoicePrompt(p_wav, PROMPT_TEXT))
    return {
        "zero-shot": ({}, None),
        "one-patch prompt": (
            dict(prompt_wav_path=s_path, prompt_text=PROMPT_TEXT),
            VoicePrompt(s_wav, PROMPT_TEXT),
        ),
        "continuation": cont,
        "reference": (dict(reference_wav_path=r_path), VoicePrompt(reference_audio=r_wav)),
        "reference+continuation": (
            {**cont[0], "reference_wav_path": r_path},
            VoicePrompt(p_wav, PROMPT_TEXT, reference_audio=r_wav),
        ),
    }


def _compare(off, ours: Synthesizer, v2, text, kw, voice, seed=7, min_len=9, max_len=9):
    audio, patches, ids = _run_official(off, v2, text, kw, seed, min_len, max_len)
    result = ours.synthesize(text, voice, seed=seed, min_len=min_len, max_len=max_len, retry_badcase=False)
    assert result.token_ids == ids
    assert result.latents.shape == patches.shape
    assert np.abs(result.latents - patches).max() <= LATENT_TOL
    assert result.audio.shape == audio.shape
    assert np.abs(result.audio - audio).max() <= WAVE_TOL
    return result


@pytest.mark.parametrize("mode", ["zero-shot", "continuation", "reference", "reference+continuation"])
def test_v2_modes_match_official(pair_v2, audio_files, mode):
    off, ours = pair_v2
    kw, voice = _modes(audio_files)[mode]
    result = _compare(off, ours, True, TEXT, kw, voice)
    assert result.n_patches == 9
    assert all(len(c) == ours.model.samples_per_patch for c in result.chunks)


@pytest.mark.parametrize("mode", ["zero-shot", "continuation", "one-patch prompt"])
def test_v1_modes_match_official(pair_v1, audio_files, mode):
    off, ours = pair_v1
    kw, voice = _modes(audio_files)[mode]
    _compare(off, ours, False, TEXT, kw, voice)


def test_voice_design_text_matches_official(pair_v2):
    off, ours = pair_v2
    _compare(off, ours, True, design_text("温柔的女声, calm", TEXT), {}, None, seed=11)


@pytest.mark.parametrize("which", ["v1", "v2"])
def test_natural_stop_and_length_cap_match_official(pair_v1, pair_v2, which):
    off, ours = pair_v2 if which == "v2" else pair_v1
    # The stop head decides (min_len 2); then a short text where 6*tokens+10 caps the length.
    _compare(off, ours, which == "v2", TEXT, {}, None, seed=3, min_len=2, max_len=60)
    short = ours.synthesize("Hi", None, seed=5, min_len=100, max_len=100, retry_badcase=False)
    assert short.n_patches == 6 * len(ours.tokenizer("Hi")) + 10
    _compare(off, ours, which == "v2", "Hi", {}, None, seed=5, min_len=100, max_len=100)


def test_cached_latents_equal_encoding(pair_v2, audio_files):
    _, ours = pair_v2
    _, p_wav = audio_files["prompt"]
    direct = ours.synthesize(TEXT, VoicePrompt(p_wav, PROMPT_TEXT), seed=1, min_len=5, max_len=5)
    prompt = ours.prefill_for(TEXT, VoicePrompt(p_wav, PROMPT_TEXT))
    cached_voice = VoicePrompt(
        prompt_text=PROMPT_TEXT, prompt_latents=prompt.feats[prompt.audio_mask == 1].numpy()
    )
    cached = ours.synthesize(TEXT, cached_voice, seed=1, min_len=5, max_len=5)
    np.testing.assert_array_equal(direct.audio, cached.audio)


def test_stream_yields_each_patch_as_it_is_made(pair_v2):
    _, ours = pair_v2
    prefill = ours.prefill_for(TEXT)
    whole = ours.synthesize(TEXT, seed=2, min_len=6, max_len=6)
    stream = ours.stream(prefill, seed=2, min_len=6, max_len=6)
    first = next(stream)  # available before the rest is generated
    assert first.dtype == np.float32 and len(first) == ours.model.samples_per_patch
    rest = list(stream)
    np.testing.assert_array_equal(np.concatenate([first, *rest]), whole.audio)


# ---- the official bad-case retry (retry_badcase=True, the official default) -----------------
@pytest.fixture(scope="module")
def stop_pairs(tmp_path_factory):
    """(official, ours) on tiny checkpoints whose stop head never / always fires."""
    pairs = {}
    for arch in ("voxcpm2", "voxcpm"):
        for stop in ("never", "always"):
            path = write_tiny_checkpoint(tmp_path_factory.mktemp(f"{arch}-{stop}"), arch)
            set_stop_head(path, stop)
            v2 = arch == "voxcpm2"
            pairs[v2, stop] = (_official(path, v2), Synthesizer.from_dir(path, "cpu"))
    return pairs


def _compare_retry(off, ours, v2, text, kw, voice, seed, min_len, max_len=4096):
    """Official ``retry_badcase=True`` against ours with its retry on: the take kept and the
    patches drawn over all takes (so the noise went on from the same generator). Three solver
    steps a patch keep these long runs quick."""
    audio, patches, ids = _run_official(off, v2, text, kw, seed, min_len, max_len, retry=True, timesteps=3)
    result = ours.synthesize(text, voice, seed=seed, timesteps=3, min_len=min_len, max_len=max_len)
    assert result.token_ids == ids
    assert len(patches) == result.takes * result.n_patches  # every take of one length here
    kept = patches[-result.n_patches :]
    assert np.abs(result.latents - kept).max() <= LATENT_TOL
    assert result.audio.shape == audio.shape
    assert np.abs(result.audio - audio).max() <= WAVE_TOL
    return result


@pytest.mark.parametrize("mode", ["zero-shot", "continuation", "reference"])
@pytest.mark.parametrize("v2", [True, False], ids=["v2", "v1"])
def test_retry_runs_three_capped_takes_like_official(stop_pairs, audio_files, v2, mode):
    if mode == "reference" and not v2:
        pytest.skip("reference audio is VoxCPM2 only")
    off, ours = stop_pairs[v2, "never"]
    kw, voice = _modes(audio_files)[mode]
    result = _compare_retry(off, ours, v2, "Hi", kw, voice, seed=5, min_len=2)
    assert result.takes == 3
    assert result.n_patches == 6 * len(ours.tokenizer("Hi")) + 10
    # the third take differs from the first: the generator went on instead of starting again
    first = ours.synthesize("Hi", voice, seed=5, timesteps=3, retry_badcase=False)
    assert np.abs(first.latents - result.latents).max() > 1e-3


@pytest.mark.parametrize("v2", [True, False], ids=["v2", "v1"])
@pytest.mark.parametrize("over", [-1, 0])
def test_bad_case_threshold_matches_official(stop_pairs, audio_files, v2, over):
    """A take of exactly 6 patches per token is a bad case, one patch less is not. VoxCPM1
    counts its two prompt-context patches too (continuation), as its ``pred_audio_feat`` does."""
    off, ours = stop_pairs[v2, "always"]  # a take is min_len + 2 patches long
    kw, voice = _modes(audio_files)["continuation"]
    n = 6 * len(ours.tokenizer("Hi")) - (0 if v2 else 2) + over
    result = _compare_retry(off, ours, v2, "Hi", kw, voice, seed=9, min_len=n - 2)
    assert result.n_patches == n
    assert result.takes == (3 if over == 0 else 1)


# ---- official-format LoRA folders (app/models/voxcpm/lora.py) --------------------------------
LORA = dict(
    enable_lm=True,
    enable_dit=True,
    enable_proj=True,
    r=4,
    alpha=8,
    target_modules_lm=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "down_proj"],
    target_modules_dit=["q_proj", "v_proj", "in_proj", "out_proj", "linear_1"],
)


@pytest.mark.parametrize("v2", [True, False], ids=["v2", "v1"])
def test_lora_matches_official(tiny_v1, tiny_v2, audio_files, tmp_path, v2):
    """Random non-zero LoRA weights on LM (attention and MLP), DiT and projections: our output
    equals the official ``VoxCPM(..., lora_weights_path=...)`` for the same seed."""
    from app.models.voxcpm.config import load_config
    from app.models.voxcpm.lora import LoRAConfig, write_random_lora

    path = tiny_v2 if v2 else tiny_v1
    cfg = LoRAConfig.from_json({"lora_config": LORA})
    # v1 reads the pickle format, v2 safetensors
    folder = write_random_lora(tmp_path / "lora", load_config(path), cfg, seed=4, ckpt=not v2)
    official = import_official()
    if v2:
        from voxcpm.model.voxcpm2 import LoRAConfig as OfficialConfig
    else:
        from voxcpm.model.voxcpm import LoRAConfig as OfficialConfig

    off = official.VoxCPM(
        str(path),
        zipenhancer_model_path=None,
        enable_denoiser=False,
        optimize=False,
        device="cpu",
        lora_config=OfficialConfig(**LORA),
        lora_weights_path=str(folder),
    ).tts_model
    ours = Synthesizer.from_dir(path, "cpu", lora=folder)
    kw, voice = _modes(audio_files)["continuation"]
    result = _compare(off, ours, v2, TEXT, kw, voice, seed=13)
    plain = Synthesizer.from_dir(path, "cpu").synthesize(
        TEXT, voice, seed=13, min_len=9, max_len=9, retry_badcase=False
    )
    assert np.abs(plain.latents - result.latents).max() > 1e-2  # the LoRA changed the output
