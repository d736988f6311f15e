"""``voxdesk serve`` with a CosyVoice folder, through the ``openai`` client (issue 18 §5): OpenAI's
``speed`` and ``instructions`` map to the family's own speed and instruct mode, /v1/models names
its architecture and controls, a library voice's CosyVoice features are cached beside the
voice, and what the family cannot do is still a 400."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
import soundfile
from server_fixtures import Live, start_live
from tiny_cosyvoice import tiny_cv3  # noqa: F401

from app.selftest import voice_clip
from app.voices import latents


@pytest.fixture(scope="module")
def cv_live(tiny_cv3: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:  # noqa: F811
    server = start_live(tiny_cv3, tmp_path_factory.mktemp("cv-voices"))
    yield server
    server.server.stop()
    server.host.close()


def _clip_bytes(rate: int = 16000) -> bytes:
    buf = io.BytesIO()
    soundfile.write(buf, voice_clip(rate, 2.0), rate, format="WAV")
    return buf.getvalue()


REF = base64.b64encode(_clip_bytes()).decode()


def _speech(client, **extra) -> bytes:
    body = {"seed": 11, **extra}
    voice = body.pop("voice", "default")
    speech = client.audio.speech.create(model="tts-1", voice=voice, input="Hello world, nice to meet you.",
                                        response_format="pcm", extra_body=body)  # fmt: skip
    return speech.content


def test_models_lists_the_family_architecture_and_controls(cv_live):
    (model,) = httpx.get(cv_live.url + "/v1/models").json()["data"]
    assert model["architecture"] == "cosyvoice3" and model["sample_rate"] == 24000
    assert {"speed", "instruction", "reference"} <= set(model["controls"]) and "cfg" not in model["controls"]


def test_speed_and_instructions_reach_the_model(cv_live):
    client = cv_live.client(max_retries=0)
    plain = _speech(client, ref_audio=REF)
    assert len(plain) > 0 and plain == _speech(client, ref_audio=REF)  # the seed repeats the take
    instructed = _speech(client, ref_audio=REF, instructions="请用四川话表达。")
    assert len(instructed) > 0 and instructed != plain  # instruct2: another LM input
    fast = _speech(client, ref_audio=REF, speed=1.5)
    assert 0 < len(fast) < len(plain)  # CosyVoice's own speed: the mel resampled, fewer samples
    zero_shot = _speech(client, ref_audio=REF, ref_text="The words spoken in it.")
    assert len(zero_shot) > 0 and zero_shot != plain


def test_a_library_voice_keeps_its_cosyvoice_features(cv_live, tmp_path):
    client = cv_live.client(max_retries=0)
    sample = tmp_path / "anna.wav"
    sample.write_bytes(_clip_bytes(44100))
    with open(sample, "rb") as f:
        created = client.audio.voices.create(audio_sample=f, consent="me", name="Anna")
    first = _speech(client, voice="Anna")
    folder = cv_live.library.root / created.id / "latents"
    files = sorted(folder.glob("*.npy"))
    names = sorted(name for name in latents.COSYVOICE for f in files if f.name.endswith(f"-{name}.npy"))
    assert len(files) == 3 and names == sorted(latents.COSYVOICE)  # encoded once, kept per name
    mtimes = [f.stat().st_mtime_ns for f in files]
    assert _speech(client, voice="Anna") == first  # from the cache: the same take
    assert [f.stat().st_mtime_ns for f in files] == mtimes  # read, not encoded again


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cfg_value", 3.0),
        ("inference_timesteps", 4),
        ("emotion_vector", [0, 0.8, 0, 0, 0, 0, 0, 0]),  # IndexTTS-2.5's controls
        ("emotion_text", "angry"),
        ("emotion_audio", REF),
        ("language", "en"),
    ],
)
def test_what_the_family_cannot_do_is_a_400(cv_live, field, value):
    client = cv_live.client(max_retries=0)
    with pytest.raises(openai.BadRequestError) as err:
        _speech(client, ref_audio=REF, **{field: value})
    assert err.value.body["param"] == field and "Fun-CosyVoice3" in err.value.body["message"]


def test_without_a_voice_the_request_is_a_plain_400(cv_live):
    with pytest.raises(openai.BadRequestError) as err:
        _speech(cv_live.client(max_retries=0))
    assert "voice" in err.value.body["message"] and "\n" not in err.value.body["message"]
