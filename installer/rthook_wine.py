"""PyInstaller runtime hook (Windows build): keep torch's OpenMP runtime working under Wine.

torch's Windows wheel ships Intel's OpenMP (``libiomp5md.dll``). At the first parallel region it
reads the processor topology with ``GetNumaNodeProcessorMaskEx``, which Wine (8.0, Debian 12)
does not implement, and aborts the whole process with ``OMP: Error #179``. With thread affinity
off it skips that query. Only under Wine (recognised by ntdll's ``wine_get_version`` export) and
only when the user has not chosen an affinity: on real Windows nothing changes.
"""


def _install() -> None:
    import ctypes
    import os

    if os.name != "nt" or "KMP_AFFINITY" in os.environ:
        return
    try:
        ctypes.windll.ntdll.wine_get_version  # noqa: B018 (the lookup is the test)
    except (AttributeError, OSError):
        return
    os.environ["KMP_AFFINITY"] = "disabled"


_install()
del _install
