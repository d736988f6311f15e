"""Sound devices through sounddevice/PortAudio, with plain errors when there are none.

``sounddevice`` is imported lazily: importing it fails on machines without PortAudio, and the
engine-only GPU machine never needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from app.errors import VoxDeskError

NO_OUTPUT = (
    "No audio output device was found. Connect speakers or headphones (or pick another device in "
    "Settings), or export the audio to a file instead."
)
NO_INPUT = (
    "No microphone was found. Connect one (or pick another input in Settings), or import a recording "
    "from a file instead."
)
NO_PORTAUDIO = (
    "Audio playback and recording are unavailable because the PortAudio library is missing. "
    "Install it (Debian/Ubuntu: sudo apt install libportaudio2) and restart VoxDesk."
)


@dataclass(frozen=True)
class Device:
    """A device as shown in a picker."""

    index: int
    name: str
    host_api: str
    channels: int  # max input or output channels, depending on the list it came from
    default_samplerate: float
    is_default: bool


def sounddevice() -> ModuleType:
    """The sounddevice module, or VoxDeskError when PortAudio is missing."""
    try:
        import sounddevice as sd
    except (OSError, ImportError):  # OSError: sounddevice found no libportaudio
        raise VoxDeskError(NO_PORTAUDIO) from None
    return sd


def _list(kind: str) -> list[Device]:
    sd = sounddevice()
    key = "max_output_channels" if kind == "output" else "max_input_channels"
    try:
        devices = sd.query_devices()
        apis = sd.query_hostapis()
        default = sd.default.device[1 if kind == "output" else 0]
    except sd.PortAudioError:
        return []
    out = []
    for index, dev in enumerate(devices):
        if dev[key] > 0:
            api = apis[dev["hostapi"]]["name"] if dev["hostapi"] < len(apis) else ""
            out.append(Device(index, dev["name"], api, dev[key], dev["default_samplerate"], index == default))
    return out


def output_devices() -> list[Device]:
    """Devices that can play sound (empty when there are none)."""
    return _list("output")


def input_devices() -> list[Device]:
    """Devices that can record (empty when there are none)."""
    return _list("input")


def check_device(device: int | str | None, kind: str) -> None:
    """VoxDeskError with the plain message when ``device`` (None: the default) cannot ``kind``."""
    sd = sounddevice()
    message = NO_OUTPUT if kind == "output" else NO_INPUT
    try:
        sd.query_devices(device, kind=kind)
    except (sd.PortAudioError, ValueError):
        raise VoxDeskError(message) from None
