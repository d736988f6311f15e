"""Every error status of ``voxdesk serve`` in OpenAI's shape, the server serving on after each,
and the security rules: loopback by default, a key off loopback, body bounds, no paths."""

from __future__ import annotations

import base64
import socket
import threading
import time

import httpx
import openai
import pytest
from server_fixtures import FIXED, StepGate, api_model, live, start_live  # noqa: F401

from app.cli import main
from app.errors import VoxDeskError
from app.server.app import ServerConfig, ServerState
from app.server.guard import MAX_BODY_BYTES
from app.server.run import check_address, start_in_thread
from app.voices.library import VoiceLibrary

OK = {"model": "tts-1", "input": "Hi.", "voice": "default", "response_format": "pcm", **FIXED}


def _post(url: str, body=None, **kw) -> httpx.Response:
    kw.setdefault("timeout", 60)  # httpx's 5 s is tight for a synthesis on a loaded 2-core machine
    return httpx.post(url + "/v1/audio/speech", json=body if body is not None else OK, **kw)


def _error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    return error


def _still_serving(url: str, **kw) -> None:
    response = _post(url, **kw)
    assert response.status_code == 200 and len(response.content) > 0


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"response_format": "aac"}, "response_format"),
        ({"speed": 3.0}, "speed"),
        ({"speed": 0.4}, "speed"),
        ({"input": "   "}, "input"),
        ({"input": "x" * 4097}, "input"),
        ({"seed": -1}, "seed"),
        ({"cfg_value": "high"}, "cfg_value"),
        ({"inference_timesteps": 0}, "inference_timesteps"),
        ({"stream_format": "audio", "response_format": "mp3"}, "response_format"),
        ({"sed": 3}, "sed"),
        ({"ref_audio": "not base64!"}, "ref_audio"),
        ({"ref_audio": base64.b64encode(b"no audio here").decode()}, "ref_audio"),
        ({"ref_audio": "file:///etc/passwd"}, "ref_audio"),
        ({"ref_audio": "/etc/passwd"}, "ref_audio"),
        ({"normalize": "yes"}, "normalize"),
    ],
)
def test_400_names_the_field(live, change, param):  # noqa: F811
    assert _error(_post(live.url, {**OK, **change}), 400)["param"] == param
    _still_serving(live.url)


def test_400_for_bodies_that_are_not_json(live):  # noqa: F811
    _error(
        httpx.post(
            live.url + "/v1/audio/speech", content=b"{not json", headers={"content-type": "application/json"}
        ),
        400,
    )
    _error(httpx.post(live.url + "/v1/audio/speech", content=b"input=hi"), 400)  # form-encoded
    _error(_post(live.url, ["a", "list"]), 400)
    _still_serving(live.url)


def test_404_unknown_voice_model_and_address(live):  # noqa: F811
    assert _error(_post(live.url, {**OK, "voice": "Nobody"}), 404)["code"] == "voice_not_found"
    assert _error(_post(live.url, {**OK, "model": "whisper-1"}), 404)["code"] == "model_not_found"
    _error(httpx.get(live.url + "/v1/nothing"), 404)
    _error(httpx.delete(live.url + "/v1/audio/voices/Nobody"), 404)
    with pytest.raises(openai.NotFoundError):
        live.client().audio.speech.create(model="tts-1", voice="Nobody", input="Hi.")
    _still_serving(live.url)


def test_413_oversized_bodies(live, tmp_path):  # noqa: F811
    big = b"{" + b" " * (16 * 1024 * 1024 + 10) + b"}"
    _error(
        httpx.post(live.url + "/v1/audio/speech", content=big, headers={"content-type": "application/json"}),
        413,
    )

    def chunked():  # no Content-Length: the bound is counted as the body arrives
        for _ in range(17):
            yield b" " * (1024 * 1024)

    response = httpx.post(
        live.url + "/v1/audio/speech", content=chunked(), headers={"content-type": "application/json"}
    )
    _error(response, 413)
    upload = {"audio_sample": ("big.wav", b"\0" * (10 * 1024 * 1024 + 100), "audio/wav")}
    _error(httpx.post(live.url + "/v1/audio/voices", files=upload, data={"name": "Big"}), 413)
    assert live.library.list() == []
    _still_serving(live.url)


def _speech_head(host: str) -> bytes:
    return b"POST /v1/audio/speech HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n" % host.encode()


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_413_reaches_a_client_that_sends_its_whole_body(live, chunked):  # noqa: F811
    """Closing a socket with unread data resets the connection, and a reset can drop the 413
    before the client reads it (CI lost one that way): the server reads the refused body to its
    end, within bounds, so the client finishes sending and reads the answer to a clean end."""
    host, port = live.url.removeprefix("http://").rsplit(":", 1)
    body = b" " * (MAX_BODY_BYTES + 1024 * 1024)
    if chunked:
        framing = b"Transfer-Encoding: chunked\r\n"
        step = 1024 * 1024
        payload = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + step]), body[i : i + step])
                           for i in range(0, len(body), step)) + b"0\r\n\r\n"  # fmt: skip
    else:
        framing, payload = b"Content-Length: %d\r\n" % len(body), body
    head = _speech_head(host)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + framing + b"\r\n")
        sock.sendall(payload)  # a reset here is the fault
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.split()[1] == b"413", answer[:200]
    assert b"too_large" in rest.partition(b"\r\n\r\n")[2]
    _still_serving(live.url)


def test_the_drain_of_a_refused_body_is_bounded_in_time(live, monkeypatch):  # noqa: F811
    """A client that declares a huge body and stalls gets its 413 at once (a client that stops
    sending on an early answer reads it) and the end of the connection after DRAIN_SECONDS,
    not after the whole body or the body timeout."""
    from app.server import guard

    monkeypatch.setattr(guard, "DRAIN_SECONDS", 0.5)
    host, port = live.url.removeprefix("http://").rsplit(":", 1)
    head = _speech_head(host) + b"Content-Length: %d\r\n\r\n" % (2 * MAX_BODY_BYTES)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + b" " * 65536)  # then nothing more, the connection left open
        start, answer, whole = time.monotonic(), b"", None
        while chunk := sock.recv(65536):
            answer += chunk
            if whole is None and answer.endswith(b"}"):  # the JSON error's end: the answer is whole
                whole = time.monotonic() - start
        ended = time.monotonic() - start
    assert answer.split(b"\r\n", 1)[0].split()[1] == b"413", answer[:200]
    assert b"too_large" in answer.partition(b"\r\n\r\n")[2]
    assert whole is not None and whole < 0.3 < ended < 10, (whole, ended)
    _still_serving(live.url)


def test_413_before_the_body_to_a_client_that_waits_for_100_continue(live):  # noqa: F811
    host, port = live.url.removeprefix("http://").rsplit(":", 1)
    expect = b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % (2 * MAX_BODY_BYTES)
    head = _speech_head(host) + expect
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(65536):  # no body sent: the answer must come without it
            answer += chunk
    assert answer.split(b"\r\n", 1)[0].split()[1] == b"413", answer[:200]
    _still_serving(live.url)


def test_401_wrong_or_missing_key(api_model, tmp_path):  # noqa: F811
    keyed = start_live(api_model, tmp_path / "voices", api_key="s3cret")
    try:
        _error(_post(keyed.url), 401)
        _error(_post(keyed.url, headers={"authorization": "Bearer wrong"}), 401)
        _error(httpx.get(keyed.url + "/v1/audio/voices"), 401)
        with pytest.raises(openai.AuthenticationError):
            keyed.client(api_key="wrong").audio.speech.create(model="tts-1", voice="default", input="Hi.")
        assert httpx.get(keyed.url + "/health").status_code == 200  # health says nothing private
        _still_serving(keyed.url, headers={"authorization": "Bearer s3cret"})
        wav = keyed.client(api_key="s3cret").audio.speech.create(
            model="tts-1", voice="default", input="Hi.", response_format="wav", extra_body=FIXED
        )
        assert wav.content[:4] == b"RIFF"
    finally:
        keyed.server.stop()
        keyed.host.close()


def test_429_with_retry_after_when_the_queue_is_full(api_model, tmp_path):  # noqa: F811
    small = start_live(api_model, tmp_path / "voices", max_pending=1)
    long = {**OK, "stream_format": "audio", "min_new_tokens": 1000, "max_new_tokens": 1000}
    try:
        with StepGate(small.host.engine) as gate, httpx.Client(base_url=small.url) as http:
            gate.release(2)
            with http.stream("POST", "/v1/audio/speech", json=long) as held:
                chunks = held.iter_bytes()
                assert held.status_code == 200 and next(chunks)
                busy = _post(small.url)
                assert _error(busy, 429)["code"] == "queue_full" and busy.headers["retry-after"] == "1"
            gate.release(10_000)
        small.wait_idle()
        _still_serving(small.url)
    finally:
        small.server.stop()
        small.host.close()


def test_503_while_no_model_is_loaded(tmp_path):
    state = ServerState(ServerConfig(), VoiceLibrary(tmp_path / "voices"))
    server = start_in_thread(state)
    try:
        response = _post(server.url)
        assert _error(response, 503)["code"] == "model_not_loaded" and response.headers["retry-after"]
        assert httpx.get(server.url + "/health").json()["status"] == "no_model"
        assert httpx.get(server.url + "/v1/models").json()["data"] == []
    finally:
        server.stop()


# ---- security -------------------------------------------------------------------------------
def test_non_loopback_without_key_is_refused(tmp_path, capsys):
    with pytest.raises(VoxDeskError, match="--api-key"):
        check_address("0.0.0.0", None)
    with pytest.raises(VoxDeskError):
        check_address("192.168.1.20", "")
    check_address("0.0.0.0", "key")  # with a key it may
    check_address("::1", None)
    # the command refuses before it loads any model (the folder does not even exist)
    code = main(["serve", "--model", str(tmp_path / "none"), "--host", "0.0.0.0", "--port", "0"])
    assert code == 1 and "--api-key" in capsys.readouterr().err
    state = ServerState(ServerConfig(), VoiceLibrary(tmp_path / "voices"))
    with pytest.raises(VoxDeskError):
        start_in_thread(state, host="0.0.0.0")


def test_browser_pages_and_foreign_host_names_are_turned_away(live):  # noqa: F811
    # a web page may not drive the local server (no CORS unless asked) ...
    assert _error(_post(live.url, headers={"origin": "https://evil.example"}), 403)["code"] == "origin"
    upload = {"audio_sample": ("a.wav", b"RIFF", "audio/wav")}
    _error(httpx.post(live.url + "/v1/audio/voices", files=upload, data={"name": "X"},
                      headers={"origin": "https://evil.example"}), 403)  # fmt: skip
    # ... nor reach it through a rebound domain name
    assert _error(_post(live.url, headers={"host": "evil.example"}), 400)["code"] == "invalid_host"
    assert "access-control-allow-origin" not in _post(live.url).headers
    _still_serving(live.url)


def test_path_like_voice_names_stay_inside_the_library(live, tmp_path):  # noqa: F811
    from ui_fixtures import write_voice_file

    outside = live.library.root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "voice.json").write_text('{"id": "outside", "name": "Evil"}')
    for name in ("../outside", "..%2Foutside", "/etc/passwd", "..\\outside", "~/x"):
        assert _error(_post(live.url, {**OK, "voice": name}), 404)["param"] == "voice"
        assert httpx.delete(f"{live.url}/v1/audio/voices/{name}").status_code == 404
    assert (outside / "voice.json").exists()
    # a path-like name on upload is only a label: the voice lands in its own folder in the library
    sample = write_voice_file(tmp_path / "v.wav")
    with open(sample, "rb") as f:
        files = {"audio_sample": ("../../x.wav", f, "audio/wav")}
        created = httpx.post(live.url + "/v1/audio/voices", files=files, data={"name": "../../escape"})
    assert created.status_code == 201
    voice = created.json()
    assert (live.library.root / voice["id"] / "voice.json").is_file()
    assert not (live.library.root.parent.parent / "escape").exists()
    assert httpx.delete(f"{live.url}/v1/audio/voices/{voice['id']}").status_code == 200
    assert (outside / "voice.json").exists() and live.library.list() == []


def test_concurrent_errors_do_not_stop_good_requests(live):  # noqa: F811
    results: list[int] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        body = OK if i % 2 else {**OK, "voice": "Nobody"}
        code = _post(live.url, body).status_code
        with lock:
            results.append(code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == [200] * 8 + [404] * 8


def test_an_unexpected_failure_is_a_500_in_openai_shape(live, monkeypatch):  # noqa: F811
    def broken():
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(live.server.state.library, "list", broken)
    error = _error(httpx.get(live.url + "/v1/audio/voices"), 500)
    assert error["code"] == "internal_error" and "disk on fire" not in error["message"]
    monkeypatch.undo()
    assert httpx.get(live.url + "/v1/audio/voices").status_code == 200
    _still_serving(live.url)
