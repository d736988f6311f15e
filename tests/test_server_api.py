"""``voxdesk serve`` through the official ``openai`` client against a live server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import threading

import httpx
import numpy as np
import openai
import pytest
import soundfile as sf
from server_fixtures import FIXED, StepGate, api_model, live  # noqa: F401
from ui_fixtures import write_voice_file

from app.cli import main
from app.server.formats import supported_formats


def _speech(client, fmt="wav", text="Hello world.", **extra):
    body = {**FIXED, **extra}
    return client.audio.speech.create(
        model="tts-1", voice=body.pop("voice", "default"), input=text, response_format=fmt, extra_body=body
    )


def _pcm(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<i2")


def test_wav_for_a_seed_equals_voxdesk_synth(live, tmp_path, capsys):  # noqa: F811
    served, rate = sf.read(io.BytesIO(_speech(live.client()).content), dtype="int16")
    common = ["synth", "--model", str(live.model_dir), "--seed", "3", "--device", "cpu",
              "--min-len", "6", "--max-len", "6"]  # fmt: skip
    # a text file goes through the same engine as the server: the same samples, up to the last
    # bits fp32 CPU sums round to with the thread count torch ran at (1e-3 is the parity bound)
    lines = tmp_path / "lines.txt"
    lines.write_text("Hello world.\n", encoding="utf-8")
    assert main([*common, "--text-file", str(lines), "--out", str(tmp_path / "batch")]) == 0, (
        capsys.readouterr()
    )
    batch, batch_rate = sf.read(tmp_path / "batch" / "0001.wav", dtype="int16")
    assert rate == batch_rate == 48000 and len(served) > 0
    assert len(served) == len(batch)
    assert np.abs(served.astype(np.int32) - batch).max() <= 33
    # one text goes through the one-request reference loop: equal within the engine's parity bound
    assert main([*common, "--text", "Hello world.", "--out", str(tmp_path / "one.wav")]) == 0
    one, _ = sf.read(tmp_path / "one.wav", dtype="float32")
    assert len(one) == len(served)
    assert np.abs(one - served.astype(np.float32) / 32768).max() < 1e-3


def test_streaming_and_sse_concatenate_to_the_same_audio(live):  # noqa: F811
    client = live.client()
    whole = _speech(client, "pcm").content
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="default", input="Hello world.", response_format="pcm", stream_format="audio",
        extra_body=FIXED,
    ) as response:  # fmt: skip
        assert response.headers["x-seed"] == "3"
        pieces = list(response.iter_bytes())
    assert b"".join(pieces) == whole and len(whole) > 0

    with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="default", input="Hello world.", response_format="wav", stream_format="sse",
        extra_body=FIXED,
    ) as response:  # fmt: skip
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    assert [e["type"] for e in events[:-1]] == ["speech.audio.delta"] * (len(events) - 1)
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] > 0
    body = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert body[:4] == b"RIFF" and body[44:] == whole  # streamed WAV: open header, then the same PCM
    assert np.array_equal(sf.read(io.BytesIO(body), dtype="int16")[0], _pcm(whole))


def test_every_response_format_opens_in_soundfile(live):  # noqa: F811
    client = live.client()
    reference = _pcm(_speech(client, "pcm").content).astype(np.float32) / 32767
    assert {"wav", "pcm", "flac", "mp3", "opus"} <= set(supported_formats())
    for fmt in ("wav", "flac", "mp3", "opus"):
        data = _speech(client, fmt).content
        audio, rate = sf.read(io.BytesIO(data), dtype="float32")
        assert rate == 48000 and len(audio) > 0, fmt
        if fmt in ("wav", "flac"):  # lossless: the same samples
            assert np.abs(audio - reference).max() < 1e-4, fmt
    with pytest.raises(openai.BadRequestError) as err:
        _speech(client, "aac")
    assert "aac" in err.value.body["message"] and err.value.body["param"] == "response_format"


def test_voices_upload_list_use_delete(live, tmp_path):  # noqa: F811
    client = live.client()
    sample = write_voice_file(tmp_path / "anna.wav", 220)
    with open(sample, "rb") as f:
        created = client.audio.voices.create(audio_sample=f, consent="me", name="Anna",
                                             extra_body={"ref_text": "hello"})  # fmt: skip
    assert created.name == "Anna" and created.object == "audio.voice"
    listed = httpx.get(live.url + "/v1/audio/voices").json()
    assert [v["name"] for v in listed["data"]] == ["Anna"] and listed["data"][0]["ref_text"] == "hello"
    # the window's library sees the same voice
    assert [v.name for v in live.library.list()] == ["Anna"]

    first = _speech(client, "pcm", voice="Anna").content
    cached = list((live.library.root / created.id / "latents").glob("*.npy"))
    assert len(cached) == 1  # encoded once, stored where the window keeps latents
    mtime = cached[0].stat().st_mtime_ns
    again = _speech(client, "pcm", voice=created.id).content  # by id as well as by name
    assert again == first and cached[0].stat().st_mtime_ns == mtime  # reused, not re-encoded
    assert first != _speech(client, "pcm").content  # the voice changes the audio

    deleted = client.audio.voices.delete(created.id)
    assert deleted.deleted and live.library.list() == []
    with pytest.raises(openai.NotFoundError):
        _speech(client, "pcm", voice="Anna")


def test_ref_audio_base64_and_data_uri(live, tmp_path):  # noqa: F811
    client = live.client()
    raw = write_voice_file(tmp_path / "ref.wav", 330).read_bytes()
    b64 = base64.b64encode(raw).decode()
    plain = _speech(client, "pcm", ref_audio=b64, ref_text="hi").content
    uri = _speech(client, "pcm", ref_audio="data:audio/wav;base64," + b64, ref_text="hi").content
    reference_mode = _speech(client, "pcm", ref_audio=b64).content  # VoxCPM2: no transcript needed
    assert plain == uri and len(plain) > 0 and reference_mode != plain
    designed = _speech(client, "pcm", instructions="a calm voice").content
    assert designed != _speech(client, "pcm").content  # "(a calm voice)Hello world." is another prompt


@pytest.mark.parametrize(
    ("field", "value"),
    [("emotion_vector", [0, 0.8, 0, 0, 0, 0, 0, 0]), ("emotion_text", ""), ("language", "en")],
)
def test_indextts_fields_are_a_400_for_voxcpm(live, field, value):  # noqa: F811
    with pytest.raises(openai.BadRequestError) as err:
        _speech(live.client(max_retries=0), **{field: value})
    assert err.value.body["param"] == field and "VoxCPM" in err.value.body["message"]
    (model,) = httpx.get(live.url + "/v1/models").json()["data"]
    assert model["languages"] == [] and "emotion" not in model["controls"]


def test_32_concurrent_clients_finish_and_are_batched(live):  # noqa: F811
    client = live.client(max_retries=0)
    results: list[bytes | Exception] = [b""] * 32
    start = threading.Barrier(32)

    def one(i: int) -> None:
        start.wait()
        try:
            results[i] = _speech(client, "pcm", text=f"Client number {i}.", seed=i, min_new_tokens=20,
                                 max_new_tokens=20).content  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(isinstance(r, bytes) and len(r) > 0 for r in results), results
    health = live.wait_idle()
    assert health["engine"]["max_batch"] > 1  # requests of different clients decoded together
    # batching does not change a request's audio (beyond float rounding): client 5 alone
    alone = _speech(client, "pcm", text="Client number 5.", seed=5, min_new_tokens=20, max_new_tokens=20)
    diff = np.abs(_pcm(alone.content).astype(int) - _pcm(results[5]).astype(int))
    assert len(diff) > 0 and diff.max() / 32768 < 1e-3


def test_a_disconnect_mid_stream_cancels_and_frees_blocks(live):  # noqa: F811
    live.wait_idle()
    before = live.health()["engine"]
    body = {"model": "tts-1", "input": "A long one.", "voice": "default", "response_format": "pcm",
            "stream_format": "audio", "seed": 1, "min_new_tokens": 1500, "max_new_tokens": 1500}  # fmt: skip
    with StepGate(live.host.engine) as gate, httpx.Client(base_url=live.url) as http:
        gate.release(3)
        with http.stream("POST", "/v1/audio/speech", json=body) as response:
            assert response.status_code == 200
            chunks = response.iter_bytes()  # (kept: a dropped iterator closes the connection)
            assert next(chunks)
            busy = live.health()
            assert busy["in_flight"] == 1 and busy["engine"]["active"] == 1, busy
            assert busy["engine"]["kv_blocks_free"] < busy["engine"]["kv_blocks_total"]
        # the response is closed here, mid-stream: the client hangs up
        gate.release(10_000)
    health = live.wait_idle()
    assert health["engine"]["failed"] == before["failed"] + 1  # cancelled, not run to its end
    assert health["engine"]["steps"] - before["steps"] < 1500
    assert _speech(live.client(), "pcm").content  # and the server goes on serving


def test_vllm_omni_style_stream_true_is_sse(live):  # noqa: F811
    body = {
        "model": "tts-1",
        "input": "Hi.",
        "voice": "default",
        "response_format": "wav",
        "stream": True,
        **FIXED,
    }
    response = httpx.post(live.url + "/v1/audio/speech", json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert events[0]["type"] == "speech.audio.delta" and events[-1]["type"] == "speech.audio.done"


def test_load_generator_runs_its_levels_and_soak_against_a_live_server(live, capsys):  # noqa: F811
    from app.server import loadgen

    args = ["--url", live.url, "--concurrency", "1,3", "--requests", "3", "--patches", "3", "--soak", "4"]
    assert loadgen.main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(lv["clients"], lv["requests"], lv["errors"]) for lv in out["levels"]] == [(1, 3, 0), (3, 3, 0)]
    soak = out["soak"]
    assert (soak["requests"], soak["errors"]) == (4, 0)
    assert len(soak["rss_mb"]) == 2 and all(r > 0 for r in soak["rss_mb"])  # before, after the one slice
    assert soak["gpu_mb"] == [None, None]  # a CPU engine reports no GPU memory
    assert soak["kv_blocks_free_after"] == soak["kv_blocks_total"]
    live.wait_idle()


def test_load_generator_only_talks_to_this_computer():
    from app.server import loadgen

    with pytest.raises(SystemExit) as exc:
        loadgen.main(["--url", "http://192.0.2.1:8000", "--requests", "1"])
    assert exc.value.code == 2
