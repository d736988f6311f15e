"""The training data set: slicing on pauses, flags, transcripts by the (tiny) recognizer, resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from tiny_asr import WORDS, tone_words

from app.asr import load_recognizer
from app.train.clips import DataSet, transcript_confidence
from app.train.slicer import MAX_SECONDS, slice_on_silence

RATE = 16000


def _speech(n_words: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Tone 'words' the tiny recognizer hears, with a longer pause every 4 words."""
    rng = np.random.default_rng(seed)
    bands = [int(b) for b in rng.integers(0, 4, n_words)]  # hello world voice desk
    pieces = [tone_words(bands[i : i + 4]) for i in range(0, n_words, 4)]
    audio = np.concatenate([np.concatenate([p, np.zeros(int(0.5 * RATE), np.float32)]) for p in pieces])
    return audio, [WORDS[b].strip("▁") for b in bands]


@pytest.fixture(scope="module")
def rec(tiny_asr):
    return load_recognizer(tiny_asr, num_threads=1)


def test_slices_are_whole_and_within_bounds():
    audio, _ = _speech(40)
    cuts = slice_on_silence(audio, RATE)
    lengths = [(b - a) / RATE for a, b in cuts]
    assert len(cuts) >= 3 and max(lengths) <= MAX_SECONDS and min(lengths[:-1]) >= 3.0
    assert all(b0 <= a1 for (_, b0), (a1, _) in zip(cuts, cuts[1:], strict=False))  # in order, no overlap
    # A stretch with no pause at all is cut anyway.
    hum = 0.3 * np.sin(np.arange(40 * RATE) * 2 * np.pi * 200 / RATE).astype(np.float32)
    assert max(b - a for a, b in slice_on_silence(hum, RATE)) <= MAX_SECONDS * RATE


def test_prepare_transcribe_manifest_and_resume(tmp_path, rec):
    audio, words = _speech(48)
    src = tmp_path / "long.wav"
    sf.write(src, audio, RATE)
    ds = DataSet.create(tmp_path / "data")
    seen = []
    assert ds.add_sources([src], progress=lambda f, m: seen.append(f)) == []
    assert seen[-1] == 1.0 and len(ds.clips) >= 4
    assert all(c.problem is None for c in ds.clips[:-1])
    ds.transcribe(rec)
    heard = " ".join(c.text for c in ds.clips).split()
    assert heard == words  # every word, once, in order: no cut went through one
    assert all(c.confidence >= 0.5 for c in ds.clips if c.problem is None)

    again = DataSet.open(tmp_path / "data")  # what was saved
    assert again.clips == ds.clips
    assert again.add_sources([src]) == [] and again.clips == ds.clips  # a done source is skipped

    manifest = [
        json.loads(line) for line in ds.write_manifest(tmp_path / "train.jsonl").read_text().splitlines()
    ]
    assert [m["text"] for m in manifest] == [c.text for c in ds.training_clips()]
    assert all(sf.info(m["audio"]).samplerate == RATE for m in manifest)
    assert ds.speech_seconds() == pytest.approx(sum(c.seconds for c in ds.training_clips()), abs=0.01)


def test_bad_clips_are_flagged_and_excluded(tmp_path, rec):
    folder = tmp_path / "clips"
    folder.mkdir()
    good, _ = _speech(8)
    sf.write(folder / "a_good.wav", good, RATE)
    sf.write(folder / "b_short.wav", tone_words([0]), RATE)
    sf.write(folder / "c_clipped.wav", np.clip(good * 6, -1, 1), RATE)
    noise = 0.1 * np.random.default_rng(1).standard_normal(7 * RATE).astype(np.float32)
    sf.write(folder / "d_unsure.wav", np.concatenate([tone_words([1]), noise]), RATE)
    sf.write(folder / "e_silent.wav", np.zeros(5 * RATE, np.float32), RATE)
    (folder / "notes.txt").write_text("not audio")
    ds = DataSet.create(tmp_path / "data")
    problems = ds.add_sources([folder])
    assert len(problems) == 1 and "e_silent.wav" in problems[0]
    ds.transcribe(rec)
    by_source = {c.id.split("-")[1]: c for c in ds.clips}
    assert by_source["a_good"].problem is None and not by_source["a_good"].excluded
    assert by_source["b_short"].problem == "too short"
    assert by_source["c_clipped"].problem == "clipped"
    assert by_source["d_unsure"].problem == "unsure transcript" and by_source["d_unsure"].confidence < 0.5
    assert all(c.excluded for c in ds.clips if c.problem)
    assert [c.id for c in ds.training_clips()] == [by_source["a_good"].id]

    ds.update(by_source["d_unsure"].id, text="world and some noise", excluded=False)  # the user's word
    edited = DataSet.open(tmp_path / "data")._get(by_source["d_unsure"].id)
    assert (edited.text, edited.confidence, edited.problem, edited.excluded) == (
        "world and some noise",
        1.0,
        None,
        False,
    )


def test_cancel_keeps_what_was_done(tmp_path):
    sources = []
    for i in range(3):
        audio, _ = _speech(8, seed=i)
        sources.append(tmp_path / f"s{i}.wav")
        sf.write(sources[-1], audio, RATE)
    ds = DataSet.create(tmp_path / "data")
    calls = iter([False, True])
    ds.add_sources(sources, cancel=lambda: next(calls))
    assert {c.id[:3] for c in DataSet.open(tmp_path / "data").clips} == {"000"}
    ds.add_sources(sources)
    assert {c.id[:3] for c in DataSet.open(tmp_path / "data").clips} == {"000", "001", "002"}


def test_confidence_follows_speaking_rate():
    assert transcript_confidence("hello world voice desk", 2.0) == 1.0
    assert transcript_confidence("hello", 10.0) < 0.5
    assert transcript_confidence("你好世界今天天气很好", 2.0) == 1.0
    assert transcript_confidence("", 3.0) == 0.0
