"""Model downloads against a local HTTP server shaped like Hugging Face and ModelScope.

The server (127.0.0.1, a thread) serves a real tiny checkpoint with Range support, redirects
like the Hub's resolve URLs, and can cut a transfer short or corrupt a file on request.
"""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tiny import tiny_v2  # noqa: F401

from app.errors import VoxDeskError
from app.models import download as dl

REPO_HF = "openbmb/VoxCPM2"
REPO_MS = "OpenBMB/VoxCPM2"
LFS = {"model.safetensors", "audiovae.pth"}


class Hub:
    """State of the fake server: files, request log, and injected faults."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[tuple[str, str | None]] = []  # (file, Range header)
        self.cut_after: dict[str, int] = {}  # file -> bytes to send before dropping the connection
        self.corrupt: set[str] = set()
        self.ignore_range = False

    def hf_listing(self):
        out = [{"type": "directory", "path": "assets", "oid": "x", "size": 0}]
        for path, data in self.files.items():
            entry = {"type": "file", "path": path, "size": len(data)}
            if path in LFS:
                entry["oid"] = "pointer-oid"
                entry["lfs"] = {
                    "oid": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "pointerSize": 130,
                }
            else:
                entry["oid"] = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            out.append(entry)
        return out

    def ms_listing(self):
        files = [{"Name": "assets", "Path": "assets", "Type": "tree", "Size": 0}]
        for path, data in self.files.items():
            sha = hashlib.sha256(data).hexdigest()
            files.append(
                {"Name": Path(path).name, "Path": path, "Type": "blob", "Size": len(data), "Sha256": sha}
            )
        return {"Code": 200, "Data": {"Files": files}, "Success": True}


def _handler(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _json(self, obj):
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if url.path == f"/api/models/{REPO_HF}/tree/main" and query.get("recursive") == "true":
                return self._json(hub.hf_listing())
            if url.path == f"/api/v1/models/{REPO_MS}/repo/files" and query.get("Recursive") == "true":
                return self._json(hub.ms_listing())
            m = re.fullmatch(rf"/{REPO_HF}/resolve/main/(.+)", url.path)
            if m:  # the Hub redirects file downloads to its CDN
                self.send_response(302)
                self.send_header("Location", f"/cdn/{m.group(1)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if url.path.startswith("/cdn/"):
                return self._file(urllib.parse.unquote(url.path[5:]))
            if url.path == f"/api/v1/models/{REPO_MS}/repo" and query.get("Revision") == "master":
                return self._file(query["FilePath"])
            self.send_error(404)
            return None

        def _file(self, name):
            if name not in hub.files:
                self.send_error(404)
                return
            data = hub.files[name]
            if name in hub.corrupt:
                data = bytes(b ^ 0xFF for b in data[:10]) + data[10:]
            rng = self.headers.get("Range")
            hub.requests.append((name, rng))
            start = 0
            if rng and not hub.ignore_range:
                start = int(re.fullmatch(r"bytes=(\d+)-", rng).group(1))
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            cut = hub.cut_after.pop(name, None)
            self.wfile.write(body if cut is None else body[:cut])
            if cut is not None:
                self.close_connection = True

    return Handler


@pytest.fixture
def hub(tiny_v2):  # noqa: F811
    files = {p.name: p.read_bytes() for p in sorted(tiny_v2.iterdir()) if p.is_file()}
    files["README.md"] = b"# docs"
    files["pytorch_model.bin"] = b"old format copy" * 10
    state = Hub(files)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


MODEL = dl.KNOWN_MODELS[0]


def _wanted(hub):
    return {k: v for k, v in hub.files.items() if k not in ("README.md", "pytorch_model.bin")}


def _folder(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in path.iterdir()}


def test_known_models_and_sources():
    assert [m.hf_repo for m in dl.KNOWN_MODELS] == [
        "openbmb/VoxCPM2",
        "openbmb/VoxCPM1.5",
        "openbmb/VoxCPM-0.5B",
        "FunAudioLLM/Fun-CosyVoice3-0.5B-2512",
        "FunAudioLLM/CosyVoice2-0.5B",
        "IndexTeam/IndexTTS-2.5",
    ]
    assert (
        dl.HUGGING_FACE.endpoint == "https://huggingface.co"
        and dl.MODELSCOPE.endpoint == "https://modelscope.cn"
    )
    assert dl.hf_mirror("https://hf-mirror.com/").endpoint == "https://hf-mirror.com"
    with pytest.raises(VoxDeskError, match="not a web address"):
        dl.hf_mirror("hf-mirror.com")


@pytest.mark.parametrize("kind", ["huggingface", "modelscope"])
def test_download_whole_model(hub, tmp_path, kind):
    source = dl.Source(kind, hub.endpoint, "test", "main" if kind == "huggingface" else "master")
    listed = dl.list_files(MODEL, source)
    assert {f.path for f in listed} == set(hub.files)  # folders left out
    seen = []
    folder = dl.download_model(MODEL, source, tmp_path / "VoxCPM2", progress=seen.append)
    assert _folder(folder) == _wanted(hub)
    assert dl.validate_model_dir(folder) == []
    assert seen[-1].done == seen[-1].total == sum(len(v) for v in _wanted(hub).values())
    # A second run finds everything in place and transfers nothing.
    before = len(hub.requests)
    dl.download_model(MODEL, source, folder)
    assert len(hub.requests) == before


def test_cancel_then_resume_with_range(hub, tmp_path):
    source = dl.hf_mirror(hub.endpoint)
    files = [f for f in dl.list_files(MODEL, source) if f.path == "model.safetensors"]
    cancel = threading.Event()

    def stop_after_first_chunk(p):
        if p.file_done >= 100_000:
            cancel.set()

    with pytest.raises(dl.DownloadCancelled):
        dl.download(files, tmp_path, stop_after_first_chunk, cancel, chunk_size=50_000)
    part = tmp_path / "model.safetensors.part"
    assert part.stat().st_size == 100_000 and not (tmp_path / "model.safetensors").exists()
    dl.download(files, tmp_path, chunk_size=50_000)
    assert hub.requests[-1] == ("model.safetensors", "bytes=100000-")
    assert (tmp_path / "model.safetensors").read_bytes() == hub.files["model.safetensors"]
    assert not part.exists()


def test_broken_connection_keeps_part_and_resumes(hub, tmp_path):
    source = dl.Source("modelscope", hub.endpoint, "ms", "master")
    files = [f for f in dl.list_files(MODEL, source) if f.path == "model.safetensors"]
    hub.cut_after["model.safetensors"] = 300_000
    with pytest.raises(VoxDeskError, match="connection broke"):
        dl.download(files, tmp_path, chunk_size=64_000)
    assert (tmp_path / "model.safetensors.part").stat().st_size == 300_000
    assert "did not finish" in " ".join(dl.validate_model_dir(tmp_path))
    dl.download(files, tmp_path)
    assert hub.requests[-1] == ("model.safetensors", "bytes=300000-")
    assert (tmp_path / "model.safetensors").read_bytes() == hub.files["model.safetensors"]


def test_server_ignoring_range_restarts_cleanly(hub, tmp_path):
    source = dl.hf_mirror(hub.endpoint)
    files = [f for f in dl.list_files(MODEL, source) if f.path == "tokenizer.json"]
    (tmp_path / "tokenizer.json.part").write_bytes(hub.files["tokenizer.json"][:1000])
    hub.ignore_range = True
    dl.download(files, tmp_path)
    assert (tmp_path / "tokenizer.json").read_bytes() == hub.files["tokenizer.json"]


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])  # LFS sha256, git blob sha1
def test_checksum_mismatch_deletes_the_file(hub, tmp_path, name):
    source = dl.hf_mirror(hub.endpoint)
    files = [f for f in dl.list_files(MODEL, source) if f.path == name]
    hub.corrupt.add(name)
    with pytest.raises(VoxDeskError, match="damaged in transfer"):
        dl.download(files, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_stale_part_larger_than_file_is_replaced(hub, tmp_path):
    source = dl.hf_mirror(hub.endpoint)
    files = [f for f in dl.list_files(MODEL, source) if f.path == "config.json"]
    (tmp_path / "config.json.part").write_bytes(b"x" * (len(hub.files["config.json"]) + 5))
    dl.download(files, tmp_path)
    assert (tmp_path / "config.json").read_bytes() == hub.files["config.json"]


def test_http_errors_and_unreachable_hosts_are_plain(hub, tmp_path):
    with pytest.raises(VoxDeskError, match="HTTP 404"):
        dl.list_files("nobody/nothing", dl.hf_mirror(hub.endpoint))
    with pytest.raises(VoxDeskError, match="Could not reach"):
        dl.list_files(MODEL, dl.hf_mirror("http://127.0.0.1:9"))


def test_unsafe_paths_are_refused(tmp_path):
    evil = dl.RemoteFile("../outside.txt", 1, "http://127.0.0.1:9/x")
    with pytest.raises(VoxDeskError, match="unsafe path"):
        dl.download([evil], tmp_path / "m")


def test_validate_model_dir_names_problems(tiny_v2, tmp_path):  # noqa: F811
    assert dl.validate_model_dir(tmp_path / "none") == [f"{tmp_path / 'none'} is not a folder."]
    empty = tmp_path / "empty"
    empty.mkdir()
    problems = " ".join(dl.validate_model_dir(empty))
    for needle in ("config.json", "tokenizer.json", "model.safetensors", "audiovae"):
        assert needle in problems
    copy = Path(shutil.copytree(tiny_v2, tmp_path / "copy"))
    config = json.loads((copy / "config.json").read_text())
    config["architecture"] = "voxcpm9"
    (copy / "config.json").write_text(json.dumps(config))
    (copy / "audiovae.pth").rename(copy / "audiovae.safetensors")
    assert dl.validate_model_dir(copy) == [
        "config.json: unknown architecture 'voxcpm9'; VoxDesk runs VoxCPM-0.5B, VoxCPM1.5 and VoxCPM2."
    ]
    (copy / "config.json").write_text("{oops")
    assert dl.validate_model_dir(copy) == ["config.json is damaged. Download the model again."]


def test_importing_does_not_touch_the_network():
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise AssertionError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "import app.models.download as dl\n"
        "assert dl.validate_model_dir('.')\n"
    )
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True, timeout=60)


@pytest.mark.parametrize("model", [m for m in dl.KNOWN_MODELS if m.family == "voxcpm"], ids=lambda m: m.key)
def test_shown_download_size_is_the_architectures_weights(model):
    """The size the model manager shows before any listing: released dtypes (bf16 network, fp32
    AudioVAE) of the official shapes, within 1 %."""
    import torch

    from app.models.voxcpm.checkpoint import preset_config
    from app.models.voxcpm.config import parse_config
    from app.models.voxcpm.model import VoxCPM

    cfg = parse_config(preset_config(model.key.lower()))
    assert cfg.is_v2 == (model.architecture == "voxcpm2")
    with torch.device("meta"):
        sd = VoxCPM(cfg).state_dict()
    nbytes = sum(v.numel() * (4 if k.startswith("audio_vae.") else 2) for k, v in sd.items())
    assert abs(nbytes / 1e6 - model.approx_mb) <= 0.01 * model.approx_mb
