"""The window's Local API: ``voxdesk serve`` on the window's own engine (no second model load).

The engine thread announces its Qt-free host (``EngineHost.sharedChanged``); this object, on the
GUI thread, attaches it to the server's state, starts and stops uvicorn on 127.0.0.1 and reports
the request counter for Settings. The server keeps running across model changes: while no model
is loaded it answers 503 with ``Retry-After``.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from app.server.app import ServedModel, ServerConfig, ServerState
from app.server.run import RunningServer, start_in_thread

HOST = "127.0.0.1"


class LocalApi(QObject):
    changed = Signal()  # started, stopped, or the request counter moved

    def __init__(self, library_root, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._library_root = library_root
        self._host = None
        self._model: ServedModel | None = None
        self.state: ServerState | None = None
        self.server: RunningServer | None = None
        self._last_count = -1
        self._poll = QTimer(self)
        self._poll.setInterval(500)
        self._poll.timeout.connect(self._tick)

    @property
    def running(self) -> bool:
        return self.server is not None

    @property
    def url(self) -> str:
        return f"{self.server.url}/v1" if self.server is not None else ""

    @property
    def requests(self) -> int:
        return self.state.requests_total if self.state is not None else 0

    def attach(self, host, info) -> None:
        """Slot for ``EngineHost.sharedChanged``: the engine the API serves (None: unloaded)."""
        if host is None or info is None:
            self._host, self._model = None, None
        else:
            self._host = host
            self._model = ServedModel(info.name, info.model_id, info.architecture, info.sample_rate,
                                      info.encoder_rate, info.controls or frozenset(), info.label,
                                      info.languages)  # fmt: skip
        if self.state is not None:
            self.state.attach(self._host, self._model)

    def voice_names(self) -> list[str]:
        """The library's voices, for the choice of the default voice."""
        from app.voices.library import VoiceLibrary

        return [v.name for v in VoiceLibrary(self._library_root).list()]

    def start(self, port: int, api_key: str = "", default_voice: str = "") -> None:
        """Serve on 127.0.0.1:``port``; raises VoxDeskError (port taken) with a plain message.
        ``default_voice``: what OpenAI's stock voice names speak as ("": the model's own voice)."""
        from app.voices.library import VoiceLibrary

        self.stop()
        config = ServerConfig(api_key=api_key or None, default_voice=default_voice or None)
        state = ServerState(config, VoiceLibrary(self._library_root))
        state.attach(self._host, self._model)
        self.server = start_in_thread(state, HOST, port)
        self.state = state
        self._poll.start()
        self.changed.emit()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
            self.state = None
            self._poll.stop()
            self.changed.emit()

    def _tick(self) -> None:
        if self.requests != self._last_count:
            self._last_count = self.requests
            self.changed.emit()
