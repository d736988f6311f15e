"""Starting the server: the address rules, the socket, uvicorn in the foreground or a thread.

Used by ``voxdesk serve`` (foreground, its own engine), the window's Local API (a thread, the
window's engine) and the tests (a thread on a random free port).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from dataclasses import dataclass

from app.errors import VoxDeskError
from app.server.app import ServerState, build_app

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_api_key(api_key: str) -> None:
    """A key a client can send: an HTTP header carries printable ASCII, and a header value's
    leading and trailing spaces are dropped on the way, so such a key could never match."""
    if not api_key.strip():
        raise VoxDeskError("The API key is empty or only spaces: give a real key (letters and digits).")
    if api_key != api_key.strip():
        raise VoxDeskError("The API key starts or ends with a space: give it without.")
    if not all(" " <= c <= "~" for c in api_key):
        raise VoxDeskError(
            "The API key may hold only printable ASCII characters (letters, digits, punctuation), "
            "which is all an HTTP header carries: choose another."
        )


def check_address(host: str, api_key: str | None) -> None:
    """Loopback is the default; any other address needs an API key (the privacy rule). A key
    given must be one a client can send (:func:`check_api_key`)."""
    if api_key is not None and api_key != "":
        check_api_key(api_key)
    if not is_loopback(host) and not api_key:
        raise VoxDeskError(
            f"Serving on {host} would let other computers use this one: give --api-key KEY too "
            "(or keep the default 127.0.0.1)."
        )


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if port and exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            raise VoxDeskError(f"Port {port} is already in use: pick another with --port.") from None
        raise VoxDeskError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}).") from None
    sock.listen(128)
    return sock


@dataclass
class RunningServer:
    """A server on its own thread; ``url`` is its base (``http://127.0.0.1:PORT``)."""

    state: ServerState
    url: str
    _server: object
    _thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)


def _uvicorn(state: ServerState, sock: socket.socket):
    import uvicorn

    from app.server.connections import protocol_class

    limits = state.config.limits

    class Server(uvicorn.Server):
        """uvicorn's server that tells the requests in flight when it starts to stop, so each
        client gets an answer (see ``ServerState.stopping``) before the connections close."""

        async def serve(self, sockets=None) -> None:
            state.stopping = asyncio.Event()  # one per run: these belong to the run's loop
            state.decode_slots = None
            await super().serve(sockets)

        async def shutdown(self, sockets=None) -> None:
            if state.stopping is not None:
                state.stopping.set()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        build_app(state),
        http=protocol_class(limits),  # h11 with a request-head timeout (app/server/connections.py)
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=limits.head_timeout_s,  # type: ignore[arg-type]
        limit_concurrency=None,  # it counts idle connections too; Guard bounds requests instead
    )
    return Server(config)


def _allowed_hosts(host: str) -> tuple[str, ...] | None:
    # A loopback server answers only to loopback names: a web page that rebinds its own domain to
    # 127.0.0.1 (DNS rebinding) sends its own Host header and is turned away.
    return LOOPBACK_NAMES if is_loopback(host) else None


def start_in_thread(state: ServerState, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve ``state`` on ``host:port`` (0: a free port) from a daemon thread; returns once listening."""
    check_address(host, state.config.api_key)
    state.config.allowed_hosts = _allowed_hosts(host)
    sock = bind(host, port)
    server = _uvicorn(state, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="voxdesk-api", daemon=True)
    thread.start()
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return RunningServer(state, f"http://{shown}:{actual}", server, thread)


def serve_forever(state: ServerState, host: str, port: int, on_ready=None) -> None:
    """Serve in the foreground until Ctrl+C."""
    check_address(host, state.config.api_key)
    state.config.allowed_hosts = _allowed_hosts(host)
    sock = bind(host, port)
    if on_ready is not None:
        on_ready(sock.getsockname()[1])
    _uvicorn(state, sock).run(sockets=[sock])
