"""Emotion in dubbed subtitles (issue 19): a cue's ``[Voice|emotion]`` tag is read like a script
line's, written back into the spoken SRT, and reaches the engine's request through ``dub``'s
``emotion_for`` (the real tiny IndexTTS-2.5 engine, takes of at most 40 mel tokens: the emotion
changes the take)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tiny_indextts import tiny_ix  # noqa: F401

from app.engine import Engine, EngineConfig
from app.engine.host import EngineHost
from app.engine.voice import VoicePrompt
from app.errors import VoxDeskError
from app.longform.dub import CueResult, DubSettings, dub
from app.longform.dub_files import report_data, to_spoken_srt
from app.longform.subtitles import load_subtitles
from app.models.indextts.beam import BeamParams
from app.models.indextts.models import IndexModels
from app.models.indextts.pipeline import parts_from
from app.voices.emotion import EmotionSpec, parse_emotion, to_control

SRT = """1
00:00:01,000 --> 00:00:04,000
[Anna|angry] Leave me alone.

2
00:00:05,000 --> 00:00:08,000
<i>[|happy 0.5, surprised 0.3]</i> What a surprise!

3
00:00:09,000 --> 00:00:12,000
[Ben|furious] Who is there?

4
00:00:13,000 --> 00:00:16,000
[Ben] Nobody.
"""


def test_cue_tags_carry_their_emotion_and_are_written_back(tmp_path: Path) -> None:
    path = tmp_path / "a.srt"
    path.write_text(SRT, encoding="utf-8")
    cues = load_subtitles(path)
    assert [(c.voice, c.text) for c in cues] == [
        ("Anna", "Leave me alone."),
        (None, "What a surprise!"),
        ("Ben", "Who is there?"),  # an emotion that cannot be read: none, as in a script
        ("Ben", "Nobody."),
    ]
    assert [c.emotion for c in cues] == [
        parse_emotion("angry"),
        parse_emotion("happy 0.5, surprised 0.3"),
        EmotionSpec(),
        EmotionSpec(),
    ]
    results = [CueResult(c) for c in cues]
    spoken = to_spoken_srt(results)
    assert "[Anna|angry 0.8] Leave me alone." in spoken and "[|happy 0.5, surprised 0.3] What" in spoken
    again = tmp_path / "spoken.srt"
    again.write_text(spoken, encoding="utf-8")
    assert [(c.voice, c.emotion, c.text) for c in load_subtitles(again)] == [
        (c.voice, c.emotion, c.text) for c in cues
    ]
    report = report_data(results, 16000, 20.0)["cues"]
    assert report[0]["emotion"] == {
        "kind": "vector",
        "vector": list(parse_emotion("angry").vector),
        "weight": 1.0,
    }
    assert "emotion" not in report[3]


@pytest.fixture(scope="module")
def host(tiny_ix: Path):  # noqa: F811
    config = EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", max_num_seqs=3,
                          max_model_len=256)  # fmt: skip
    engine = Engine(config, model=parts_from(IndexModels.load(tiny_ix), BeamParams(max_mel_tokens=40)))
    shared = EngineHost(engine).start()
    yield shared, engine.sample_rate
    shared.close()


def _speaker() -> VoicePrompt:
    rate = 16000
    t = np.arange(rate * 2) / rate
    samples = (0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t))).astype(np.float32)
    return VoicePrompt(reference_audio=samples, sample_rate=rate)


def test_a_cue_emotion_reaches_the_engine(host, tmp_path: Path) -> None:
    backend, rate = host
    path = tmp_path / "b.srt"
    path.write_text(
        "1\n00:00:01,000 --> 00:00:30,000\nHi.\n\n"
        "2\n00:00:31,000 --> 00:01:00,000\n[|angry 0.9] Hi.\n\n"
        "3\n00:01:01,000 --> 00:01:30,000\n[|@Nobody] Hi.\n",
        encoding="utf-8",
    )
    cues = load_subtitles(path)
    speaker = _speaker()
    asked: list[EmotionSpec] = []

    def emotion_for(spec: EmotionSpec):
        asked.append(spec)
        if spec.kind == "clip":
            raise VoxDeskError(f"No voice is named “{spec.voice}”.")
        return to_control(spec, library=None)  # (a vector needs no library)

    settings = DubSettings(seed=5, takes=1)
    results = dub(backend, cues, lambda _v: speaker, rate, settings, emotion_for=emotion_for)
    assert [r.status for r in results[:2]] == ["fit", "fit"], [r.message for r in results]
    assert results[2].status == "failed" and results[2].message == "No voice is named “Nobody”."
    assert asked == [parse_emotion("angry 0.9"), parse_emotion("@Nobody")]  # each emotion once
    plain, angry = (r.audio for r in results[:2])
    assert len(plain) and len(angry)
    assert len(plain) != len(angry) or not np.allclose(plain, angry)  # same text and seed: the emotion
    # without emotion_for (a model without emotions) the tag is not sent
    (again,) = dub(backend, cues[1:2], lambda _v: speaker, rate, settings)
    np.testing.assert_array_equal(again.audio, plain)
    json.dumps(report_data(results, rate, 100.0))  # the report stays JSON


def test_voxdesk_dub_speaks_the_cue_emotions_with_an_indextts_folder(tiny_ix, tmp_path, capsys) -> None:  # noqa: F811
    """``voxdesk dub --model DIR`` end to end: the folder's family is detected and loaded, the cue
    voices and ``@Bob`` come from the library, each emotion changes its take (the same text and
    seed), an unknown ``@Nobody`` fails its cue only; no notice (the model takes emotions)."""
    from app.audio.io import read_audio
    from app.cli import main
    from app.voices.library import VoiceLibrary

    voices = tmp_path / "voices"
    library = VoiceLibrary(voices)
    library.create_from_samples(_speaker().reference_audio, 16000, "Anna")
    library.create_from_samples(_speaker().reference_audio[::-1].copy(), 16000, "Bob")
    path = tmp_path / "c.srt"
    path.write_text(
        "1\n00:00:01,000 --> 00:00:30,000\nHi.\n\n"
        "2\n00:00:31,000 --> 00:01:00,000\n[|angry 0.9] Hi.\n\n"
        "3\n00:01:01,000 --> 00:01:30,000\n[|@Bob] Hi.\n\n"
        "4\n00:01:31,000 --> 00:02:00,000\n[|@Nobody] Hi.\n",
        encoding="utf-8",
    )
    out = tmp_path / "dub"
    assert main(["dub", str(path), "--model", str(tiny_ix), "--voice", "Anna", "--voices", str(voices),
                 "--out", str(out), "--device", "cpu", "--seed", "5", "--takes", "1"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "cue 4: No voice is named “Nobody”" in err and "does not take" not in err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))["cues"]
    assert [c["status"] for c in report] == ["fit", "fit", "fit", "failed"]
    plain, angry, bobs = (read_audio(out / "cues" / f"cue_000{n}.wav")[0] for n in (1, 2, 3))
    for felt in (angry, bobs):
        assert len(felt) and (len(felt) != len(plain) or not np.allclose(felt, plain))
