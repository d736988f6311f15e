"""The back-check end to end: the real engine on a tiny checkpoint, heard by the real recognizer
(sherpa-onnx) on the tiny SenseVoice model that tests/tiny_asr.py builds.

The tiny TTS model has random weights, so what it says is noise that the tiny recognizer hears as
nothing: every take scores 1.0, which is exactly what drives the loop (flagged, drawn again up to
the limit, the best take kept — the earliest of equals — and scores written). Tone audio whose
words the tiny recognizer does hear (``tone_words``) covers the good path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from tiny_asr import expected_text, tone_words, write_tiny_sensevoice

from app.asr import load_recognizer
from app.backcheck.run import synth_checked
from app.backcheck.takes import CheckPolicy, take_seed
from app.backcheck.worker import CheckWorker
from app.cli import main
from app.engine import Engine, EngineConfig, SynthRequest
from app.models.voxcpm.generate import Synthesizer

TEXTS = ["hello world voice desk", "你好世界", "yes no yes"]


def _results(worker: CheckWorker, n: int) -> dict:
    return {r.key: r for r in (worker.results.get(timeout=60) for _ in range(n))}


def test_worker_hears_and_scores_with_the_real_recognizer(tiny_asr):
    worker = CheckWorker(load_recognizer(tiny_asr))
    words = tone_words([0, 1])  # "hello world"
    assert expected_text([0, 1]) == "hello world"
    worker.submit("right", words, 16000, "Hello, world!")
    worker.submit("wrong", words, 16000, "voice desk")
    worker.submit("design", np.repeat(words, 3), 48000, "(a calm voice)hello world")  # any rate
    worker.submit("silent", np.zeros(16000, np.float32), 16000, "hello")
    got = _results(worker, 4)
    assert got["right"].score.value == 0.0 and got["right"].score.heard == "hello world"
    assert got["wrong"].score.value == 1.0 and got["wrong"].score.metric == "wer"
    assert got["design"].score.value == 0.0  # the voice-design prefix is not part of the speech
    assert got["silent"].score.value == 1.0 and got["silent"].score.heard == ""  # nothing heard: bad
    assert worker.error == "" and worker.pending() == 0
    worker.close()


def _engine(model) -> Engine:
    return Engine(EngineConfig(model_dir=str(model), device="cpu", max_num_seqs=4))


def _requests(seed: int = 5) -> list[SynthRequest]:
    return [SynthRequest(t, seed=seed + i, min_len=20, max_len=20) for i, t in enumerate(TEXTS)]


def test_flagged_segments_are_redrawn_and_the_best_take_kept(tiny_v2, tiny_asr):
    worker = CheckWorker(load_recognizer(tiny_asr))
    policy = CheckPolicy(threshold=0.2, max_takes=3)
    out = {c.index: c for c in synth_checked(_engine(tiny_v2), _requests(), worker, policy)}
    assert sorted(out) == [0, 1, 2]
    synth = Synthesizer.from_dir(tiny_v2, "cpu")
    for i, checked in out.items():
        takes = checked.takes.takes
        assert [t.seed for t in takes] == [take_seed(5 + i, k) for k in range(1, len(takes) + 1)]
        assert [(t.score.value, t.score.heard) for t in takes] == [(1.0, "")] * 3  # flagged each time
        assert checked.score.metric == ("cer" if i == 1 else "wer")
        assert checked.seed == takes[0].seed  # the earliest of equally bad takes is kept
        want = synth.synthesize(TEXTS[i], seed=checked.seed, min_len=20, max_len=20).audio
        np.testing.assert_allclose(checked.audio, want, atol=1e-3)  # it is that seed's audio
    assert worker.error == "" and worker.pending() == 0
    worker.close()


def test_a_lenient_threshold_keeps_the_first_take(tiny_v2, tiny_asr):
    worker = CheckWorker(load_recognizer(tiny_asr))
    out = list(synth_checked(_engine(tiny_v2), _requests(), worker, CheckPolicy(threshold=10.0)))
    assert sorted(len(c.takes) for c in out) == [1, 1, 1]
    assert sorted(c.seed for c in out) == [5, 6, 7]


def test_a_recognizer_failing_mid_run_stops_checking_not_synthesis(tiny_v2, tmp_path):
    broken = write_tiny_sensevoice(tmp_path / "asr", language_ids={"ko": 99})  # Korean fails in onnxruntime
    worker = CheckWorker(load_recognizer(broken))
    texts = ["hello world", "안녕하세요 반갑습니다 오늘 날씨가 정말 좋네요", "yes no", "voice desk"]
    reqs = [SynthRequest(t, seed=i, min_len=120, max_len=120) for i, t in enumerate(texts)]
    out = {c.index: c for c in synth_checked(_engine(tiny_v2), reqs, worker, CheckPolicy())}
    assert sorted(out) == [0, 1, 2, 3]  # every text was still made
    assert worker.error.count("\n") == 0 and "back-check stopped" in worker.error
    assert out[1].error == worker.error and out[1].takes.takes[0].score is None


def test_synth_check_writes_scores_json(tiny_v2, tiny_asr, tmp_path, capsys):
    lines = tmp_path / "lines.txt"
    lines.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    folder = tmp_path / "out"
    args = ["synth", "--model", str(tiny_v2), "--text-file", str(lines), "--out", str(folder), "--seed", "4"]
    args += ["--min-len", "20", "--max-len", "20", "--device", "cpu", "--check", "--asr-model", str(tiny_asr)]
    code = main([*args, "--check-takes", "2"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads((folder / "scores.json").read_text(encoding="utf-8"))
    assert data["format"] == "voxdesk-scores" and data["max_takes"] == 2
    files = data["files"]
    assert sorted(files) == ["0001.wav", "0002.wav", "0003.wav"]
    synth = Synthesizer.from_dir(tiny_v2, "cpu")
    for name, text in zip(sorted(files), TEXTS, strict=True):
        rec = files[name]
        assert rec["text"] == text and rec["metric"] == ("cer" if text == "你好世界" else "wer")
        assert rec["takes"] == len(rec["take_scores"]) == len(rec["take_seeds"])
        assert rec["take_seeds"][0] == 4 and rec["seed"] in rec["take_seeds"]
        assert rec["score"] == min(rec["take_scores"])
        assert rec["flagged"] == (rec["score"] > 0.2)
        assert rec["takes"] == (2 if rec["take_scores"][0] > 0.2 else 1)
        audio, rate = sf.read(folder / name, dtype="float32")
        want = synth.synthesize(text, seed=rec["seed"], min_len=20, max_len=20).audio
        assert np.abs(audio - want).max() <= 1e-3  # the kept take was written (engine vs one-by-one)
    assert "scores.json" in stdout and stdout.count("take") >= 3

    # a second run into the same folder keeps the other files' records
    extra = folder / "extra.wav"
    code = main(["synth", "--model", str(tiny_v2), "--text", "yes", "--out", str(extra), "--check",
                 "--asr-model", str(tiny_asr), "--max-len", "6", "--check-takes", "1"])  # fmt: skip
    assert code == 0
    files = json.loads((folder / "scores.json").read_text(encoding="utf-8"))["files"]
    assert sorted(files) == ["0001.wav", "0002.wav", "0003.wav", "extra.wav"]


@pytest.mark.parametrize("case", ["missing", "damaged", "threshold", "takes"])
def test_synth_check_errors_are_one_line(tiny_v2, tmp_path, capsys, case):
    asr = tmp_path / "asr"
    extra = []
    if case == "damaged":
        write_tiny_sensevoice(asr)
        (asr / "model.int8.onnx").write_bytes(b"not a model")
    if case == "threshold":
        extra = ["--check-threshold", "-1"]
    if case == "takes":
        extra = ["--check-takes", "0"]
    out = tmp_path / "x.wav"
    code = main(["synth", "--model", str(tiny_v2), "--text", "hi", "--out", str(out), "--check",
                 "--asr-model", str(asr), *extra])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and err.startswith("voxdesk: ") and "internal" not in err, err
    assert not out.exists()


def test_worker_loads_the_recognizer_on_its_thread(tiny_asr, tmp_path):
    worker = CheckWorker(lambda: load_recognizer(tiny_asr))
    worker.submit("a", tone_words([2, 3]), 16000, "Voice desk.")
    assert worker.results.get(timeout=60).score.value == 0.0
    missing = CheckWorker(lambda: load_recognizer(tmp_path / "nowhere"))
    missing.submit("b", tone_words([2]), 16000, "voice")
    result = missing.results.get(timeout=60)
    assert result.score is None and result.error == missing.error
    assert missing.error.startswith("The back-check stopped (There is no speech recognizer at")
    assert missing.error.count("\n") == 0
