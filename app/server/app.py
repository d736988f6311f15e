"""The Starlette application: OpenAI's speech, models and voices endpoints over one engine.

Every request is checked before it reaches the engine (key, origin, body size, fields, queue
bound) and every failure is OpenAI's JSON error body with the matching status. Requests from all
clients share the engine through :class:`app.engine.host.EngineHost`, so they are batched
together; a client that goes away cancels its request, which frees its KV blocks.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.host import EngineHost
from app.engine.request import SynthRequest
from app.errors import VoxDeskError
from app.server import formats
from app.server.protocol import (
    OPENAI_MODEL_ALIASES,
    ApiError,
    SpeechParams,
    decode_audio_bytes,
    parse_speech,
)

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024 * 1024  # a speech request with a 10 MB ref_audio in base64
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
_GENERATION_FAILURES = ("failed on this device", "invalid audio", "shutting down")


@dataclass(frozen=True)
class ServedModel:
    """What the server says about the loaded model (and keys cached voice latents with)."""

    name: str
    model_id: str
    architecture: str
    sample_rate: int
    encoder_rate: int


@dataclass
class ServerConfig:
    api_key: str | None = None
    max_pending: int = 128  # requests admitted (decoding or queued) before 429
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] | None = None  # Host header check; None: any


@dataclass
class ServerState:
    """The live parts: the engine (absent while the window has no model), library, counters."""

    config: ServerConfig
    library: Any  # app.voices.library.VoiceLibrary
    host: EngineHost | None = None
    model: ServedModel | None = None
    requests_total: int = 0
    in_flight: int = 0
    errors: dict[int, int] = field(default_factory=dict)

    def attach(self, host: EngineHost | None, model: ServedModel | None) -> None:
        self.host, self.model = host, model


# ---- plumbing -------------------------------------------------------------------------------
def _error(exc: ApiError) -> JSONResponse:
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


class BodyTooLarge(Exception):
    pass


class Guard:
    """Pure ASGI middleware: Host and Origin checks, the API key, the body size bound, and
    OpenAI-shaped errors for whatever a handler raises."""

    def __init__(self, app, state: ServerState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            self._check(request)
        except ApiError as exc:
            await self._count_and_send(exc, scope, receive, send)
            return
        seen = 0

        async def bounded_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY_BYTES:
                    raise BodyTooLarge
            return message

        started = False

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                if status >= 400:
                    self.state.errors[status] = self.state.errors.get(status, 0) + 1
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _error(ApiError(413, "The request body is larger than 16 MB.", code="too_large"))(
                    scope, receive, tracking_send
                )
        except ApiError as exc:
            if not started:
                await _error(exc)(scope, receive, tracking_send)
        except Exception:  # a bug: logged with its traceback, answered in OpenAI's shape
            log.exception("request %s %s failed", scope.get("method"), scope.get("path"))
            if not started:
                message = "The server failed on this request (a bug; see VoxDesk's log)."
                await _error(ApiError(500, message, code="internal_error"))(scope, receive, tracking_send)

    async def _count_and_send(self, exc: ApiError, scope, receive, send) -> None:
        self.state.errors[exc.status] = self.state.errors.get(exc.status, 0) + 1
        await _error(exc)(scope, receive, send)

    def _check(self, request: Request) -> None:
        cfg = self.state.config
        if cfg.allowed_hosts is not None:
            host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]").lower()
            if host not in cfg.allowed_hosts:
                raise ApiError(400, "This server answers only on its own address.", code="invalid_host")
        origin = request.headers.get("origin")
        if origin is not None and origin not in cfg.cors_origins:
            # a web page in a browser may not drive the local server unless the user allowed its origin
            raise ApiError(403, f"Requests from the web page {origin} are not allowed.", code="origin")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise ApiError(413, "The request body is larger than 16 MB.", code="too_large")
        if cfg.api_key and request.url.path != "/health":
            auth = request.headers.get("authorization", "")
            token = auth[7:] if auth.lower().startswith("bearer ") else ""
            if not hmac.compare_digest(token.encode(), cfg.api_key.encode()):
                raise ApiError(401, "Incorrect or missing API key.", code="invalid_api_key")


def _state(request: Request) -> ServerState:
    return request.app.state.voxdesk


def _require_engine(state: ServerState) -> tuple[EngineHost, ServedModel]:
    if state.host is None or state.model is None:
        raise ApiError(
            503, "No model is loaded yet: try again shortly.", code="model_not_loaded", retry_after=5
        )
    return state.host, state.model


async def _json_body(request: Request) -> Any:
    if "json" not in request.headers.get("content-type", "").lower():
        raise ApiError(400, "Send the request as JSON (Content-Type: application/json).", code="invalid_json")
    raw = await request.body()
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ApiError(400, "The request body is not valid JSON.", code="invalid_json") from None


# ---- voices ---------------------------------------------------------------------------------
def _find_voice(state: ServerState, key: str):
    """A library voice by name (case-insensitive) or id. Ids are checked to be plain hex before
    they name a folder, so no request can point outside the library."""
    library = state.library
    voice = library.find(key)
    if voice is None and len(key) == 12 and all(c in "0123456789abcdef" for c in key):
        try:
            voice = library.get(key)
        except VoxDeskError:
            voice = None
    if voice is None:
        raise ApiError(
            404,
            f"There is no voice named {key!r}. List voices with GET /v1/audio/voices or upload one.",
            param="voice",
            code="voice_not_found",
        )
    return voice


def _voice_json(voice) -> dict[str, Any]:
    """OpenAI's ``audio.voice`` object, plus the transcript and length."""
    from datetime import datetime

    try:
        created = int(datetime.fromisoformat(voice.created).timestamp())
    except ValueError:
        created = 0
    return {
        "object": "audio.voice",
        "id": voice.id,
        "name": voice.name,
        "type": "audio_sample",
        "created_at": created,
        "ref_text": voice.transcript,
        "duration_s": round(voice.duration, 3),
    }


async def list_voices(request: Request) -> JSONResponse:
    voices = _state(request).library.list()
    data = [_voice_json(v) for v in voices]
    return JSONResponse({"object": "list", "data": data, "voices": [v.name for v in voices]})


async def upload_voice(request: Request) -> JSONResponse:
    state = _state(request)
    try:
        async with request.form(max_files=1, max_fields=8, max_part_size=MAX_UPLOAD_BYTES + 1) as form:
            upload = form.get("audio_sample") or form.get("file")
            name = form.get("name")
            ref_text = form.get("ref_text") or form.get("reference_text") or ""
            if upload is None or isinstance(upload, str):
                raise ApiError(400, "Attach the recording as 'audio_sample' (a file).", param="audio_sample")
            if not isinstance(name, str) or not name.strip():
                raise ApiError(400, "Give the voice a 'name'.", param="name")
            if not isinstance(ref_text, str):
                raise ApiError(400, "'ref_text' must be text.", param="ref_text")
            data = await upload.read(MAX_UPLOAD_BYTES + 1)
    except (ApiError, BodyTooLarge, ClientDisconnect):
        raise
    except Exception as exc:  # noqa: BLE001 - malformed multipart (starlette's MultiPartException, …)
        raise ApiError(400, f"The upload could not be read as multipart form data ({exc}).") from None
    if len(data) > MAX_UPLOAD_BYTES:
        raise ApiError(413, "The recording is larger than 10 MB: send a shorter clip.", code="too_large")
    samples, rate = decode_audio_bytes(data, "audio_sample")
    try:
        voice = state.library.create_from_samples(samples, rate, name, ref_text)
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="audio_sample") from None
    return JSONResponse(_voice_json(voice), status_code=201)


async def delete_voice(request: Request) -> JSONResponse:
    state = _state(request)
    voice = _find_voice(state, request.path_params["name"])
    state.library.delete(voice)
    return JSONResponse(
        {"object": "audio.voice.deleted", "id": voice.id, "name": voice.name, "deleted": True}
    )


# ---- models, health -------------------------------------------------------------------------
async def list_models(request: Request) -> JSONResponse:
    state = _state(request)
    data = []
    if state.model is not None:
        m = state.model
        data.append({
            "id": m.name, "object": "model", "owned_by": "voxdesk", "created": 0,
            "architecture": m.architecture, "sample_rate": m.sample_rate, "encoder_rate": m.encoder_rate,
        })  # fmt: skip
    return JSONResponse({"object": "list", "data": data})


def _rss_mb() -> float | None:
    """This process's resident memory (Linux), for the soak figures."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    import os

    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _gpu_mb(host: EngineHost) -> dict[str, float] | None:
    """GPU memory held by this process's torch allocator (MB), when the engine runs on CUDA."""
    device = getattr(host.engine, "device", None)
    if getattr(device, "type", device) != "cuda":
        return None
    import torch

    return {
        "allocated": round(torch.cuda.memory_allocated(device) / 2**20, 1),
        "reserved": round(torch.cuda.memory_reserved(device) / 2**20, 1),
    }


def _device(host: EngineHost) -> str:
    """'cpu · bf16: this CPU has AMX', 'cuda:0': where the model runs, in which precision and why."""
    from app.cpu_precision import device_line

    engine = host.engine
    return device_line(str(getattr(engine, "device", "?")), getattr(engine, "precision", None))


async def health(request: Request) -> JSONResponse:
    state = _state(request)
    body: dict[str, Any] = {
        "status": "ok" if state.host is not None else "no_model",
        "rss_mb": _rss_mb(),
        "requests_total": state.requests_total,
        "in_flight": state.in_flight,
        "errors": {str(k): v for k, v in sorted(state.errors.items())},
    }
    if state.host is not None:
        s = state.host.stats
        free, total = state.host.kv_blocks()
        body["engine"] = {
            "model": state.model.name if state.model else None,
            "device": _device(state.host),
            "active": state.host.active,
            "finished": s.finished,
            "failed": s.failed,
            "steps": s.steps,
            "max_batch": s.max_batch,
            "kv_blocks_free": free,
            "kv_blocks_total": total,
        }
        gpu = _gpu_mb(state.host)
        if gpu is not None:
            body["gpu_mb"] = gpu
    return JSONResponse(body)


# ---- speech ---------------------------------------------------------------------------------
def _voice_prompt(state: ServerState, model: ServedModel, p: SpeechParams, loop):
    """The request's VoicePrompt and a callback that stores newly encoded library latents."""
    from app.audio.io import resample
    from app.models.voxcpm.prompt import VoicePrompt
    from app.voices import latents
    from app.voices.cloning import to_voice_prompt

    v2 = model.architecture == "voxcpm2"
    if p.ref_audio is not None:
        samples, rate = p.ref_audio
        audio = resample(samples, rate, model.encoder_rate)
        if p.ref_text.strip():
            return VoicePrompt(prompt_audio=audio, prompt_text=p.ref_text), None
        if not v2:
            raise ApiError(
                400, "This model needs 'ref_text' (the words spoken in ref_audio).", param="ref_text"
            )
        return VoicePrompt(reference_audio=audio), None
    if p.voice is None or p.voice.strip().lower() in ("", "default"):
        return None, None
    voice = _find_voice(state, p.voice)
    if p.ref_text.strip():
        voice = voice.__class__(**{**voice.to_dict(), "transcript": p.ref_text})
    try:
        prompt = to_voice_prompt(state.library, voice, model.encoder_rate, "auto", model.architecture,
                                 model.model_id)  # fmt: skip
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="voice") from None

    def store(role: str, array) -> None:
        loop.call_soon_threadsafe(latents.store, state.library, voice, model.model_id, role, array)

    return prompt, store


def _synth_request(state: ServerState, model: ServedModel, p: SpeechParams, loop):
    from app.models.voxcpm.prompt import design_text, normalize_text

    if p.model is not None and p.model not in (model.name, *OPENAI_MODEL_ALIASES):
        raise ApiError(404, f"The model {p.model!r} is not served here; this server has {model.name!r}.",
                       param="model", code="model_not_found")  # fmt: skip
    text = normalize_text(p.input)
    if p.instructions and p.instructions.strip():
        if model.architecture != "voxcpm2":
            raise ApiError(400, "'instructions' (voice design) needs a VoxCPM2 model.", param="instructions")
        text = design_text(p.instructions.strip(), text)
    prompt, store = _voice_prompt(state, model, p, loop)
    seed = p.seed if p.seed is not None else secrets.randbelow(2**31)
    # A streamed body cannot take back a runaway take, so streams keep their first take, as the
    # official package does (it turns retry_badcase off when streaming); whole files retry.
    request = SynthRequest(text, prompt, seed, p.cfg_value, p.inference_timesteps,
                           min(p.min_new_tokens, p.max_new_tokens), p.max_new_tokens,
                           retry_badcase=p.stream is None, normalize=p.normalize)  # fmt: skip
    try:
        request.check()
    except VoxDeskError as exc:
        raise ApiError(400, str(exc)) from None
    return request, store


def _failure(event: RequestFailed) -> ApiError:
    status = 500 if any(s in event.message for s in _GENERATION_FAILURES) else 400
    return ApiError(status, event.message, code="generation_failed")


async def _until_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def speech(request: Request) -> Response:
    state = _state(request)
    params = parse_speech(await _json_body(request))
    host, model = _require_engine(state)
    loop = asyncio.get_running_loop()
    synth, store = _synth_request(state, model, params, loop)
    if state.in_flight >= state.config.max_pending:
        raise ApiError(429, "The server is busy: too many requests are queued. Try again shortly.",
                       code="queue_full", retry_after=1)  # fmt: skip
    events: asyncio.Queue = asyncio.Queue()
    state.in_flight += 1
    state.requests_total += 1
    handle = host.submit(synth, lambda ev: loop.call_soon_threadsafe(events.put_nowait, ev), store)
    done = False

    def release() -> None:
        nonlocal done
        if not done:
            done = True
            state.in_flight -= 1

    watcher = asyncio.ensure_future(_until_disconnect(request))
    try:
        first = await _next_or_disconnect(events, watcher)
        if first is None:  # the client went away while queued
            host.cancel(handle)
            release()
            return Response(status_code=499)
        if isinstance(first, RequestFailed):
            release()
            raise _failure(first)
        headers = {"X-Seed": str(synth.seed), "X-Sample-Rate": str(model.sample_rate)}
        if params.stream is None:
            chunks = [first]
            while not isinstance(chunks[-1], (RequestFinished, RequestFailed)):
                ev = await _next_or_disconnect(events, watcher)
                if ev is None:
                    host.cancel(handle)
                    release()
                    return Response(status_code=499)
                chunks.append(ev)
            release()
            if isinstance(chunks[-1], RequestFailed):
                raise _failure(chunks[-1])
            retried = [i for i, c in enumerate(chunks) if isinstance(c, RequestRetried)]
            kept = chunks[retried[-1] + 1 :] if retried else chunks  # the last take only
            audio = [c.samples for c in kept if isinstance(c, AudioChunk)]
            samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
            body = await asyncio.to_thread(formats.encode_whole, samples, model.sample_rate,
                                           params.response_format)  # fmt: skip
            return Response(body, media_type=formats.MEDIA_TYPES[params.response_format], headers=headers)
    except BaseException:
        watcher.cancel()
        if not done:
            host.cancel(handle)
            release()
        raise
    watcher.cancel()
    stream = _stream_bytes(first, events, params.response_format, model.sample_rate, host, handle, release)
    if params.stream == "sse":
        return StreamingResponse(_sse(stream, synth), media_type="text/event-stream", headers=headers)
    media = formats.MEDIA_TYPES[params.response_format]
    return StreamingResponse(stream, media_type=media, headers=headers)


async def _next_or_disconnect(events: asyncio.Queue, watcher: asyncio.Future):
    """The request's next audio, finish or failure event; None once the client has gone."""
    while True:
        getter = asyncio.ensure_future(events.get())
        done, _ = await asyncio.wait({getter, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if getter not in done:
            getter.cancel()
            return None
        event = getter.result()
        if isinstance(event, (AudioChunk, RequestFinished, RequestFailed, RequestRetried)):
            return event


class StreamFailed(Exception):
    """The engine dropped a request after its audio had started: the body is cut short."""


async def _stream_bytes(first, events, fmt, rate, host, handle, release) -> AsyncIterator[bytes]:
    """The audio body as the engine makes it; a client that leaves cancels the request."""
    finished = False
    try:
        if fmt == "wav":
            yield formats.wav_header(rate)
        event = first
        while True:
            if isinstance(event, AudioChunk):
                yield formats.pcm16(event.samples)
            elif isinstance(event, RequestFinished):
                finished = True
                return
            elif isinstance(event, RequestFailed):
                finished = True
                raise StreamFailed(event.message)
            event = await events.get()  # (other event kinds carry no audio)
    finally:
        if not finished:
            host.cancel(handle)
        release()


async def _sse(stream: AsyncIterator[bytes], synth: SynthRequest) -> AsyncIterator[bytes]:
    """OpenAI's speech SSE events around the same bytes the audio stream carries."""
    n_bytes = 0
    try:
        async for data in stream:
            n_bytes += len(data)
            delta = {"type": "speech.audio.delta", "audio": base64.b64encode(data).decode("ascii")}
            yield f"data: {json.dumps(delta)}\n\n".encode()
    except StreamFailed as exc:
        error = {"type": "error", "error": {"message": str(exc), "type": "server_error"}}
        yield f"data: {json.dumps(error)}\n\n".encode()
        return
    n_in = len(synth.text)
    usage = {"input_tokens": n_in, "output_tokens": n_bytes // 2, "total_tokens": n_in + n_bytes // 2}
    yield f"data: {json.dumps({'type': 'speech.audio.done', 'usage': usage})}\n\n".encode()


async def _not_found(request: Request, exc: Exception) -> JSONResponse:
    status = getattr(exc, "status_code", 404)
    message = "There is nothing at this address." if status == 404 else "This method is not allowed here."
    return _error(ApiError(status, message, code="not_found" if status == 404 else "method_not_allowed"))


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    return _error(exc)


async def _too_large(request: Request, exc: BodyTooLarge) -> JSONResponse:
    return _error(ApiError(413, "The request body is larger than 16 MB.", code="too_large"))


async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
    return Response(status_code=499)


def build_app(state: ServerState) -> Starlette:
    """The ASGI app over ``state`` (whose engine can be attached and detached while it runs)."""
    routes = [
        Route("/v1/audio/speech", speech, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1/audio/voices", list_voices, methods=["GET"]),
        Route("/v1/audio/voices", upload_voice, methods=["POST"]),
        Route("/v1/audio/voices/{name:str}", delete_voice, methods=["DELETE"]),
        Route("/health", health, methods=["GET"]),
    ]
    middleware = [Middleware(Guard, state=state)]
    if state.config.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        middleware.insert(0, Middleware(CORSMiddleware, allow_origins=list(state.config.cors_origins),
                                        allow_methods=["GET", "POST", "DELETE"],
                                        allow_headers=["authorization", "content-type"]))  # fmt: skip
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            ApiError: _api_error,
            404: _not_found,
            405: _not_found,
            BodyTooLarge: _too_large,
            ClientDisconnect: _client_gone,
        },  # fmt: skip
    )
    app.state.voxdesk = state
    return app
