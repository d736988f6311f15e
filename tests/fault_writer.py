"""Child process of tests/test_fault_suite.py: runs one of VoxDesk's writers in a loop, printing
``n`` after write number ``n`` returned (the acknowledgement), until it is killed.

    python tests/fault_writer.py WRITER FOLDER FIRST

(numbering starts at FIRST, so a restarted writer carries on where the killed one stopped).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np


def _clip(n: int) -> np.ndarray:
    """Audio whose length tells which write it was (n + 1000 samples)."""
    return (0.3 * np.sin(np.arange(1000 + n, dtype=np.float32) * 0.05)).astype(np.float32)


def writer(name: str, folder: Path):
    from app import project as projects
    from app.voices import latents
    from app.voices.library import VoiceLibrary

    if name == "project":
        project = projects.Project()
        return lambda n: (setattr(project, "text", f"version {n}"), project.save(folder / "script.voxdesk"))
    if name == "autosave":
        project = projects.Project(id="fault")
        return lambda n: (setattr(project, "text", f"version {n}"), project.autosave())
    if name == "export":
        from app.export import Clip, export_merged

        return lambda n: export_merged(folder / "out.wav", [Clip("x", _clip(n))], 16000, overwrite=True)
    library = VoiceLibrary(folder / "voices")
    if name == "voice":
        return lambda n: library.create_from_samples(np.tile(_clip(n), 12), 16000, f"v{n}")
    if name == "latents":
        voice = (
            library.list()[0]
            if library.list()
            else library.create_from_samples(np.tile(_clip(0), 12), 16000, "v")
        )
        return lambda n: latents.store(
            library, voice, "m", "prompt", np.full((n % 50 + 1, 4, 8), n, np.float32)
        )
    if name == "settings":
        from ui.settings import Settings

        settings = Settings(folder / "settings.ini")
        return lambda n: setattr(settings, "output_dir", Path(f"/version/{n}"))
    raise SystemExit(f"unknown writer {name}")


def main() -> None:
    name, folder, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    os.environ["VOXDESK_HOME"] = str(folder / "home")
    write = writer(name, folder)
    print("ready", flush=True)
    while True:
        write(n)
        print(n, flush=True)
        n += 1


if __name__ == "__main__":
    main()
