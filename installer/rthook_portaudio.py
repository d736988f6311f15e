"""PyInstaller runtime hook: make sounddevice load the PortAudio library shipped in the bundle.

sounddevice finds PortAudio with ``ctypes.util.find_library("portaudio")``, which on Linux asks
ldconfig and gcc about the *system* and never looks inside the bundle: on a machine without
libportaudio2 the frozen app then fails to import sounddevice although the library is right
there. This hook answers that one lookup with the bundled file and leaves every other lookup alone.
It runs before any app code, so sounddevice sees the patched function when it is first imported.
"""


def _install() -> None:
    import ctypes.util
    import glob
    import os
    import sys

    base = getattr(sys, "_MEIPASS", None)
    if base is None:
        return
    patterns = (
        "libportaudio.so*",  # Linux: collected from the build machine's libportaudio2
        os.path.join("_sounddevice_data", "portaudio-binaries", "libportaudio64bit.dll"),  # Windows wheel
        os.path.join("_sounddevice_data", "portaudio-binaries", "libportaudio.dylib"),  # macOS wheel
    )
    found = [path for pattern in patterns for path in sorted(glob.glob(os.path.join(base, pattern)))]
    if not found:
        return
    bundled = found[0]
    original = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        if name == "portaudio":
            return bundled
        return original(name)

    ctypes.util.find_library = find_library


_install()
del _install
