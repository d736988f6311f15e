"""IndexTTS-2.5 in the model catalogue: its folder assembled from four repositories, QwenEmotion as an
optional extra, and its click-through licence (the bilibili agreement) shown in full and accepted,
bound to the text's SHA-256, before anything is downloaded: in app/models and ``voxdesk models``,
against tests/ix_hub.py's 127.0.0.1 server."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path

import pytest
from ix_hub import LICENSE_EN, LICENSE_ZH, folder_files, index_hub  # noqa: F401

from app.cli import main
from app.models import download as dl
from app.models import licenses

MODEL = next(m for m in dl.KNOWN_MODELS if m.key == "IndexTTS-2.5")
OWN = "IndexTeam/IndexTTS-2.5"
LICENSE_FILES = {f"{OWN}/LICENSE", f"{OWN}/LICENSE_ZH.txt"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # noqa: SIM115  (not a terminal: no prompt)
    monkeypatch.setenv("LANG", "C.UTF-8")
    return tmp_path / "home"


def _record(home: Path) -> dict:
    from app.paths import models_dir

    return json.loads((models_dir() / licenses.RECORD).read_text(encoding="utf-8"))


def test_the_entry_names_its_repositories_languages_licence_and_extra():
    assert (MODEL.hf_repo, MODEL.ms_repo, MODEL.family, MODEL.output_rate) == (OWN, OWN, "indextts", 22050)
    assert "zh/en/ja/es/ar" in MODEL.title
    assert [p.hf_repo for p in MODEL.parts] == ["facebook/w2v-bert-2.0", "funasr/campplus",
                                                "nvidia/bigvgan_v2_22khz_80band_256x"]  # fmt: skip
    # the layout app/models/indextts/weights.py checks
    placed = {local for part in MODEL.parts for _, local in part.files}
    assert placed == {"hf_cache/w2v-bert-2.0/config.json", "hf_cache/w2v-bert-2.0/preprocessor_config.json",
                      "hf_cache/w2v-bert-2.0/model.safetensors", "hf_cache/campplus_cn_common.bin",
                      "hf_cache/bigvgan/config.json", "hf_cache/bigvgan/bigvgan_generator.pt"}  # fmt: skip
    terms = MODEL.license
    assert not terms.permissive and terms.texts == ("LICENSE", "LICENSE_ZH.txt")
    assert terms.name == "bilibili Model Use License Agreement"
    for point in ("royalty-free", "100 million", "LICENSE", "improve any other AI model", "high-risk",
                  "revoke", "Shanghai"):  # fmt: skip
        assert point in terms.summary
    assert [e.folder for e in MODEL.extras] == ["qwen0.6bemo4-merge"]


def test_shown_size_is_the_released_shapes_at_fp32():
    """The estimate is the parameter count of every network the folder holds (the released shapes
    recorded from the official modules, w2v-BERT 2.0's from transformers) at 4 bytes, plus ~1 MB."""
    import torch
    from transformers import Wav2Vec2BertConfig, Wav2Vec2BertModel

    from app.models.indextts.checkpoint import official_shapes
    from app.models.indextts.semantic import w2v_config

    entry = official_shapes("indextts25")
    parts = ("gpt", "cfm", "length_regulator", "codec", "campplus", "bigvgan")
    values = sum(math.prod(shape) for part in parts for shape in entry[part].values())
    with torch.device("meta"):
        w2v = Wav2Vec2BertModel(Wav2Vec2BertConfig(**w2v_config(full=True)))
    values += sum(v.numel() for v in w2v.state_dict().values())
    assert abs(4 * values / 1e6 + 1 - MODEL.approx_mb) <= 0.01 * MODEL.approx_mb


def test_no_download_before_the_licence_is_accepted(index_hub, home, tmp_path):  # noqa: F811
    source = dl.hf_mirror(index_hub.endpoint)
    dest = tmp_path / "IndexTTS-2.5"
    with pytest.raises(dl.LicenseNotAccepted, match="accept it in Models, or run voxdesk models download"):
        dl.download_model(MODEL, source, dest)
    assert set(index_hub.served) == LICENSE_FILES  # only the licence texts were read, into memory
    assert not dest.exists()


def test_accepting_on_the_command_line_records_the_sha256_and_downloads(index_hub, home, capsys):  # noqa: F811
    args = ["models", "download", "IndexTTS-2.5", "--mirror", index_hub.endpoint]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert LICENSE_EN.decode().strip() in out and "royalty-free" in out  # the full text and what it means
    assert err.count("\n") == 1 and "--accept-license" in err
    assert set(index_hub.served) == LICENSE_FILES and not licenses.accepted(MODEL.key, MODEL.license)

    assert main([*args, "--accept-license"]) == 0
    entry = _record(home)["IndexTTS-2.5"]
    assert entry["sha256"] == hashlib.sha256(LICENSE_EN).hexdigest() and entry["file"] == "LICENSE"
    assert entry["files"] == {"LICENSE": hashlib.sha256(LICENSE_EN).hexdigest(),
                              "LICENSE_ZH.txt": hashlib.sha256(LICENSE_ZH).hexdigest()}  # fmt: skip
    assert licenses.accepted_on(MODEL.key, MODEL.license) == entry["accepted"][:10]  # YYYY-MM-DD
    from app.paths import models_dir

    folder = models_dir() / "IndexTTS-2.5"
    files = folder_files(folder)
    assert {"LICENSE", "LICENSE_ZH.txt", "config.yaml", "hf_cache/bigvgan/bigvgan_generator.pt",
            "hf_cache/w2v-bert-2.0/model.safetensors", "hf_cache/campplus_cn_common.bin"} <= files
    assert not any(f.startswith("qwen0.6bemo4-merge") for f in files)  # optional: not asked for
    assert "hf_cache/bigvgan/bigvgan_discriminator_optimizer.pt" not in files and "README.md" not in files
    assert dl.validate_model_dir(folder) == []

    # QwenEmotion later, into the same folder: only its files are fetched, no question asked again
    index_hub.served.clear()
    assert main(["models", "download", "IndexTTS-2.5-QwenEmotion", "--mirror", index_hub.endpoint]) == 0
    fetched = set(index_hub.served) - LICENSE_FILES
    assert fetched == {f"{OWN}/qwen0.6bemo4-merge/config.json", f"{OWN}/qwen0.6bemo4-merge/model.safetensors"}
    from app.models.indextts.weights import check_folder

    assert "the QwenEmotion model (qwen0.6bemo4-merge)" not in check_folder(folder).missing


def test_a_changed_licence_is_asked_again(index_hub, home, tmp_path, capsys):  # noqa: F811
    source = dl.hf_mirror(index_hub.endpoint)
    texts = dl.license_texts(MODEL, source)
    licenses.record_acceptance(MODEL.key, MODEL.license, texts, texts[0])
    assert licenses.accepted(MODEL.key, MODEL.license, dl.license_texts(MODEL, source))

    index_hub.repos[OWN]["LICENSE"] = LICENSE_EN + b"3. A new clause.\n"
    changed = dl.license_texts(MODEL, source)
    assert not licenses.accepted(MODEL.key, MODEL.license, changed)
    index_hub.served.clear()
    with pytest.raises(dl.LicenseNotAccepted, match="its text changed since you accepted it"):
        dl.download_model(MODEL, source, tmp_path / "ix")
    assert set(index_hub.served) == LICENSE_FILES and not (tmp_path / "ix").exists()
    assert main(["models", "download", "IndexTTS-2.5", "--mirror", index_hub.endpoint]) == 1
    out = capsys.readouterr().out
    assert "3. A new clause." in out and "It changed since you accepted it." in out


def test_answering_no_keeps_nothing(index_hub, home, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert main(["models", "download", "IndexTTS-2.5", "--mirror", index_hub.endpoint]) == 1
    out, err = capsys.readouterr()
    assert LICENSE_ZH.decode().strip() in out and LICENSE_EN.decode().strip() not in out
    assert "Licence not accepted: nothing was downloaded." in err
    from app.paths import models_dir

    assert not (models_dir() / licenses.RECORD).exists() and not (models_dir() / "IndexTTS-2.5").exists()
    assert set(index_hub.served) == LICENSE_FILES


def test_the_extra_needs_its_model_first(index_hub, home, capsys):  # noqa: F811
    args = ["models", "download", "IndexTTS-2.5-QwenEmotion", "--mirror", index_hub.endpoint]
    assert main([*args, "--accept-license"]) == 1
    assert "download IndexTTS-2.5 first" in capsys.readouterr().err


def test_a_repository_without_the_texts_reads_them_from_the_licence_address(index_hub, home):  # noqa: F811
    import dataclasses

    for name in ("LICENSE", "LICENSE_ZH.txt"):
        index_hub.repos["elsewhere/index-tts"] = {**index_hub.repos.get("elsewhere/index-tts", {}),
                                                  name: index_hub.repos[OWN].pop(name)}  # fmt: skip
    base = f"{index_hub.endpoint}/elsewhere/index-tts/resolve/main/"
    model = dataclasses.replace(MODEL, license=dataclasses.replace(MODEL.license, text_base=base))
    texts = dl.license_texts(model, dl.hf_mirror(index_hub.endpoint))
    assert [(t.name, t.text) for t in texts] == [("LICENSE", LICENSE_EN.decode()),
                                                 ("LICENSE_ZH.txt", LICENSE_ZH.decode())]  # fmt: skip
    assert licenses.for_language(texts, "zh_CN").name == "LICENSE_ZH.txt"
    assert licenses.for_language(texts, "en").name == "LICENSE"
