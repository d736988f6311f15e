"""The Starlette application: OpenAI's speech, models and voices endpoints over one engine.

Every request is checked before it reaches the engine (key, origin, body size, fields, queue
bound) and every failure is OpenAI's JSON error body with the matching status. Requests from all
clients share the engine through :class:`app.engine.host.EngineHost`, so they are batched
together; a client that goes away cancels its request, which frees its KV blocks.

This module holds the config, the live state, the plumbing the endpoints share, the models and
health endpoints, the error handlers and the app factory; the speech endpoint is in
:mod:`app.server.speech` and the voices endpoints in :mod:`app.server.voices`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.engine.host import EngineHost
from app.server.connections import ConnectionLimits
from app.server.guard import BodyTooLarge, Guard, error_response
from app.server.protocol import ApiError, decode_audio_bytes

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class ServedModel:
    """What the server says about the loaded model (and keys cached voice latents with)."""

    name: str
    model_id: str
    architecture: str
    sample_rate: int
    encoder_rate: int
    # what the family honours (FamilyInfo.controls): a request field it cannot honour is a 400
    controls: frozenset[str] = frozenset()
    label: str = ""  # the family's name for people ("Fun-CosyVoice3"); "" : the name
    languages: tuple[str, ...] = ()  # FamilyInfo.languages: the codes a request's 'language' may name

    def has(self, control: str) -> bool:
        return control in self.controls

    @property
    def title(self) -> str:
        return self.label or self.name


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


# ---- models, health -------------------------------------------------------------------------
async def list_models(request: Request) -> JSONResponse:
    state = _state(request)
    data = []
    if state.model is not None:
        m = state.model
        data.append({
            "id": m.name, "object": "model", "owned_by": "voxdesk", "created": 0,
            "architecture": m.architecture, "sample_rate": m.sample_rate, "encoder_rate": m.encoder_rate,
            "controls": sorted(m.controls), "languages": list(m.languages),
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
    from app.server.speech import speech  # (they import this module's state and plumbing)
    from app.server.voices import delete_voice, list_voices, upload_voice

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
