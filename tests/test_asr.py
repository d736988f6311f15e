"""Speech recognition through the real sherpa-onnx code on the tiny SenseVoice-format model.

No network and no mock: tests/tiny_asr.py writes a model file sherpa-onnx loads like the real
SenseVoice Small, and audio made of tones the model hears as known words.
"""

import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import soxr
from tiny_asr import WORDS, expected_text, tone_words, write_tiny_sensevoice

from app.asr import (
    NoSpeechError,
    RecognizerError,
    RecognizerUnavailable,
    TranscriptionCancelled,
    catalog,
    load_recognizer,
)
from app.asr.onnx_meta import OnnxFormatError, read_metadata
from app.models import download as dl


@pytest.fixture(scope="module")
def rec(tiny_asr):
    return load_recognizer(tiny_asr, num_threads=1)


def test_tones_are_recognized_as_their_words(rec):
    bands = [0, 1, 4, 5, 9]
    t = rec.transcribe(tone_words(bands), 16000, "auto")
    assert t.text == expected_text(bands) == "hello world你好 no"
    assert t.language == "en"  # the tiny model's "auto" hears English
    assert t.audio_seconds == pytest.approx(len(tone_words(bands)) / 16000)
    assert t.real_time_factor > 1


@pytest.mark.parametrize("rate", [22050, 44100, 48000])
def test_any_rate_and_stereo(rec, rate):
    mono = soxr.resample(tone_words([2, 3, 6, 7]), 16000, rate).astype(np.float32)
    stereo = np.stack([mono, mono], axis=1)
    t = rec.transcribe(stereo, rate, "zh")
    assert t.text == "voice desk世界" and t.language == "zh"


def test_long_audio_is_cut_into_pieces_with_progress(rec):
    pieces = [tone_words([k % 10], seconds=0.5, gap=0.5) for k in range(60)]  # 90 s
    audio = np.concatenate(pieces)
    seen = []
    t = rec.transcribe(audio, 16000, "en", progress=seen.append)
    assert len(seen) >= 4 and seen == sorted(seen) and seen[-1] == 1.0
    # Each piece is cut in a silent gap, so no word is split or lost.
    assert t.text.replace(" ", "") == "".join(WORDS[k % 10] for k in range(60)).replace("▁", "")


def test_cancel_between_pieces(rec):
    cancel = threading.Event()
    audio = np.concatenate([tone_words([1], gap=0.5)] * 40)
    with pytest.raises(TranscriptionCancelled, match="cancelled"):
        rec.transcribe(audio, 16000, progress=lambda _f: cancel.set(), cancel=cancel)


def test_silence_and_unheard_sound_are_no_speech(rec):
    with pytest.raises(NoSpeechError, match="silent"):
        rec.transcribe(np.zeros(48000, np.float32), 48000)
    with pytest.raises(NoSpeechError, match="silent"):
        rec.transcribe(np.full(32000, 1e-4, np.float32), 16000)
    # Loud, but a flat spectrum (every band at once): the model hears no word.
    chord = sum(tone_words([k], seconds=1.0, gap=0.0) for k in range(10)) / 10
    with pytest.raises(NoSpeechError, match="No speech was heard"):
        rec.transcribe(chord, 16000, "en")


def test_unknown_language_is_refused_in_one_line(rec):
    with pytest.raises(RecognizerError, match="does not know the language “fr”") as err:
        rec.transcribe(tone_words([0]), 16000, "fr")
    assert "\n" not in str(err.value) and rec.supports("yue") and not rec.supports("fr")


def test_failure_mid_run_is_one_line_and_the_recognizer_recovers(tmp_path):
    folder = write_tiny_sensevoice(tmp_path / "asr", {"ko": 99})  # Korean: onnxruntime fails
    rec = load_recognizer(folder, num_threads=1)
    with pytest.raises(RecognizerError, match="failed on this audio") as err:
        rec.transcribe(tone_words([0]), 16000, "ko")
    assert "\n" not in str(err.value)
    assert rec.transcribe(tone_words([0]), 16000, "en").text == "hello"


def test_engine_exception_becomes_one_line(rec, monkeypatch):
    def boom(_samples, _language):
        raise MemoryError("bad_alloc\nsecond line")

    monkeypatch.setattr(rec, "_decode", boom)
    with pytest.raises(RecognizerError, match=r"^The speech recognizer failed \(MemoryError: bad_alloc\)\.$"):
        rec.transcribe(tone_words([0]), 16000)


def _damage(folder, how):
    model = folder / "model.int8.onnx"
    if how == "truncated":
        model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])
    elif how == "not onnx":
        model.write_bytes(b"<html>502 Bad Gateway</html>")
    elif how == "no metadata":  # sherpa-onnx itself would _Exit the whole process on this one
        import onnx

        proto = onnx.load(str(model))
        keep = [(p.key, p.value) for p in proto.metadata_props if p.key != "lang_zh"]
        del proto.metadata_props[:]
        for k, v in keep:
            proto.metadata_props.add(key=k, value=v)
        onnx.save(proto, str(model))
    elif how == "wrong tokens":
        (folder / "tokens.txt").write_text("<unk> 0\na 1\n", encoding="utf-8")
    elif how == "bad tokens":
        (folder / "tokens.txt").write_text("no ids here\n", encoding="utf-8")
    elif how == "missing model":
        model.unlink()
    elif how == "partial download":
        model.rename(folder / "model.int8.onnx.part")


@pytest.mark.parametrize(
    "how, says",
    [
        ("truncated", "cut short"),
        ("not onnx", "damaged or incomplete"),
        ("no metadata", "not a SenseVoice model (no lang_zh"),
        ("wrong tokens", "does not belong to"),
        ("bad tokens", "tokens.txt is damaged"),
        ("missing model", "model.int8.onnx) is missing"),
        ("partial download", "did not finish"),
    ],
)
def test_damaged_or_partial_model_is_one_line(tmp_path, how, says):
    folder = write_tiny_sensevoice(tmp_path / "asr")
    _damage(folder, how)
    assert catalog.validate_recognizer_dir(folder)
    with pytest.raises(RecognizerUnavailable) as err:
        load_recognizer(folder)
    message = str(err.value)
    assert says in message and "\n" not in message and "model manager" in message


def test_onnx_metadata_reader(tiny_asr, tmp_path):
    meta = read_metadata(tiny_asr / "model.int8.onnx")
    assert meta["vocab_size"] == str(len(open(tiny_asr / "tokens.txt").readlines()))
    assert len(meta["neg_mean"].split(",")) == 560
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(OnnxFormatError):
        read_metadata(tmp_path / "empty.onnx")


def test_nothing_installed_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path))
    assert catalog.find_recognizer() is None
    with pytest.raises(RecognizerUnavailable, match="Download one in the model manager"):
        load_recognizer()
    # The downloaded one is found without a setting.
    write_tiny_sensevoice(catalog.default_folder())
    assert catalog.find_recognizer() == catalog.default_folder()
    assert load_recognizer().transcribe(tone_words([8]), 16000).text == "yes"


@pytest.fixture
def asr_hub(tiny_asr):
    """127.0.0.1 server shaped like the Hugging Face API, serving the tiny recognizer's repo."""
    repo = catalog.SENSEVOICE_SMALL.hf_repo
    files = {p.name: p.read_bytes() for p in tiny_asr.iterdir()}
    files["test_wavs/zh.wav"] = b"RIFF" * 100
    files["model.onnx"] = b"fp32 copy we do not want" * 100

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == f"/api/models/{repo}/tree/main":
                body = json.dumps(
                    [
                        {"type": "file", "path": k, "size": len(v),
                         "lfs": {"oid": hashlib.sha256(v).hexdigest()}}
                        for k, v in files.items()
                    ]
                ).encode()  # fmt: skip
            elif url.path.startswith(f"/{repo}/resolve/main/"):
                body = files[urllib.parse.unquote(url.path.split("/resolve/main/", 1)[1])]
                self.served.append(url.path.rsplit("/", 1)[1])
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    Handler.served = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", Handler.served
    server.shutdown()
    server.server_close()


def test_download_through_the_model_machinery(asr_hub, tmp_path):
    endpoint, served = asr_hub
    seen = []
    folder = catalog.download_recognizer(
        catalog.SENSEVOICE_SMALL, dl.hf_mirror(endpoint), tmp_path / "sv", progress=seen.append
    )
    assert sorted(p.name for p in folder.iterdir()) == ["model.int8.onnx", "tokens.txt"]
    assert sorted(served) == ["model.int8.onnx", "tokens.txt"]  # not the fp32 copy, not test audio
    assert seen[-1].done == seen[-1].total
    assert load_recognizer(folder, num_threads=1).transcribe(tone_words([6, 7]), 16000).text == "世界"
