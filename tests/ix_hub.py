"""A 127.0.0.1 server shaped like the Hugging Face API serving an IndexTTS-2.5 folder's repositories:
IndexTeam/IndexTTS-2.5 (a real tiny config.yaml, small stand-in weight files, a QwenEmotion folder
and a short licence-like text of our own, not bilibili's) and the three repositories of its
``hf_cache/`` parts. ``hub.served`` logs every file read (not listings); ``hub.repos`` can be
changed between requests (a new licence text, say)."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.models.indextts.presets import preset, yaml_text

LICENSE_EN = ("Test Model Licence\n\nBy clicking “I agree” you accept these test terms.\n"
              "1. Keep this notice.\n2. Do not train other models on the outputs.\n").encode()
LICENSE_ZH = "测试模型许可协议\n\n点击“同意”即表示接受本测试条款。\n".encode()


def index_repos() -> dict[str, dict[str, bytes]]:
    """Every repository a download of IndexTTS-2.5 reads, as {repo: {path: bytes}}."""
    tree = preset("indextts25-tiny")
    own = {name: f"stand-in {name}".encode() * 10 for name in
           ("gpt.pth", "s2mel.pth", "codec.pth", "wav2vec2bert_stats.pt", "feat1.pt", "feat2.pt",
            "multilingual_zh_ja_yue_char_del.tiktoken")}  # fmt: skip
    own |= {"config.yaml": yaml_text(tree).encode(), "LICENSE": LICENSE_EN, "LICENSE_ZH.txt": LICENSE_ZH,
            "README.md": b"# card", "qwen0.6bemo4-merge/config.json": b"{}",
            "qwen0.6bemo4-merge/model.safetensors": b"q" * 300}  # fmt: skip
    return {
        "IndexTeam/IndexTTS-2.5": own,
        "facebook/w2v-bert-2.0": {"config.json": b"{}", "preprocessor_config.json": b"{}",
                                  "model.safetensors": b"w" * 500, "conformer_shaw.pt": b"unused" * 50},
        "funasr/campplus": {"campplus_cn_common.bin": b"c" * 200, "README.md": b"#"},
        "nvidia/bigvgan_v2_22khz_80band_256x": {"config.json": b"{}", "bigvgan_generator.pt": b"g" * 400,
                                                "bigvgan_discriminator_optimizer.pt": b"unused" * 50},
    }  # fmt: skip


class IndexHub:
    def __init__(self) -> None:
        self.repos = index_repos()
        self.served: list[str] = []  # "repo/path" of every file read
        self.endpoint = ""

    def own_files(self, prefix: str = "") -> set[str]:
        return {p for p in self.repos["IndexTeam/IndexTTS-2.5"] if p.startswith(prefix)}


def _handler(hub: IndexHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            for repo, files in hub.repos.items():
                if path == f"/api/models/{repo}/tree/main":
                    listing = [{"type": "file", "path": k, "size": len(v),
                                "oid": hashlib.sha1(b"blob %d\0" % len(v) + v).hexdigest()}
                               for k, v in files.items()]  # fmt: skip
                    return self._send(json.dumps(listing).encode())
                prefix = f"/{repo}/resolve/main/"
                if path.startswith(prefix) and path[len(prefix):] in files:
                    hub.served.append(f"{repo}/{path[len(prefix):]}")
                    return self._send(files[path[len(prefix):]])
            self.send_error(404)
            return None

    return Handler


@pytest.fixture
def index_hub() -> Iterator[IndexHub]:
    hub = IndexHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    hub.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    yield hub
    server.shutdown()
    server.server_close()


def folder_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
