"""``voxdesk serve`` under hostile clients (issue 23), on 127.0.0.1 only: idle-socket floods,
slow heads and bodies, a decode that takes long, half-closed clients, pathological JSON, keys
HTTP cannot carry, raw base64 that looks like a path, and normalization off the engine thread."""

from __future__ import annotations

import base64
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import httpx
import numpy as np
import pytest
from server_fixtures import FIXED, Live, StepGate, api_model, start_live  # noqa: F401
from tiny import tone

from app.cli import main
from app.errors import VoxDeskError
from app.server import app as server_app
from app.server import formats, protocol
from app.server.connections import ConnectionLimits
from app.server.run import check_address

OK = {"model": "tts-1", "input": "Hi.", "voice": "default", "response_format": "pcm", **FIXED}
HEAD_TIMEOUT_S = 1.0
FLOOD = 1100


@pytest.fixture(scope="module")
def hostile(api_model, tmp_path_factory) -> Iterator[Live]:  # noqa: F811
    server = start_live(api_model, tmp_path_factory.mktemp("hostile-voices"), body_timeout_s=1.0,
                        limits=ConnectionLimits(head_timeout_s=HEAD_TIMEOUT_S, max_waiting=64))  # fmt: skip
    yield server
    server.server.stop()
    server.host.close()


def _post(url: str, body=None, **kw) -> httpx.Response:
    return httpx.post(url + "/v1/audio/speech", json=body if body is not None else OK, timeout=60, **kw)


def _error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    return error


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=20)


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes (True) or 20 s pass (False)."""
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:  # (socket.timeout)
        return False
    except OSError:  # reset: closed too
        pass
    return True


def _raw(url: str, request: bytes, half_close: bool = False) -> bytes:
    with _connect(url) as sock:
        sock.sendall(request)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while data := sock.recv(65536):
            chunks.append(data)
        return b"".join(chunks)


def _speech_request(url: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    host = url.removeprefix("http://")
    return (f"POST /v1/audio/speech HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data  # fmt: skip


# ---- connections --------------------------------------------------------------------------------
def test_an_idle_socket_flood_locks_nobody_out_and_heals(hostile):
    """1,100 sockets that send nothing or half a head (more than uvicorn's old 1,024 limit):
    /health and a speech request are still answered, and every idle socket is closed."""
    resource = pytest.importorskip("resource")  # (Windows has no open-file limit to raise)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * FLOOD + 256  # both ends live in this process
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the open-file limit ({hard}) is too low for {FLOOD} loopback sockets")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    flood: list[socket.socket] = []
    try:
        for i in range(FLOOD):
            sock = _connect(hostile.url)
            if i % 2:
                sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
            flood.append(sock)
        assert httpx.get(hostile.url + "/health", timeout=20).status_code == 200
        speech = _post(hostile.url)
        assert speech.status_code == 200 and speech.content
        assert all(_closed_by_server(sock) for sock in flood)
    finally:
        for sock in flood:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert httpx.get(hostile.url + "/health").status_code == 200


def test_a_head_sent_a_byte_at_a_time_is_cut_off(hostile):
    """Data that keeps arriving does not extend the head's time (a slowloris); nor does a
    kept-alive connection stay open for ever after its answer."""
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    with _connect(hostile.url) as sock:
        sent = 0
        try:
            for byte in head:  # 200 bytes, 0.05 s apart: 10 s in all, ten times the head's limit
                sock.send(bytes([byte]))
                sent += 1
                time.sleep(0.05)
        except OSError:
            pass
        assert sent < len(head) or _closed_by_server(sock)
        assert _closed_by_server(sock)
    with _connect(hostile.url) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_by_server(sock)  # keep-alive, then idle: closed


def test_a_body_that_stops_arriving_is_a_408(hostile):
    request = _speech_request(hostile.url, OK)
    with _connect(hostile.url) as sock:
        sock.sendall(request[: len(request) - 10])
        answer = b""
        while data := sock.recv(65536):
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "timeout"


def test_a_client_that_half_closes_after_its_request_gets_the_answer(hostile):
    answer = _raw(hostile.url, _speech_request(hostile.url, OK), half_close=True)
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.count(b"\r\n\r\n") >= 1 and len(answer.partition(b"\r\n\r\n")[2]) > 0
    health = _raw(hostile.url, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", half_close=True)
    assert health.startswith(b"HTTP/1.1 200")


def test_the_key_is_checked_before_the_request_bound(api_model, tmp_path):  # noqa: F811
    """A client without the key never takes a place; /health is never turned away."""
    server = start_live(api_model, tmp_path, api_key="k3y", max_requests=0)
    try:
        _error(_post(server.url), 401)
        busy = _error(_post(server.url, headers={"authorization": "Bearer k3y"}), 503)
        assert busy["code"] == "server_busy"
        assert httpx.get(server.url + "/health").status_code == 200
    finally:
        server.server.stop()
        server.host.close()


# ---- decoding off the event loop ----------------------------------------------------------------
class DecodeGate:
    """Holds the server's real decoder until released, so a test knows a decode is running."""

    def __init__(self, monkeypatch) -> None:
        self.entered, self.allowed = threading.Event(), threading.Event()
        real = protocol.decode_audio_bytes

        def held(data: bytes, param: str):
            self.entered.set()
            assert self.allowed.wait(30)
            return real(data, param)

        monkeypatch.setattr(protocol, "decode_audio_bytes", held)
        monkeypatch.setattr(server_app, "decode_audio_bytes", held)


def _ref_audio() -> str:
    return base64.b64encode(formats.encode_whole(tone(16000, 16000), 16000, "wav")).decode()


def test_health_and_other_clients_are_answered_while_audio_decodes(hostile, monkeypatch):
    gate = DecodeGate(monkeypatch)
    results: dict[str, httpx.Response] = {}
    body = {**OK, "voice": None, "ref_audio": _ref_audio(), "ref_text": "Hello."}
    cloning = threading.Thread(target=lambda: results.update(clone=_post(hostile.url, body)))
    upload = threading.Thread(target=lambda: results.update(upload=httpx.post(
        hostile.url + "/v1/audio/voices", data={"name": "Held"}, timeout=60,
        files={"audio_sample": ("a.wav", base64.b64decode(_ref_audio()), "audio/wav")})))  # fmt: skip
    cloning.start()
    upload.start()
    try:
        assert gate.entered.wait(30)
        health = httpx.get(hostile.url + "/health", timeout=10)
        assert health.status_code == 200 and health.json()["in_flight"] == 0  # nothing admitted yet
        assert _post(hostile.url).status_code == 200  # another client is served meanwhile
        assert "clone" not in results and "upload" not in results
    finally:
        gate.allowed.set()
        cloning.join(60)
        upload.join(60)
    assert results["clone"].status_code == 200 and results["clone"].content
    assert results["upload"].status_code == 201


# ---- small defects ------------------------------------------------------------------------------
def test_raw_base64_starting_with_slashes_is_audio_not_a_path(hostile):
    if "mp3" not in formats.supported_formats():
        pytest.skip("this libsndfile writes no MP3")
    mp3 = formats.encode_whole(tone(16000, 16000), 16000, "mp3")
    encoded = base64.b64encode(mp3).decode()
    assert encoded.startswith("//")  # an MP3 frame without an ID3 tag
    body = {**OK, "voice": None, "ref_audio": encoded, "ref_text": "Hello."}
    assert _post(hostile.url, body).status_code == 200
    for path in ("/etc/passwd", "./voice.wav", "~/voice.wav", "C:\\voice.wav", "file:///etc/passwd",
                 "https://example.com/a.wav", "\\\\server\\share\\a.wav"):  # fmt: skip
        error = _error(_post(hostile.url, {**body, "ref_audio": path}), 400)
        assert "file paths are not accepted" in error["message"], path


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 200_000 + b"]" * 200_000,
        b'{"input": "Hi.", "seed": ' + b"7" * 5000 + b"}",
        b'{"input": "Hi.", "\\ud800": 1}',
        b'{"input": "Hi.", "' + b"x" * 100_000 + b'": 1}',
        b'{"input": "\\udfff"}',
    ],
    ids=["nested-200k", "5000-digits", "lone-surrogate-key", "huge-key", "lone-surrogate-input"],
)
def test_pathological_json_is_a_400(hostile, raw):
    response = httpx.post(hostile.url + "/v1/audio/speech", content=raw, timeout=60,
                          headers={"content-type": "application/json"})  # fmt: skip
    error = _error(response, 400)
    assert len(error["message"]) < 300 and len(error["param"] or "") <= 40


@pytest.mark.parametrize("key", [" ", "  ", " key", "key ", "ключ", "key\x00", "tab\tkey"])
def test_keys_http_cannot_carry_are_refused(key):
    with pytest.raises(VoxDeskError):
        check_address("127.0.0.1", key)


def test_serve_refuses_a_blank_key_in_one_line(api_model, capsys):  # noqa: F811
    assert main(["serve", "--model", str(api_model), "--port", "0", "--api-key", " "]) == 1
    err = capsys.readouterr().err
    assert err.startswith("voxdesk: The API key is empty") and err.count("\n") == 1
    check_address("0.0.0.0", "a good key-123")  # printable ASCII with inner spaces is fine


def test_normalize_runs_outside_the_engine_thread(hostile, monkeypatch):
    """The engine thread never normalizes (a long text held every other client for seconds):
    the text comes back spelled out from the normalizer's child process, and while it is away
    other clients are served."""
    from app.text import normalize

    sent: list[str] = []
    submit = hostile.host.submit

    def recording(request, *args, **kw):
        sent.append(request.text)
        assert not request.normalize  # (the engine normalizes only a request marked so)
        return submit(request, *args, **kw)

    monkeypatch.setattr(hostile.host, "submit", recording)
    normalize.background.submit("1").result(300)  # the child's grammars loaded (seconds on a busy CPU)
    away, back = threading.Event(), threading.Event()
    child_submit = normalize.background.submit

    def held(text: str) -> Future:
        spoken, out = child_submit(text), Future()

        def relay() -> None:
            away.set()
            back.wait(30)
            out.set_result(spoken.result(120))

        threading.Thread(target=relay, daemon=True).start()
        return out

    monkeypatch.setattr(normalize.background, "submit", held)
    result: list[httpx.Response] = []
    body = {**OK, "input": "I have 3 apples.", "normalize": True}
    spelled = threading.Thread(target=lambda: result.append(_post(hostile.url, body)))
    spelled.start()
    try:
        assert away.wait(30)
        assert _post(hostile.url).status_code == 200  # served while the text is being normalized
        assert not result and sent == ["Hi."]
    finally:
        back.set()
        spelled.join(150)
    assert result[0].status_code == 200 and sent[-1] == "I have three apples."


def test_normalization_has_a_time_limit(api_model, tmp_path):  # noqa: F811
    server = start_live(api_model, tmp_path, normalize_timeout_s=0.01)
    try:
        body = {**OK, "input": "1" * 4000, "normalize": True}
        assert _error(_post(server.url, body), 503)["code"] == "normalize_timeout"
        assert _post(server.url).status_code == 200
    finally:
        server.server.stop()
        server.host.close()


def test_ref_audio_that_is_silence_still_a_plain_400(hostile):
    """(The worker thread keeps the decoder's own messages.)"""
    silent = base64.b64encode(formats.encode_whole(np.zeros(16000, np.float32), 16000, "wav")).decode()
    body = {**OK, "voice": None, "ref_audio": silent, "ref_text": "Hello."}
    assert _error(_post(hostile.url, body), 400)["code"] == "invalid_audio"


# ---- stopping with requests in flight ------------------------------------------------------------
def _stream(url: str, body: dict, started: threading.Event) -> tuple[str, bytes]:
    """('complete' | 'cut', the bytes received) for a streamed speech request."""
    received = b""
    try:
        with httpx.stream("POST", url + "/v1/audio/speech", json=body, timeout=60) as response:
            assert response.status_code == 200
            for chunk in response.iter_bytes():
                received += chunk
                started.set()
    except httpx.RemoteProtocolError:  # the body ended without its terminating chunk
        return "cut", received
    return "complete", received


def test_stopping_with_requests_in_flight_answers_every_client(api_model, tmp_path, monkeypatch):  # noqa: F811
    """Ctrl+C with requests decoding audio, queued and streaming: each whole-file client gets
    OpenAI's JSON error, an SSE stream ends with an ``error`` event, a raw stream is cut short
    (no terminating chunk), never a plain-text 500 or a body that looks whole."""
    server = start_live(api_model, tmp_path)
    decode = DecodeGate(monkeypatch)
    long = {**OK, "min_new_tokens": 300, "max_new_tokens": 300}
    results: dict[str, object] = {}
    started: list[threading.Event] = []
    jobs = []
    for i in range(3):
        fmt = ("wav", "pcm", "mp3" if "mp3" in formats.supported_formats() else "flac")[i]
        jobs.append((f"whole-{i}", lambda fmt=fmt: _post(server.url, {**long, "response_format": fmt})))
    for i, kind in enumerate(("sse", "audio", "sse", "audio")):
        event = threading.Event()
        started.append(event)
        body = {**long, "response_format": "wav", "stream_format": kind}
        jobs.append((f"{kind}-{i}", lambda body=body, event=event: _stream(server.url, body, event)))
    cloning = {**OK, "voice": None, "ref_audio": _ref_audio(), "ref_text": "Hello."}
    jobs.append(("decoding", lambda: _post(server.url, cloning)))
    threads = [threading.Thread(target=lambda n=n, job=job: results.update({n: job()})) for n, job in jobs]
    with StepGate(server.host.engine) as steps:
        for thread in threads:
            thread.start()
        assert decode.entered.wait(30)
        deadline = time.monotonic() + 60
        while server.health()["in_flight"] < 7:
            assert time.monotonic() < deadline, server.health()
            time.sleep(0.02)
        for _ in range(200):  # step until every stream has its first audio
            if all(event.is_set() for event in started):
                break
            steps.release(1)
            time.sleep(0.02)
        assert all(event.is_set() for event in started)
        stopper = threading.Thread(target=server.server.stop, kwargs={"timeout": 30})
        stopper.start()
        for name, _ in jobs:
            if name != "decoding":
                threads[[n for n, _ in jobs].index(name)].join(30)
        threads[-1].join(30)  # answered once uvicorn's grace period is over
        decode.allowed.set()
        stopper.join(30)
    server.host.close()
    assert not stopper.is_alive() and set(results) == {name for name, _ in jobs}
    for name, answer in results.items():
        if name.startswith(("whole", "decoding")):
            assert _error(answer, 503)["code"] == "server_stopping", name
        elif name.startswith("sse"):
            how, data = answer
            events = [
                json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")
            ]
            assert events[0]["type"] == "speech.audio.delta" and events[-1]["type"] == "error", name
        else:
            how, data = answer
            assert how == "cut" and data[:4] == b"RIFF", name


def test_ctrl_c_on_voxdesk_serve_with_requests_in_flight(api_model, tmp_path):  # noqa: F811
    """As a user stops it: every client answered, the process ends at once, and the requests
    the engine ends after the server's loop has closed make no noise (a traceback each used to
    fill a stderr pipe and hang the stop)."""
    cmd = [sys.executable, "-m", "app.cli", "serve", "--model", str(api_model), "--port", "0",
           "--device", "cpu", "--voices", str(tmp_path / "voices")]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[4].removesuffix("/v1")
        long = {**OK, "response_format": "wav", "min_new_tokens": 2000, "max_new_tokens": 2000}
        results: list[int] = []
        threads = [
            threading.Thread(target=lambda: results.append(_post(url, long).status_code)) for _ in range(40)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        while httpx.get(url + "/health").json()["in_flight"] < 40:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        for thread in threads:
            thread.join(30)
        assert results == [503] * 40
        err = proc.stderr.read()
        assert "Traceback" not in err and err.rstrip().endswith("stopped"), err[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
