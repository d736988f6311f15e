"""CosyVoice3 benchmark: the official loop, VoxDesk's LM alone and VoxDesk's engine on one folder.

    python -m app.models.cosyvoice.bench --folder /tmp/cv05 --write cosyvoice3-0.5b \\
        --device cuda --concurrency 1,16,64 --official /path/to/CosyVoice --json out.json

``--write PRESET`` first writes a random folder of that preset (app/models/cosyvoice/checkpoint.py)
with a head that never picks a stop id (its stop rows zeroed, the others scaled up), so every run
lasts its maximum, 20 speech tokens per text token: fixed lengths on random weights.

Sides (``--sides``, default all three):

- ``official``: the official ``CosyVoice3Model.tts(**model_input)`` from a checkout (``--official``),
  built from the folder's yaml with ``load_hyperpyyaml`` as ``CosyVoice3.__init__`` does, without
  the frontend (the model input is made here: random text ids with ``<|endofprompt|>``, a 3 s
  prompt). Per request: LM ms per token (its ``llm_job`` timed), wall, RTF; at concurrency 1 also
  the first audio with ``stream=True``; at concurrency N, N threads each calling ``tts`` (the
  class keeps per-call state by uuid, as its servers use it). Modules the official files import
  but ``tts`` never runs (onnxruntime, torchaudio, scipy; Pillow, matplotlib and wget, which
  diffusers' image helpers and matcha's training utilities import) get an empty stand-in when
  absent (scipy's one call, the periodic Hann window, is computed alike; the Qwen2 model,
  lightning and torchmetrics are imported first, so they see only real packages);
  tools/cosyvoice_device_wheels.sh fetches the rest. That side lives in
  :mod:`app.models.cosyvoice.bench_official`.
- ``lm``: :mod:`app.models.cosyvoice.lm` + :mod:`~app.models.cosyvoice.sampling` in a lock-step
  batch (:func:`app.models.cosyvoice.lm_loop.generate`), eager, the same requests.
- ``engine``: VoxDesk's :class:`app.engine.engine.Engine` with the folder's family runner
  (``create_runner``), the same texts and prompt voice, N requests submitted together.

Writes one JSON (``--json``) and prints a table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app.models.cosyvoice.lm import ENDOFPROMPT, QWEN_DIR

PROMPT_TOKENS = 75  # 3 s of prompt speech
PROMPT_TEXT_IDS = 24
SPEECH_TOKENS = 6561
RATE = 24000
TOKENS_PER_SECOND = 25
MODEL_KEYS = ("llm", "flow", "hift")  # what tts() runs; the yaml's other entries need the frontend


def sync_device(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_gb(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


# ---- the folder -----------------------------------------------------------------------------
def write_folder(folder: Path, preset: str, seed: int = 0) -> Path:
    """A random folder of ``preset`` whose LM head never stops before the maximum length."""
    from app.models.cosyvoice.checkpoint import write_checkpoint

    with_onnx = importlib.util.find_spec("onnx") is not None
    write_checkpoint(folder, preset, seed, with_onnx=with_onnx)
    llm = torch.load(folder / "llm.pt", weights_only=True)
    head = llm["llm_decoder.weight"]
    head[SPEECH_TOKENS:] = 0.0  # logit 0: never among the top 25 of 6561 logits of spread 4
    head[:SPEECH_TOKENS] *= 4.0
    if "llm_decoder.bias" in llm:
        llm["llm_decoder.bias"].zero_()
    torch.save(llm, folder / "llm.pt")
    return folder


def make_inputs(n: int, text_tokens: int, seed: int = 0) -> list[dict[str, torch.Tensor]]:
    """``n`` official model inputs (``CosyVoice3Model.tts`` keywords): random text ids, one
    random prompt voice shared by all (prompt text with ``<|endofprompt|>``, 3 s of tokens)."""
    g = torch.Generator().manual_seed(seed)
    prompt_text = torch.randint(0, 151643, (1, PROMPT_TEXT_IDS), generator=g, dtype=torch.int32)
    prompt_text[0, 6] = ENDOFPROMPT
    speech = torch.randint(0, SPEECH_TOKENS, (1, PROMPT_TOKENS), generator=g, dtype=torch.int32)
    feat = torch.randn(1, 2 * PROMPT_TOKENS, 80, generator=g) - 5.0
    emb = torch.randn(1, 192, generator=g)
    out = []
    for _ in range(n):
        text = torch.randint(0, 151643, (1, text_tokens), generator=g, dtype=torch.int32)
        out.append({"text": text, "prompt_text": prompt_text, "llm_prompt_speech_token": speech,
                    "flow_prompt_speech_token": speech, "prompt_speech_feat": feat,
                    "llm_embedding": emb, "flow_embedding": emb})  # fmt: skip
    return out


# ---- VoxDesk: the LM alone ------------------------------------------------------------------
def load_lm(folder: Path, device: torch.device, dtype: torch.dtype):
    from app.models.cosyvoice.config import load_config
    from app.models.cosyvoice.lm import CosyLM
    from app.models.cosyvoice.sampling import SamplingParams
    from app.models.voxcpm.minicpm import pack_projections

    cfg = load_config(folder / "cosyvoice3.yaml")
    with torch.device("meta"):
        lm = CosyLM.from_config(cfg, folder / QWEN_DIR)
    lm.load(torch.load(folder / "llm.pt", weights_only=True, mmap=True))
    lm = lm.to(device, dtype).eval()
    if device.type == "cuda":
        pack_projections(lm)
    return lm, SamplingParams.from_config(cfg)


def bench_lm(folder: Path, inputs: list[dict[str, torch.Tensor]], concurrency: list[int],
             device: torch.device, dtype: torch.dtype) -> dict:  # fmt: skip
    from app.models.cosyvoice.lm_loop import LMRequest, generate

    reset_peak(device)
    lm, params = load_lm(folder, device, dtype)

    def requests(n: int, seed0: int) -> list[LMRequest]:
        out = []
        for i in range(n):
            x = inputs[i % len(inputs)]
            text = torch.cat([x["prompt_text"][0], x["text"][0]]).long()
            out.append(LMRequest(text, x["text"].shape[1], x["llm_prompt_speech_token"][0].long(),
                                 torch.Generator().manual_seed(seed0 + i)))  # fmt: skip
        return out

    generate(lm, requests(1, 0), params)  # warm-up
    res: dict[str, Any] = {"dtype": str(dtype).replace("torch.", ""), "runs": []}
    for n in concurrency:
        sync_device(device)
        t0 = time.perf_counter()
        tokens = generate(lm, requests(n, 100), params)
        sync_device(device)
        wall = time.perf_counter() - t0
        total, steps = sum(len(t) for t in tokens), max(len(t) for t in tokens)
        res["runs"].append({"concurrency": n, "wall_s": wall, "tokens": total, "steps": steps,
                            "ms_per_step": 1e3 * wall / max(steps, 1), "tokens_per_s": total / wall,
                            "audio_s": total / TOKENS_PER_SECOND, "peak_gb": peak_gb(device)})  # fmt: skip
        print(f"lm x{n}: {wall:.2f} s, {total} tokens, {1e3 * wall / max(steps, 1):.1f} ms/step", flush=True)
    return res


# ---- VoxDesk: the engine --------------------------------------------------------------------
def _prompt_wav(seconds: float = 3.0, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(140 + 30 * np.sin(2 * np.pi * 1.3 * t)) / rate
    return (0.2 * sum(np.sin(k * phase) / k for k in range(1, 6))).astype(np.float32)


PROMPT_TEXT = "希望你以后能够做的比我还好呦。"
TEXT = "收到好友从远方寄来的生日礼物，那份意外的惊喜与深深的祝福让我心中充满了甜蜜的快乐。"
TEXT_EN = "A birthday gift from a friend far away filled my heart with sweet happiness."


def engine_text(folder: Path, text_ids: int) -> str:
    """A start of ``TEXT`` (or ``TEXT_EN``) whose spoken piece, normalized as the runner normalizes
    it (zero-shot, :func:`.text.request_texts`: the normalizer may add a full stop), is exactly
    ``text_ids`` ids (else the fewest above): the engine's requests then run as many LM steps as
    the official side's (20 a text id)."""
    from app.models.cosyvoice.config import load_config
    from app.models.cosyvoice.text import request_texts
    from app.models.cosyvoice.tokenizer import CosyTokenizer

    family = load_config(next(folder.glob("cosyvoice*.yaml"))).family
    encode = CosyTokenizer(folder / QWEN_DIR, family).encode
    best: tuple[int, str] | None = None
    for source in (TEXT * 8, TEXT_EN * 8):  # a byte-level vocabulary may need letters to hit it
        for end in range(1, len(source) + 1):
            pieces, _ = request_texts(family, "zero_shot", source[:end], PROMPT_TEXT, encode=encode)
            n = len(encode(pieces[0])) if pieces else 0
            if n == text_ids:
                return source[:end]
            if n > text_ids:
                best = min(best or (n, source[:end]), (n, source[:end]))
                break
    return best[1] if best else TEXT


STREAM_UP_TO = 16  # the streaming runs (first audio): 1 and 16 requests, as the issue asks


def _engine_run(engine: Any, n: int, text: str, voice: Any, stream: bool) -> dict[str, Any]:
    """``n`` requests submitted together, stepped to their end: wall, audio, first audio."""
    from app.engine.events import RequestFailed, RequestFinished
    from app.engine.request import SynthRequest

    dev = torch.device(engine.device)
    reset_peak(dev)
    start = time.perf_counter()
    ids = {engine.submit(SynthRequest(text, voice=voice, seed=100 + i, stream=stream)) for i in range(n)}
    done: list[RequestFinished] = []
    while ids:
        for ev in engine.step():
            if isinstance(ev, RequestFailed):
                raise RuntimeError(ev.message)
            if isinstance(ev, RequestFinished):
                ids.discard(ev.request_id)
                done.append(ev)
    wall = time.perf_counter() - start
    audio = sum(f.stats["audio_s"] for f in done)
    longest = max(max(f.n_patches for f in done), 1)
    run = {"concurrency": n, "stream": stream, "wall_s": wall, "audio_s": audio,
           "tokens": sum(f.n_patches for f in done),
           "ms_per_step": 1e3 * wall / longest,  # per LM token of the longest request, flow + vocoder in
           "rtf_aggregate": wall / max(audio, 1e-9),
           "first_audio_s_p50": float(np.median([f.stats["first_chunk_s"] for f in done])),
           "peak_gb": peak_gb(dev)}  # fmt: skip
    print(f"engine x{n} {'stream' if stream else 'whole'}: {wall:.2f} s, {audio:.1f} s of audio, "
          f"first audio {run['first_audio_s_p50']:.3f} s", flush=True)  # fmt: skip
    return run


def bench_engine(folder: Path, concurrency: list[int], device: str, dtype: str | None, text_ids: int) -> dict:
    """N requests submitted together through the engine: not streaming (the official ``tts()``
    default: RTF, like for like) at each concurrency, and streaming (first audio) at up to
    :data:`STREAM_UP_TO` requests."""
    from app.engine.config import EngineConfig
    from app.engine.engine import Engine
    from app.models.voxcpm.prompt import VoicePrompt

    t0 = time.perf_counter()
    engine = Engine(EngineConfig(str(folder), device=device, dtype=dtype, max_num_seqs=max(concurrency)))
    res: dict[str, Any] = {"ready_s": time.perf_counter() - t0, "runs": []}
    voice = VoicePrompt(prompt_audio=_prompt_wav(), prompt_text=PROMPT_TEXT, sample_rate=16000)
    text = engine_text(folder, text_ids)
    _engine_run(engine, 1, text, voice, stream=True)  # warm-up
    for n in concurrency:
        res["runs"].append(_engine_run(engine, n, text, voice, stream=False))
        if n <= STREAM_UP_TO:
            res["runs"].append(_engine_run(engine, n, text, voice, stream=True))
    engine.shutdown()
    return res


# ---- the command ----------------------------------------------------------------------------
def _table(res: dict[str, Any]) -> str:
    lines = [f"{res['device']}  folder {res['folder']}  text {res['text_tokens']} ids"]
    off = res.get("official", {})
    if "single" in off:
        s = off["single"]
        lines.append(f"official 1 request: LM {s['lm_ms_per_token']:.1f} ms/token, {s['tokens']} tokens, "
                     f"RTF {s['rtf']:.3f}, stream first audio {s['stream_first_audio_s']:.2f} s")  # fmt: skip
    for side in ("official", "lm", "engine"):
        for r in res.get(side, {}).get("runs", []):
            per = r.get("ms_per_step")
            mode = {True: " stream", False: " whole "}.get(r.get("stream"), "")
            lines.append(f"{side:8} x{r['concurrency']:<3}{mode} wall {r['wall_s']:.2f} s  tok {r['tokens']}"
                         + (f"  {per:.1f} ms/step" if per else "")
                         + (f"  RTF {r['rtf_aggregate']:.3f}" if "rtf_aggregate" in r else "")
                         + (f"  first audio {r['first_audio_s_p50']:.3f} s" if r.get("stream") else "")
                         + (f"  peak {r['peak_gb']:.2f} GB" if r.get("peak_gb") else ""))  # fmt: skip
        if res.get(side, {}).get("error"):
            lines.append(f"{side:8} {res[side]['error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", required=True, type=Path)
    ap.add_argument("--write", metavar="PRESET", help="first write a random folder of this preset")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="float32", help="VoxDesk's LM dtype (the official runs fp32)")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (torch.set_num_threads)")
    ap.add_argument("--concurrency", default="1")
    ap.add_argument("--official-concurrency", help="the official side's (default: --concurrency)")
    ap.add_argument("--text-tokens", type=int, default=10, help="text ids per request: 20 speech tokens each")
    ap.add_argument("--official", help="a CosyVoice checkout (the official side)")
    ap.add_argument("--sides", default="official,lm,engine")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.write and not (args.folder / "llm.pt").is_file():
        t = time.perf_counter()
        write_folder(args.folder, args.write)
        print(f"wrote {args.folder} ({args.write}) in {time.perf_counter() - t:.0f} s", flush=True)
    device = torch.device(args.device)
    conc = [int(c) for c in args.concurrency.split(",")]
    inputs = make_inputs(64, args.text_tokens)
    sides = set(args.sides.split(","))
    res: dict[str, Any] = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else
                           f"cpu, {torch.get_num_threads()} threads", "folder": str(args.folder),
                           "text_tokens": args.text_tokens, "torch": torch.__version__}  # fmt: skip
    if "official" in sides and args.official:
        from app.models.cosyvoice.bench_official import bench_official, load_official

        if device.type == "cpu":
            torch.cuda.is_available = lambda: False  # the official model picks CUDA by itself
        try:
            model, stand_ins = load_official(args.official, args.folder)
            off_conc = [int(c) for c in (args.official_concurrency or args.concurrency).split(",")]
            res["official"] = {"stand_ins": stand_ins, **bench_official(model, inputs, off_conc)}
            del model
        except Exception as exc:  # noqa: BLE001 - a benchmark reports what failed and goes on
            res["official"] = {"error": f"{type(exc).__name__}: {exc}"}
        print(_table(res), flush=True)
    if "lm" in sides:
        print("lm: loading", flush=True)
        res["lm"] = bench_lm(args.folder, inputs, conc, device, getattr(torch, args.dtype))
    if "engine" in sides:
        try:
            dtype = None if args.dtype == "float32" and device.type == "cuda" else args.dtype
            res["engine"] = bench_engine(args.folder, conc, str(device), dtype, args.text_tokens)
        except Exception as exc:  # noqa: BLE001 - e.g. no CosyVoice runner yet
            res["engine"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    print(_table(res))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
