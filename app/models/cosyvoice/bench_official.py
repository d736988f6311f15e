"""The official side of the CosyVoice3 benchmark (:mod:`app.models.cosyvoice.bench`): the official
``CosyVoice3Model.tts`` from a checkout given by path, built from the folder's yaml as
``CosyVoice3.__init__`` does, timed per request and with N threads. Nothing here runs in the app;
it imports the official code only when the benchmark is asked for that side."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app.models.cosyvoice.bench import MODEL_KEYS, RATE, peak_gb, reset_peak, sync_device
from app.models.cosyvoice.lm import QWEN_DIR


class _Named(type):
    """A class any of whose attributes is another such class (names only read, never used)."""

    def __getattr__(cls, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Named(attr, (), {})


def _stand_in(name: str, lenient: bool = False, **attrs: Any) -> types.ModuleType:
    """An importable module for a package ``tts`` never calls: using anything in it fails, or
    (``lenient``) gives a placeholder class, for modules whose names are only read at import."""

    class _Absent(types.ModuleType):
        def __getattr__(self, attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            if lenient:
                return _Named(attr, (), {})
            raise AttributeError(f"{name}.{attr} is not installed here (the benchmark's stand-in)")

    mod = _Absent(name)
    mod.__dict__.update(attrs)
    mod.__path__ = []  # a package: submodules import
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)  # find_spec() asks
    sys.modules[name] = mod
    return mod


def _hann(window: str, n: int, fftbins: bool = True) -> np.ndarray:
    if window != "hann" or not fftbins:
        raise RuntimeError("only the periodic Hann window is computed here")
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def _hamming(n: int, sym: bool = True) -> np.ndarray:
    if not sym:
        raise AttributeError("only the symmetric Hamming window is computed here")
    return np.hamming(n)


def _stand_ins() -> list[str]:
    made = []
    for name, subs in (("onnxruntime", ()), ("torchaudio", ("compliance", "compliance.kaldi", "transforms")),
                       ("scipy", ("signal",))):  # fmt: skip
        if importlib.util.find_spec(name) is not None:
            continue
        _stand_in(name)
        for sub in subs:
            window = {"get_window": _hann, "hamming": _hamming}  # torchmetrics checks hamming
            child = _stand_in(f"{name}.{sub}", **(window if sub == "signal" else {}))
            parent, _, leaf = f"{name}.{sub}".rpartition(".")
            setattr(sys.modules[parent], leaf, child)
        made.append(name)
    # diffusers' image helpers and matcha's training utilities (plots, downloads) name these at import
    for name, subs, attrs in (("PIL", ("Image", "ImageOps", "ImageFilter"), {"__version__": "10.0.0"}),
                              ("matplotlib", ("pyplot",), {}), ("wget", (), {})):  # fmt: skip
        if importlib.util.find_spec(name) is not None:
            continue
        parent = _stand_in(name, lenient=True, **attrs)
        for sub in subs:
            setattr(parent, sub, _stand_in(f"{name}.{sub}", lenient=True))
        made.append(name)
    return made


def _model_yaml(text: str) -> str:
    """The yaml with only the seeds, the plain settings and the three networks."""
    out, keep = [], True
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]\w*):", line)
        if m:
            value = line[m.end() :].strip()
            keep = m.group(1).startswith("__") or m.group(1) in MODEL_KEYS or not value.startswith("!")
            keep = keep and m.group(1) not in ("get_tokenizer", "feat_extractor", "allowed_special")
        if keep:
            out.append(line)
    return "\n".join(out) + "\n"


def load_official(checkout: str, folder: Path) -> tuple[Any, list[str]]:
    """``CosyVoice3Model`` built and loaded as ``CosyVoice3.__init__`` does (without the frontend)."""
    sys.path.insert(0, str(Path(checkout).resolve()))
    # transformers, lightning and torchmetrics note at import which optional packages exist (and
    # then use them): they must see only the real ones, so they are imported before the stand-ins
    for module in ("transformers.models.qwen2.modeling_qwen2", "lightning.pytorch", "torchmetrics"):
        importlib.import_module(module)
    stand_ins = _stand_ins()
    from cosyvoice.cli.model import CosyVoice3Model
    from hyperpyyaml import load_hyperpyyaml

    text = _model_yaml((folder / "cosyvoice3.yaml").read_text(encoding="utf-8"))
    configs = load_hyperpyyaml(text, overrides={"qwen_pretrain_path": str(folder / QWEN_DIR)})
    model = CosyVoice3Model(configs["llm"], configs["flow"], configs["hift"], fp16=False)
    model.load(str(folder / "llm.pt"), str(folder / "flow.pt"), str(folder / "hift.pt"))
    return model, stand_ins


def _timed_llm(model: Any) -> dict[str, dict[str, float]]:
    """Time the official ``llm_job`` of every call into the returned dict (by the call's uuid)."""
    orig, record = model.llm_job, {}

    def llm_job(text, prompt_text, llm_prompt_speech_token, llm_embedding, uuid):
        t0 = time.perf_counter()
        orig(text, prompt_text, llm_prompt_speech_token, llm_embedding, uuid)
        record[uuid] = {"llm_s": time.perf_counter() - t0, "tokens": len(model.tts_speech_token_dict[uuid])}

    model.llm_job = llm_job
    return record


def official_call(model: Any, inputs: dict[str, torch.Tensor], seed: int, stream: bool) -> dict[str, float]:
    torch.manual_seed(seed)
    sync_device(torch.device(model.device))
    t0 = time.perf_counter()
    first, samples = None, 0
    for out in model.tts(**inputs, stream=stream, speed=1.0):
        first = first if first is not None else time.perf_counter() - t0
        samples += out["tts_speech"].shape[-1]
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "first_audio_s": first or wall, "audio_s": samples / RATE}


def bench_official(model: Any, inputs: list[dict[str, torch.Tensor]], concurrency: list[int]) -> dict:
    device = torch.device(model.device)
    record = _timed_llm(model)
    res: dict[str, Any] = {"runs": []}
    official_call(model, inputs[0], 0, False)  # warm-up (CUDA kernels, allocator)
    record.clear()
    one = official_call(model, inputs[0], 1, False)
    (lm,) = record.values()
    one_stream = official_call(model, inputs[0], 1, True)
    res["single"] = {**one, **lm, "lm_ms_per_token": 1e3 * lm["llm_s"] / max(lm["tokens"], 1),
                     "rtf": one["wall_s"] / max(one["audio_s"], 1e-9),
                     "stream_first_audio_s": one_stream["first_audio_s"],
                     "stream_wall_s": one_stream["wall_s"]}  # fmt: skip
    for n in concurrency:
        reset_peak(device)
        record.clear()
        results: list[dict[str, float]] = [{} for _ in range(n)]

        def work(i: int, results: list[dict[str, float]] = results) -> None:
            results[i] = official_call(model, inputs[i % len(inputs)], 100 + i, False)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        tokens = sum(int(r["tokens"]) for r in record.values())
        audio = sum(r.get("audio_s", 0.0) for r in results)
        res["runs"].append({"concurrency": n, "how": "threads" if n > 1 else "one call", "wall_s": wall,
                            "tokens": tokens, "tokens_per_s": tokens / wall, "audio_s": audio,
                            "rtf_aggregate": wall / max(audio, 1e-9),
                            "peak_gb": peak_gb(device)})  # fmt: skip
    return res
