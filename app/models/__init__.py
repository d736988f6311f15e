"""The model families VoxDesk runs, each in its own folder behind :mod:`app.engine.family`.

Order matters: a folder is given to the first family whose test matches, and VoxCPM, whose
folders have no file of their own to recognise them by, comes last and takes the rest (so a
broken VoxCPM folder still gets VoxCPM's own messages).
"""

from pathlib import Path

from app.engine.family import register


def _cosyvoice(folder: Path) -> bool:
    return (folder / "cosyvoice3.yaml").is_file() or (folder / "cosyvoice2.yaml").is_file()


def _indextts(folder: Path) -> bool:
    """IndexTTS-2.5's official layout: config.yaml beside its GPT, S2Mel or text vocabulary."""
    names = ("gpt.pth", "s2mel.pth", "multilingual_zh_ja_yue_char_del.tiktoken")
    return (folder / "config.yaml").is_file() and any((folder / name).is_file() for name in names)


register("cosyvoice", _cosyvoice, "app.models.cosyvoice.runner:load")
register("indextts", _indextts, "app.models.indextts.runner:load")
register("voxcpm", lambda _folder: True, "app.models.voxcpm.runner:load")
