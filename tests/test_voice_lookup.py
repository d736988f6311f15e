"""A library voice by name or id, one lookup for ``voxdesk synth --voice`` and the server; OpenAI's
stock voice names (``alloy``, ``echo``, …) on the server, mapped to a configurable default voice."""

from __future__ import annotations

import httpx
import numpy as np
import openai
import pytest
import soundfile as sf
from server_fixtures import FIXED, api_model, start_live  # noqa: F401
from tiny import tone

from app.cli import main
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.prompt import VoicePrompt
from app.voices.library import VoiceLibrary
from app.voices.lookup import STOCK_VOICES, VoiceNotFound, find_voice, speaking_voice


def test_stock_names_are_openais_current_list():
    from typing import get_args

    from openai.types.audio.speech_create_params import Voice

    literal = next(a for a in get_args(Voice) if get_args(a) and all(isinstance(x, str) for x in get_args(a)))
    assert set(STOCK_VOICES) == set(get_args(literal))


def test_lookup_by_name_id_and_stock_name(tmp_path):
    library = VoiceLibrary(tmp_path / "voices")
    anna = library.create_from_samples(tone(9600), 16000, "Anna", "hello")
    nova = library.create_from_samples(tone(9600, freq=330.0), 16000, "Nova", "hi")
    assert find_voice(library, "anna") == anna and find_voice(library, anna.id) == anna
    assert find_voice(library, "../etc") is None and find_voice(library, "0" * 12) is None
    assert speaking_voice(library, "default") is None and speaking_voice(library, None) is None
    assert speaking_voice(library, "alloy") is None  # no default voice: the model's own
    assert speaking_voice(library, "ALLOY", "Anna") == anna
    assert speaking_voice(library, "nova", "Anna") == nova  # a library voice of that name wins
    with pytest.raises(VoiceNotFound, match="no voice named 'Carol'"):
        speaking_voice(library, "Carol", "Anna")
    library.delete(anna)
    with pytest.raises(VoiceNotFound, match="default voice 'Anna'"):
        speaking_voice(library, "echo", "Anna")


# ---- voxdesk synth --voice ------------------------------------------------------------------
def test_synth_voice_speaks_a_library_voice(api_model, tmp_path, capsys):  # noqa: F811
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.create_from_samples(tone(9600), 16000, "Ann Lee", "提示")
    common = ["synth", "--model", str(api_model), "--text", "hello", "--seed", "1", "--min-len", "4",
              "--max-len", "4", "--voices", str(library.root)]  # fmt: skip
    assert main([*common, "--voice", "ann lee", "--out", str(tmp_path / "a.wav")]) == 0, capsys.readouterr()
    assert main([*common, "--voice", voice.id, "--out", str(tmp_path / "b.wav")]) == 0
    prompt = VoicePrompt(library.audio(voice, 16000), "提示")
    want = Synthesizer.from_dir(api_model, "cpu").synthesize("hello", prompt, seed=1, min_len=4, max_len=4)
    for name in ("a.wav", "b.wav"):
        got = sf.read(tmp_path / name, dtype="float32")[0]
        assert np.abs(got - want.audio).max() <= 1.0 / 2**15 + 1e-6


def test_synth_voice_errors_are_one_line(tiny_v2, tmp_path, capsys):
    library = VoiceLibrary(tmp_path / "voices")
    library.create_from_samples(tone(9600), 16000, "Ann", "提示")
    common = ["synth", "--model", str(tiny_v2), "--text", "hello", "--voices", str(library.root),
              "--out", str(tmp_path / "x.wav")]  # fmt: skip
    assert main([*common, "--voice", "Carol"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no voice named 'Carol'" in err and "(voices: Ann)" in err
    sf.write(tmp_path / "p.wav", tone(9600), 16000)
    both = ["--voice", "Ann", "--prompt-wav", str(tmp_path / "p.wav"), "--prompt-text", "x"]
    assert main([*common, *both]) == 1
    assert "cannot be combined" in capsys.readouterr().err
    assert not (tmp_path / "x.wav").exists()


# ---- the server: stock names ----------------------------------------------------------------
def _pcm(client, voice: str) -> bytes:
    body = dict(FIXED)
    return client.audio.speech.create(model="tts-1", voice=voice, input="Hello world.", response_format="pcm",
                                      extra_body=body).content  # fmt: skip


def test_server_answers_stock_voice_names(api_model, tmp_path):  # noqa: F811
    live = start_live(api_model, tmp_path / "voices")
    try:
        client = live.client()
        model_voice = _pcm(client, "default")
        assert _pcm(client, "alloy") == model_voice  # none set: a stock name speaks as "default"
        live.library.create_from_samples(tone(9600), 16000, "Anna", "hello")
        anna = _pcm(client, "Anna")
        assert anna != model_voice
        live.server.state.config.default_voice = "Anna"
        assert _pcm(client, "alloy") == anna and _pcm(client, "shimmer") == anna
        live.library.create_from_samples(tone(9600, freq=330.0), 16000, "Echo", "hello")
        assert _pcm(client, "echo") not in (anna, model_voice)  # the library's "Echo" wins
        with pytest.raises(openai.NotFoundError) as err:
            _pcm(client, "Carol")  # neither a library voice nor a stock name
        assert err.value.body["code"] == "voice_not_found"
        live.library.delete(live.library.find("Anna"))
        body = {"model": "tts-1", "voice": "nova", "input": "Hi."}
        reply = httpx.post(live.url + "/v1/audio/speech", json=body)
        assert reply.status_code == 404 and "default voice 'Anna'" in reply.json()["error"]["message"]
    finally:
        live.server.stop()
        live.host.close()


def test_serve_checks_the_default_voice_before_loading(tmp_path, capsys):
    VoiceLibrary(tmp_path / "voices")
    code = main(["serve", "--model", str(tmp_path / "no-model"), "--voices", str(tmp_path / "voices"),
                 "--default-voice", "Zed"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "--default-voice 'Zed' is not in the voice library" in err
