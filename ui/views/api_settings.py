"""Settings rows for where speech is made (this computer / a server) and the Local API box."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from ui.settings import Settings


class EngineSourceBox(QGroupBox):
    """Engine: this computer, or an OpenAI-compatible speech server (VoxDesk's or vLLM-Omni)."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Speech engine"), parent)
        self.source = QComboBox()
        self.source.addItem(self.tr("This computer"), "local")
        self.source.addItem(self.tr("A speech server"), "server")
        self.source.setCurrentIndex(max(0, self.source.findData(settings.backend)))
        self.url = QLineEdit(settings.server_url)
        self.url.setPlaceholderText("http://192.168.1.20:8000")
        self.key = QLineEdit(settings.server_key)
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(self.tr("API key (if the server needs one)"))
        form = QFormLayout(self)
        form.addRow(self.tr("Engine:"), self.source)
        form.addRow(self.tr("Server address:"), self.url)
        form.addRow(self.tr("Server key:"), self.key)
        self.source.currentIndexChanged.connect(self._enable)
        self._enable()

    def _enable(self) -> None:
        remote = self.source.currentData() == "server"
        self.url.setEnabled(remote)
        self.key.setEnabled(remote)

    def problem(self) -> str | None:
        if self.source.currentData() == "server" and not self.url.text().strip().startswith(
            ("http://", "https://")
        ):
            return self.tr("Give the speech server's address, like http://192.168.1.20:8000.")
        return None

    def save(self, settings: Settings) -> None:
        settings.backend = self.source.currentData()
        settings.server_url = self.url.text().strip()
        settings.server_key = self.key.text().strip()


class LocalApiBox(QGroupBox):
    """Serve OpenAI's speech API on this computer, on the window's engine: port, key, URL, counter."""

    def __init__(self, settings: Settings, api, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Local API"), parent)
        self.api = api
        self.enabled = QCheckBox(self.tr("Let programs on this computer speak through VoxDesk"))
        self.enabled.setChecked(settings.api_enabled)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(settings.api_port)
        self.key = QLineEdit(settings.api_key)
        self.key.setPlaceholderText(self.tr("optional"))
        self.default_voice = QComboBox()  # what clients' hard-coded "alloy", "echo", … speak as
        self.default_voice.addItem(self.tr("The model's own voice"), "")
        for name in api.voice_names() if api is not None else []:
            self.default_voice.addItem(name, name)
        if settings.api_default_voice and self.default_voice.findData(settings.api_default_voice) < 0:
            self.default_voice.addItem(settings.api_default_voice, settings.api_default_voice)  # gone: kept
        self.default_voice.setCurrentIndex(max(0, self.default_voice.findData(settings.api_default_voice)))
        self.default_voice.setToolTip(self.tr(
            "Programs written for OpenAI often ask for its voices by name (alloy, echo, nova, …). "
            "They speak in this voice, unless a voice of your library has that name."
        ))  # fmt: skip
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        self.copy = QPushButton(self.tr("Copy"))
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.url.text()))
        url_row = QHBoxLayout()
        url_row.addWidget(self.url, 1)
        url_row.addWidget(self.copy)
        self.counter = QLabel()
        form = QFormLayout(self)
        form.addRow(self.enabled)
        form.addRow(self.tr("Port:"), self.port)
        form.addRow(self.tr("API key:"), self.key)
        form.addRow(self.tr("OpenAI voice names speak as:"), self.default_voice)
        form.addRow(self.tr("Address:"), url_row)
        form.addRow(self.tr("Requests served:"), self.counter)
        if api is not None:
            api.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        running = self.api is not None and self.api.running
        self.url.setText(self.api.url if running else f"http://127.0.0.1:{self.port.value()}/v1")
        self.copy.setEnabled(running)
        self.counter.setText(str(self.api.requests) if running else self.tr("(not running)"))

    def save(self, settings: Settings) -> None:
        settings.api_enabled = self.enabled.isChecked()
        settings.api_port = self.port.value()
        settings.api_key = self.key.text().strip()
        settings.api_default_voice = self.default_voice.currentData()
