"""A model folder's files read back as untrusted input: config.json values bounded before anything
is allocated (one line naming the field), tokenizer.json checked by ``voxdesk info``, and an
argument that is not UTF-8 is a plain message, not an internal error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from app.errors import VoxDeskError
from app.models.voxcpm.config import load_config


def _edit(model: Path, dst: Path, path: tuple[str, ...], value) -> Path:
    shutil.copytree(model, dst)
    data = json.loads((dst / "config.json").read_text())
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (dst / "config.json").write_text(json.dumps(data))
    return dst


NONSENSE = [
    (("lm_config", "max_position_embeddings"), 1e9),
    (("lm_config", "num_hidden_layers"), 100_000),
    (("lm_config", "hidden_size"), -64),
    (("lm_config", "num_attention_heads"), 0),
    (("lm_config", "num_key_value_heads"), 0),
    (("lm_config", "intermediate_size"), "128"),
    (("lm_config", "vocab_size"), 1e12),
    (("lm_config", "rms_norm_eps"), float("nan")),
    (("lm_config", "rope_theta"), -1),
    (("lm_config", "kv_channels"), 10**9),
    (("lm_config", "rope_scaling", "original_max_position_embeddings"), 0),
    (("lm_config", "rope_scaling", "long_factor"), "x"),
    (("encoder_config", "num_layers"), 10**6),
    (("dit_config", "hidden_dim"), True),
    (("patch_size",), 0),
    (("max_length",), 10**12),
    (("residual_lm_num_layers",), 1e5),
    (("audio_vae_config", "sample_rate"), 1e12),
    (("audio_vae_config", "encoder_rates"), [2, 10**6]),
    (("audio_vae_config",), []),
    (("lm_config",), [1, 2]),
    (("dit_config", "cfm_config"), "fast"),
]


def _id(x):
    return ".".join(x) if isinstance(x, tuple) else None


@pytest.mark.parametrize(("path", "value"), NONSENSE, ids=_id)
def test_nonsense_config_values_name_the_field_before_any_allocation(tiny_v2, tmp_path, capsys, path, value):
    model = _edit(tiny_v2, tmp_path / "m", path, value)
    started = time.perf_counter()
    with pytest.raises(VoxDeskError) as err:
        load_config(model)
    assert time.perf_counter() - started < 1.0
    message = str(err.value)
    assert "\n" not in message and message.startswith("config.json")
    assert path[-1] in message or path[0] in message, message
    code = main(["info", "--model", str(model)])
    _, stderr = capsys.readouterr()
    assert code == 1 and "internal error" not in stderr and stderr.count("\n") == 1, stderr


def test_the_official_sizes_are_inside_the_bounds(tiny_v2, tmp_path):
    model = tiny_v2
    for path, value in [
        (("lm_config", "max_position_embeddings"), 32768),
        (("lm_config", "num_hidden_layers"), 28),
        (("lm_config", "vocab_size"), 73448),
        (("audio_vae_config", "encoder_rates"), [2, 5, 8, 8]),
    ]:
        model = _edit(model, tmp_path / f"m{len(list(tmp_path.iterdir()))}", path, value)
    cfg = load_config(model)
    assert cfg.lm.max_position_embeddings == 32768 and cfg.lm.num_hidden_layers == 28


@pytest.mark.parametrize("damage", ["missing", "garbage", "list", "nested", "wrong-vocab"])
def test_info_checks_the_tokenizer(tiny_v2, tmp_path, capsys, damage):
    model = tmp_path / "m"
    shutil.copytree(tiny_v2, model)
    tokenizer = model / "tokenizer.json"
    if damage == "missing":
        tokenizer.unlink()
    elif damage == "garbage":
        tokenizer.write_bytes(b"\x00\xffnot json")
    elif damage == "list":
        tokenizer.write_text("[]")
    elif damage == "nested":
        tokenizer.write_text("[" * 50_000 + "]" * 50_000)
    else:
        data = json.loads(tokenizer.read_text())
        data["model"]["vocab"] = {**data["model"]["vocab"], "zzz": 10**6}
        tokenizer.write_text(json.dumps(data))
    code = main(["info", "--model", str(model)])
    out, err = capsys.readouterr()
    assert code == 1 and "tokenizer.json" in err and err.count("\n") == 1, err
    assert "internal error" not in err


def test_info_reports_the_tokenizer_when_it_is_fine(tiny_v2, capsys):
    assert main(["info", "--model", str(tiny_v2)]) == 0
    assert "tokenizer: " in capsys.readouterr().out


def test_a_non_utf8_argument_is_a_plain_message(tiny_v2, tmp_path):
    bad = b"caf\xe9 au lait"
    voxdesk = [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())"]
    args = ["synth", "--model", str(tiny_v2), "--text", bad, "--out", str(tmp_path / "a.wav")]
    result = subprocess.run([*voxdesk, *args], capture_output=True, timeout=120)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, err
    assert "not valid UTF-8" in err and "caf\\xe9" in err and "internal error" not in err
    assert err.count("\n") == 1 and not (tmp_path / "a.wav").exists()
