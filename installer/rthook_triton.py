"""PyInstaller runtime hook (Windows CUDA build): let Triton find the CUDA pieces it ships.

triton-windows looks for its bundled ptxas, cuda.h and cuda.lib under
``sysconfig platlib/triton/backends/nvidia``, a site-packages path that does not exist in a frozen
app; it then falls back to ``CUDA_PATH``. Pointing ``CUDA_PATH`` at the bundled copy (for this
process only) makes kernel compilation use the exact toolchain the bundle was built and tested with,
whatever CUDA toolkit the user has or lacks. Python.h and pythonXY.lib, which Triton's launcher
also needs, are shipped under the bundle folder (``sys.base_prefix``) by the spec.
"""


def _install() -> None:
    import os
    import sys

    base = getattr(sys, "_MEIPASS", None)
    if base is None:
        return
    nvidia = os.path.join(base, "triton", "backends", "nvidia")
    needed = (
        os.path.join(nvidia, "bin", "ptxas.exe"),
        os.path.join(nvidia, "include", "cuda.h"),
        os.path.join(nvidia, "lib", "x64", "cuda.lib"),
    )
    if all(os.path.exists(path) for path in needed):
        os.environ["CUDA_PATH"] = nvidia


_install()
del _install
