"""LoRA folders: checks with one plain line, voices with a LoRA attached, ``synth --lora`` and the
speech server's LoRA voices. Parity with the official package is in test_generate_parity.py,
batching in test_engine_lora.py."""

from __future__ import annotations

import json
import pickle

import httpx
import numpy as np
import pytest
import soundfile as sf
import torch
from server_fixtures import FIXED, api_model, live  # noqa: F401
from tiny import tone

from app.cli import main
from app.errors import VoxDeskError
from app.models.voxcpm.config import load_config
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.lora import LoRAConfig, check_lora_folder, read_lora, write_random_lora
from app.voices.library import VoiceLibrary


@pytest.fixture
def lora_v2(tiny_v2, tmp_path):
    return write_random_lora(
        tmp_path / "step_0000100", load_config(tiny_v2), LoRAConfig(r=4, alpha=8), seed=3
    )


def _one_line(exc: pytest.ExceptionInfo, *words: str) -> None:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    for word in words:
        assert word in text, text


def test_checks_name_the_file(tiny_v1, tiny_v2, tmp_path, lora_v2):
    cfg = load_config(tiny_v2)
    assert read_lora(lora_v2, cfg).rank == 4 and check_lora_folder(lora_v2).r == 4
    with pytest.raises(VoxDeskError) as exc:
        read_lora(tmp_path / "nowhere", cfg)
    _one_line(exc, "does not exist")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(VoxDeskError) as exc:
        read_lora(empty, cfg)
    _one_line(exc, "lora_weights.safetensors")
    # a LoRA made for the other architecture: shapes do not match
    other = write_random_lora(tmp_path / "v1", load_config(tiny_v1), LoRAConfig(r=4), seed=1)
    with pytest.raises(VoxDeskError) as exc:
        read_lora(other, cfg)
    _one_line(exc, "lora_weights.safetensors", "another model")
    # truncated safetensors
    cut = tmp_path / "cut"
    cut.mkdir()
    data = (lora_v2 / "lora_weights.safetensors").read_bytes()
    (cut / "lora_weights.safetensors").write_bytes(data[: len(data) // 2])
    for check in (lambda: read_lora(cut, cfg), lambda: check_lora_folder(cut)):
        with pytest.raises(VoxDeskError) as exc:
            check()
        _one_line(exc, "lora_weights.safetensors", "damaged")
    # a pickle that would run code is refused, nothing executed
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "lora_weights.ckpt").write_bytes(pickle.dumps(_Boom()))
    with pytest.raises(VoxDeskError) as exc:
        read_lora(evil, cfg)
    _one_line(exc, "lora_weights.ckpt")
    assert not (tmp_path / "boom").exists()
    # a config that is not JSON
    bad = tmp_path / "badcfg"
    bad.mkdir()
    (bad / "lora_weights.safetensors").write_bytes(data)
    (bad / "lora_config.json").write_text("{r: 4", encoding="utf-8")
    with pytest.raises(VoxDeskError) as exc:
        read_lora(bad, cfg)
    _one_line(exc, "lora_config.json")
    # a rank that disagrees with the config
    (bad / "lora_config.json").write_text(json.dumps({"lora_config": {"r": 8}}), encoding="utf-8")
    for check in (lambda: read_lora(bad, cfg), lambda: check_lora_folder(bad)):
        with pytest.raises(VoxDeskError) as exc:
            check()
        _one_line(exc, "lora_weights.safetensors")


class _Boom:
    def __reduce__(self):
        return (open, ("boom", "w"))


def test_attach_copies_checks_and_removes(tiny_v2, tmp_path, lora_v2):
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.create_from_samples(tone(16000), 16000, "Anna")
    torch.save({"step": 1}, lora_v2 / "optimizer.pth")  # the trainer's state beside it: not copied
    attached = library.attach_lora("Anna", lora_v2, tiny_v2)
    assert attached.lora == "step_0000100" and library.get(voice.id).lora == "step_0000100"
    folder = library.lora_folder(attached)
    assert sorted(p.name for p in folder.iterdir()) == ["lora_config.json", "lora_weights.safetensors"]
    # a damaged folder is refused and the attached LoRA stays
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "lora_weights.safetensors").write_bytes(b"\x00" * 20)
    with pytest.raises(VoxDeskError) as exc:
        library.attach_lora(attached, broken)
    _one_line(exc, "lora_weights.safetensors")
    assert library.lora_folder(library.get(voice.id)) == folder and read_lora(folder, load_config(tiny_v2))
    assert [p.name for p in library.folder(voice).iterdir() if p.name.startswith(".")] == []
    removed = library.remove_lora(voice)
    assert removed.lora == "" and library.lora_folder(removed) is None and not folder.exists()


def test_synth_lora_option_and_library_voice(api_model, tmp_path, capsys):  # noqa: F811
    lora = write_random_lora(tmp_path / "tuned", load_config(api_model), LoRAConfig(r=4, alpha=8), seed=3)
    base = ["synth", "--model", str(api_model), "--text", "hello world", "--seed", "3", "--device", "cpu"]
    base += ["--min-len", "4", "--max-len", "4", "--dtype", "float32", "--threads", "1"]
    assert main([*base, "--lora", str(lora), "--out", str(tmp_path / "a.wav")]) == 0
    want = Synthesizer.from_dir(api_model, "cpu", lora=lora).synthesize(
        "hello world", seed=3, min_len=4, max_len=4
    )
    audio, _ = sf.read(tmp_path / "a.wav", dtype="float32")
    assert np.abs(audio - want.audio).max() <= 1.0 / 2**15 + 1e-6
    # a library voice with the LoRA attached speaks with it, no --lora needed
    library = VoiceLibrary(tmp_path / "voices")
    library.create_from_samples(tone(9600), 16000, "Anna", "提示")
    library.attach_lora("Anna", lora)
    voice = ["--voice", "Anna", "--voices", str(library.root)]
    assert main([*base, *voice, "--out", str(tmp_path / "b.wav")]) == 0
    library.remove_lora("Anna")
    assert main([*base, *voice, "--out", str(tmp_path / "c.wav")]) == 0
    with_lora, _ = sf.read(tmp_path / "b.wav", dtype="float32")
    without, _ = sf.read(tmp_path / "c.wav", dtype="float32")
    assert np.abs(with_lora - without).max() > 1e-2
    capsys.readouterr()
    assert main([*base, "--lora", str(tmp_path / "missing"), "--out", str(tmp_path / "d.wav")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("voxdesk: ") and "does not exist" in err and "\n" not in err


def test_server_lists_and_speaks_lora_voices(live, api_model, tmp_path):  # noqa: F811
    folder = write_random_lora(tmp_path / "mine", load_config(api_model), LoRAConfig(r=4, alpha=8), seed=5)
    live.library.create_from_samples(tone(9600), 16000, "Bo")
    body = {"model": "tts-1", "input": "Hello world.", "voice": "Bo", "response_format": "pcm", **FIXED}
    plain = httpx.post(live.url + "/v1/audio/speech", json=body, timeout=60).content
    live.library.attach_lora("Bo", folder, api_model)
    listed = httpx.get(live.url + "/v1/audio/voices").json()
    assert [(v["name"], v["lora"]) for v in listed["data"]] == [("Bo", "mine")]
    tuned = httpx.post(live.url + "/v1/audio/speech", json=body, timeout=60)
    assert tuned.status_code == 200 and tuned.content != plain
    live.library.remove_lora("Bo")
    assert httpx.post(live.url + "/v1/audio/speech", json=body, timeout=60).content == plain
    live.library.delete(live.library.find("Bo"))
