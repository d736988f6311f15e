"""``voxdesk`` end to end on tiny checkpoints, and its one-line errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from tiny import tone

from app.cli import main
from app.models.voxcpm.generate import Synthesizer
from app.models.voxcpm.prompt import VoicePrompt

ROOT = Path(__file__).resolve().parents[1]


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_synth_one_text_matches_library(tiny_v2, tmp_path, capsys):
    out = tmp_path / "a.wav"
    args = ["synth", "--model", str(tiny_v2), "--text", "你好 world", "--seed", "3", "--device", "cpu"]
    code, stdout, _ = _run([*args, "--out", str(out), "--min-len", "6", "--max-len", "6"], capsys)
    assert code == 0 and "seed 3" in stdout
    audio, rate = sf.read(out, dtype="float32")
    ref = Synthesizer.from_dir(tiny_v2, "cpu").synthesize("你好 world", seed=3, min_len=6, max_len=6)
    assert rate == 48000 and len(audio) == len(ref.audio)
    assert np.abs(audio - ref.audio).max() <= 1.0 / 2**15 + 1e-6  # PCM_16 rounding


def test_synth_int8_on_the_cpu(tiny_v2, tmp_path, capsys):
    """``--dtype int8`` reaches the model (its stacks run int8 Linear) and speaks the same length;
    the exact path is untouched (``--cpu-weights``, the option's former name, still works)."""
    args = ["synth", "--model", str(tiny_v2), "--text", "hello world", "--seed", "3", "--device", "cpu"]
    args += ["--min-len", "6", "--max-len", "6"]
    heard = {}
    for weights in ("float32", "int8"):
        out = tmp_path / f"{weights}.wav"
        option = "--dtype" if weights == "int8" else "--cpu-weights"
        code, stdout, _ = _run([*args, option, weights, "--out", str(out)], capsys)
        assert code == 0 and "6 patches" in stdout
        heard[weights] = sf.read(out, dtype="float32")[0]
    assert len(heard["int8"]) == len(heard["float32"]) and not np.array_equal(heard["int8"], heard["float32"])
    exact = Synthesizer.from_dir(tiny_v2, "cpu").synthesize("hello world", seed=3, min_len=6, max_len=6)
    assert np.abs(heard["float32"] - exact.audio).max() <= 1.0 / 2**15 + 1e-6
    int8 = Synthesizer.from_dir(tiny_v2, "cpu", cpu_precision="int8").model
    assert "quantized" in type(int8.base_lm.layers[0].self_attn.qkv_proj).__module__


def test_synth_voice_options(tiny_v2, tmp_path, capsys):
    prompt, ref = tmp_path / "p.wav", tmp_path / "r.wav"
    sf.write(prompt, tone(150), 16000, subtype="FLOAT")
    sf.write(ref, tone(90, freq=330.0), 16000, subtype="FLOAT")
    out = tmp_path / "b.wav"
    code, _, err = _run(
        ["synth", "--model", str(tiny_v2), "--text", "hello", "--ref-wav", str(ref), "--prompt-wav",
         str(prompt), "--prompt-text", "提示", "--control", "calm", "--seed", "1", "--out", str(out),
         "--min-len", "4", "--max-len", "4"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    voice = VoicePrompt(tone(150), "提示", reference_audio=tone(90, freq=330.0))
    want = Synthesizer.from_dir(tiny_v2, "cpu").synthesize("(calm)hello", voice, seed=1, min_len=4, max_len=4)
    assert np.abs(sf.read(out, dtype="float32")[0] - want.audio).max() <= 1.0 / 2**15 + 1e-6


def test_synth_text_file_writes_numbered_files(tiny_v1, tmp_path, capsys):
    lines = tmp_path / "lines.txt"
    lines.write_text("first line\n\n   \nsecond 第二行\nthird\n", encoding="utf-8")
    folder = tmp_path / "out"
    code, stdout, _ = _run(
        ["synth", "--model", str(tiny_v1), "--text-file", str(lines), "--out", str(folder), "--seed", "0"],
        capsys,
    )
    assert code == 0
    assert sorted(p.name for p in folder.iterdir()) == ["0001.wav", "0002.wav", "0003.wav"]
    assert stdout.count("\n") == 3


def test_text_file_out_folder_that_cannot_be_made(tiny_v1, tmp_path, capsys):
    lines = tmp_path / "lines.txt"
    lines.write_text("one line\n", encoding="utf-8")
    (tmp_path / "plain").write_text("a file, not a folder")
    out = tmp_path / "plain" / "sub"  # its parent is a file: mkdir fails with ENOTDIR
    code, _, err = _run(
        ["synth", "--model", str(tiny_v1), "--text-file", str(lines), "--out", str(out)], capsys
    )
    assert code == 1 and err.count("\n") == 1 and "internal error" not in err
    assert "Cannot create the folder" in err


def test_out_suffix_picks_the_format(tiny_v1, tmp_path, capsys):
    args = ["synth", "--model", str(tiny_v1), "--text", "hi", "--seed", "1", "--max-len", "3"]
    for name, fmt in (("a.flac", "FLAC"), ("b.WAV", "WAV")):
        code, _, err = _run([*args, "--out", str(tmp_path / name)], capsys)
        assert code == 0, err
        assert sf.info(tmp_path / name).format == fmt
    for out, message in ((str(tmp_path / "c.mp3"), ".wav or .flac"), ("", "--out is empty"), (" ", "empty")):
        code, _, err = _run([*args, "--out", out], capsys)
        assert code == 1 and message in err and err.count("\n") == 1
    assert not (tmp_path / "c.mp3").exists()


def test_info_and_write_checkpoint(tmp_path, capsys):
    code, stdout, _ = _run(["write-checkpoint", "--preset", "tiny-v1", "--out", str(tmp_path / "m")], capsys)
    assert code == 0
    names = ["audiovae.pth", "config.json", "model.safetensors", "special_tokens_map.json"]
    names += ["tokenizer.json", "tokenizer_config.json"]
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == names  # no temporary files left
    (tmp_path / "f").write_text("x")
    for out in (tmp_path / "f", tmp_path / "f" / "sub"):
        code, _, err = _run(["write-checkpoint", "--preset", "tiny-v1", "--out", str(out)], capsys)
        assert code == 1 and err.count("\n") == 1 and "internal error" not in err, err
    code, stdout, _ = _run(["info", "--model", str(tmp_path / "m")], capsys)
    assert code == 0
    assert "architecture: voxcpm" in stdout and "16000 Hz in" in stdout and "base_lm" in stdout
    assert "weights: model.safetensors, audiovae.pth (intact" in stdout


@pytest.mark.parametrize("what", ["truncated", "corrupt", "missing-vae", "wrong-shapes"])
def test_info_reports_a_damaged_model(tiny_v1, tiny_v2, tmp_path, capsys, what):
    model = _damaged_copy(tiny_v2, tmp_path / "m", "none")
    weights = model / "model.safetensors"
    if what == "truncated":
        weights.write_bytes(weights.read_bytes()[:-100])
    elif what == "corrupt":
        weights.write_bytes(b"garbage")
    elif what == "missing-vae":
        (model / "audiovae.pth").unlink()
    else:
        shutil.copy(tiny_v1 / "model.safetensors", weights)
    code, _, err = _run(["info", "--model", str(model)], capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert re.search("damaged|has no audiovae|lacks|unexpected|shape", err), err


def _damaged_copy(src: Path, dst: Path, what: str) -> Path:
    shutil.copytree(src, dst)
    if what == "corrupt":
        (dst / "model.safetensors").write_bytes(b"garbage")
    elif what == "arch":
        data = json.loads((dst / "config.json").read_text())
        (dst / "config.json").write_text(json.dumps({**data, "architecture": "speechgpt"}))
    return dst


@pytest.mark.parametrize(
    "case, pattern",
    [
        ("missing-model", "does not exist|not found"),
        ("corrupt", "model.safetensors .*damaged"),
        ("arch", "unknown architecture 'speechgpt'"),
        ("bad-audio", "not.*audio|cannot be read|could not|unreadable|damaged"),
        ("empty-text", "empty"),
        ("ref-on-v1", "needs a VoxCPM2 model"),
        ("prompt-no-text", "needs --prompt-text"),
        ("too-long", "text is too long"),
        ("voice-too-long", "voice recording is too long"),
        ("cuda", "CUDA"),
        ("cfg-nan", "cfg"),
        ("cfg-inf", "cfg"),
        ("cfg-big", "cfg"),
        ("seed-negative", "seed"),
        ("seed-huge", "seed"),
        ("timesteps-0", "steps"),
        ("max-len-0", "length"),
    ],
)
def test_errors_are_one_line(tiny_v1, tiny_v2, tmp_path, capsys, case, pattern):
    if case == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    model = tiny_v2
    args = ["--text", "hello", "--out", str(tmp_path / "x.wav"), "--device", "cpu"]
    if case == "missing-model":
        model = tmp_path / "nowhere"
    elif case in ("corrupt", "arch"):
        model = _damaged_copy(tiny_v2, tmp_path / "m", case)
    elif case == "bad-audio":
        (tmp_path / "bad.wav").write_bytes(b"RIFF not really")
        args += ["--ref-wav", str(tmp_path / "bad.wav")]
    elif case == "empty-text":
        args[1] = "   "
    elif case == "ref-on-v1":
        model = tiny_v1
        sf.write(tmp_path / "r.wav", tone(100), 16000)
        args += ["--ref-wav", str(tmp_path / "r.wav")]
    elif case == "prompt-no-text":
        sf.write(tmp_path / "p.wav", tone(100), 16000)
        args += ["--prompt-wav", str(tmp_path / "p.wav")]
    elif case == "too-long":
        args[1] = "hello world " * 200
    elif case == "voice-too-long":  # 30 s of reference: more patches than the tiny model's context
        sf.write(tmp_path / "r.wav", tone(30 * 16000), 16000)
        args += ["--ref-wav", str(tmp_path / "r.wav")]
    elif case == "cuda":
        args[-1] = "cuda"
    else:  # bad sampling settings: refused before anything runs
        flag, value = {
            "cfg-nan": ("--cfg", "nan"),
            "cfg-inf": ("--cfg", "inf"),
            "cfg-big": ("--cfg", "11"),
            "seed-negative": ("--seed", "-1"),
            "seed-huge": ("--seed", str(2**63)),
            "timesteps-0": ("--timesteps", "0"),
            "max-len-0": ("--max-len", "0"),
        }[case]
        args += [flag, value]
    code, _, err = _run(["synth", "--model", str(model), *args], capsys)
    assert code != 0
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("voxdesk: ")
    assert re.search(pattern, err, re.IGNORECASE), err
    assert not (tmp_path / "x.wav").exists()


@pytest.mark.parametrize("setting", [{"cfg": float("nan")}, {"cfg": -0.5}, {"seed": -3}, {"timesteps": 0}])
def test_synthesizer_checks_settings_like_the_engine(tiny_v1, setting):
    from app.engine import SynthRequest
    from app.errors import VoxDeskError

    synth = Synthesizer.from_dir(tiny_v1, "cpu")
    with pytest.raises(VoxDeskError) as one:
        synth.synthesize("hello", max_len=2, **setting)
    names = {"cfg": "cfg_value", "seed": "seed", "timesteps": "inference_timesteps"}
    request = SynthRequest("hello", **{names[k]: v for k, v in setting.items()})
    with pytest.raises(VoxDeskError) as engine:
        request.check()
    assert str(one.value) == str(engine.value)


def test_subprocess_error_has_no_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", "info", "--model", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode != 0
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_synth_retries_bad_cases_unless_told_not_to(tiny_v2, tmp_path, capsys):
    """On a model that never stops every take runs to the cap: by default three takes are drawn
    (the official retry_badcase), with --no-retry the first is kept; --text-file through the
    engine gives the same."""
    from tiny import set_stop_head, write_tiny_checkpoint

    model = set_stop_head(write_tiny_checkpoint(tmp_path / "never"), "never")
    synth = Synthesizer.from_dir(model, "cpu")
    lines = tmp_path / "lines.txt"
    lines.write_text("Hi\n", encoding="utf-8")
    for flag, retry in (([], True), (["--no-retry"], False)):
        base = ["synth", "--model", str(model), "--seed", "2", "--device", "cpu", "--timesteps", "2", *flag]
        one, many = tmp_path / f"one{retry}.wav", tmp_path / f"many{retry}"
        assert _run([*base, "--text", "Hi", "--out", str(one)], capsys)[0] == 0
        assert _run([*base, "--text-file", str(lines), "--out", str(many)], capsys)[0] == 0
        want = synth.synthesize("Hi", seed=2, timesteps=2, retry_badcase=retry)
        assert want.takes == (3 if retry else 1)
        # the one-request loop to PCM rounding; the batched engine to its usual tolerance
        for path, tol in ((one, 1.0 / 2**15 + 1e-6), (many / "0001.wav", 1e-3)):
            assert np.abs(sf.read(path, dtype="float32")[0] - want.audio).max() <= tol


def test_synth_normalize_sends_the_normalized_text(tiny_v2, tmp_path, capsys):
    from app.text.normalize import normalize_for_speech

    out = tmp_path / "n.wav"
    args = ["synth", "--model", str(tiny_v2), "--text", "It costs $5.", "--seed", "4", "--device", "cpu"]
    assert _run([*args, "--normalize", "--out", str(out), "--min-len", "3", "--max-len", "3"], capsys)[0] == 0
    spoken = normalize_for_speech("It costs $5.")
    assert spoken == "It costs five dollars."
    want = Synthesizer.from_dir(tiny_v2, "cpu").synthesize(spoken, seed=4, min_len=3, max_len=3)
    assert np.abs(sf.read(out, dtype="float32")[0] - want.audio).max() <= 1.0 / 2**15 + 1e-6
