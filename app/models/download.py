"""Model manager core: listing a model's files (the catalogue, app/models/catalog.py, says which),
resumable verified downloads, a licence's texts read before them.

Nothing here touches the network until the user starts a download (:func:`download_model`, or
:func:`list_files` or :func:`license_texts` on their own). Only ``urllib`` is used. Sources:

- Hugging Face (``https://huggingface.co``) or any mirror of its API (e.g. ``https://hf-mirror.com``):
  listing ``/api/models/<repo>/tree/<rev>?recursive=true``, files ``/<repo>/resolve/<rev>/<path>``.
- ModelScope (``https://modelscope.cn``): listing ``/api/v1/models/<repo>/repo/files?Revision=…&
  Recursive=true``, files ``/api/v1/models/<repo>/repo?Revision=…&FilePath=<path>``.

Each file downloads into ``<name>.part`` next to its final place; an interrupted or cancelled
download resumes from there with an HTTP Range request. A finished file is checked against the
size and the checksum the listing gave (SHA-256, or Hugging Face's git blob SHA-1 for small files)
before it is renamed into place, so a model folder never holds a truncated or damaged file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.errors import VoxDeskError
from app.models import licenses

# the catalogue, read through here by the manager, the command line and the tests
from app.models.catalog import COSYVOICE_FILES, KNOWN_MODELS, Extra, KnownModel, Part  # noqa: F401

CHUNK = 1 << 20
TIMEOUT = 30.0
USER_AGENT = "VoxDesk/0.1 (model download)"


@dataclass(frozen=True)
class Source:
    kind: str  # "huggingface" (incl. mirrors) or "modelscope"
    endpoint: str
    title: str
    revision: str


HUGGING_FACE = Source("huggingface", "https://huggingface.co", "Hugging Face", "main")
HF_MIRROR_DEFAULT = "https://hf-mirror.com"
MODELSCOPE = Source("modelscope", "https://modelscope.cn", "ModelScope", "master")


def hf_mirror(endpoint: str = HF_MIRROR_DEFAULT) -> Source:
    """A Hugging Face mirror at a user-chosen address."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise VoxDeskError(f"“{endpoint}” is not a web address. Enter the mirror as https://host.")
    return Source(
        "huggingface", f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}", parts.netloc, "main"
    )


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int | None
    url: str
    sha256: str | None = None
    git_sha1: str | None = None  # Hugging Face's blob id of a non-LFS file


@dataclass(frozen=True)
class Progress:
    file: str
    file_done: int
    file_total: int | None
    done: int  # bytes on disk over all files, including earlier sessions' partial files
    total: int
    bytes_per_second: float


class DownloadCancelled(VoxDeskError):
    """The user cancelled; partial files stay and the next download resumes them."""


# --- listing ------------------------------------------------------------------------------------


def _repo(model: KnownModel | str, source: Source) -> str:
    if isinstance(model, str):
        return model
    return model.ms_repo if source.kind == "modelscope" else model.hf_repo


def _open(url: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    try:
        return urllib.request.urlopen(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as err:
        err.close()
        if err.code == 416:
            raise
        host = urllib.parse.urlsplit(url).netloc
        if err.code == 404:
            raise VoxDeskError(
                f"{host} does not have this model or file (HTTP 404). Try another source."
            ) from None
        if err.code in (401, 403):
            raise VoxDeskError(
                f"{host} refused the download (HTTP {err.code}). Try another source."
            ) from None
        raise VoxDeskError(
            f"{host} answered with an error (HTTP {err.code}). Try again later or another source."
        ) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        host = urllib.parse.urlsplit(url).netloc
        raise VoxDeskError(
            f"Could not reach {host} ({reason}). Check your internet connection or pick another source."
        ) from None


def _get_json(url: str) -> object:
    with _open(url) as response:
        try:
            return json.loads(response.read())
        except (ValueError, http.client.HTTPException, OSError):
            host = urllib.parse.urlsplit(url).netloc
            raise VoxDeskError(f"{host} sent a file list VoxDesk cannot read. Try another source.") from None


def list_files(model: KnownModel | str, source: Source) -> list[RemoteFile]:
    """Every file of the model's repository on ``source`` (network access)."""
    repo = _repo(model, source)
    quoted = urllib.parse.quote(repo, safe="/")
    base = source.endpoint
    try:
        if source.kind == "modelscope":
            query = urllib.parse.urlencode({"Revision": source.revision, "Recursive": "true"})
            data = _get_json(f"{base}/api/v1/models/{quoted}/repo/files?{query}")
            return [
                RemoteFile(
                    path=f["Path"],
                    size=int(f["Size"]),
                    url=f"{base}/api/v1/models/{quoted}/repo?"
                    + urllib.parse.urlencode({"Revision": source.revision, "FilePath": f["Path"]}),
                    sha256=(f.get("Sha256") or None),
                )
                for f in data["Data"]["Files"]
                if f.get("Type", "blob") == "blob"
            ]
        data = _get_json(f"{base}/api/models/{quoted}/tree/{source.revision}?recursive=true")
        files = []
        for f in data:
            if f.get("type") != "file":
                continue
            lfs = f.get("lfs") or {}
            path = f["path"]
            files.append(
                RemoteFile(
                    path=path,
                    size=int(f["size"]),
                    url=f"{base}/{quoted}/resolve/{source.revision}/{urllib.parse.quote(path)}",
                    sha256=lfs.get("oid") or lfs.get("sha256"),
                    git_sha1=None if lfs else f.get("oid"),
                )
            )
        return files
    except (KeyError, TypeError, ValueError, AttributeError):
        raise VoxDeskError(
            f"{source.title} sent a file list VoxDesk cannot read. Try another source."
        ) from None


_SKIP_SUFFIXES = (".md", ".png", ".jpg", ".jpeg", ".gif", ".wav", ".mp3", ".gitattributes")


def select_files(files: list[RemoteFile], wanted: tuple[str, ...] = ()) -> list[RemoteFile]:
    """The files VoxDesk needs: ``wanted`` (a model's :attr:`KnownModel.files`) when given, else
    everything but docs and media, and the safetensors copy of a weight file when both formats are
    there."""
    if wanted:
        return [f for f in files if f.path in wanted]
    names = {f.path for f in files}
    chosen = []
    for f in files:
        low = f.path.lower()
        if low.endswith(_SKIP_SUFFIXES) or "/." in f"/{f.path}":
            continue
        if low == "pytorch_model.bin" and "model.safetensors" in names:
            continue
        if low == "audiovae.pth" and "audiovae.safetensors" in names:
            continue
        chosen.append(f)
    return chosen


# --- downloading --------------------------------------------------------------------------------


def _safe_target(dest: Path, rel: str) -> Path:
    target = (dest / rel).resolve()
    if dest.resolve() not in target.parents:
        raise VoxDeskError(f"The file list names an unsafe path ({rel}). The source may be compromised.")
    return target


def _digest(path: Path, remote: RemoteFile) -> tuple[str, str] | None:
    """(expected, actual) checksum of a finished file, or None when the listing gave none."""
    if remote.sha256:
        h = hashlib.sha256()
        expected = remote.sha256.lower()
    elif remote.git_sha1:
        h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
        expected = remote.git_sha1.lower()
    else:
        return None
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return expected, h.hexdigest()


def _fetch(
    remote: RemoteFile,
    part: Path,
    cancel: threading.Event,
    report: Callable[[str, int, int | None], None],
    chunk_size: int,
) -> None:
    """Append the rest of ``remote`` to ``part`` (Range resume when it already holds bytes)."""
    have = part.stat().st_size if part.exists() else 0
    if remote.size is not None and have > remote.size:
        part.unlink()
        have = 0
    if remote.size is not None and have == remote.size:
        return
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        response = _open(remote.url, headers)
    except urllib.error.HTTPError:  # 416: the server says our partial file is no prefix of its file
        part.unlink(missing_ok=True)
        response = _open(remote.url)
        have = 0
    with response:
        mode = "ab"
        if have and response.status != 206:  # the server ignored Range: start over
            mode, have = "wb", 0
        with open(part, mode) as out:
            try:
                while True:
                    if cancel.is_set():
                        raise DownloadCancelled(
                            "Download cancelled. Start it again to resume where it stopped."
                        )
                    block = response.read(chunk_size)
                    if not block:
                        break
                    out.write(block)
                    have += len(block)
                    report(remote.path, have, remote.size)
            except (http.client.HTTPException, OSError) as err:
                raise VoxDeskError(
                    f"The connection broke while downloading {remote.path} ({err.__class__.__name__}). "
                    "Start the download again to resume."
                ) from None
            finally:
                out.flush()
                os.fsync(out.fileno())


def download(
    files: list[RemoteFile],
    dest: str | Path,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    chunk_size: int = CHUNK,
) -> Path:
    """Download ``files`` into ``dest`` (resuming ``.part`` files, verifying, renaming into place).

    Files already present at the listed size are kept. Raises :class:`DownloadCancelled` when
    ``cancel`` is set, VoxDeskError on network errors or a checksum mismatch (the bad file is deleted).
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    cancel = cancel or threading.Event()
    targets = [(f, _safe_target(dest, f.path)) for f in files]
    total = sum(f.size or 0 for f in files)
    sizes = {}
    for f, target in targets:
        part = target.with_name(target.name + ".part")
        sizes[f.path] = (
            target.stat().st_size if target.exists() else part.stat().st_size if part.exists() else 0
        )
    started, start_bytes = time.monotonic(), sum(sizes.values())

    def report(path: str, file_done: int, file_total: int | None) -> None:
        sizes[path] = file_done
        if progress is not None:
            done = sum(sizes.values())
            rate = (done - start_bytes) / max(1e-6, time.monotonic() - started)
            progress(Progress(path, file_done, file_total, done, total, rate))

    for remote, target in targets:
        if target.exists() and (remote.size is None or target.stat().st_size == remote.size):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        _fetch(remote, part, cancel, report, chunk_size)
        size = part.stat().st_size
        if remote.size is not None and size < remote.size:  # the server closed early: keep for resume
            raise VoxDeskError(
                f"The connection broke while downloading {remote.path}. Start the download again to resume."
            )
        if remote.size is not None and size > remote.size:
            part.unlink(missing_ok=True)
            raise VoxDeskError(f"{remote.path} arrived larger than listed. Download it again.")
        check = _digest(part, remote)
        if check is not None and check[0] != check[1]:
            part.unlink(missing_ok=True)
            raise VoxDeskError(
                f"{remote.path} was damaged in transfer (checksum mismatch). Download it again."
            )
        os.replace(part, target)
    return dest


class LicenseNotAccepted(VoxDeskError):
    """The model's licence has not been accepted (or its text changed since): nothing was downloaded."""


def _read_small(remote: RemoteFile, limit: int = 1 << 20) -> bytes:
    """A small file (a licence text) read into memory and checked against the listing's checksum."""
    with _open(remote.url) as response:
        try:
            data = response.read(limit + 1)
        except (http.client.HTTPException, OSError) as err:
            raise VoxDeskError(f"The connection broke while reading {remote.path} "
                               f"({err.__class__.__name__}). Try again.") from None  # fmt: skip
    if len(data) > limit or (remote.size is not None and len(data) != remote.size):
        raise VoxDeskError(f"{remote.path} did not arrive as listed. Try again or another source.")
    if remote.sha256:
        ok = hashlib.sha256(data).hexdigest() == remote.sha256.lower()
    elif remote.git_sha1:
        ok = hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest() == remote.git_sha1.lower()
    else:
        ok = True
    if not ok:
        raise VoxDeskError(f"{remote.path} was damaged in transfer (checksum mismatch). Try again.")
    return data


def license_texts(
    model: KnownModel, source: Source, listing: list[RemoteFile] | None = None
) -> list[licenses.LicenseText]:
    """The files of ``model``'s agreement (:attr:`License.texts`), read into memory, nothing written:
    from the model's repository on ``source`` (``listing``: its files, when already listed), else,
    when it lists none of them, from the licence's own address. Empty for other licences."""
    terms = model.license
    if not terms.texts:
        return []
    by_name = {f.path: f for f in (listing if listing is not None else list_files(model, source))}
    remotes = [by_name[name] for name in terms.texts if name in by_name]
    if not remotes and terms.text_base:
        remotes = [RemoteFile(name, None, terms.text_base + name) for name in terms.texts]
    if not remotes:
        raise VoxDeskError(f"{source.title} has no licence text for {model.title}. Try another source.")
    return [licenses.LicenseText.of(r.path, _read_small(r)) for r in remotes]


def _top(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else ""


def _part_files(part: Part, source: Source) -> list[RemoteFile]:
    """A part's files as listed by ``source``, each renamed to its place in the model folder."""
    repo = part.ms_repo if source.kind == "modelscope" else part.hf_repo
    listed = {f.path: f for f in list_files(repo, source)}
    missing = [remote for remote, _ in part.files if remote not in listed]
    if missing:
        raise VoxDeskError(f"{source.title} does not list {missing[0]} of {part.title} ({repo}). "
                           "Try another source.")  # fmt: skip
    return [dataclasses.replace(listed[remote], path=local) for remote, local in part.files]


def model_files(model: KnownModel, source: Source, listing: list[RemoteFile], extras: tuple[str, ...] = (),
                base: bool = True) -> list[RemoteFile]:  # fmt: skip
    """What a download of ``model`` fetches: from its own repository (``listing``) the files
    :func:`select_files` keeps, less the optional folders not named in ``extras``, then the parts'
    files (other repositories, listed now); ``base=False``: only the ``extras``' files."""
    wanted = {model.extra(key).folder for key in extras}
    skipped = {e.folder for e in model.extras} - wanted
    own = [f for f in select_files(listing, model.files) if _top(f.path) not in skipped]
    if not base:
        return [f for f in own if _top(f.path) in wanted]
    return own + [f for part in model.parts for f in _part_files(part, source)]


def download_model(
    model: KnownModel,
    source: Source,
    dest: str | Path | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    extras: tuple[str, ...] = (),
    base: bool = True,
) -> Path:
    """List, download and check one known model; returns its folder (default: the models folder).

    ``extras`` names optional folders to include (:attr:`KnownModel.extras`); ``base=False`` fetches
    only those, into an installed folder. A licence that is not permissive must have been accepted
    (:mod:`app.models.licenses`; for an agreement with its own files, the files as served now):
    else :class:`LicenseNotAccepted` before any file is written."""
    if dest is None:
        from app.paths import models_dir

        dest = models_dir() / model.key
    listing = list_files(model, source)
    terms = model.license
    texts = [] if terms.permissive else license_texts(model, source, listing)
    if not licenses.accepted(model.key, terms, texts):
        again = " (its text changed since you accepted it)" if licenses.accepted(model.key, terms) else ""
        raise LicenseNotAccepted(
            f"{model.title}'s licence ({terms.name}) is not accepted{again}: accept it in Models, or run "
            f"voxdesk models download {model.key} --accept-license. Nothing was downloaded."
        )
    files = model_files(model, source, listing, extras, base)
    if not files:
        raise VoxDeskError(f"{source.title} lists no files for {model.title}. Try another source.")
    folder = download(files, dest, progress, cancel)
    problems = validate_model_dir(folder) if base else []
    if problems:
        raise VoxDeskError(f"The download finished but the model is incomplete: {problems[0]}")
    return folder


# --- checking a folder --------------------------------------------------------------------------


def validate_model_dir(path: str | Path) -> list[str]:
    """What keeps ``path`` from being a usable model folder of a family VoxDesk runs (empty list:
    none). Only file names and small files are read: nothing is loaded."""
    path = Path(path)
    if not path.is_dir():
        return [f"{path} is not a folder."]
    partial = sorted(p.name for p in path.rglob("*.part"))
    unfinished = [f"A download did not finish ({', '.join(partial)}); resume it."] if partial else []
    from app.engine.family import detect_family

    family = detect_family(path)
    if family == "cosyvoice":
        from app.models.cosyvoice.weights import check_folder

        try:
            check_folder(path)
        except VoxDeskError as err:
            return [str(err), *unfinished]
        return unfinished
    if family == "indextts":
        from app.models.indextts.weights import check_folder as check_index

        try:
            folder = check_index(path)
        except VoxDeskError as err:
            return [str(err), *unfinished]
        return ([] if folder.can_speak else [folder.summary()]) + unfinished
    return _voxcpm_problems(path) + unfinished


def _voxcpm_problems(path: Path) -> list[str]:
    from app.models.voxcpm.config import parse_config

    problems = []
    config = path / "config.json"
    if not config.is_file():
        problems.append("config.json is missing.")
    else:
        try:
            parse_config(json.loads(config.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            problems.append("config.json is damaged. Download the model again.")
        except VoxDeskError as err:
            problems.append(str(err))
    if not (path / "tokenizer.json").is_file():
        problems.append("tokenizer.json is missing.")
    if not any((path / n).is_file() for n in ("model.safetensors", "pytorch_model.bin")):
        problems.append("The model weights are missing (model.safetensors or pytorch_model.bin).")
    if not any((path / n).is_file() for n in ("audiovae.safetensors", "audiovae.pth")):
        problems.append("The audio codec weights are missing (audiovae.safetensors or audiovae.pth).")
    return problems
