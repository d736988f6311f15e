"""The committed CosyVoice goldens are complete and consistent (the parity tests build on them)."""

import json
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
