"""``voxdesk synth --text-file`` runs all lines as one engine batch with the same audio as one
by one; ``voxdesk bench`` prints its table and writes its JSON (CPU, tiny model)."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from tiny import write_tiny_checkpoint

from app.cli import main


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield write_tiny_checkpoint(tmp_path_factory.mktemp("cli-v2"), "voxcpm2")
    torch.set_num_threads(before)


def test_text_file_batch_equals_lines_one_by_one(model, tmp_path, capsys):
    lines = ["first line here", "second one", "and a third line of text"]
    (tmp_path / "lines.txt").write_text("\n".join(lines[:2]) + "\n\n" + lines[2] + "\n", encoding="utf-8")
    common = ["--model", str(model), "--seed", "5", "--device", "cpu", "--threads", "1", "--min-len", "99"]
    common.append("--max-len")
    args = ["synth", "--text-file", str(tmp_path / "lines.txt"), "--out", str(tmp_path / "out")]
    assert main([*args, *common, "7"]) == 0
    for i, line in enumerate(lines, 1):
        assert main(["synth", "--text", line, "--out", str(tmp_path / f"{i}.wav"), *common, "7"]) == 0
        batched, rate = sf.read(tmp_path / "out" / f"{i:04d}.wav", dtype="float32")
        alone, _ = sf.read(tmp_path / f"{i}.wav", dtype="float32")
        assert rate == 48000 and batched.shape == alone.shape == (7 * 48,)
        np.testing.assert_allclose(batched, alone, atol=2e-4)  # 16-bit WAV rounding
    assert "seed 5" in capsys.readouterr().out


def test_bench_prints_a_table_and_writes_json(model, tmp_path, capsys):
    out = tmp_path / "new" / "bench.json"  # the folder is made; the file appears whole (atomic write)
    args = ["bench", "--model", str(model), "--device", "cpu", "--threads", "1", "--concurrency", "1,3"]
    args += ["--steps", "6"]
    assert main([*args, "--max-model-len", "256", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "seq-steps/s" in table and "TTFB" in table
    res = json.loads(out.read_text())
    assert [p.name for p in out.parent.iterdir()] == ["bench.json"]
    assert [b["concurrency"] for b in res["batches"]] == [1, 3]
    for b in res["batches"]:
        assert b["steps"] == 6 and b["seq_steps_per_s"] > 0 and b["first_chunk_ms_p50"] > 0
    assert res["threads"] == 1 and res["voice_patches"] == 32 and res["peak_rss_gb"] > 0


def test_bench_on_cpu_int8_fidelity_and_the_official_loop(model, tmp_path, capsys):
    """The CPU fast path (int8 Linear weights) against fp32 on one request, and the official
    eager loop on the CPU (it once hard-coded CUDA) in a dtype other than the checkpoint's,
    from one bench call."""
    from official import import_official

    import_official()
    out = tmp_path / "cpu.json"
    args = ["bench", "--model", str(model), "--device", "cpu", "--threads", "1", "--concurrency", "1"]
    args += ["--steps", "4", "--voice-patches", "2", "--cpu-weights", "int8", "--fidelity", "--official"]
    assert json.loads((model / "config.json").read_text())["dtype"] != "bfloat16"
    assert main([*args, "--official-dtype", "bfloat16", "--max-model-len", "256", "--json", str(out)]) == 0
    assert "fidelity vs fp32" in capsys.readouterr().out
    res = json.loads(out.read_text())
    fid = res["fidelity"]
    assert fid["patches"] == 4 and 0 < fid["first_patch_rel_l2"] < 0.2, fid
    official = res["official"]["eager"]
    assert (official["device"], official["dtype"]) == ("cpu", "bfloat16")
    assert np.isfinite(official["ms_per_step"])


def test_bench_loras_compares_with_and_without(model, tmp_path, capsys):
    """``--loras N``: after the plain runs, each concurrency again with N random LoRAs (official
    recipe: r 32, LM + DiT) and without, on the same engine (docs/bench_h200.sh's lora section)."""
    out = tmp_path / "lora.json"
    args = ["bench", "--model", str(model), "--device", "cpu", "--threads", "1", "--concurrency", "4"]
    assert main([*args, "--steps", "4", "--voice-patches", "2", "--loras", "3", "--json", str(out)]) == 0
    assert "LoRAs 3 (r 32" in capsys.readouterr().out
    lora = json.loads(out.read_text())["lora"]
    assert lora["loras"] == 3 and lora["slots"] == 8 and lora["adapted_modules"] > 0
    (row,) = lora["rows"]
    assert row["concurrency"] == 4 and row["lora_seq_steps_per_s"] > 0 and row["ratio"] > 0
