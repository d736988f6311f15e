"""Model manager core: the known checkpoints, where to get them, resumable verified downloads.

Nothing here touches the network until the user starts a download (:func:`download_model`, or
:func:`list_files` on its own). Only ``urllib`` is used. Sources:

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
from app.models.licenses import APACHE_2, License

CHUNK = 1 << 20
TIMEOUT = 30.0
USER_AGENT = "VoxDesk/0.1 (model download)"


@dataclass(frozen=True)
class KnownModel:
    key: str  # folder name under the models folder
    title: str
    hf_repo: str
    ms_repo: str
    architecture: str
    output_rate: int
    # What the model manager shows before a server has listed the files: the weights of the
    # official architecture at their released dtypes (bf16 network, fp32 AudioVAE), in MB, from
    # ``preset_config`` (tests/test_download.py checks it); the exact size replaces it once known.
    approx_mb: int
    license: License = APACHE_2  # the weights' licence (model card)
    family: str = "voxcpm"  # app.engine.family's name for its folders
    # the repository files VoxDesk downloads (paths in the repository); empty:
    # everything :func:`select_files` keeps. CosyVoice repositories also carry TensorRT/ONNX
    # copies of the flow, a second LM and the Qwen weights that llm.pt replaces: gigabytes unused.
    files: tuple[str, ...] = ()


def _cosyvoice_files(version: int) -> tuple[str, ...]:
    """What inference reads from a CosyVoice folder (app/models/cosyvoice/weights.py checks it):
    the yaml, the three networks, the two ONNX frontends and the text tokenizer's files."""
    return (
        f"cosyvoice{version}.yaml", "llm.pt", "flow.pt", "hift.pt", "campplus.onnx",
        f"speech_tokenizer_v{version}.onnx", "config.json", "CosyVoice-BlankEN/config.json",
        "CosyVoice-BlankEN/vocab.json", "CosyVoice-BlankEN/merges.txt",
        "CosyVoice-BlankEN/tokenizer_config.json",
    )  # fmt: skip


COSYVOICE_FILES = {"cosyvoice2": _cosyvoice_files(2), "cosyvoice3": _cosyvoice_files(3)}

KNOWN_MODELS = (
    KnownModel(
        "VoxCPM2",
        "VoxCPM2 (2B, 30 languages, 48 kHz)",
        "openbmb/VoxCPM2",
        "OpenBMB/VoxCPM2",
        "voxcpm2",
        48000,
        4957,
    ),
    KnownModel(
        "VoxCPM1.5", "VoxCPM1.5 (44.1 kHz)", "openbmb/VoxCPM1.5", "OpenBMB/VoxCPM1.5", "voxcpm", 44100, 1949
    ),
    KnownModel(
        "VoxCPM-0.5B",
        "VoxCPM-0.5B (16 kHz)",
        "openbmb/VoxCPM-0.5B",
        "OpenBMB/VoxCPM-0.5B",
        "voxcpm",
        16000,
        1606,
    ),
    # Sizes are estimates until a source lists the files: the official networks' parameter
    # counts at fp32 (llm.pt, flow.pt, hift.pt) plus the ONNX and tokenizer files' sizes on the
    # model pages, rounded. The exact total replaces them once listed.
    KnownModel(
        "Fun-CosyVoice3-0.5B",
        "Fun-CosyVoice3 (0.5B, 9 languages, 18+ dialects, 24 kHz)",
        "FunAudioLLM/Fun-CosyVoice3-0.5B-2512",
        "FunAudioLLM/Fun-CosyVoice3-0.5B-2512",
        "cosyvoice3",
        24000,
        4480,
        family="cosyvoice",
        files=COSYVOICE_FILES["cosyvoice3"],
    ),
    KnownModel(
        "CosyVoice2-0.5B",
        "CosyVoice2 (0.5B, zh/en/ja/ko and dialects, 24 kHz)",
        "FunAudioLLM/CosyVoice2-0.5B",
        "iic/CosyVoice2-0.5B",
        "cosyvoice2",
        24000,
        3080,
        family="cosyvoice",
        files=COSYVOICE_FILES["cosyvoice2"],
    ),
)


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


def download_model(
    model: KnownModel,
    source: Source,
    dest: str | Path | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """List, download and check one known model; returns its folder (default: the models folder)."""
    if dest is None:
        from app.paths import models_dir

        dest = models_dir() / model.key
    files = select_files(list_files(model, source), model.files)
    if not files:
        raise VoxDeskError(f"{source.title} lists no files for {model.title}. Try another source.")
    folder = download(files, dest, progress, cancel)
    problems = validate_model_dir(folder)
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
