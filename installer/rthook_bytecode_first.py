"""PyInstaller runtime hook: import the bundle's compiled ``.pyc`` files, not its ``.py`` sources.

The bundle keeps modules as files in ``_internal/`` (``noarchive=True``, so the two executables
share them), and for torch, Triton and the app it keeps the ``.py`` sources next to the ``.pyc``
because TorchScript and ``@triton.jit`` read them. Python's default finder prefers a ``.py`` over a
sibling ``.pyc`` and would recompile every imported torch module at every start, with nowhere to
cache the result (the program folder is read-only). For folders inside the bundle this hook puts
the bytecode loader first, while ``__file__`` and ``inspect.getsource`` still point at the ``.py``.
"""


def _install() -> None:
    import os
    import sys
    from importlib.machinery import (
        BYTECODE_SUFFIXES,
        EXTENSION_SUFFIXES,
        ExtensionFileLoader,
        FileFinder,
        SourceFileLoader,
        SourcelessFileLoader,
    )

    base = getattr(sys, "_MEIPASS", None)
    if base is None:
        return

    class BundleFinder(FileFinder):
        """Bytecode first; a module's ``__file__`` still names its ``.py`` when one is shipped, which
        is what PyInstaller's ``inspect.getsourcefile`` override expects."""

        def find_spec(self, fullname, target=None):
            spec = super().find_spec(fullname, target)
            if spec is not None and spec.origin and spec.origin.endswith(".pyc"):
                if os.path.exists(spec.origin[:-1]):
                    spec.origin = spec.origin[:-1]
            return spec

    base = os.path.normcase(os.path.abspath(base))
    bytecode_first = BundleFinder.path_hook(
        (ExtensionFileLoader, EXTENSION_SUFFIXES),
        (SourcelessFileLoader, BYTECODE_SUFFIXES),
        (SourceFileLoader, [".py"]),
    )

    def hook(path: str):
        folder = os.path.normcase(os.path.abspath(path or os.getcwd()))
        inside = folder == base or folder.startswith(base + os.sep)
        if inside and os.path.isdir(folder):  # leave zip files on sys.path to zipimport
            return bytecode_first(path)
        raise ImportError("not inside the bundle")

    sys.path_hooks.insert(0, hook)
    sys.path_importer_cache.clear()


_install()
del _install
