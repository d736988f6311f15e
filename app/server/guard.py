"""The checks every request passes before a handler sees it, and OpenAI's error shape for
whatever goes wrong after.

In order: the Host and Origin headers, the declared body size, the API key, then the bound on
requests open at once (so a client without the key never takes a place; ``/health`` is never
turned away). While a handler runs, the body is bounded in size and in the time between its
parts; a failure is answered in OpenAI's JSON shape, and so is a request still open when the
server stops.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from app.server.protocol import ApiError

if TYPE_CHECKING:
    from app.server.app import ServerState

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024 * 1024  # a speech request with a 10 MB ref_audio in base64
_TOO_LARGE = "The request body is larger than 16 MB."
DRAIN_BYTES = 4 * MAX_BODY_BYTES  # what is read and dropped of a refused body, at most ...
DRAIN_SECONDS = 5.0  # ... and for how long


class BodyTooLarge(Exception):
    pass


class BodyTimeout(Exception):
    """The client stopped sending its body part-way."""


class StreamFailed(Exception):
    """A streamed body cannot be finished (the engine dropped the request, or the server is
    stopping): the connection is closed without the body's end, so the client sees it cut."""


class ErrorResponse(JSONResponse):
    """JSON escaped to ASCII: a message may quote what a client sent (a lone surrogate in a
    field name cannot be encoded as UTF-8)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


async def drain(receive) -> None:
    """Read and drop the rest of a refused body, within bounds. (A client that stops sending when
    the answer comes disconnects, which ends the drain at once.)"""
    loop = asyncio.get_running_loop()
    deadline, dropped = loop.time() + DRAIN_SECONDS, 0
    while dropped <= DRAIN_BYTES:
        try:
            message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:  # noqa: UP041 - (Python 3.10's own class)
            return
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        dropped += len(message.get("body", b""))


def lingering(send, receive, stopping: Callable[[], bool]):
    """``send`` for an answer to a refused body, as nginx's lingering close: the answer goes out
    whole, then the rest of the body is drained (:func:`drain`), then the response ends and the
    connection closes. Closing a socket with unread data resets the connection, and the reset
    can drop the answer before the client has read it. No drain while the server stops (its
    grace period is shorter than the drain's bound)."""

    async def send_then_drain(message) -> None:
        if message["type"] != "http.response.body" or message.get("more_body", False) or stopping():
            await send(message)
            return
        await send({**message, "more_body": True})
        await drain(receive)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return send_then_drain


def _expects_continue(scope) -> bool:
    """A client that waits for ``100 Continue`` has sent no body: reading would ask for it."""
    return any(k == b"expect" and v.lower() == b"100-continue" for k, v in scope["headers"])


def error_response(exc: ApiError, close: bool = False) -> JSONResponse:
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
    if close:  # the body may be left unread (see drain): the connection cannot carry another request
        headers["Connection"] = "close"
    return ErrorResponse(exc.body(), status_code=exc.status, headers=headers)


def stopping_error() -> ApiError:
    return ApiError(503, "The server is stopping: send the request again once it is back.",
                    code="server_stopping", retry_after=5)  # fmt: skip


class Guard:
    """Pure ASGI middleware: the checks above, bounded bodies, OpenAI-shaped errors."""

    def __init__(self, app, state: ServerState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = self.state
        counted = scope["path"] != "/health"
        try:
            self._check(Request(scope))
            if counted:
                self._admit()
        except ApiError as exc:
            state.errors[exc.status] = state.errors.get(exc.status, 0) + 1
            if exc.status == 413 and not _expects_continue(scope):
                send = lingering(send, receive, self._stopping)
            await error_response(exc, close=exc.status == 413)(scope, receive, send)
            return
        if counted:
            state.open_requests += 1
        try:
            await self._run(scope, receive, send)
        finally:
            if counted:
                state.open_requests -= 1

    async def _run(self, scope, receive, send) -> None:
        state, timeout = self.state, self.state.config.body_timeout_s
        seen, body_done, started = 0, False, False
        out = send  # becomes lingering() once a body is refused part-way

        async def bounded_receive():
            nonlocal seen, body_done, out
            if body_done:  # (a handler then waits for the disconnect: no time limit)
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), timeout)
            except asyncio.TimeoutError:  # noqa: UP041 - (Python 3.10's own class)
                raise BodyTimeout from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY_BYTES:
                    if message.get("more_body", False):
                        out = lingering(send, receive, self._stopping)
                    raise BodyTooLarge
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                if status >= 400:
                    state.errors[status] = state.errors.get(status, 0) + 1
            await out(message)

        async def answer(exc: ApiError, close: bool = False) -> None:
            if not started:
                await error_response(exc, close)(scope, receive, tracking_send)

        try:
            await self.app(scope, bounded_receive, tracking_send)
        except BodyTooLarge:
            await answer(ApiError(413, _TOO_LARGE, code="too_large"), close=True)
        except BodyTimeout:
            message = f"The request body stopped arriving for {timeout:g} s: send the request again."
            await answer(ApiError(408, message, code="timeout"), close=True)
        except ApiError as exc:
            await answer(exc)
        except asyncio.CancelledError:
            # uvicorn cancels what is still open a moment after it starts to stop: that client
            # gets the same answer as the others rather than a plain-text 500
            if started or not self._stopping():
                raise
            await answer(stopping_error())
        except StreamFailed as exc:  # the body is cut: uvicorn closes the connection without its end
            log.warning("%s %s: stream cut short (%s)", scope.get("method"), scope.get("path"), exc)
        except Exception:  # noqa: BLE001
            # a bug: logged with its traceback, answered in OpenAI's shape
            log.exception("request %s %s failed", scope.get("method"), scope.get("path"))
            message = "The server failed on this request (a bug; see VoxDesk's log)."
            await answer(ApiError(500, message, code="internal_error"))

    def _stopping(self) -> bool:
        return self.state.stopping is not None and self.state.stopping.is_set()

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
        if length is not None and length.isdigit() and len(length) < 20 and int(length) > MAX_BODY_BYTES:
            raise ApiError(413, _TOO_LARGE, code="too_large")
        if cfg.api_key and request.url.path != "/health":
            auth = request.headers.get("authorization", "")
            token = auth[7:] if auth.lower().startswith("bearer ") else ""
            if not hmac.compare_digest(token.encode("utf-8", "replace"), cfg.api_key.encode()):
                raise ApiError(401, "Incorrect or missing API key.", code="invalid_api_key")

    def _admit(self) -> None:
        """After the key: the server's bound on requests open at once (``/health`` is exempt)."""
        if self._stopping():
            raise stopping_error()
        if self.state.open_requests >= self.state.config.max_requests:
            raise ApiError(503, "The server has too many requests open: try again shortly.",
                           code="server_busy", retry_after=1)  # fmt: skip
