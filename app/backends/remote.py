"""A remote OpenAI-compatible speech server as a backend (VoxDesk's own, or vLLM-Omni's VoxCPM2).

Each request is one streamed ``POST /v1/audio/speech`` (``response_format="wav"``,
``stream_format="audio"``): the WAV header gives the rate, then the 16-bit samples become
``AudioChunk`` events as they arrive. Voices travel as ``ref_audio`` (a base64 WAV data: URI)
and ``ref_text``. Talking to a server that is not VoxDesk, only the fields of vLLM-Omni's
protocol are sent (``input``, ``voice``, ``ref_audio``, ``ref_text``, ``seed``,
``max_new_tokens``); guidance and steps are then the server's own (docs/server.md).

Connection failures, timeouts and error answers become one plain ``RequestFailed`` line; audio
that already arrived has been delivered and stays with the caller.

What a server sends is bounded as an imported file is (app/audio/io.py): the reply is a live
stream, parsed as it arrives rather than decoded whole by ``read_audio``, so the same limits are
applied here — the WAV header's chunks before the samples (at most ``MAX_HEADER_BYTES``), its rate
(``MIN_RATE``–``MAX_RATE``), the samples of one reply (``MAX_REPLY_SAMPLES``), and error and JSON
bodies (read up to a cap, never whole).
"""

from __future__ import annotations

import base64
import http.client
import io
import itertools
import json
import socket
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np

from app.audio.io import MAX_OUTPUT_BYTES, MAX_RATE, MIN_RATE
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.errors import VoxDeskError

READ_SIZE = 16384
# A WAV header is 44 bytes (a few hundred with a LIST or fact chunk); a "chunk" claiming 4 GiB
# before the samples would otherwise be read into memory whole.
MAX_HEADER_BYTES = 64 * 2**10
# One reply is one segment, which the engine caps at ``max_len`` patches (4,096 by default: about
# 11 minutes of VoxCPM2's speech). The bound is the one on any decoded audio (read_audio's
# result, 256 MiB of float32): 64 Mi samples, 23 minutes at 48 kHz, 70 at 16 kHz, so no
# legitimate reply is cut, while a server that never stops costs at most that much memory.
MAX_REPLY_SAMPLES = MAX_OUTPUT_BYTES // 4
MAX_ERROR_BYTES = 64 * 2**10  # the part of an error answer read for its message
MAX_JSON_BYTES = 4 * 2**20  # /v1/models is a few hundred bytes
VLLM_OMNI_FIELDS = ("model", "input", "voice", "response_format", "stream_format", "ref_audio", "ref_text",
                    "seed", "max_new_tokens")  # fmt: skip


@dataclass(frozen=True)
class RemoteModel:
    """What the server says it serves (VoxDesk servers say more than others)."""

    name: str
    architecture: str = "voxcpm2"
    sample_rate: int = 48000
    encoder_rate: int = 16000
    voxdesk: bool = False
    controls: frozenset[str] = frozenset()  # FamilyInfo.controls, where the server lists them


class _Cancelled(Exception):
    pass


class RemoteBackend:
    """``submit``/``cancel`` like the engine host, over HTTP. Thread-safe."""

    def __init__(
        self, url: str, api_key: str | None = None, timeout: float = 60.0, parallel: int = 8
    ) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise VoxDeskError(f"{url!r} is not a server address: use http://HOST:PORT.")
        self.url = f"{parts.scheme}://{parts.netloc}"
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/").removesuffix("/v1")
        self.api_key = api_key or None
        self.timeout = timeout
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="voxdesk-remote")
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._open: dict[int, http.client.HTTPConnection | None] = {}
        self._cancelled: set[int] = set()
        self.model: RemoteModel | None = None

    # ---- connection -------------------------------------------------------------------------
    def _connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.timeout)

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "*/*"}
        if content_type:
            headers["Content-Type"] = content_type
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _plain(self, exc: BaseException) -> str:
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return f"The speech server at {self.url} did not answer within {self.timeout:g} s."
        if isinstance(exc, ConnectionRefusedError):
            return f"Cannot reach the speech server at {self.url}: is it running?"
        if isinstance(exc, socket.gaierror):
            return f"The server name in {self.url} could not be found: check the address."
        return f"The connection to the speech server at {self.url} failed ({exc.__class__.__name__})."

    @staticmethod
    def _error_line(status: int, raw: bytes) -> str:
        try:
            message = json.loads(raw)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = raw.decode("utf-8", "replace").strip()[:200] or http.client.responses.get(status, "")
        if status == 401:
            return "The speech server refused the API key: check it in Settings (or --api-key)."
        if status in (429, 503):
            return f"The speech server is busy ({message}): try again shortly."
        return f"The speech server answered {status}: {message}"

    def get_json(self, path: str) -> dict:
        conn = self._connect()
        try:
            conn.request("GET", self._prefix + path, headers=self._headers())
            response = conn.getresponse()
            raw = response.read(MAX_JSON_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise VoxDeskError(self._plain(exc)) from None
        finally:
            conn.close()
        if response.status != 200:
            raise VoxDeskError(self._error_line(response.status, raw[:MAX_ERROR_BYTES]))
        if len(raw) > MAX_JSON_BYTES:
            raise VoxDeskError(f"{self.url} answered with far more than a speech server sends.")
        try:
            return json.loads(raw)
        except ValueError:
            raise VoxDeskError(f"{self.url} did not answer like a speech server.") from None

    def connect(self) -> RemoteModel:
        """Ask the server what it serves (``GET /v1/models``); raises a plain VoxDeskError."""
        models = self.get_json("/v1/models").get("data") or []
        if not models or not isinstance(models[0], dict) or "id" not in models[0]:
            raise VoxDeskError(f"The server at {self.url} serves no model yet: try again once it has loaded.")
        first = models[0]
        ours = first.get("owned_by") == "voxdesk"
        listed = first.get("controls") if isinstance(first.get("controls"), list) else []
        self.model = RemoteModel(
            name=str(first["id"]),
            architecture=str(first.get("architecture", "voxcpm2")),
            sample_rate=int(first.get("sample_rate", 48000)),
            encoder_rate=int(first.get("encoder_rate", 16000)),
            voxdesk=ours,
            controls=frozenset(c for c in listed if isinstance(c, str)),
        )
        return self.model

    # ---- requests ---------------------------------------------------------------------------
    def body(self, request: SynthRequest, encoder_rate: int | None = None) -> dict:
        """The JSON body for ``request`` (the voice's audio is at ``encoder_rate``)."""
        model = self.model or RemoteModel(name="voxcpm2")
        rate = encoder_rate or model.encoder_rate
        body: dict = {
            "model": model.name,
            "input": request.text,
            "voice": "default",
            "response_format": "wav",
            "stream_format": "audio",
            "max_new_tokens": request.max_len,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.speed != 1.0:  # OpenAI's own field: any compatible server may honour it
            body["speed"] = request.speed
        voice = request.voice
        if voice is not None:
            if voice.prompt_audio is not None and voice.prompt_text.strip():
                body["ref_audio"], body["ref_text"] = _data_uri(voice.prompt_audio, rate), voice.prompt_text
            elif voice.reference_audio is not None:
                body["ref_audio"] = _data_uri(voice.reference_audio, rate)
            else:
                raise VoxDeskError("This voice has no audio to send to the server: import it again.")
        if model.voxdesk:
            body.update(cfg_value=request.cfg_value, inference_timesteps=request.inference_timesteps,
                        min_new_tokens=min(request.min_len, request.max_len))  # fmt: skip
        body.update(_emotion_fields(request))
        return body

    def submit(self, request: SynthRequest, sink, on_latents=None, encoder_rate: int | None = None) -> int:
        handle = next(self._ids)
        with self._lock:
            self._open[handle] = None
        self._pool.submit(self._run, handle, request, sink, encoder_rate)
        return handle

    def cancel(self, handle: int) -> None:
        with self._lock:
            if handle not in self._open:
                return
            self._cancelled.add(handle)
            conn = self._open.get(handle)
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        with self._lock:
            handles = list(self._open)
        for handle in handles:
            self.cancel(handle)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _check(self, handle: int) -> None:
        with self._lock:
            if handle in self._cancelled:
                raise _Cancelled

    def _run(self, handle: int, request: SynthRequest, sink, encoder_rate: int | None) -> None:
        got_audio = False
        try:
            self._check(handle)
            if self.model is None:
                self.connect()
            payload = json.dumps(self.body(request, encoder_rate)).encode()
            conn = self._connect()
            with self._lock:
                self._open[handle] = conn
            self._check(handle)
            try:
                conn.request("POST", self._prefix + "/v1/audio/speech", body=payload,
                             headers=self._headers("application/json"))  # fmt: skip
                response = conn.getresponse()
                if response.status != 200:
                    raise VoxDeskError(self._error_line(response.status, response.read(MAX_ERROR_BYTES)))
                seed = response.getheader("x-seed")
                rate = _wav_header(response)
                n = 0
                for samples in _pcm_chunks(response):
                    self._check(handle)
                    got_audio = True
                    sink(AudioChunk(-handle, n, samples))
                    n += 1
            finally:
                conn.close()
            self._check(handle)
            if n == 0:
                raise VoxDeskError("The speech server sent no audio for this text.")
            final_seed = (
                int(seed) if seed and seed.isdigit() else (request.seed if request.seed is not None else -1)
            )
            sink(RequestFinished(-handle, n, final_seed, {"sample_rate": float(rate)}))
        except _Cancelled:
            sink(RequestFailed(-handle, "Cancelled."))
        except VoxDeskError as exc:
            sink(RequestFailed(-handle, str(exc)))
        except (OSError, http.client.HTTPException) as exc:
            with self._lock:
                cancelled = handle in self._cancelled
            if cancelled:
                sink(RequestFailed(-handle, "Cancelled."))
            elif got_audio:
                sink(RequestFailed(-handle, f"The connection to {self.url} was lost in the middle of this "
                                            "segment; the audio that arrived is kept."))  # fmt: skip
            else:
                sink(RequestFailed(-handle, self._plain(exc)))
        finally:
            with self._lock:
                self._open.pop(handle, None)
                self._cancelled.discard(handle)


def _emotion_fields(request: SynthRequest) -> dict:
    """VoxDesk's body fields for the request's emotion and language (docs/server.md); none when it
    has neither, so a server without them is never sent a field it would refuse."""
    fields: dict = {"language": request.language} if request.language else {}
    emotion = request.emotion
    if emotion is None:
        return fields
    if emotion.kind == "clip":
        fields["emotion_audio"] = _data_uri(emotion.clip, emotion.clip_rate)
    elif emotion.kind == "vector":
        fields["emotion_vector"] = list(emotion.vector)
    else:
        fields["emotion_text"] = emotion.text
    if emotion.weight != 1.0:
        fields["emotion_weight"] = emotion.weight
    return fields


def _data_uri(samples: np.ndarray, rate: int) -> str:
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.asarray(samples, dtype=np.float32), rate, format="WAV", subtype="PCM_16")
    return "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _read_exact(response, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        piece = response.read(n - len(data))
        if not piece:
            break
        data += piece
    return bytes(data)


def _wav_header(response) -> int:
    """Read a (possibly open-ended) 16-bit mono PCM WAV header up to its samples; the rate."""
    rate, used = 0, 12
    head = _read_exact(response, 12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise VoxDeskError("The speech server did not send WAV audio.")
    while True:  # walk the chunks up to "data"
        chunk = _read_exact(response, 8)
        if len(chunk) < 8:
            raise VoxDeskError("The speech server's WAV audio ended before its samples.")
        kind, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if kind == b"data":
            break
        used += 8 + size + (size & 1)
        if used > MAX_HEADER_BYTES:
            raise VoxDeskError("The speech server's WAV audio has a header too large to be audio.")
        payload = _read_exact(response, size + (size & 1))
        if kind == b"fmt ":
            if len(payload) < 16:
                raise VoxDeskError("The speech server's WAV audio has a damaged format chunk.")
            fmt, channels, rate, _bps, _align, bits = struct.unpack("<HHIIHH", payload[:16])
            if fmt not in (1, 0xFFFE) or channels != 1 or bits != 16:
                raise VoxDeskError("The speech server sent audio other than 16-bit mono WAV.")
    if rate <= 0:
        raise VoxDeskError("The speech server's WAV audio has no format chunk.")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise VoxDeskError(
            f"The speech server sent audio at {rate:,} Hz; VoxDesk plays {MIN_RATE:,}–{MAX_RATE:,} Hz."
        )
    return rate


def _pcm_chunks(response):
    """Float32 chunks of the 16-bit samples, as the bytes arrive (at most ``MAX_REPLY_SAMPLES``)."""
    rest, total = b"", 0
    while True:
        piece = response.read1(READ_SIZE) if hasattr(response, "read1") else response.read(READ_SIZE)
        if not piece:
            break
        data = rest + piece
        usable = len(data) - (len(data) & 1)
        rest = data[usable:]
        total += usable // 2
        if total > MAX_REPLY_SAMPLES:
            raise VoxDeskError(
                "The speech server sent more audio for one segment than any segment holds; "
                "the audio that arrived is kept. Check the server."
            )
        if usable:
            yield np.frombuffer(data[:usable], dtype="<i2").astype(np.float32) / 32768.0
