"""The Starlette application: OpenAI's speech, models and voices endpoints over one engine.

Every request is checked before it reaches the engine (key, origin, body size, fields, queue
bound) and every failure is OpenAI's JSON error body with the matching status. Requests from all
clients share the engine through :class:`app.engine.host.EngineHost`, so they are batched
together; a client that goes away cancels its request, which frees its KV blocks.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
from app.server.connections import ConnectionLimits
from app.server.guard import (
    BodyTooLarge,
    Guard,
    StreamFailed,
    error_response,
    stopping_error,
)
from app.server.protocol import (
    OPENAI_MODEL_ALIASES,
    ApiError,
    SpeechParams,
    decode_audio_bytes,
    parse_speech,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

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
    default_voice: str | None = None  # what OpenAI's stock names (alloy, echo, …) speak as; None: default
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)  # idle connections
    max_requests: int = 256  # requests open at once (reading, decoding, queued, speaking) before 503
    body_timeout_s: float = 10.0  # the longest pause while a request body arrives before 408
    max_decodes: int = field(default_factory=lambda: max(1, min(4, (os.cpu_count() or 1) // 2)))
    normalize_timeout_s: float = 120.0  # as the window: a first text waits for the grammars to load


@dataclass
class ServerState:
    """The live parts: the engine (absent while the window has no model), library, counters."""

    config: ServerConfig
    library: Any  # app.voices.library.VoiceLibrary
    host: EngineHost | None = None
    model: ServedModel | None = None
    requests_total: int = 0
    in_flight: int = 0  # speech requests admitted to the engine
    open_requests: int = 0  # requests past the Guard (all but /health)
    errors: dict[int, int] = field(default_factory=dict)
    stopping: asyncio.Event | None = None  # set when the server starts to stop (app/server/run.py)
    decode_slots: asyncio.Semaphore | None = None  # see _decode

    def attach(self, host: EngineHost | None, model: ServedModel | None) -> None:
        self.host, self.model = host, model


# ---- plumbing -------------------------------------------------------------------------------
async def _work(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a worker thread: the CPU-heavy part of a request (parsing a 16 MB body,
    resampling, reading a library voice, encoding the answer) never runs on the event loop, so
    ``/health`` and every other client stay answered meanwhile."""
    return await asyncio.to_thread(fn, *args)


async def _decode(state: ServerState, data: bytes, param: str) -> tuple[np.ndarray, int]:
    """An audio file sent by a client, decoded on a worker, at most ``config.max_decodes`` at
    once: what a compressed file costs to decode is not known from its size, so a few clients
    sending such files hold a few workers, never the event loop or every core."""
    if state.decode_slots is None:
        state.decode_slots = asyncio.Semaphore(state.config.max_decodes)
    async with state.decode_slots:
        return await asyncio.to_thread(decode_audio_bytes, data, param)


def _state(request: Request) -> ServerState:
    return request.app.state.voxdesk


def _require_engine(state: ServerState) -> tuple[EngineHost, ServedModel]:
    if state.host is None or state.model is None:
        raise ApiError(
            503, "No model is loaded yet: try again shortly.", code="model_not_loaded", retry_after=5
        )
    return state.host, state.model


async def _json_body(request: Request) -> bytes:
    """The raw body of a JSON request (parsed by :func:`_parse_json` on a worker)."""
    if "json" not in request.headers.get("content-type", "").lower():
        raise ApiError(400, "Send the request as JSON (Content-Type: application/json).", code="invalid_json")
    return await request.body()


def _parse_json(raw: bytes) -> Any:
    # ValueError: not UTF-8, not JSON, or an integer past Python's 4,300 digits; RecursionError:
    # arrays or objects nested thousands deep
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "The request body is not valid JSON.", code="invalid_json") from None


# ---- voices ---------------------------------------------------------------------------------
def _find_voice(state: ServerState, key: str, stock: bool = False):
    """A library voice by name (case-insensitive) or id (app/voices/lookup.py); with ``stock``,
    OpenAI's stock names too, and None for the model's own voice."""
    from app.voices.lookup import VoiceNotFound, find_voice, speaking_voice

    try:
        if stock:
            return speaking_voice(state.library, key, state.config.default_voice)
        voice = find_voice(state.library, key)
        if voice is None:
            raise VoiceNotFound(key, f"There is no voice named {key!r}.")
        return voice
    except VoiceNotFound as exc:
        raise ApiError(
            404,
            f"{exc} List voices with GET /v1/audio/voices or upload one.",
            param="voice",
            code="voice_not_found",
        ) from None


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
    samples, rate = await _decode(state, data, "audio_sample")
    voice = await _work(_create_voice, state, samples, rate, name, ref_text)
    return JSONResponse(_voice_json(voice), status_code=201)


def _create_voice(state: ServerState, samples: np.ndarray, rate: int, name: str, ref_text: str):
    try:
        return state.library.create_from_samples(samples, rate, name, ref_text)
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="audio_sample") from None


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
def _voice_prompt(state: ServerState, model: ServedModel, p: SpeechParams, ref, loop):
    """The request's VoicePrompt and a callback that stores newly encoded library latents
    (``ref``: the decoded ``ref_audio``, samples and rate, if sent)."""
    from app.audio.io import resample
    from app.models.voxcpm.prompt import VoicePrompt
    from app.voices import latents
    from app.voices.cloning import to_voice_prompt

    v2 = model.architecture == "voxcpm2"
    if ref is not None:
        samples, rate = ref
        audio = resample(samples, rate, model.encoder_rate)
        if p.ref_text.strip():
            return VoicePrompt(prompt_audio=audio, prompt_text=p.ref_text), None
        if not v2:
            raise ApiError(
                400, "This model needs 'ref_text' (the words spoken in ref_audio).", param="ref_text"
            )
        return VoicePrompt(reference_audio=audio), None
    voice = _find_voice(state, p.voice, stock=True)
    if voice is None:  # "default", or a stock name with no default voice set
        return None, None
    if p.ref_text.strip():
        voice = voice.__class__(**{**voice.to_dict(), "transcript": p.ref_text})
    try:
        prompt = to_voice_prompt(state.library, voice, model.encoder_rate, "auto", model.architecture,
                                 model.model_id)  # fmt: skip
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="voice") from None

    def store(role: str, array) -> None:
        _to_loop(loop, latents.store, state.library, voice, model.model_id, role, array)

    return prompt, store


def _to_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """Hand ``fn(*args)`` from the engine thread to the server's loop. Once the server has
    stopped its loop is closed: the requests it cancelled still report their end, to nobody
    (a traceback each, ~60 KB for 40 requests, filled a stderr pipe and hung the stop)."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed
        pass


def _check_model(model: ServedModel, p: SpeechParams) -> None:
    if p.model is not None and p.model not in (model.name, *OPENAI_MODEL_ALIASES):
        raise ApiError(404, f"The model {p.model!r} is not served here; this server has {model.name!r}.",
                       param="model", code="model_not_found")  # fmt: skip
    if p.instructions and p.instructions.strip() and model.architecture != "voxcpm2":
        raise ApiError(400, "'instructions' (voice design) needs a VoxCPM2 model.", param="instructions")


async def _spoken_text(state: ServerState, p: SpeechParams) -> str:
    """The text the engine speaks. With ``normalize``, numbers and symbols are spelled out in the
    normalizer's child process (as the window does), under a time limit: never on the engine
    thread, where a long text held every other client's request for seconds."""
    from app.models.voxcpm.prompt import design_text, normalize_text

    text = normalize_text(p.input)
    if p.instructions and p.instructions.strip():
        text = design_text(p.instructions.strip(), text)
    if not p.normalize:
        return text
    from app.text import normalize

    limit = state.config.normalize_timeout_s
    try:
        return await asyncio.wait_for(asyncio.wrap_future(normalize.background.submit(text)), limit)
    except asyncio.TimeoutError:  # noqa: UP041 - (Python 3.10's own class)
        raise ApiError(503, f"Reading numbers as words took longer than {limit:g} s: send the text in "
                       "shorter pieces, or without 'normalize'.", param="normalize",
                       code="normalize_timeout") from None  # fmt: skip
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="normalize") from None
    except Exception:  # noqa: BLE001 - the child died (BrokenProcessPool): a plain 500
        log.exception("normalizing a request's text failed")
        raise ApiError(500, "Reading numbers as words failed on this server: send the text without "
                       "'normalize'.", param="normalize", code="normalize_failed") from None  # fmt: skip


def _synth_request(state: ServerState, model: ServedModel, p: SpeechParams, text: str, ref, loop):
    """The engine request (the voice read and resampled here: on a worker, see :func:`_work`)."""
    prompt, store = _voice_prompt(state, model, p, ref, loop)
    seed = p.seed if p.seed is not None else secrets.randbelow(2**31)
    # A streamed body cannot take back a runaway take, so streams keep their first take, as the
    # official package does (it turns retry_badcase off when streaming); whole files retry.
    request = SynthRequest(text, prompt, seed, p.cfg_value, p.inference_timesteps,
                           min(p.min_new_tokens, p.max_new_tokens), p.max_new_tokens,
                           retry_badcase=p.stream is None)  # fmt: skip
    try:
        request.check()
    except VoxDeskError as exc:
        raise ApiError(400, str(exc)) from None
    return request, store


def _parse_request(raw: bytes) -> SpeechParams:
    return parse_speech(_parse_json(raw))


def _failure(event: RequestFailed) -> ApiError:
    status = 500 if any(s in event.message for s in _GENERATION_FAILURES) else 400
    return ApiError(status, event.message, code="generation_failed")


async def _until_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _stop_signal(state: ServerState) -> asyncio.Future:
    """A future done once the server starts to stop (never, for an app run outside uvicorn)."""
    if state.stopping is None:
        return asyncio.get_running_loop().create_future()
    return asyncio.ensure_future(state.stopping.wait())


async def speech(request: Request) -> Response:
    state = _state(request)
    raw = await _json_body(request)
    params = await _work(_parse_request, raw)
    del raw  # (a request stays open as long as its audio: keep only what it still needs)
    host, model = _require_engine(state)
    _check_model(model, params)
    ref = None
    if params.ref_audio is not None:
        ref = await _decode(state, params.ref_audio, "ref_audio")
        params = dataclasses.replace(params, ref_audio=None)
    text = await _spoken_text(state, params)
    loop = asyncio.get_running_loop()
    synth, store = await _work(_synth_request, state, model, params, text, ref, loop)
    del ref
    host, model = _require_engine(state)  # (the window may have unloaded it meanwhile)
    if state.in_flight >= state.config.max_pending:
        raise ApiError(429, "The server is busy: too many requests are queued. Try again shortly.",
                       code="queue_full", retry_after=1)  # fmt: skip
    events: asyncio.Queue = asyncio.Queue()
    state.in_flight += 1
    state.requests_total += 1
    handle = host.submit(synth, lambda ev: _to_loop(loop, events.put_nowait, ev), store)
    done = False

    def release() -> None:
        nonlocal done
        if not done:
            done = True
            state.in_flight -= 1

    watcher = asyncio.ensure_future(_until_disconnect(request))
    stop = _stop_signal(state)
    try:
        first = await _next_event(events, watcher, stop)
        if first is watcher:  # the client went away while queued
            host.cancel(handle)
            release()
            return Response(status_code=499)
        if first is stop:
            raise stopping_error()
        if isinstance(first, RequestFailed):
            release()
            raise _failure(first)
        headers = {"X-Seed": str(synth.seed), "X-Sample-Rate": str(model.sample_rate)}
        if params.stream is None:
            chunks = [first]
            while not isinstance(chunks[-1], (RequestFinished, RequestFailed)):
                ev = await _next_event(events, watcher, stop)
                if ev is watcher:
                    host.cancel(handle)
                    release()
                    return Response(status_code=499)
                if ev is stop:
                    raise stopping_error()
                chunks.append(ev)
            release()
            stop.cancel()
            if isinstance(chunks[-1], RequestFailed):
                raise _failure(chunks[-1])
            retried = [i for i, c in enumerate(chunks) if isinstance(c, RequestRetried)]
            kept = chunks[retried[-1] + 1 :] if retried else chunks  # the last take only
            audio = [c.samples for c in kept if isinstance(c, AudioChunk)]
            samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
            fmt = params.response_format
            body = await _work(formats.encode_whole, samples, model.sample_rate, fmt)
            return Response(body, media_type=formats.MEDIA_TYPES[params.response_format], headers=headers)
    except BaseException:
        watcher.cancel()
        stop.cancel()
        if not done:
            host.cancel(handle)
            release()
        raise
    watcher.cancel()
    stream = _stream_bytes(first, events, stop, params.response_format, model.sample_rate, host, handle,
                           release)  # fmt: skip
    if params.stream == "sse":
        return StreamingResponse(_sse(stream, synth), media_type="text/event-stream", headers=headers)
    media = formats.MEDIA_TYPES[params.response_format]
    return StreamingResponse(stream, media_type=media, headers=headers)


async def _next_event(events: asyncio.Queue, *ends: asyncio.Future):
    """The request's next audio, finish, failure or retry event; or whichever of ``ends`` (the
    client leaving, the server stopping) happened first."""
    while True:
        getter = asyncio.ensure_future(events.get())
        done, _ = await asyncio.wait({getter, *ends}, return_when=asyncio.FIRST_COMPLETED)
        if getter not in done:
            getter.cancel()
            return next(end for end in ends if end in done)
        event = getter.result()
        if isinstance(event, (AudioChunk, RequestFinished, RequestFailed, RequestRetried)):
            return event


async def _stream_bytes(first, events, stop, fmt, rate, host, handle, release) -> AsyncIterator[bytes]:
    """The audio body as the engine makes it; a client that leaves cancels the request. If the
    engine drops the request or the server stops, :class:`StreamFailed` cuts the body short."""
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
            event = await _next_event(events, stop)
            if event is stop:
                raise StreamFailed("The server stopped before this speech was finished: send the "
                                   "request again once it is back.")  # fmt: skip
    finally:
        stop.cancel()
        if not finished:
            host.cancel(handle)
        release()


async def _sse(stream: AsyncIterator[bytes], synth: SynthRequest) -> AsyncIterator[bytes]:
    """OpenAI's speech SSE events around the same bytes the audio stream carries; a stream that
    cannot be finished ends with an ``error`` event instead of ``speech.audio.done``."""
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
    code = "not_found" if status == 404 else "method_not_allowed"
    return error_response(ApiError(status, message, code=code))


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc)


async def _too_large(request: Request, exc: BodyTooLarge) -> JSONResponse:
    too_large = ApiError(413, "The request body is larger than 16 MB.", code="too_large")
    return error_response(too_large, close=True)


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
