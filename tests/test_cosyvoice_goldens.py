"""The committed CosyVoice goldens are complete and consistent (the parity tests build on them)."""

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile

DATA = Path(__file__).parent / "data" / "cosyvoice"
MODES = ("zero_shot", "cross_lingual", "instruct2", "speed", "stream")


@pytest.mark.parametrize("family", ["cosyvoice2", "cosyvoice3"])
def test_every_mode_has_consistent_goldens(family: str) -> None:
    index = json.loads((DATA / f"{family}.json").read_text(encoding="utf-8"))
    assert index["family"] == family and index["sample_rate"] == 24000
    assert set(index["modes"]) == set(MODES)
    for mode, entry in index["modes"].items():
        data = np.load(DATA / f"{family}_{mode}.npz")
        assert data["tokens"].tolist() == entry["tokens"] and len(entry["tokens"]) > 0
        audio = data["audio"]
        assert audio.dtype == np.float32 and audio.size == entry["samples"] == data["chunk_lengths"].sum()
        assert np.isfinite(audio).all()
        assert (np.abs(audio) >= 0.99).mean() < 0.01  # hardly clipped: a parity test sees the samples
        assert "input_text" in data.files and "input_flow_embedding" in data.files
    stream = index["modes"]["stream"]
    assert len(stream["chunks"]) >= 2 and stream["stream"] is True
    speed, plain = index["modes"]["speed"], index["modes"]["zero_shot"]
    assert speed["tokens"] == plain["tokens"] and speed["samples"] < plain["samples"]


def test_the_prompt_is_one_second_of_16k() -> None:
    audio, rate = soundfile.read(DATA / "prompt.wav", dtype="float32")
    assert rate == 16000 and audio.shape == (16000,) and np.abs(audio).max() > 0.05


def _goldens_tool():
    """tools/cosyvoice_goldens.py (runs in the official venv; its comparison needs only numpy)."""
    path = Path(__file__).parents[1] / "tools" / "cosyvoice_goldens.py"
    spec = importlib.util.spec_from_file_location("cosyvoice_goldens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_crosscheck_comparison_sees_a_token_and_a_mel_that_moved(tmp_path: Path) -> None:
    tool = _goldens_tool()
    same = tool.compare_goldens(DATA, DATA)
    assert set(same) == {f"{f}/{m}" for f in ("cosyvoice2", "cosyvoice3") for m in MODES}
    assert all(f["tokens_equal"] and f["rng_equal"] and f["mel"] == f["audio"] == f["input"] == 0
               for f in same.values())  # fmt: skip
    shutil.copy(DATA / "cosyvoice3.json", tmp_path)
    shutil.copy(DATA / "cosyvoice3_zero_shot_rng.npz", tmp_path)
    arrays = dict(np.load(DATA / "cosyvoice3_zero_shot.npz"))
    arrays["tokens"][-1] += 1
    arrays["mel_0"][0, 3, 5] += 2e-4
    np.savez(tmp_path / "cosyvoice3_zero_shot.npz", **arrays)
    moved = tool.compare_goldens(tmp_path, DATA, ["zero_shot"])
    assert list(moved) == ["cosyvoice3/zero_shot"]
    f = moved["cosyvoice3/zero_shot"]
    assert not f["tokens_equal"] and f["rng_equal"] and f["audio"] == 0
    assert f["mel"] == pytest.approx(2e-4, rel=1e-3)
