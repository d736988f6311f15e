"""Connections that cost a client nothing cannot hold the server.

uvicorn closes a keep-alive connection after a quiet spell, but a connection that never sends a
whole request head (nothing at all, or half a header a byte at a time) stays open for ever, and
its ``limit_concurrency`` counts such connections: ~1,000 idle sockets made every new request,
``/health`` included, a 503. Here each HTTP connection is uvicorn's h11 protocol plus a timer:

- a connection *waits for a head* from the moment it opens and again after each response; if
  the head is not whole within ``head_timeout_s``, the connection is closed;
- at most ``max_waiting`` connections may wait at once: beyond that the one that has waited
  longest is closed, so a flood of idle sockets pushes out other idle sockets, and a client
  that sends its request at once is served (unless ``max_waiting`` newer connections arrive
  before its first bytes are read: an attacker reconnecting in a loop slows the server, but
  measured on loopback every request was still answered);
- a client that half-closes its side after sending a whole request (``shutdown(SHUT_WR)``)
  still gets its answer; the connection closes after it.

Concurrency of *requests* (not connections) is bounded by :class:`app.server.guard.Guard`, after
the key check.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(frozen=True)
class ConnectionLimits:
    head_timeout_s: float = 5.0  # a request head must be whole this long after connect/last answer
    max_waiting: int = 256  # connections waiting for a head; the oldest is closed beyond this

    def __post_init__(self) -> None:
        if self.head_timeout_s <= 0 or self.max_waiting < 1:
            raise ValueError(f"invalid connection limits: {self}")


def protocol_class(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a request-head timer and a bounded waiting list (see the
    module's docstring), as a class for one server: its connections share one waiting list.
    (uvicorn is imported here, so that the window imports it only when its Local API starts.)"""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: dict[H11Protocol, None] = {}  # insertion order: the longest waiting first

    class HeadTimedProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._wait_for_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_request():
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # (may start a pipelined request)
            if not self.transport.is_closing() and not self._in_request():
                self._wait_for_head()

        def eof_received(self) -> bool | None:  # type: ignore[override]
            """The client closed its sending side: answer a whole request before closing, drop
            anything else (``True`` keeps the transport open for writing)."""
            if self._in_request() and not self.cycle.more_body:
                self.cycle.keep_alive = False
                return True
            return None

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _in_request(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _wait_for_head(self) -> None:
            self._stop_waiting()
            self._head_timer = self.loop.call_later(limits.head_timeout_s, self._close_waiting)
            waiting[self] = None
            while len(waiting) > limits.max_waiting:
                next(iter(waiting))._close_waiting()

        def _stop_waiting(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            waiting.pop(self, None)

        def _close_waiting(self) -> None:
            self._stop_waiting()
            self.transport.close()

    return HeadTimedProtocol
