"""Where speech is made: this computer's engine or a remote OpenAI-compatible server.

Both sides speak the engine's own vocabulary: a caller submits a ``SynthRequest`` with a *sink*
and gets the request's events (``AudioChunk``…, then ``RequestFinished`` or ``RequestFailed``
with one plain line) on a worker thread, and may cancel it by its handle. Nothing above this
interface knows which one it drives:

- :class:`app.engine.host.EngineHost`: the local engine (also what ``voxdesk serve`` serves);
- :class:`app.backends.remote.RemoteBackend`: ``POST /v1/audio/speech`` on VoxDesk's own
  server or on vLLM-Omni (VoxCPM2), streamed back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from app.engine.events import Event
from app.engine.request import SynthRequest


class SpeechBackend(Protocol):
    def submit(
        self, request: SynthRequest, sink: Callable[[Event], None], on_latents: Callable | None = None
    ) -> int: ...

    def cancel(self, handle: int) -> None: ...

    def close(self) -> None: ...
