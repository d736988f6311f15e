"""Run the official CosyVoice code on VoxDesk's tiny folders and record what it does.

Runs in the official code's own venv (see tools/cosyvoice_official_requirements.txt), never in
VoxDesk's: it imports nothing of VoxDesk. Two commands::

    python tools/cosyvoice_goldens.py shapes --official /work/official/CosyVoice \\
        --yaml DIR2/cosyvoice2.yaml --yaml DIR3/cosyvoice3.yaml \\
        --out app/models/cosyvoice/official_shapes.json
    python tools/cosyvoice_goldens.py goldens --official /work/official/CosyVoice \\
        --model DIR2 --model DIR3 --out tests/data/cosyvoice

``shapes`` instantiates the yaml's ``flow`` and ``hift`` with the official classes and records
their state-dict keys and shapes (and the one persistent buffer, the DiT's rotary ``inv_freq``),
which app/models/cosyvoice/checkpoint.py needs to write ``flow.pt`` / ``hift.pt``.

``goldens`` loads each folder with the official ``AutoModel`` and runs every official mode with
a fixed seed (``set_all_random_seed``, as webui.py does before a call): zero-shot, cross-lingual,
instruct2, zero-shot at speed 1.2 and zero-shot streaming. For each mode it writes the frontend's
model input, the LM's speech tokens, the flow's mel and the audio (float32) into
``<family>_<mode>.npz`` plus one ``<family>.json`` index (texts, token lists, timings), and
torch's global generator state (``torch.get_rng_state()``, uint8) right after the seed is set
(``seeded``) and right before each ``hift.inference`` call (``hift_0``, ``hift_1``, ...) into
``<family>_<mode>_rng.npz``: CosyVoice2's vocoder draws its noise from that generator at every
call, after the LM's draws.

Two things are arranged so that a run is reproducible, neither changes a number the official
code computes:
- ``torchaudio.load``: torchaudio >= 2.9 decodes through torchcodec, which is not installed; the
  official call asks for the soundfile backend, so the script reads the file with soundfile
  (float32, channels first, as torchaudio's soundfile backend returned).
- the LM thread: ``CosyVoice2Model.tts`` runs ``llm_job`` in a thread while the main thread
  streams the flow and the vocoder. CosyVoice2's HiFT draws random numbers at inference, so in
  streaming the two threads' draws from torch's one generator interleave by timing. The script
  runs the thread's target when it is started (the LM finishes first); the chunk schedule does
  not depend on timing (each chunk takes exactly hop + look-ahead tokens), so the chunks are
  those of any run where the LM is ahead of the vocoder.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np

PROMPT_SR = 16000
PROMPT_SECONDS = 1.0  # 25 prompt tokens: the first streaming chunk needs no padding
SEED = 1234

# What each mode says, per family; CosyVoice3's system prompt and <|endofprompt|> forms are those
# of the official example.py (cosyvoice3_example). A mode's own seed was picked so that its run is
# short (small goldens) and, for streaming, long enough for two chunks (CosyVoice3's random head
# stops by itself, its minimum length blocks only one of the 200 stop ids).
V3_SYSTEM = "You are a helpful assistant.<|endofprompt|>"
PROMPT_TEXT = "希望你以后能够做的比我还好呦。"
MODES = {
    "cosyvoice2": {
        "zero_shot": dict(call="zero_shot", text="你好。", prompt_text=PROMPT_TEXT),
        "cross_lingual": dict(call="cross_lingual", text="Hello world."),
        "instruct2": dict(call="instruct2", text="你好。", instruct="用四川话说这句话<|endofprompt|>"),
        "speed": dict(call="zero_shot", text="你好。", prompt_text=PROMPT_TEXT, speed=1.2),
        "stream": dict(call="zero_shot", text="收到好友的生日礼物。",
                       prompt_text=PROMPT_TEXT, stream=True),
    },
    "cosyvoice3": {
        "zero_shot": dict(call="zero_shot", text="你好，世界。", prompt_text=V3_SYSTEM + PROMPT_TEXT),
        "cross_lingual": dict(call="cross_lingual", text=V3_SYSTEM + "Hello world.", seed=1235),
        "instruct2": dict(call="instruct2", text="你好，世界。",
                          instruct="You are a helpful assistant. 请用广东话表达。<|endofprompt|>", seed=1237),
        "speed": dict(call="zero_shot", text="你好，世界。", prompt_text=V3_SYSTEM + PROMPT_TEXT,
                      speed=1.2),
        "stream": dict(call="zero_shot", text="收到好友的生日礼物。",
                       prompt_text=V3_SYSTEM + PROMPT_TEXT, stream=True, seed=1242),
    },
}  # fmt: skip


def _official(path: str) -> None:
    root = Path(path).resolve()
    if not (root / "cosyvoice" / "cli" / "cosyvoice.py").is_file():
        sys.exit(f"error: {root} is not a CosyVoice checkout (no cosyvoice/cli/cosyvoice.py)")
    sys.path.insert(0, str(root))


def _soundfile_load(uri, *args, **kwargs):
    import soundfile
    import torch

    data, sr = soundfile.read(str(uri), dtype="float32", always_2d=True)
    return torch.from_numpy(np.ascontiguousarray(data.T)), sr


class _InlineThread(threading.Thread):
    """``start()`` runs the target to its end in the caller's thread."""

    def start(self) -> None:
        self.run()

    def join(self, timeout: float | None = None) -> None:
        return None


# ---- shapes ---------------------------------------------------------------------------------
def _drop_top_level(text: str, keys: tuple[str, ...]) -> str:
    """The yaml text without the top-level entries ``keys`` (a key line and its indented block)."""
    out, skipping = [], False
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_][\w]*):", line)
        if m:
            skipping = m.group(1) in keys
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def cmd_shapes(args: argparse.Namespace) -> None:
    _official(args.official)
    from hyperpyyaml import load_hyperpyyaml

    table = {}
    for path in args.yaml:
        text = Path(path).read_text(encoding="utf-8")
        family = Path(path).stem
        # The llm needs the Qwen folder and the tokenizer its files: only flow and hift are read.
        conf = load_hyperpyyaml(_drop_top_level(text, ("llm", "get_tokenizer")))
        entry = {"yaml": text, "buffers": {}}
        for part in ("flow", "hift"):
            module = conf[part]
            state = module.state_dict()
            entry[part] = {k: list(v.shape) for k, v in state.items()}
            persistent = {n for n, _ in module.named_buffers()} & set(state)
            for name in sorted(persistent):
                entry["buffers"][f"{part}.{name}"] = state[name].tolist()
        table[family] = entry
        print(f"{family}: flow {len(entry['flow'])} keys, hift {len(entry['hift'])} keys, "
              f"buffers {sorted(entry['buffers'])}")  # fmt: skip
    Path(args.out).write_text(_compact_json(table), encoding="utf-8")


def _compact_json(obj: object) -> str:
    """Indented JSON with each list of numbers on one line (one state-dict key per line)."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    flat = re.sub(r"\[\s*([-0-9.e+,\s]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    return flat + "\n"


# ---- goldens --------------------------------------------------------------------------------
def prompt_wav(path: Path) -> None:
    """A deterministic 1 s voice-like prompt: a gliding harmonic tone with formant-ish noise."""
    import soundfile

    rng = np.random.default_rng(7)
    t = np.arange(int(PROMPT_SR * PROMPT_SECONDS)) / PROMPT_SR
    f0 = 140 + 40 * np.sin(2 * np.pi * 1.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / PROMPT_SR
    voice = sum(np.sin(k * phase) / k for k in range(1, 8))
    env = 0.5 * (1 - np.cos(2 * np.pi * np.minimum(t / PROMPT_SECONDS, 1)))
    audio = 0.25 * env * voice + 0.01 * rng.standard_normal(t.size)
    soundfile.write(str(path), audio.astype(np.float32), PROMPT_SR, subtype="PCM_16")


def _run_mode(model, mode: dict, wav: str, record: dict) -> tuple[list[np.ndarray], float]:
    import torch
    from cosyvoice.utils.common import set_all_random_seed

    set_all_random_seed(mode.get("seed", SEED))
    record["rng_seeded"] = torch.get_rng_state()
    kw = dict(stream=mode.get("stream", False), speed=mode.get("speed", 1.0))
    if mode["call"] == "zero_shot":
        gen = model.inference_zero_shot(mode["text"], mode["prompt_text"], wav, **kw)
    elif mode["call"] == "cross_lingual":
        gen = model.inference_cross_lingual(mode["text"], wav, **kw)
    else:
        gen = model.inference_instruct2(mode["text"], mode["instruct"], wav, **kw)
    start, cpu = time.perf_counter(), time.process_time()
    chunks = [out["tts_speech"].numpy().astype(np.float32).reshape(-1) for out in gen]
    record["cpu_seconds"] = time.process_time() - cpu
    return chunks, time.perf_counter() - start


def _instrument(model, record: dict) -> None:
    """Record the frontend's model input, the LM's tokens, the mels given to the vocoder and torch's
    global generator state right before each vocoder call (CosyVoice2's draws from it)."""
    import torch

    fe = model.frontend
    for name in ("frontend_zero_shot", "frontend_cross_lingual", "frontend_instruct2"):
        orig = getattr(fe, name)

        def wrapped(*a, _orig=orig, **k):
            out = _orig(*a, **k)
            record.setdefault("input", {k2: v.clone() for k2, v in out.items()})
            return out

        setattr(fe, name, wrapped)
    m = model.model
    orig_llm = m.llm_job

    def llm_job(text, prompt_text, llm_prompt_speech_token, llm_embedding, uuid):
        start, cpu = time.perf_counter(), time.process_time()
        orig_llm(text, prompt_text, llm_prompt_speech_token, llm_embedding, uuid)
        record["llm_seconds"] = time.perf_counter() - start
        record["llm_cpu_seconds"] = time.process_time() - cpu
        record["tokens"] = list(m.tts_speech_token_dict[uuid])

    m.llm_job = llm_job
    orig_hift = m.hift.inference

    def hift_inference(*a, **k):
        record.setdefault("mels", []).append(k["speech_feat"].detach().clone())
        record.setdefault("rng", []).append(torch.get_rng_state())
        return orig_hift(*a, **k)

    m.hift.inference = hift_inference


def cmd_goldens(args: argparse.Namespace) -> None:
    _official(args.official)
    import soundfile  # noqa: F401  (fail early if missing)
    import torch
    import torchaudio

    torchaudio.load = _soundfile_load
    import cosyvoice.cli.model as official_model
    from cosyvoice.cli.cosyvoice import AutoModel

    official_model.threading.Thread = _InlineThread
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wav = out / "prompt.wav"
    prompt_wav(wav)
    for folder in args.model:
        t0 = time.perf_counter()
        model = AutoModel(model_dir=str(folder))
        load_s = time.perf_counter() - t0
        family = type(model).__name__.lower()
        index = {"family": family, "seed": SEED, "prompt": wav.name, "load_s": round(load_s, 2),
                 "sample_rate": model.sample_rate, "modes": {}}  # fmt: skip
        for name, mode in MODES[family].items():
            record: dict = {}
            _instrument(model, record)
            chunks, secs = _run_mode(model, mode, str(wav), record)
            audio = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
            arrays = {"tokens": np.array(record["tokens"], dtype=np.int64), "audio": audio,
                      "chunk_lengths": np.array([c.size for c in chunks], dtype=np.int64)}  # fmt: skip
            for k, v in record["input"].items():
                arrays[f"input_{k}"] = v.numpy()
            for i, mel in enumerate(record.get("mels", [])):
                arrays[f"mel_{i}"] = mel.numpy().astype(np.float32)
            np.savez_compressed(out / f"{family}_{name}.npz", **arrays)
            rng = {"seeded": record["rng_seeded"].numpy()}
            rng |= {f"hift_{i}": state.numpy() for i, state in enumerate(record.get("rng", []))}
            np.savez_compressed(out / f"{family}_{name}_rng.npz", **rng)
            tokens = record["tokens"]
            index["modes"][name] = {
                **{k: v for k, v in mode.items()}, "tokens": record["tokens"], "samples": int(audio.size),
                "chunks": [int(c.size) for c in chunks], "seconds": round(secs, 3),
                "cpu_seconds": round(record["cpu_seconds"], 3),
                "llm_seconds": round(record["llm_seconds"], 3),
                "llm_cpu_ms_per_token": round(1000 * record["llm_cpu_seconds"] / max(len(tokens), 1), 1),
                "audio_seconds": round(audio.size / model.sample_rate, 3),
                "rtf": round(secs / max(audio.size / model.sample_rate, 1e-9), 3),
                "tokens_per_second": round(len(record["tokens"]) / secs, 1) if secs else None,
            }  # fmt: skip
            print(f"{family} {name}: {len(record['tokens'])} tokens, {audio.size} samples, "
                  f"{len(chunks)} chunk(s), {secs:.2f} s")  # fmt: skip
        (out / f"{family}.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")  # fmt: skip
        del model


# ---- text and frontend features ------------------------------------------------------------
# Sentences for the text normalization golden: numbers, dates, money, symbols, brackets, quotes,
# long paragraphs that split_paragraph cuts, CosyVoice3 prompt forms (left as they are).
TEXTS = [
    "你好。",
    "今天是2024年3月15日，气温25.5℃，我花了¥128.50买了3本书。",
    "收到好友从远方寄来的生日礼物，那份意外的惊喜与深深的祝福让我心中充满了甜蜜的快乐，笑容如花儿般绽放。"
    "他说：“我们明天再见！”然后就走了。这是第二句话，它也很长，长到足以让分段的逻辑把它切开来看看效果如何。"
    "最后一句很短。",
    "面积是5m²，体积是3m³ - 这是（测试）【括号】`代码`——破折号，",
    "一、二、三、",
    "Hello world.",
    "The meeting is at 10:30 on Jan. 5, 2024; it costs $15.99 and 3 people will come!",
    "This is the first sentence of a long English paragraph that keeps going for a while. "
    "Here is another sentence with 42 apples and 7 oranges; the split logic counts tokens here. "
    "A third one asks a question? And a fourth one exclaims! Finally, a short end.",
    '"Quoted speech." He said "yes." Then 1999 came',
    "You are a helpful assistant.<|endofprompt|>Hello world, 123.",
    "!!!",
    "  spaced out text 2  ",
]
ENCODE = [
    "Hello world, this is a test.",
    "你好，世界。",
    "You are a helpful assistant.<|endofprompt|>希望你以后能够做的比我还好呦。",
    "[breath]Hi[laughter] <strong>there</strong> [AA1][ǜ]<|endofsystem|>",
    "e\u0301 caf\u00e9 ＡＢＣ１２３",
    "tabs\tand\nnewlines\r\n  spaces   end ",
    "emoji 🎉👍 and 'll 've contractions I'm",
    "<|im_start|>x<|im_end|><|endoftext|>",
]


def _official_frontend(folder: Path):
    from cosyvoice.cli.frontend import CosyVoiceFrontEnd
    from cosyvoice.tokenizer.tokenizer import get_qwen_tokenizer

    family = "cosyvoice3" if (folder / "cosyvoice3.yaml").is_file() else "cosyvoice2"
    tok = get_qwen_tokenizer(str(folder / "CosyVoice-BlankEN"), skip_special_tokens=True, version=family)
    onnx = "speech_tokenizer_v3.onnx" if family == "cosyvoice3" else "speech_tokenizer_v2.onnx"
    frontend = CosyVoiceFrontEnd(lambda: tok, None, str(folder / "campplus.onnx"), str(folder / onnx))
    return family, tok, frontend


def cmd_text(args: argparse.Namespace) -> None:
    """``text_normalize`` (split and whole) of TEXTS and the tokenizer's ids of ENCODE, per family."""
    _official(args.official)
    out: dict = {"texts": TEXTS, "encode_texts": ENCODE, "families": {}}
    for folder in args.model:
        family, tok, fe = _official_frontend(Path(folder))
        out["families"][family] = {
            "split": [fe.text_normalize(t, split=True) for t in TEXTS],
            "whole": [fe.text_normalize(t, split=False) for t in TEXTS],
            "encode": [tok.encode(t) for t in ENCODE],
        }
        print(f"{family}: {len(TEXTS)} texts, {len(ENCODE)} encodings")
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


RESAMPLES = ((16000, 24000), (44100, 16000), (22050, 24000), (48000, 16000), (24000, 16000))


def cmd_features(args: argparse.Namespace) -> None:
    """The frontend's features of the prompt, each from the library call the official code makes:
    torchaudio's Resample (the prompt's samples read at several rates, first 0.25 s), whisper's
    128-bin log-mel, Kaldi fbank, the matcha mel with fmax 8000 (CosyVoice2) and None (CosyVoice3)."""
    import soundfile
    import torch
    import torchaudio
    import torchaudio.compliance.kaldi as kaldi
    import whisper
    from matcha.utils.audio import mel_spectrogram

    torch.set_num_threads(args.threads)
    data, sr = soundfile.read(args.prompt, dtype="float32", always_2d=True)
    speech = torch.from_numpy(np.ascontiguousarray(data.T)).mean(dim=0, keepdim=True)
    arrays = {}
    for src, dst in RESAMPLES:
        n = src // 4
        arrays[f"resample_{src}_{dst}"] = torchaudio.transforms.Resample(src, dst)(speech[:, :n])[0].numpy()
    speech24 = torchaudio.transforms.Resample(sr, 24000)(speech)
    arrays["whisper_logmel"] = whisper.log_mel_spectrogram(speech, n_mels=128)[0].numpy()
    arrays["fbank"] = kaldi.fbank(speech, num_mel_bins=80, dither=0, sample_frequency=16000).numpy()
    for name, fmax in (("matcha_v2", 8000), ("matcha_v3", None)):
        mel = mel_spectrogram(speech24, n_fft=1920, num_mels=80, sampling_rate=24000, hop_size=480,
                              win_size=1920, fmin=0, fmax=fmax, center=False)
        arrays[name] = mel[0].numpy()
    np.savez_compressed(args.out, **arrays)
    print({k: v.shape for k, v in arrays.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("shapes", help="record flow/hift state-dict shapes of tiny yamls")
    sp.add_argument("--official", required=True)
    sp.add_argument("--yaml", action="append", required=True)
    sp.add_argument("--out", required=True)
    gp = sub.add_parser("goldens", help="run every mode on tiny folders and write goldens")
    gp.add_argument("--official", required=True)
    gp.add_argument("--model", action="append", required=True)
    gp.add_argument("--out", required=True)
    gp.add_argument("--threads", type=int, default=2)
    tp = sub.add_parser("text", help="official text normalization and tokenizer ids on tiny folders")
    tp.add_argument("--official", required=True)
    tp.add_argument("--model", action="append", required=True)
    tp.add_argument("--out", required=True)
    fp = sub.add_parser("features", help="the frontend's resampling, log-mel, fbank and mel of a prompt")
    fp.add_argument("--prompt", required=True)
    fp.add_argument("--out", required=True)
    fp.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    {"shapes": cmd_shapes, "goldens": cmd_goldens, "text": cmd_text, "features": cmd_features}[args.cmd](args)


if __name__ == "__main__":
    main()
