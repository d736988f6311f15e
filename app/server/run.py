"""Starting the server: the address rules, the socket, uvicorn in the foreground or a thread.

Used by ``voxdesk serve`` (foreground, its own engine), the window's Local API (a thread, the
window's engine) and the tests (a thread on a random free port).
"""

from __future__ import annotations

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


def check_address(host: str, api_key: str | None) -> None:
    """Loopback is the default; any other address needs an API key (the privacy rule)."""
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

    config = uvicorn.Config(
        build_app(state),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        limit_concurrency=1024,
    )
    return uvicorn.Server(config)


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
