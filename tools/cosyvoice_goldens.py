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
``<family>_<mode>.npz`` plus one ``<family>.json`` index (texts, token lists, timings).

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

    out = Path(args.out)
    table = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}  # other entries kept
    for spec in args.yaml:
        family, _, path = spec.rpartition("=")  # KEY=PATH, or PATH keyed by the yaml's stem
        text = Path(path).read_text(encoding="utf-8")
        family = family or Path(path).stem
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
    out.write_text(_compact_json(table), encoding="utf-8")


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
    from cosyvoice.utils.common import set_all_random_seed

    set_all_random_seed(mode.get("seed", SEED))
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
    """Record the frontend's model input, the LM's tokens and the mels given to the vocoder."""
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("shapes", help="record flow/hift state-dict shapes of tiny yamls")
    sp.add_argument("--official", required=True)
    sp.add_argument("--yaml", action="append", required=True, help="PATH or KEY=PATH (KEY: a preset name)")
    sp.add_argument("--out", required=True)
    gp = sub.add_parser("goldens", help="run every mode on tiny folders and write goldens")
    gp.add_argument("--official", required=True)
    gp.add_argument("--model", action="append", required=True)
    gp.add_argument("--out", required=True)
    gp.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    {"shapes": cmd_shapes, "goldens": cmd_goldens}[args.cmd](args)


if __name__ == "__main__":
    main()
