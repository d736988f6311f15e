"""The licences of the models VoxDesk downloads, and which ones the user has accepted.

A permissive licence (Apache-2.0) is shown; any other must be accepted before its model is
downloaded, once per model, and the acceptance is kept in ``<models folder>/licenses.json`` (which
licence, its address, when), so the command line and the window ask only once between them.

A click-through agreement published as files beside the weights (IndexTTS-2.5's bilibili Model Use
License Agreement: :attr:`License.texts`) is shown in full, read from those files, and its
acceptance also keeps each file's SHA-256: when a file's text changes, it is asked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from app import atomic

RECORD = "licenses.json"


@dataclass(frozen=True)
class License:
    name: str
    url: str
    permissive: bool  # True: shown, nothing to accept
    # the agreement's own files in the model's repository, English first (then Chinese): shown in
    # full before the download and bound to their SHA-256 when accepted
    texts: tuple[str, ...] = ()
    text_base: str = ""  # where those files are when the repository lists none (its code's home)
    summary: str = ""  # what it means for the user, in one paragraph (the window translates it)


@dataclass(frozen=True)
class LicenseText:
    """One file of an agreement as read from a server or a model folder."""

    name: str
    text: str
    sha256: str

    @classmethod
    def of(cls, name: str, data: bytes) -> LicenseText:
        return cls(name, data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest())


APACHE_2 = License("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0", True)
# SenseVoice Small's weights (the model card's "model-license"); the sherpa-onnx export keeps them
FUNASR_MODEL = License(
    "FunASR Model Open Source License Agreement", "https://github.com/modelscope/FunASR/blob/main/MODEL_LICENSE",
    False,
)  # fmt: skip


BILIBILI_MODEL = License(
    "bilibili Model Use License Agreement",
    "https://github.com/index-tts/index-tts/blob/main/LICENSE",
    False,
    texts=("LICENSE", "LICENSE_ZH.txt"),
    text_base="https://raw.githubusercontent.com/index-tts/index-tts/main/",
    summary=(
        "What it means for you: bilibili grants a worldwide, royalty-free, non-exclusive licence to use "
        "the model (2.1). Above 100 million monthly active users or RMB 1 billion annual revenue you need "
        "a separate licence from bilibili (2.2). Every copy must keep the copyright notices and this "
        "agreement: the model folder keeps its LICENSE file (3.4 b). The model and what it speaks may "
        "not be used to improve any other AI model, except IndexTTS itself, its derivatives or "
        "non-commercial models (3.4 c). No high-risk use (medical diagnosis, autonomous driving, "
        "military, critical infrastructure, biometric surveillance, automated decisions about people, "
        "4.2), and what you make must be lawful (4.1). bilibili may revoke the licence if you breach "
        "it (5.1). Chinese law applies, disputes go to arbitration in Shanghai (6); the Chinese text "
        "prevails (9)."
    ),
)


def for_language(texts: Sequence[LicenseText], language: str) -> LicenseText:
    """The file to show in ``language`` ("zh_CN": the Chinese one when there is one), else the first."""
    if language.startswith("zh"):
        chinese = [t for t in texts if "zh" in t.name.casefold()]
        if chinese:
            return chinese[0]
    return texts[0]


def read_texts(folder: str | Path, terms: License) -> list[LicenseText]:
    """The agreement's files found in a model folder (none: an empty list)."""
    out = []
    for name in terms.texts:
        path = Path(folder) / name
        try:
            out.append(LicenseText.of(name, path.read_bytes()))
        except OSError:
            continue
    return out


def _record_path() -> Path:
    from app.paths import models_dir

    return models_dir() / RECORD


def _read() -> dict[str, Any]:
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(key: str, terms: License) -> dict[str, Any] | None:
    entry = _read().get(key)
    if isinstance(entry, dict) and (entry.get("license"), entry.get("url")) == (terms.name, terms.url):
        return entry
    return None


def accepted(key: str, terms: License, texts: Sequence[LicenseText] = ()) -> bool:
    """Whether ``terms`` need no (further) acceptance for the model ``key``: permissive, or accepted
    before and, for each of ``texts`` (the agreement's files as read now), with the same SHA-256."""
    if terms.permissive:
        return True
    entry = _entry(key, terms)
    if entry is None:
        return False
    files = entry.get("files")
    known = files if isinstance(files, dict) else {}
    return all(known.get(t.name) == t.sha256 for t in texts)


def accepted_on(key: str, terms: License) -> str | None:
    """The day (YYYY-MM-DD, UTC) the user accepted ``terms`` for ``key``, or None."""
    entry = _entry(key, terms)
    when = entry.get("accepted") if entry is not None else None
    return when[:10] if isinstance(when, str) else None


def record_acceptance(key: str, terms: License, texts: Sequence[LicenseText] = (),
                      shown: LicenseText | None = None) -> None:  # fmt: skip
    """Remember that the user accepted ``terms`` for the model ``key`` (atomic write): with the
    SHA-256 of the file they read (``shown``) and of every file of the agreement read with it."""
    data = _read()
    entry: dict[str, Any] = {
        "license": terms.name,
        "url": terms.url,
        "accepted": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if shown is not None:
        entry |= {"file": shown.name, "sha256": shown.sha256}
    if texts:
        entry["files"] = {t.name: t.sha256 for t in texts}
    data[key] = entry
    atomic.write_json(_record_path(), data)
