"""Subtitle dubbing: SRT/WebVTT import, takes fitted to their slots by the real engine on the tiny
checkpoint (through the shared EngineHost, as the window and the server drive it), the timeline
track and the overrun report, and ``voxdesk dub`` end to end.

The tiny model makes 48 samples (1 ms at 48 kHz) per patch; with ``min_len == max_len`` every
take has a known length (10 patches: 10 ms), so which cues fit, which are sped up and which
still overrun is known in advance. (Short takes keep the tests fast on a loaded CPU.)
"""

from __future__ import annotations

import json
import threading

import httpx
import numpy as np
import pytest
import soundfile as sf
import srt
from server_fixtures import api_model, live  # noqa: F401

from app.cli import main
from app.engine import Engine, EngineConfig
from app.engine.host import EngineHost
from app.longform.dub import DubSettings, dub, fit
from app.longform.dub_files import export_dub, summary
from app.longform.subtitles import Cue, SubtitleError, load_subtitles

TAKE_S = 0.010  # 10 patches of 1 ms
PATCHES = ["--min-len", "10", "--max-len", "10"]
OVERRUN = {12: 0.006, 31: 0.006}  # cue number -> slot: even at 1.25x (8 ms) these overrun by 2 ms
SPED_UP = {5: 0.009, 20: 0.009, 44: 0.009}  # fit once sped up (1.11x)


def _srt_time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"00:{ms // 60000:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def fifty_cues() -> str:
    """50 cues 0.2 s apart; most have 50 ms for a 10 ms take, a few less (see above)."""
    blocks = []
    for n in range(1, 51):
        start = 0.1 + (n - 1) * 0.2
        slot = OVERRUN.get(n, SPED_UP.get(n, 0.05))
        blocks.append(f"{n}\n{_srt_time(start)} --> {_srt_time(start + slot)}\nCue number {n} says hello.\n")
    return "\n".join(blocks)


@pytest.fixture(scope="module")
def host(tiny_v2):
    engine = Engine(EngineConfig(model_dir=str(tiny_v2), device="cpu", max_num_seqs=64))
    shared = EngineHost(engine).start()
    yield shared
    shared.close()


def _settings(**kw) -> DubSettings:
    return DubSettings(**{"seed": 3, "min_len": 10, "max_len": 10, **kw})


# ---- import ------------------------------------------------------------------------------------
def test_srt_cues_join_lines_drop_markup_and_take_the_voice_tag(tmp_path):
    path = tmp_path / "a.srt"
    path.write_text(
        '1\n00:00:01,000 --> 00:00:02,500\n<i>Hello</i> <font color="red">there</font>,\n'
        "my friend &amp; you\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\n{\\an8}[Alice] Up here,\nlook.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n[Music]\n\n"
        "4\n00:00:06,000 --> 00:00:07,000\nIf a < b then b > a.\n",
        encoding="utf-8-sig",
    )
    cues = load_subtitles(path)
    assert [(c.number, c.start, c.end, c.voice, c.text) for c in cues] == [
        (1, 1.0, 2.5, None, "Hello there, my friend & you"),
        (2, 3.0, 4.0, "Alice", "Up here, look."),
        (3, 5.0, 6.0, "Music", ""),  # nothing to say: kept, as a silent cue
        (4, 6.0, 7.0, None, "If a < b then b > a."),
    ]
    assert [c.speakable for c in cues] == [True, True, False, True]


def test_webvtt_import(tmp_path):
    path = tmp_path / "a.vtt"
    path.write_text(
        "WEBVTT - a film\n\nNOTE not a cue\n\nintro\n00:00:01.250 --> 00:00:02.000 align:start\n"
        "<v Bob>Hi <c.loud>there</c></v>\nfriend\n\n"
        "00:01:02.300 --> 00:01:03.000\n[Alice] <b>Bye</b> &lt;3\n",
        encoding="utf-8",
    )
    cues = load_subtitles(path)
    assert [(c.start, c.end, c.voice, c.text) for c in cues] == [
        (1.25, 2.0, "Bob", "Hi there friend"),
        (62.3, 63.0, "Alice", "Bye <3"),
    ]


@pytest.mark.parametrize(
    "name, content, pattern",
    [
        ("a.srt", "this is not a subtitle file\n", "not a readable SRT file"),
        ("a.vtt", "1\n00:00:01.000 --> 00:00:02.000\nno header\n", "not a readable WebVTT file"),
        ("a.srt", "", "holds no subtitles"),
        ("a.srt", "1\n00:00:01,000 --> 00:00:01,000\nzero\n", "cue 1 has no length"),
        ("a.srt", "1\n00:00:02,000 --> 00:00:01,000\nbackwards\n", "cue 1 has no length"),
        (
            "a.srt",
            "1\n00:00:01,000 --> 00:00:03,000\na\n\n2\n00:00:02,500 --> 00:00:04,000\nb\n",
            "cue 2 starts 0.50 s before cue 1 ends",
        ),
        (
            "a.vtt",
            "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nok\n\n00:00:03.000 --> xx\nlost\n",
            "1 of its 2 cues",
        ),
        ("a.srt", b"1\n00:00:01,000 --> 00:00:02,000\n\xff\xfe\xfa caf\xe9\n", "not UTF-8 text"),
        ("missing.srt", None, "not found"),
    ],
)
def test_bad_subtitle_files_are_one_plain_line(tmp_path, name, content, pattern):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(SubtitleError, match=pattern) as err:
        load_subtitles(path)
    assert "\n" not in str(err.value)
    if content is not None:
        assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())  # untouched


def test_huge_and_crowded_files_are_refused(tmp_path, monkeypatch):
    from app.longform import subtitles

    big = tmp_path / "big.srt"
    big.write_bytes(b" " * 2000)
    monkeypatch.setattr(subtitles, "MAX_BYTES", 1000)
    with pytest.raises(SubtitleError, match="too large for a subtitle file"):
        load_subtitles(big)
    monkeypatch.undo()
    monkeypatch.setattr(subtitles, "MAX_CUES", 10)
    many = tmp_path / "many.srt"
    many.write_text(fifty_cues(), encoding="utf-8")
    with pytest.raises(SubtitleError, match="holds 50 cues, more than the 10"):
        load_subtitles(many)


# ---- fitting -----------------------------------------------------------------------------------
def test_fit_speeds_up_within_the_bound_and_measures_what_is_left():
    rate = 16000
    audio = (0.3 * np.sin(np.arange(16000) * 2 * np.pi * 220 / rate)).astype(np.float32)  # 1 s
    out, used, over = fit(audio, rate, 0.9, 0.25)
    assert used == pytest.approx(1 / 0.9) and len(out) == 14400 and over == 0.0
    out, used, over = fit(audio, rate, 0.5, 0.25)
    assert used == 1.25 and len(out) == 12800 and over == pytest.approx(0.3)
    out, used, over = fit(audio, rate, 2.0, 0.25)
    assert used == 1.0 and out is audio and over == 0.0  # short: left as it is, at the cue's start
    out, used, over = fit(audio, rate, 2.0, 0.25, stretch_short=True)
    assert used == 0.75 and len(out) == pytest.approx(16000 / 0.75, abs=1) and over == 0.0


def test_settings_are_bounded():
    from app.errors import VoxDeskError

    with pytest.raises(VoxDeskError, match="rate change must be between 0 and 0.5"):
        DubSettings(max_rate_change=0.9)
    with pytest.raises(VoxDeskError, match="Takes per cue"):
        DubSettings(takes=0)


# ---- the dub -----------------------------------------------------------------------------------
def test_fifty_cues_dubbed_to_the_timeline_with_the_overrun_report(host, tmp_path):
    path = tmp_path / "film.srt"
    path.write_text(fifty_cues(), encoding="utf-8")
    cues = load_subtitles(path)
    seen: list = []
    results = dub(host, cues, lambda voice: None, 48000, _settings(), progress=seen.append)
    assert seen[-1].done == seen[-1].total == 50
    assert any(p.eta is not None for p in seen)
    by_number = {r.cue.number: r for r in results}
    assert sorted(n for n, r in by_number.items() if r.status == "overrun") == sorted(OVERRUN)
    for n, r in by_number.items():
        if n in OVERRUN:
            assert r.takes == [TAKE_S] * 3 and r.rate == 1.25  # every take drawn, then the bound
            assert r.overrun == pytest.approx(TAKE_S / 1.25 - 0.006, abs=1e-4)
        elif n in SPED_UP:
            assert r.status == "fit" and r.takes == [TAKE_S] * 3
            assert r.rate == pytest.approx(TAKE_S / SPED_UP[n]) and r.spoken == pytest.approx(SPED_UP[n])
        else:
            assert r.status == "fit" and r.takes == [TAKE_S] and r.rate == 1.0 and r.spoken == TAKE_S
    assert summary(results) == "48 of 50 cues fit; 2 overrun: #12 by 2 ms, #31 by 2 ms"

    files = export_dub(tmp_path / "out", results, 48000, duration=12.0)
    track, rate = sf.read(files.track, dtype="float32")
    assert rate == 48000 and len(track) == 12 * 48000  # the video's length
    covered = np.zeros(len(track), bool)
    for r, cue_file in zip(results, files.cues, strict=True):
        audio, _ = sf.read(cue_file, dtype="float32")
        start = round(r.cue.start * 48000)
        assert len(audio) == round(r.spoken * 48000)
        np.testing.assert_allclose(track[start : start + len(audio)], audio, atol=2 / 32768)  # at its start
        covered[start : start + len(audio)] = True
    assert not track[~covered].any()  # silence between the cues and after the last
    report = json.loads(files.report_json.read_text(encoding="utf-8"))
    assert [o["number"] for o in report["overruns"]] == [12, 31]
    assert report["overruns"][0]["overrun"] == pytest.approx(0.002, abs=1e-4)
    assert "#12 by" in files.report_txt.read_text(encoding="utf-8")
    spoken = list(srt.parse(files.srt.read_text(encoding="utf-8")))
    assert len(spoken) == 50
    for sub, r in zip(spoken, results, strict=True):
        assert sub.start.total_seconds() == pytest.approx(r.cue.start, abs=1e-3)
        assert sub.end.total_seconds() == pytest.approx(r.cue.start + r.spoken, abs=1e-3)


def test_the_same_seed_gives_the_same_dub(host):
    cues = [Cue(1, 0.0, 1.0, "hello there friend"), Cue(2, 1.0, 1.005, "second cue speaks")]
    first = dub(host, cues, lambda v: None, 48000, _settings())
    again = dub(host, cues, lambda v: None, 48000, _settings())
    for a, b in zip(first, again, strict=True):
        assert a.seed == b.seed and a.takes == b.takes
        np.testing.assert_array_equal(a.audio, b.audio)
    assert first[1].takes == [TAKE_S] * 3 and len({first[0].seed, first[1].seed}) == 1  # --seed: same first


def test_an_unknown_voice_fails_its_cues_only(host):
    from app.errors import VoxDeskError

    def prompt_for(voice):
        if voice is not None:
            raise VoxDeskError(f"There is no voice named {voice!r}.")
        return None

    cues = [Cue(1, 0.0, 1.0, "hello there", "Nobody"), Cue(2, 1.0, 2.0, "hello again"), Cue(3, 2.0, 3.0, "♪")]
    results = dub(host, cues, prompt_for, 48000, _settings())
    assert [r.status for r in results] == ["failed", "fit", "silent"]
    assert results[0].message == "There is no voice named 'Nobody'."
    assert summary(results) == "1 of 1 cues fit (1 silent, 1 failed)"


def test_stop_keeps_what_is_decided_and_cancels_the_rest(host):
    from app.errors import VoxDeskError

    def prompt_for(voice):
        if voice is not None:
            raise VoxDeskError("no such voice")

    cues = [Cue(1, 0.0, 1.0, "♪"), Cue(2, 1.0, 2.0, "hi", "Nobody")]
    cues += [Cue(n, n, n + 0.5, f"cue {n} is spoken here") for n in range(3, 21)]
    cancel = threading.Event()
    decided = []

    def on_result(index, result):
        decided.append(index)
        cancel.set()  # Stop, pressed once the first cue is decided

    results = dub(host, cues, prompt_for, 48000, _settings(), cancel=cancel, on_result=on_result)
    assert [r.status for r in results] == ["silent", "failed"] + ["cancelled"] * 18
    assert sorted(decided) == list(range(20))  # every cue reported, the cancelled ones too
    assert all(r.audio is None for r in results)
    for _ in range(200):  # the engine drops the cancelled requests at its next steps
        if not host.busy():
            break
        threading.Event().wait(0.05)
    assert not host.busy()


def test_the_back_check_hears_each_cue(host, tiny_asr):
    from app.asr import load_recognizer
    from app.backcheck.takes import CheckPolicy
    from app.backcheck.worker import CheckWorker

    worker = CheckWorker(load_recognizer(tiny_asr))
    cues = [Cue(1, 0.0, 1.0, "hello world"), Cue(2, 1.0, 2.0, "yes no yes")]
    policy = CheckPolicy(threshold=0.2, max_takes=2)
    results = dub(host, cues, lambda v: None, 48000, _settings(takes=2), checker=worker, policy=policy)
    worker.close()
    for r in results:  # the tiny model says nothing the tiny recognizer hears: flagged, drawn again
        assert r.status == "fit" and r.score is not None and r.score.value == 1.0 and r.flagged
        assert r.takes == [TAKE_S, TAKE_S]


# ---- the command line --------------------------------------------------------------------------
def _three_cues(path):
    """Cue 2 overruns by 2 ms even at 1.25x; 1 and 3 fit as they are."""
    blocks = [
        (1, "00:00:00,500", "00:00:00,550"),
        (2, "00:00:01,000", "00:00:01,006"),
        (3, "00:00:02,000", "00:00:02,040"),
    ]
    path.write_text(
        "\n".join(f"{n}\n{a} --> {b}\nLine {n} is spoken.\n" for n, a, b in blocks), encoding="utf-8"
    )
    return path


def test_voxdesk_dub_end_to_end(tiny_v2, tmp_path, capsys):
    subs = _three_cues(tmp_path / "film.srt")
    out = tmp_path / "dub"
    args = ["dub", str(subs), "--model", str(tiny_v2), "--out", str(out), "--seed", "3", "--device", "cpu"]
    args += ["--voices", str(tmp_path / "voices"), "--duration", "3.5"]
    assert main(args + PATCHES) == 0
    printed = capsys.readouterr()
    assert "2 of 3 cues fit; 1 overrun: #2 by 2 ms" in printed.out
    assert "1 cues overrun their slot" in printed.out
    assert "3 of 3 cues" in printed.err  # the progress bar
    assert "emotion" not in printed.err  # no cue carries one: no notice
    assert sorted(p.name for p in out.iterdir()) == [
        "cues",
        "report.json",
        "report.txt",
        "spoken.srt",
        "track.wav",
    ]
    assert sorted(p.name for p in (out / "cues").iterdir()) == [
        "cue_0001.wav",
        "cue_0002.wav",
        "cue_0003.wav",
    ]
    assert sf.info(out / "track.wav").frames == round(3.5 * 48000)  # --duration: the video's length
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [(c["number"], c["status"]) for c in report["cues"]] == [(1, "fit"), (2, "overrun"), (3, "fit")]
    assert main(args + PATCHES) == 1  # a second run does not replace the first unasked
    assert "already holds a dub" in capsys.readouterr().err
    assert main(args + PATCHES + ["--overwrite"]) == 0


def test_voxdesk_dub_through_a_speech_server(live, tmp_path, capsys):  # noqa: F811
    subs = _three_cues(tmp_path / "film.srt")
    out = tmp_path / "dub"
    args = ["dub", str(subs), "--server", live.url, "--out", str(out), "--seed", "3", *PATCHES]
    assert main(args + ["--voices", str(tmp_path / "voices")]) == 0
    assert "2 of 3 cues fit; 1 overrun: #2 by 2 ms" in capsys.readouterr().out
    assert sf.info(out / "track.wav").frames == round(2.04 * 48000)
    live.wait_idle()


@pytest.mark.parametrize(
    "extra, content, pattern",
    [
        ([], "1\n00:00:01,000 --> 00:00:00,500\nx\n", "cue 1 has no length"),
        (["--server", "http://127.0.0.1:9"], None, "Give --model DIR"),
        (["--voice", "Nobody"], None, "no voice named 'Nobody'"),
        ([], "1\n00:00:01,000 --> 00:00:02,000\n[Nobody] hi\n", "no voice named 'Nobody'"),
        (["--max-rate-change", "0.9"], None, "rate change must be between 0 and 0.5"),
        (["--duration", "1"], None, "shorter than the subtitles"),
    ],
)
def test_voxdesk_dub_bad_input_is_one_line(tiny_v2, tmp_path, capsys, extra, content, pattern):
    subs = tmp_path / "s.srt"
    subs.write_text(content or "1\n00:00:01,000 --> 00:00:02,000\nhello\n", encoding="utf-8")
    args = ["dub", str(subs), "--model", str(tiny_v2), "--out", str(tmp_path / "o"), "--device", "cpu"]
    rc = main(args + ["--voices", str(tmp_path / "voices")] + extra)
    err = capsys.readouterr().err
    assert rc == 1 and pattern in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()  # refused before anything is made


def _tagged_cues(path):
    """Two of three cues carry an emotion (one names a voice the library lacks)."""
    path.write_text(
        "1\n00:00:00,500 --> 00:00:00,550\n[|angry] Line 1 is spoken.\n\n"
        "2\n00:00:01,000 --> 00:00:01,050\nLine 2 is spoken.\n\n"
        "3\n00:00:02,000 --> 00:00:02,040\n[|@Nobody] Line 3 is spoken.\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("where", ["model", "server"])
def test_voxdesk_dub_says_once_what_a_model_without_emotions_ignores(where, tiny_v2, live, tmp_path, capsys):  # noqa: F811
    subs = _tagged_cues(tmp_path / "film.srt")
    source = ["--model", str(tiny_v2), "--device", "cpu"] if where == "model" else ["--server", live.url]
    args = ["dub", str(subs), *source, "--out", str(tmp_path / "dub"), "--seed", "3", *PATCHES]
    assert main(args + ["--voices", str(tmp_path / "voices")]) == 0
    printed = capsys.readouterr()
    notices = [line for line in printed.err.splitlines() if "emotion" in line]
    label = "VoxCPM2" if where == "model" else httpx.get(live.url + "/v1/models").json()["data"][0]["id"]
    assert notices == [f"voxdesk: 2 cues carry an emotion ([Voice|emotion]) that {label} does not take: "
                       "spoken without it (IndexTTS-2.5 takes emotions)."]  # fmt: skip
    assert "3 of 3 cues fit" in printed.out  # spoken all the same, the unknown @Nobody included
    report = json.loads((tmp_path / "dub" / "report.json").read_text(encoding="utf-8"))
    assert [c["status"] for c in report["cues"]] == ["fit", "fit", "fit"]
    if where == "server":
        live.wait_idle()
