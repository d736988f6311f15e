"""Voice names: one Unicode form, nothing invisible, shared by the window, scripts and the server.

A name is compared case-insensitively (``[anna]`` picks "Anna"), so two names that look the same
must be the same string: names are NFC (a decomposed "Zoë" is the composed one, not a twin), and
control and invisible characters are removed (NUL, bidirectional overrides that reverse how a
name reads, zero-width spaces and joiners, blank fillers).
"""

from __future__ import annotations

import unicodedata

from app.errors import VoxDeskError

MAX_NAME = 64
# Categories never shown: controls, formats (bidi overrides, zero-width), surrogates, private
# use, unassigned; and letters that render as blank (Hangul fillers, the braille blank).
_HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn")
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def clean_name(name: str) -> str:
    """A name as the library keeps it: NFC (so a name typed as decomposed letters is the same
    name), control and invisible characters (NUL, bidirectional overrides, zero-width spaces)
    removed, runs of white space made one space."""
    name = unicodedata.normalize("NFC", name)
    # (tabs and line breaks are controls too, but white space: split() below makes them a space)
    kept = "".join(c for c in name if c in "\t\n\r" or _shown(c))
    return " ".join(kept.split())


def check_name(name: str, new: bool = False) -> str:
    """The cleaned name, or VoxDeskError saying why it cannot be a voice's name. ``new``: a name
    being given (import, rename), which may not hold ``|`` either (``[Name|angry]`` gives a line
    an emotion); a voice named before that rule keeps its name."""
    cleaned = clean_name(name)
    if not cleaned:
        if name.strip():
            raise VoxDeskError("That voice name has only invisible characters. Type a name with letters.")
        raise VoxDeskError("A voice needs a name. Type one and try again.")
    name = cleaned
    if len(name) > MAX_NAME:
        raise VoxDeskError(f"That voice name is too long. Use at most {MAX_NAME} characters.")
    if "[" in name or "]" in name:
        raise VoxDeskError("A voice name cannot contain [ or ], because scripts use [Name] to pick voices.")
    if new and "|" in name:
        raise VoxDeskError("A voice name cannot contain |, because scripts use [Name|angry] for emotions.")
    return name


def _shown(c: str) -> bool:
    return unicodedata.category(c) not in _HIDDEN and c not in _BLANK
