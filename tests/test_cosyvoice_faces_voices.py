"""CosyVoice in the model manager's catalog and the voice library (issue 18 §5).

The catalog lists Fun-CosyVoice3 and CosyVoice2 beside the VoxCPM models and downloads only the
files inference reads; a library voice works with either family, each family's cache entries
kept apart and checked by name (a bad file is deleted and rebuilt, as VoxCPM's latents are).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from http.server import ThreadingHTTPServer

import numpy as np
import pytest
from test_download import REPO_HF, REPO_MS, Hub, _handler
from tiny_cosyvoice import tiny_cv3  # noqa: F401

from app.errors import VoxDeskError
from app.models import download as dl
from app.models.cosyvoice.runner import CONTROLS as CV
from app.voices import cloning, latents
from app.voices.library import VoiceLibrary

BY_KEY = {m.key: m for m in dl.KNOWN_MODELS}
CV3, CV2 = BY_KEY["Fun-CosyVoice3-0.5B"], BY_KEY["CosyVoice2-0.5B"]
TOKENS = np.array([5, 17, 6560, 0], np.int64)
EMBEDDING = np.linspace(-1, 1, 192, dtype=np.float32)
FEAT = np.random.default_rng(0).standard_normal((8, 80)).astype(np.float32)
LATENTS = np.random.default_rng(1).standard_normal((5, 4, 8)).astype(np.float32)


@pytest.fixture
def lib(tmp_path):
    return VoiceLibrary(tmp_path / "voices")


def _voice(lib, rate=44100, transcript="the words"):
    t = np.arange(int(1.5 * rate)) / rate
    return lib.create_from_samples((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate, "V",
                                   transcript=transcript)  # fmt: skip


# ---- the catalog ----------------------------------------------------------------------------
def test_the_catalog_lists_both_cosyvoice_models_with_their_sources_and_licence():
    assert (CV3.hf_repo, CV3.ms_repo) == ("FunAudioLLM/Fun-CosyVoice3-0.5B-2512",) * 2
    assert (CV2.hf_repo, CV2.ms_repo) == ("FunAudioLLM/CosyVoice2-0.5B", "iic/CosyVoice2-0.5B")
    for model, version in ((CV3, 3), (CV2, 2)):
        assert model.family == "cosyvoice" and model.architecture == f"cosyvoice{version}"
        assert model.license.name == "Apache-2.0" and model.license.permissive  # shown, nothing to accept
        assert model.output_rate == 24000 and 2000 < model.approx_mb < 6000
        assert {f"cosyvoice{version}.yaml", f"speech_tokenizer_v{version}.onnx", "llm.pt"} <= set(model.files)
    assert "9 languages" in CV3.title and "zh/en/ja/ko" in CV2.title


def test_a_cosyvoice_download_takes_only_the_files_inference_reads(tmp_path, tiny_cv3):  # noqa: F811
    files = {p.relative_to(tiny_cv3).as_posix(): p.read_bytes() for p in tiny_cv3.rglob("*") if p.is_file()}
    unused = {"llm.rl.pt": b"a second LM" * 9, "flow.decoder.estimator.fp32.onnx": b"trt" * 9,
              "CosyVoice-BlankEN/model.safetensors": b"qwen weights llm.pt replaces", "README.md": b"# card"}
    hub = Hub({**files, **unused})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        model = dataclasses.replace(CV3, hf_repo=REPO_HF, ms_repo=REPO_MS)
        for kind, revision in (("huggingface", "main"), ("modelscope", "master")):
            source = dl.Source(kind, f"http://127.0.0.1:{server.server_address[1]}", "test", revision)
            dest = dl.download_model(model, source, tmp_path / kind)
            got = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
            assert got == set(files) - {"CosyVoice-BlankEN/model.safetensors"} - set(unused)
            assert dl.validate_model_dir(dest) == []
    finally:
        server.shutdown()
        server.server_close()


def test_the_folder_check_names_the_first_missing_file(tmp_path, tiny_cv3):  # noqa: F811
    import shutil

    folder = shutil.copytree(tiny_cv3, tmp_path / "cv3")
    assert dl.validate_model_dir(folder) == []
    (folder / "speech_tokenizer_v3.onnx").unlink()
    (problem,) = dl.validate_model_dir(folder)
    assert "speech_tokenizer_v3.onnx is missing" in problem and "\n" not in problem
    (folder / "flow.pt.part").write_bytes(b"half")
    assert any("did not finish" in p for p in dl.validate_model_dir(folder))


# ---- the voice library's per-family caches -------------------------------------------------------
def test_each_family_keeps_its_own_named_entries(lib):
    voice = _voice(lib)
    latents.store(lib, voice, "voxcpm2-m", "prompt", LATENTS)
    for name, array in zip(latents.COSYVOICE, (TOKENS, EMBEDDING, FEAT), strict=True):
        latents.store(lib, voice, "cosyvoice3-m", name, array)
    got = latents.load_named(lib, voice, "cosyvoice3-m", latents.COSYVOICE)
    assert got["cv_speech_tokens"].dtype == np.int64 and np.array_equal(got["cv_speech_tokens"], TOKENS)
    assert np.array_equal(got["cv_embedding"], EMBEDDING) and np.array_equal(got["cv_prompt_feat"], FEAT)
    assert latents.load_named(lib, voice, "voxcpm2-m", latents.COSYVOICE) == {}  # never the other's
    assert latents.load(lib, voice, "cosyvoice3-m", "prompt") is None
    assert np.array_equal(latents.load(lib, voice, "voxcpm2-m", "prompt"), LATENTS)
    trimmed = lib.trim(voice, 0.0, 1.0)
    assert latents.load_named(lib, trimmed, "cosyvoice3-m", latents.COSYVOICE) == {}  # stale after an edit
    assert latents.prune(lib, trimmed) == 4
    assert latents.clear(lib, trimmed) == 0


BAD = {
    "cv_speech_tokens": [TOKENS.astype(np.float32), TOKENS[:0], TOKENS.reshape(2, 2)],
    "cv_embedding": [np.full(192, np.nan, np.float32), EMBEDDING.astype(np.int32), EMBEDDING.reshape(2, 96)],
    "cv_prompt_feat": [FEAT[:, :79], np.full_like(FEAT, np.inf), FEAT[0]],
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_entry_is_deleted_and_rebuilt(lib, caplog, name):
    voice = _voice(lib)
    good = {"cv_speech_tokens": TOKENS, "cv_embedding": EMBEDDING, "cv_prompt_feat": FEAT}[name]
    for bad in BAD[name]:
        path = latents.store(lib, voice, "cv3", name, good)
        np.save(path, bad, allow_pickle=False)  # as a damaged or foreign file would hold
        with caplog.at_level(logging.WARNING, logger="app.voices.latents"):
            assert latents.load(lib, voice, "cv3", name) is None
        assert not path.exists() and path.name in caplog.text
        with pytest.raises(ValueError):
            latents.store(lib, voice, "cv3", name, bad)  # a model's bad output is never cached
    pickled = latents.store(lib, voice, "cv3", name, good)
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    assert latents.load(lib, voice, "cv3", name) is None and not pickled.exists()


# ---- from a library voice to the engine's VoicePrompt ---------------------------------------------
def test_a_cosyvoice_prompt_carries_the_voice_at_its_own_rate_and_its_cached_features(lib):
    voice = _voice(lib, rate=44100)
    prompt = cloning.to_voice_prompt(lib, voice, 16000, "auto", "cosyvoice3", model_id="cv3", controls=CV)
    assert prompt.sample_rate == 44100 and len(prompt.prompt_audio) == voice.n_samples
    assert prompt.prompt_text == "the words" and prompt.reference_audio is None and prompt.features is None
    for name, array in zip(latents.COSYVOICE, (TOKENS, EMBEDDING, FEAT), strict=True):
        latents.store(lib, voice, "cv3", name, array)
    cached = cloning.to_voice_prompt(lib, voice, 16000, "auto", "cosyvoice3", model_id="cv3", controls=CV)
    assert sorted(cached.features) == sorted(latents.COSYVOICE)
    assert cached.prompt_latents is None and cached.reference_latents is None
    cross = cloning.to_voice_prompt(lib, voice, 16000, "reference", "cosyvoice2", model_id="cv3", controls=CV)
    assert cross.prompt_audio is None and len(cross.reference_audio) == voice.n_samples
    voxcpm = cloning.to_voice_prompt(lib, voice, 16000, "auto", "voxcpm2", model_id="cv3")
    assert voxcpm.sample_rate is None and voxcpm.features is None  # VoxCPM: as before
    assert len(voxcpm.prompt_audio) == pytest.approx(24000, abs=2)


def test_modes_for_cosyvoice(lib):
    with_text, no_text = _voice(lib), _voice(lib, transcript="")
    assert cloning.resolve_mode(with_text, "cosyvoice3", controls=CV) == "continuation"  # zero-shot
    assert cloning.resolve_mode(no_text, "cosyvoice3", controls=CV) == "reference"  # cross-lingual
    with pytest.raises(VoxDeskError, match="VoxCPM2"):
        cloning.resolve_mode(with_text, "cosyvoice2", "both", CV)
    assert cloning.mode_hint(with_text, "cosyvoice3", controls=CV).startswith("Zero-shot")
    assert cloning.mode_hint(no_text, "cosyvoice3", controls=CV).startswith("Cross-lingual")
