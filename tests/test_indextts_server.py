"""``voxdesk serve`` with an IndexTTS-2.5 folder: /v1/models names its architecture, controls and
languages; a request with a reference clip is spoken (the same seed, the same audio); OpenAI's
``speed`` sets the duration factor and the emotion fields (``emotion_vector``, ``emotion_audio``,
``emotion_voice``, ``emotion_text`` with ``emotion_weight``) and ``language`` reach the model,
through the ``openai`` client's ``extra_body``; bad values are a 400 naming the field."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest
import soundfile
from server_fixtures import Live, start_live
from tiny_indextts import tiny_ix  # noqa: F401

from app.backends.remote import RemoteBackend
from app.cli import main
from app.selftest import voice_clip
from app.voices.library import AUDIO

LANGUAGES = ["zh", "en", "ja", "es", "ar"]
ANGRY = [0.0, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def ix_live(tiny_ix: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:  # noqa: F811
    server = start_live(tiny_ix, tmp_path_factory.mktemp("ix-voices"))
    yield server
    server.server.stop()
    server.host.close()


def _ref(rate: int = 24000) -> str:
    buf = io.BytesIO()
    soundfile.write(buf, voice_clip(rate, 2.0), rate, format="WAV")
    return base64.b64encode(buf.getvalue()).decode()


REF = _ref()


def _speak(client, text: str = "你好，世界。", **extra) -> bytes:
    body = {"seed": 1, "ref_audio": REF, **extra}
    speed = body.pop("speed", 1.0)
    return client.audio.speech.create(model="tts-1", voice="default", input=text, response_format="pcm",
                                      speed=speed, extra_body=body).content  # fmt: skip


def test_models_lists_the_controls_and_languages(ix_live) -> None:
    (model,) = httpx.get(ix_live.url + "/v1/models").json()["data"]
    assert model["architecture"] == "indextts25" and model["sample_rate"] == 22050
    assert model["controls"] == ["emotion", "emotion_text", "language", "reference", "speed"]
    assert sorted(model["languages"]) == sorted(LANGUAGES)
    remote = RemoteBackend(ix_live.url)  # what ``voxdesk dub --server`` reads: the model takes emotions
    assert remote.connect().controls == frozenset(model["controls"])
    remote.close()


def test_speed_and_emotions_reach_the_model_through_the_openai_client(ix_live, tmp_path) -> None:
    """All at once (the engine decodes them in one batch), with the same seed and reference clip;
    ``voxdesk synth --server`` sends its ``--emotion-wav``/``--emotion-weight``/``--speed``/
    ``--language`` options among them (at speeds 0.8 and 1.25: their lengths scale by 1.25/0.8)."""
    bob = ix_live.library.create_from_samples(voice_clip(16000, 1.5)[::-1].copy(), 16000, "Bob")
    bobs_file = (ix_live.library.folder(bob) / AUDIO).read_bytes()
    bobs = {"emotion_weight": 0.6, "language": "zh"}
    bodies = {
        "plain": {},
        "vector": {"emotion_vector": ANGRY, "emotion_weight": 0.9},
        "fast": {"emotion_vector": ANGRY, "emotion_weight": 0.9, "speed": 1.25},
        "audio": {"emotion_audio": base64.b64encode(bobs_file).decode(), **bobs},
        "voice": {"emotion_voice": "bob", **bobs},
        "text": {"emotion_text": "a quiet, frightened whisper"},
    }
    client = ix_live.client(max_retries=0, timeout=600)
    ref, emotion = tmp_path / "ref.wav", tmp_path / "emotion.wav"
    ref.write_bytes(base64.b64decode(REF))
    soundfile.write(str(emotion), voice_clip(16000, 1.5)[::-1].copy(), 16000)
    argv = ["synth", "--server", ix_live.url, "--text", "你好，世界。", "--ref-wav", str(ref), "--seed", "1",
            "--emotion-wav", str(emotion), "--emotion-weight", "0.6", "--language", "zh"]  # fmt: skip
    outs = {speed: tmp_path / f"synth_{speed}.wav" for speed in ("0.8", "1.25")}
    with ThreadPoolExecutor(len(bodies) + len(outs)) as pool:
        synths = [pool.submit(main, [*argv, "--speed", speed, "--out", str(o)]) for speed, o in outs.items()]
        pcm = dict(zip(bodies, pool.map(lambda body: _speak(client, **body), bodies.values()), strict=True))
        assert [synth.result() for synth in synths] == [0, 0]
    wavs = {speed: soundfile.read(str(out), dtype="float32") for speed, out in outs.items()}
    assert all(rate == 22050 and np.abs(audio).max() > 0 for audio, rate in wavs.values())
    assert len(wavs["0.8"][0]) / len(wavs["1.25"][0]) == pytest.approx(1.25 / 0.8, rel=0.01)
    n = {name: len(audio) // 2 for name, audio in pcm.items()}
    assert all(count > 11025 for count in n.values()), n  # PCM16: more than half a second each
    for name in ("vector", "audio", "text"):
        assert pcm[name] != pcm["plain"], name
    # speed F is the duration factor 1/F: the same mel codes, S2Mel's length scaled by 0.8
    assert n["fast"] / n["vector"] == pytest.approx(0.8, rel=0.01)
    assert pcm["voice"] == pcm["audio"]  # the library voice's recording is the emotion clip
    ix_live.wait_idle()


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"emotion_vector": ANGRY[:7]}, "emotion_vector", "8 weights"),
        ({"emotion_vector": [0.6, 0.6, 0, 0, 0, 0, 0, 0]}, "emotion_vector", "add up to"),
        ({"emotion_vector": [10**400, 0, 0, 0, 0, 0, 0, 0]}, "emotion_vector", "from 0 to 1"),
        ({"emotion_vector": "angry"}, "emotion_vector", "list of 8 numbers"),
        ({"emotion_vector": ANGRY, "emotion_weight": 1.5}, "emotion_weight", "between 0 and 1"),
        ({"emotion_weight": 0.5}, "emotion_weight", "needs an emotion"),
        ({"emotion_vector": ANGRY, "emotion_text": "calm"}, "emotion_text", "two emotions"),
        ({"emotion_audio": "/etc/passwd"}, "emotion_audio", "URLs and file paths are not accepted"),
        ({"emotion_audio": "UklGRg=="}, "emotion_audio", "not an audio file"),
        ({"language": "fr"}, "language", "'fr' is not one IndexTTS-2.5 speaks: send one of zh, en, ja"),
    ],
)
def test_a_bad_emotion_or_language_is_a_400_naming_the_field(ix_live, body, param, words) -> None:
    answer = httpx.post(ix_live.url + "/v1/audio/speech", json={"input": "你好。", "ref_audio": REF, **body})
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["param"] == param and words in error["message"], error
    assert "\n" not in error["message"]


def test_a_silent_emotion_clip_and_an_unknown_emotion_voice(ix_live) -> None:
    buf = io.BytesIO()
    soundfile.write(buf, np.zeros(16000, np.float32), 16000, format="WAV")
    silent = base64.b64encode(buf.getvalue()).decode()
    answer = httpx.post(ix_live.url + "/v1/audio/speech", json={"input": "你好。", "emotion_audio": silent})
    assert answer.status_code == 400 and "silent" in answer.json()["error"]["message"]
    answer = httpx.post(ix_live.url + "/v1/audio/speech", json={"input": "你好。", "emotion_voice": "Nobody"})
    assert answer.status_code == 404 and answer.json()["error"]["param"] == "emotion_voice"
