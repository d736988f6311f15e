"""The CosyVoice3 benchmark's own parts on the tiny preset (the GPU figures come from the device)."""

import json
from pathlib import Path

import torch

from app.models.cosyvoice import bench, bench_official
from app.models.cosyvoice.presets import PRESETS, yaml_text


def test_the_official_model_yaml_keeps_the_networks_only() -> None:
    text = bench_official._model_yaml(yaml_text(PRESETS["cosyvoice3-tiny"]))
    tops = {line.split(":")[0] for line in text.splitlines() if line[:1].isalpha() or line[:2] == "__"}
    assert {"llm", "flow", "hift", "sample_rate", "__set_seed3", "llm_input_size"} <= tops
    assert not tops & {"get_tokenizer", "feat_extractor", "allowed_special"}


def test_the_lm_side_runs_every_request_to_its_maximum(tmp_path: Path) -> None:
    """The written head never stops early: 20 speech tokens per text id, every request."""
    out = tmp_path / "res.json"
    folder = tmp_path / "cv3"
    argv = ["--folder", str(folder), "--write", "cosyvoice3-tiny", "--device", "cpu", "--sides", "lm",
            "--concurrency", "2", "--text-tokens", "1", "--threads", "1", "--json", str(out)]  # fmt: skip
    threads = torch.get_num_threads()
    try:
        assert bench.main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    res = json.loads(out.read_text(encoding="utf-8"))
    runs = [(r["concurrency"], r["tokens"], r["steps"]) for r in res["lm"]["runs"]]
    assert runs == [(2, 40, 20)]
    head = torch.load(folder / "llm.pt", weights_only=True)["llm_decoder.weight"]
    assert not head[6561:].any() and head[:6561].abs().sum() > 0


def test_stand_ins_answer_only_the_names_read_at_import() -> None:
    window = bench_official._hann("hann", 16)
    assert window[0] == 0.0 and abs(window[8] - 1.0) < 1e-12 and window.shape == (16,)
    mod = bench_official._stand_in("voxdesk_absent_pkg")
    try:
        assert not hasattr(mod, "anything")
        lenient = bench_official._stand_in("voxdesk_absent_pkg.lenient", lenient=True)
        assert isinstance(lenient.Image.Resampling.BILINEAR, type)
    finally:
        import sys

        sys.modules.pop("voxdesk_absent_pkg", None)
        sys.modules.pop("voxdesk_absent_pkg.lenient", None)
