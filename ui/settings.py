"""The app's preferences, stored with QSettings in an INI file in the user config folder.

One typed accessor per key, so a misspelt key cannot silently create a second setting. Using a file
under :func:`app.paths.config_dir` (not the registry / plist) keeps ``VOXDESK_HOME`` installs and
tests fully self-contained.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from app import paths, quarantine
from app.backcheck.takes import DEFAULT_MAX_TAKES, DEFAULT_THRESHOLD, MAX_TAKES_LIMIT
from app.cpu_precision import CHOICES

DEVICES = ("auto", "cuda", "cpu")
# On the CPU: automatic (bf16 where native, else fp32), exact fp32, bf16, int8 Linear weights
CPU_PRECISIONS = CHOICES
BACKENDS = ("local", "server")  # speech made on this computer, or by a remote speech server
LANGUAGES = ("en", "zh_CN")
THEMES = ("light", "dark")
TEXT_KEYS = (
    "engine/device",
    "engine/cpu_precision",
    "engine/cpu_weights",
    "engine/model_dir",
    "export/output_dir",
    "audio/output_device",
    "audio/input_device",
    "ui/language",
    "ui/theme",
    "files/recent",
    "export/last",
    "book/last",
)
BYTES_KEYS = ("window/geometry", "window/state")
# QSaveFile's temporary copy of settings.ini ("settings.ini.AbC123"), left by a killed process.
_SAVE_TEMP = re.compile(r"^settings\.ini\.[A-Za-z0-9]{6}$")


class Settings:
    """Typed view of ``settings.ini``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.config_dir() / "settings.ini"
        self._clean_leftovers()
        self._q = QSettings(str(self.path), QSettings.Format.IniFormat)
        self._validate()

    def _clean_leftovers(self) -> None:
        for entry in self.path.parent.glob("settings.ini.*"):
            if _SAVE_TEMP.match(entry.name):
                quarantine.remove_leftover(entry)

    def _validate(self) -> None:
        """A settings.ini that does not parse, or holds a value of the wrong kind under one of our
        keys, is set aside; the values that were fine are carried over into a fresh file."""
        if self._q.status() == QSettings.Status.FormatError:
            bad, keep = ["the file does not parse"], {}
        else:
            keep = {k: self._q.value(k) for k in self._q.allKeys()}
            bad = [
                k
                for k, v in keep.items()
                if (k in TEXT_KEYS and not isinstance(v, str))
                or (k in BYTES_KEYS and not isinstance(v, (QByteArray, bytes)))
            ]
        if not bad:
            return
        self._q.sync()
        del self._q
        quarantine.set_aside(self.path, f"{', '.join(bad)} held a value VoxDesk cannot use")
        self._q = QSettings(str(self.path), QSettings.Format.IniFormat)
        for key, value in keep.items():
            if key not in bad:
                self._q.setValue(key, value)
        self._q.sync()

    def _get(self, key: str, default: str) -> str:
        value = self._q.value(key, default)
        return str(value) if value is not None else default

    def _choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self._get(key, choices[0])
        return value if value in choices else choices[0]

    def _set(self, key: str, value: object) -> None:
        self._q.setValue(key, value)
        self._q.sync()

    @property
    def device(self) -> str:
        return self._choice("engine/device", DEVICES)

    @device.setter
    def device(self, value: str) -> None:
        self._set("engine/device", value)

    @property
    def cpu_precision(self) -> str:
        """app/cpu_precision.py's choice. A file from before it had only ``cpu_weights``: its
        "int8" was a choice and is kept; its "float32" was the default then, so it reads "auto"."""
        if self._q.contains("engine/cpu_precision"):
            return self._choice("engine/cpu_precision", CPU_PRECISIONS)
        return "int8" if self._get("engine/cpu_weights", "") == "int8" else "auto"

    @cpu_precision.setter
    def cpu_precision(self, value: str) -> None:
        self._set("engine/cpu_precision", value)

    @property
    def model_dir(self) -> Path | None:
        value = self._get("engine/model_dir", "")
        return Path(value) if value else None

    @model_dir.setter
    def model_dir(self, value: Path | None) -> None:
        self._set("engine/model_dir", str(value) if value else "")

    @property
    def backend(self) -> str:
        return self._choice("engine/backend", BACKENDS)

    @backend.setter
    def backend(self, value: str) -> None:
        self._set("engine/backend", value)

    @property
    def server_url(self) -> str:
        return self._get("engine/server_url", "")

    @server_url.setter
    def server_url(self, value: str) -> None:
        self._set("engine/server_url", value)

    @property
    def server_key(self) -> str:
        return self._get("engine/server_key", "")

    @server_key.setter
    def server_key(self, value: str) -> None:
        self._set("engine/server_key", value)

    @property
    def api_enabled(self) -> bool:
        return self._get("api/enabled", "false") == "true"

    @api_enabled.setter
    def api_enabled(self, value: bool) -> None:
        self._set("api/enabled", "true" if value else "false")

    @property
    def api_port(self) -> int:
        value = self._get("api/port", "8000")
        return int(value) if value.isdigit() and 1 <= int(value) <= 65535 else 8000

    @api_port.setter
    def api_port(self, value: int) -> None:
        self._set("api/port", str(int(value)))

    @property
    def api_key(self) -> str:
        return self._get("api/key", "")

    @api_key.setter
    def api_key(self, value: str) -> None:
        self._set("api/key", value)

    @property
    def api_default_voice(self) -> str:
        """The library voice OpenAI's stock names (alloy, echo, …) speak as; "": the model's own."""
        return self._get("api/default_voice", "")

    @api_default_voice.setter
    def api_default_voice(self, value: str) -> None:
        self._set("api/default_voice", value)

    @property
    def recognizer_dir(self) -> Path | None:
        """A speech-recognizer folder the user chose; None: the one downloaded (if any)."""
        value = self._get("asr/model_dir", "")
        return Path(value) if value else None

    @recognizer_dir.setter
    def recognizer_dir(self, value: Path | None) -> None:
        self._set("asr/model_dir", str(value) if value else "")

    @property
    def check_auto(self) -> bool:
        """Hear each segment as it finishes and draw bad ones again (with a recognizer installed)."""
        return self._get("check/auto", "true") != "false"

    @check_auto.setter
    def check_auto(self, value: bool) -> None:
        self._set("check/auto", "true" if value else "false")

    @property
    def check_threshold(self) -> float:
        """Errors per unit above which a take is flagged (app/backcheck/takes.py)."""
        try:
            value = float(self._get("check/threshold", str(DEFAULT_THRESHOLD)))
        except ValueError:
            return DEFAULT_THRESHOLD
        return value if 0.0 <= value <= 10.0 else DEFAULT_THRESHOLD

    @check_threshold.setter
    def check_threshold(self, value: float) -> None:
        self._set("check/threshold", str(float(value)))

    @property
    def check_takes(self) -> int:
        """Most takes a segment gets from the back-check, the first included."""
        value = self._get("check/takes", str(DEFAULT_MAX_TAKES))
        return int(value) if value.isdigit() and 1 <= int(value) <= MAX_TAKES_LIMIT else DEFAULT_MAX_TAKES

    @check_takes.setter
    def check_takes(self, value: int) -> None:
        self._set("check/takes", str(int(value)))

    @property
    def output_dir(self) -> Path:
        value = self._get("export/output_dir", "")
        return Path(value) if value else Path.home()

    @output_dir.setter
    def output_dir(self, value: Path) -> None:
        self._set("export/output_dir", str(value))

    @property
    def output_device(self) -> str:
        """Name of the playback device; empty: the system default."""
        return self._get("audio/output_device", "")

    @output_device.setter
    def output_device(self, value: str) -> None:
        self._set("audio/output_device", value)

    @property
    def input_device(self) -> str:
        """Name of the recording device; empty: the system default."""
        return self._get("audio/input_device", "")

    @input_device.setter
    def input_device(self, value: str) -> None:
        self._set("audio/input_device", value)

    @property
    def language(self) -> str:
        return self._choice("ui/language", LANGUAGES)

    @language.setter
    def language(self, value: str) -> None:
        self._set("ui/language", value)

    @property
    def theme(self) -> str:
        return self._choice("ui/theme", THEMES)

    @theme.setter
    def theme(self, value: str) -> None:
        self._set("ui/theme", value)

    def last_folder(self, kind: str) -> Path | None:
        """The folder a file dialog of this kind ("audio", "script") was last used in."""
        value = self._get(f"folders/{kind}", "")
        return Path(value) if value else None

    def set_last_folder(self, kind: str, folder: Path) -> None:
        self._set(f"folders/{kind}", str(folder))

    def last_export(self) -> dict[str, object]:
        """The export dialog's last choices (file name, format, what to write); {} before any."""
        try:
            value = json.loads(self._get("export/last", "{}"))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def set_last_export(self, choices: dict[str, object]) -> None:
        self._set("export/last", json.dumps(choices))

    def last_book(self) -> tuple[Path | None, bool]:
        """The book project last open in the Book view, and whether it was generating when the
        app closed (then it continues once the model is loaded)."""
        folder = self._get("book/last", "")
        return (Path(folder) if folder else None), self._get("book/running", "false") == "true"

    def set_last_book(self, folder: Path | None, running: bool = False) -> None:
        self._set("book/last", str(folder) if folder else "")
        self._set("book/running", "true" if running else "false")

    def recent_scripts(self) -> list[Path]:
        """Script files last opened or saved, newest first (File › Recent scripts)."""
        try:
            value = json.loads(self._get("files/recent", "[]"))
        except ValueError:
            return []
        if not isinstance(value, list):
            return []
        return [Path(v) for v in value if isinstance(v, str) and v]

    def add_recent_script(self, path: Path, keep: int) -> None:
        paths = [path] + [p for p in self.recent_scripts() if p != path]
        self._set("files/recent", json.dumps([str(p) for p in paths[:keep]]))

    def remove_recent_script(self, path: Path) -> None:
        self._set("files/recent", json.dumps([str(p) for p in self.recent_scripts() if p != path]))

    def clear_recent_scripts(self) -> None:
        self._set("files/recent", "[]")

    def window_state(self) -> tuple[bytes | None, bytes | None]:
        geometry, state = self._q.value("window/geometry"), self._q.value("window/state")
        return (bytes(geometry) if geometry else None, bytes(state) if state else None)

    def save_window_state(self, geometry: bytes, state: bytes) -> None:
        self._q.setValue("window/geometry", geometry)
        self._q.setValue("window/state", state)
        self._q.sync()
