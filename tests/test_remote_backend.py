"""The remote backend: ``voxdesk synth --server`` against a live ``voxdesk serve``, plain messages
for every way a server can fail, and the vLLM-Omni protocol as its definition records it."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import queue
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest
import soundfile as sf
from server_fixtures import FIXED, api_model, live, start_live  # noqa: F401
from ui_fixtures import write_voice_file

from app.backends.remote import RemoteBackend
from app.cli import main
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.models.voxcpm.prompt import VoicePrompt
from app.server.formats import wav_header

VLLM = json.loads((Path(__file__).parent / "data" / "vllm_omni_speech.json").read_text())


def _cli(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_synth_server_equals_local_engine(live, tmp_path, capsys):  # noqa: F811
    settings = ["--seed", "3", "--min-len", "6", "--max-len", "6"]
    code, out, err = _cli(["synth", "--server", live.url, "--text", "Hello world.", *settings,
                           "--out", str(tmp_path / "remote.wav")], capsys)  # fmt: skip
    assert code == 0, err
    assert "seed 3" in out
    lines = tmp_path / "lines.txt"
    lines.write_text("Hello world.\n", encoding="utf-8")
    local_args = ["--model", str(live.model_dir), "--device", "cpu", "--text-file", str(lines)]
    code, _, err = _cli(["synth", *local_args, *settings, "--out", str(tmp_path / "local")], capsys)
    assert code == 0, err
    remote, rate = sf.read(tmp_path / "remote.wav", dtype="int16")
    local, local_rate = sf.read(tmp_path / "local" / "0001.wav", dtype="int16")
    assert rate == local_rate == 48000 and len(remote) == len(local) > 0
    # Same seed, same engine code; fp32 sums on the CPU round with the thread count torch ran at.
    assert _lsb_apart(remote, local) <= PARITY_LSB


def test_synth_server_with_voices_and_a_text_file(live, tmp_path, capsys):  # noqa: F811
    ref = write_voice_file(tmp_path / "ref.wav", 330)
    lines = tmp_path / "lines.txt"
    lines.write_text("First line.\nSecond line.\n", encoding="utf-8")
    common = ["synth", "--server", live.url, "--seed", "1", "--min-len", "5", "--max-len", "5"]
    code, out, err = _cli([*common, "--text-file", str(lines), "--ref-wav", str(ref), "--control", "calm",
                           "--out", str(tmp_path / "out")], capsys)  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["0001.wav", "0002.wav"]
    code, _, err = _cli([*common, "--text", "First line.", "--prompt-wav", str(ref), "--prompt-text", "hi",
                         "--out", str(tmp_path / "p.wav")], capsys)  # fmt: skip
    assert code == 0, err
    # the server received the voice: the same request straight to the API gives the same audio
    b64 = base64.b64encode(_wav_bytes(ref)).decode()
    direct = httpx.post(live.url + "/v1/audio/speech", json={
        "input": "First line.", "voice": "default", "response_format": "wav", "seed": 1, "min_new_tokens": 5,
        "max_new_tokens": 5, "ref_audio": "data:audio/wav;base64," + b64, "ref_text": "hi"})  # fmt: skip
    straight, through_cli = (
        sf.read(io.BytesIO(direct.content), dtype="int16")[0],
        sf.read(tmp_path / "p.wav", dtype="int16")[0],
    )
    assert len(straight) == len(through_cli) and _lsb_apart(straight, through_cli) <= PARITY_LSB


PARITY_LSB = 33  # 1e-3 of full scale, the engine's audio parity bound; another seed is ~10^4 away


def _lsb_apart(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max())


def _wav_bytes(path: Path) -> bytes:
    """The voice as the backend sends it: loaded at 16 kHz, 16-bit WAV."""
    from app.audio.io import load_audio

    buffer = io.BytesIO()
    sf.write(buffer, load_audio(path, 16000), 16000, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_plain_messages_when_the_server_is_away_or_refuses(api_model, tmp_path, capsys):  # noqa: F811
    out = ["--text", "Hi.", "--out", str(tmp_path / "a.wav")]
    code, _, err = _cli(["synth", "--server", f"http://127.0.0.1:{_free_port()}", *out], capsys)
    assert code == 1 and "Cannot reach the speech server" in err and "Traceback" not in err
    code, _, err = _cli(["synth", "--server", "not a url", *out], capsys)
    assert code == 1 and "not a server address" in err
    keyed = start_live(api_model, tmp_path / "voices", api_key="k")
    try:
        code, _, err = _cli(["synth", "--server", keyed.url, "--api-key", "wrong", *out], capsys)
        assert code == 1 and "refused the API key" in err
        code, _, err = _cli(["synth", "--server", keyed.url, "--api-key", "k", "--cfg", "11", *out], capsys)
        assert code == 1 and "answered 400" in err and "cfg" in err.lower()
        code, _, err = _cli(["synth", "--server", keyed.url, "--api-key", "k", *FLAGS, *out], capsys)
        assert code == 0, err
    finally:
        keyed.server.stop()
        keyed.host.close()
    assert not (tmp_path / "b.wav").exists()


FLAGS = ["--seed", "2", "--min-len", "4", "--max-len", "4"]


# ---- a stand-in server speaking vLLM-Omni's protocol, and broken servers ----------------------
class _Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    behaviour = "vllm"
    bodies: list = []

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802
        data = json.dumps(VLLM["models_response"]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if self.behaviour == "silent":
            threading.Event().wait(3)
            return
        if self.behaviour == "huge error":  # 500 with a body that never ends (the client reads a bit)
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(2**40))
            self.end_headers()
            self.close_connection = True  # (no next request to wait for on a socket the client dropped)
            with contextlib.suppress(OSError):
                for _ in range(64):
                    self.wfile.write(b"x" * 2**16)
            return
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        tone = (0.25 * np.sin(np.arange(4800) / 7)).astype(np.float32)
        pcm = np.rint(tone * 32767).astype("<i2").tobytes()
        header = wav_header(VLLM["voxcpm2_sample_rate"])
        if self.behaviour == "big chunk":  # a 4 GiB "LIST" chunk before the samples
            header = header[:12] + b"LIST" + struct.pack("<I", 0xFFFFFFF0) + header[12:]
        elif self.behaviour == "rate":  # 4 GHz
            header = header[:24] + struct.pack("<I", 4_000_000_000) + header[28:]
        self._chunk(header)
        for i in range(0, len(pcm), 3000):
            self._chunk(pcm[i : i + 3000])
            if self.behaviour == "drop" and i >= 3000:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)  # the link goes mid-stream
                return
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        with contextlib.suppress(ConnectionError):  # a client that refused the reply hangs up
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()


@pytest.fixture
def stub():
    _Stub.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def _collect(backend: RemoteBackend, request: SynthRequest) -> list:
    events: queue.SimpleQueue = queue.SimpleQueue()
    backend.submit(request, events.put)
    got = [events.get(timeout=20)]
    while not isinstance(got[-1], (RequestFinished, RequestFailed)):
        got.append(events.get(timeout=20))
    return got


def test_request_to_vllm_omni_uses_only_its_protocol(stub):
    _Stub.behaviour = "vllm"
    backend = RemoteBackend(f"http://127.0.0.1:{stub.server_port}/v1")
    model = backend.connect()
    assert model.name == "openbmb/VoxCPM2" and not model.voxdesk and model.sample_rate == 48000
    voice = VoicePrompt(prompt_audio=np.full(8000, 0.1, np.float32), prompt_text="hello")
    request = SynthRequest("(a warm, slow voice)Hello from VoxCPM2.", voice, seed=3, max_len=6)
    events = _collect(backend, request)
    body = _Stub.bodies[-1]
    # every field is one vLLM-Omni declares, the VoxCPM2 path reads, and the values are valid there
    assert set(body) <= set(VLLM["request_fields"]) and set(body) <= set(VLLM["voxcpm2_reads"])
    assert body["voice"] in VLLM["voxcpm2_voices"] and body["response_format"] in VLLM["streaming_formats"]
    expected = {k: v for k, v in VLLM["example_request"].items() if k != "stream"}
    assert {k: body[k] for k in expected} == expected
    assert body["stream_format"] == "audio" and body["ref_audio"].startswith("data:audio/wav;base64,")
    sent, rate = sf.read(io.BytesIO(base64.b64decode(body["ref_audio"].split(",", 1)[1])), dtype="float32")
    assert rate == 16000 and len(sent) == 8000
    # the streamed answer arrives as chunks, then finishes with the WAV header's rate
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    assert len(chunks) >= 2 and isinstance(events[-1], RequestFinished)
    assert events[-1].stats["sample_rate"] == 48000 and sum(len(c.samples) for c in chunks) == 4800
    backend.close()


def test_an_emotion_and_a_language_travel_as_the_servers_own_fields():
    """What ``voxdesk synth --server`` sends for IndexTTS's options, read back by our server's parser;
    a request without them sends none of these fields (any server keeps taking it)."""
    from app.engine.request import EmotionControl
    from app.server.protocol import decode_audio_bytes, parse_speech

    backend = RemoteBackend("http://127.0.0.1:9/v1")
    clip = np.sin(np.arange(8000, dtype=np.float32) / 5) * 0.3
    cases = {
        "clip": EmotionControl(clip=clip, clip_rate=16000, weight=0.6),
        "vector": EmotionControl(vector=(0, 0.8, 0, 0, 0, 0, 0, 0)),
        "text": EmotionControl(text="a quiet whisper", weight=0.5),
    }
    for kind, emotion in cases.items():
        body = backend.body(SynthRequest("Hello.", emotion=emotion, language="en"))
        params = parse_speech(body)
        field = "emotion_audio" if kind == "clip" else f"emotion_{kind}"
        assert params.language == "en" and params.emotion_source == field
        assert params.emotion_weight == (None if emotion.weight == 1.0 else emotion.weight)
        if kind == "clip":
            sent, rate = decode_audio_bytes(params.emotion_audio, "emotion_audio")
            assert rate == 16000 and np.abs(sent - clip).max() < 1e-4  # PCM16
        elif kind == "vector":
            assert params.emotion_vector == emotion.vector
        else:
            assert params.emotion_text == "a quiet whisper"
    plain = backend.body(SynthRequest("Hello."))
    assert not {k for k in plain if k.startswith("emotion") or k == "language"}


def test_our_server_answers_the_recorded_vllm_omni_request(live, tmp_path):  # noqa: F811
    body = dict(VLLM["example_request"], model="tts-1", min_new_tokens=6)
    body["ref_audio"] = (
        "data:audio/wav;base64," + base64.b64encode(_wav_bytes(write_voice_file(tmp_path / "r.wav"))).decode()
    )
    response = httpx.post(live.url + "/v1/audio/speech", json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert {e["type"] for e in events} == set(VLLM["sse_events"])
    assert set(events[-1]["usage"]) == set(VLLM["sse_done_usage"])
    audio = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert audio[:4] == b"RIFF" and struct.unpack("<I", audio[24:28])[0] == VLLM["voxcpm2_sample_rate"]


def test_connection_lost_mid_stream_keeps_what_arrived(stub):
    _Stub.behaviour = "drop"
    backend = RemoteBackend(f"http://127.0.0.1:{stub.server_port}")
    events = _collect(backend, SynthRequest("Hello.", seed=1))
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    assert chunks and isinstance(events[-1], RequestFailed)
    assert "lost in the middle" in events[-1].message and "kept" in events[-1].message
    backend.close()


def test_a_silent_server_times_out_with_a_plain_line(stub):
    _Stub.behaviour = "silent"
    backend = RemoteBackend(f"http://127.0.0.1:{stub.server_port}", timeout=0.5)
    events = _collect(backend, SynthRequest("Hello.", seed=1))
    assert events == [RequestFailed(events[0].request_id, events[0].message)]
    assert "did not answer within 0.5 s" in events[0].message
    backend.close()


def test_cancel_stops_a_remote_request(live):  # noqa: F811
    from server_fixtures import StepGate

    backend = RemoteBackend(live.url)
    backend.connect()
    events: queue.SimpleQueue = queue.SimpleQueue()
    with StepGate(live.host.engine) as gate:
        gate.release(2)
        handle = backend.submit(SynthRequest("A long one.", seed=1, min_len=1500, max_len=1500), events.put)
        assert isinstance(events.get(timeout=20), AudioChunk)
        backend.cancel(handle)
        last = events.get(timeout=20)
        while isinstance(last, AudioChunk):
            last = events.get(timeout=20)
        assert last.message == "Cancelled."
        gate.release(10_000)
    assert live.wait_idle()["engine"]["failed"] >= 1  # the server cancelled it too
    backend.close()


@pytest.mark.parametrize(
    ("behaviour", "words"),
    [
        ("big chunk", "header too large"),
        ("rate", "4,000,000,000 Hz"),
        ("endless", "more audio for one segment"),
        ("huge error", "answered 500"),
    ],
)
def test_a_hostile_reply_is_bounded_and_one_plain_line(stub, monkeypatch, behaviour, words):
    """What a server sends is bounded like an imported file: a header chunk claiming 4 GiB, an
    absurd rate, more samples than a segment holds (the bound made small here; the stub sends
    4,800) and an endless error body each end the request with one line, the audio before kept."""
    from app.backends import remote

    monkeypatch.setattr(remote, "MAX_REPLY_SAMPLES", 3000 if behaviour == "endless" else 10**6)
    _Stub.behaviour = behaviour
    backend = RemoteBackend(f"http://127.0.0.1:{stub.server_port}")
    events = _collect(backend, SynthRequest("Hello.", seed=1))
    assert isinstance(events[-1], RequestFailed) and words in events[-1].message, events[-1]
    assert "\n" not in events[-1].message
    chunks = sum(len(e.samples) for e in events if isinstance(e, AudioChunk))
    assert chunks <= 3000 if behaviour == "endless" else chunks == 0
    backend.close()
