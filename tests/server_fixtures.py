"""A live ``voxdesk serve`` on 127.0.0.1 (random free port) over a tiny model, for the API tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from ui_fixtures import write_ui_model

from app.engine import Engine, EngineConfig
from app.engine.host import EngineHost
from app.server.app import ServerConfig, ServerState
from app.server.cli import served_model
from app.server.run import RunningServer, start_in_thread
from app.voices.library import VoiceLibrary

# fixed length (min = max patches) so audio can be compared sample for sample
FIXED = {"seed": 3, "min_new_tokens": 6, "max_new_tokens": 6}


@dataclass
class Live:
    server: RunningServer
    host: EngineHost
    model_dir: Path
    library: VoiceLibrary

    @property
    def url(self) -> str:
        return self.server.url

    def health(self) -> dict:
        return httpx.get(self.url + "/health", timeout=60).json()

    def client(self, **kw):
        import openai

        return openai.OpenAI(base_url=self.url + "/v1", api_key=kw.pop("api_key", "unused"), **kw)

    def wait_idle(self, timeout: float = 20.0) -> dict:
        """Poll /health until no request is open and every KV block is free again."""
        deadline = time.monotonic() + timeout
        while True:
            h = self.health()
            e = h["engine"]
            if h["in_flight"] == 0 and e["active"] == 0 and e["kv_blocks_free"] == e["kv_blocks_total"]:
                return h
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not go idle: {h}")
            time.sleep(0.02)


class StepGate:
    """Holds the live engine between steps, so a test knows its request is still decoding."""

    def __init__(self, engine) -> None:
        self.engine, self.step = engine, engine.step
        self.allowed = threading.Semaphore(0)
        self.open = False

    def __enter__(self):
        def gated():
            if not self.open:
                self.allowed.acquire()
            return self.step()

        self.engine.step = gated
        return self

    def release(self, steps: int) -> None:
        for _ in range(steps):
            self.allowed.release()

    def __exit__(self, *exc) -> None:
        self.open = True
        self.allowed.release()
        self.engine.step = self.step


def start_live(model_dir: Path, library_dir: Path, **config) -> Live:
    engine = Engine(EngineConfig(model_dir=str(model_dir), device="cpu", max_num_seqs=64))
    host = EngineHost(engine).start()
    library = VoiceLibrary(library_dir)
    state = ServerState(ServerConfig(**config), VoiceLibrary(library_dir))
    state.attach(host, served_model(engine, str(model_dir)))
    return Live(start_in_thread(state), host, model_dir, library)


@pytest.fixture(scope="session")
def api_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_ui_model(tmp_path_factory.mktemp("api-model"))


@pytest.fixture(scope="module")
def live(api_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    server = start_live(api_model, tmp_path_factory.mktemp("api-voices"))
    yield server
    server.server.stop()
    server.host.close()
