"""Write randomly initialised IndexTTS-2.5 folders in the official layout, for tests and benchmarks.

A folder holds what the released ``IndexTeam/IndexTTS-2.5`` folder holds (docs/indextts_plan.md
section 2)::

    config.yaml                         plain YAML (presets.yaml_text)
    gpt.pth                             UnifiedVoice (campplus mode) state dict, incl. the emotion encoder
    s2mel.pth                           {"net": {"cfm": ..., "length_regulator": ...}}
    codec.pth                           {"model": EnhancedCodec state dict}
    wav2vec2bert_stats.pt               {"mean": [1024], "var": [1024]}
    feat1.pt  feat2.pt                  speaker [sum(emo_num), 192] and emotion [sum(emo_num), model_dim] rows
    hf_cache/campplus_cn_common.bin     CAMPPlus(80, 192) state dict
    hf_cache/bigvgan/                   config.json, bigvgan_generator.pt {"generator": ...} (weight norm)
    multilingual_zh_ja_yue_char_del.tiktoken    text.write_tiny_vocab       (the text part)
    hf_cache/w2v-bert-2.0/              semantic.write_tiny_w2v             (the audio part)
    qwen0.6bemo4-merge/                 qwen_emotion.write_tiny_qwen        (the emotion part)

The last three come from the parts that own them, called when they are importable. Every file is
a plain tensor table (``torch.load(weights_only=True)`` reads it). Keys, shapes, dtypes and the
computed buffers (positional tables, filters) come from ``official_shapes.json`` beside this file:
the official modules' ``state_dict()`` for each preset, recorded by
``tools/indextts_goldens.py shapes`` and checked by its ``check`` command (every official loader
loads a written folder strictly, buffers equal the official ones).

The random values keep the tiny model numerically tame (:func:`init_tensor`): norm weights and
weight-norm gains near 1, biases small, embeddings and codebooks unit normal, other weights scaled
by their fan-in, BatchNorm statistics plausible. The same preset and seed give the same tensors;
each file draws from its own generator, so a new key in one file changes no other file.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from app import atomic
from app.atomic import atomic_path
from app.errors import VoxDeskError
from app.models.indextts.presets import BIGVGAN, PRESETS, TINY, W2V_WIDTH, preset, yaml_text

SHAPES_FILE = Path(__file__).with_name("official_shapes.json")
# A random GPT head almost never picks the stop code (no stop in 200 steps for seeds 1-4); with
# this bias on its logit the official 3-beam decode of the tiny folder stopped after 11, 24, 14 and
# 136 codes for seeds 1-4 (1.5 gave 6, 24, 14, 14; 2.0 gave 3, 20, 3, 1, too short for S2Mel).
# Goldens were made with 1.0: changing it changes every tiny GPT golden.
STOP_BIAS = 1.0
# Random BigVGAN weights drive most samples into the +-1 clamp, where a parity test sees little:
# 84 % of the samples with a unit gain on the output convolution, 2 % with this one (audio spread
# 0.45; measured with the official BigVGAN on a tiny-folder mel). Goldens were made with 0.1.
VOCODER_GAIN = 0.1


def official_shapes(name: str) -> dict[str, Any]:
    """The recorded entry of preset ``name``; a one-line error if it is missing or stale."""
    try:
        table = json.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VoxDeskError(f"Cannot read {SHAPES_FILE.name} ({exc}): rerun tools/indextts_goldens.py "
                           "shapes.") from None  # fmt: skip
    entry = table.get(name)
    if (
        not isinstance(entry, dict)
        or entry.get("tree") != PRESETS[name]
        or entry.get("bigvgan_config") != BIGVGAN[name]
    ):
        raise VoxDeskError(f"{SHAPES_FILE.name} has no entry for the current '{name}' preset: rerun "
                           "tools/indextts_goldens.py shapes.")  # fmt: skip
    return entry


# ---- values ---------------------------------------------------------------------------------
def _is_embedding(key: str) -> bool:
    return key.endswith(
        ("embedding.weight", "emb.weight", "embedder.weight", "codebook.weight")
    ) or key.rsplit(".", 1)[-1] in ("mask_token", "latents")


def init_tensor(part: str, key: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Random values for ``key`` of ``part`` (a float32 weight; BatchNorm statistics as such)."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "num_batches_tracked":
        return torch.tensor(0, dtype=torch.int64)
    if leaf == "running_mean":
        return 0.1 * torch.randn(shape, generator=gen)
    if leaf == "running_var":
        return 0.5 + torch.rand(shape, generator=gen)
    if part == "bigvgan" and leaf in ("alpha", "beta"):  # SnakeBeta in log scale: exp(~0) = ~1
        return 0.1 * torch.randn(shape, generator=gen)
    if (leaf == "weight" and len(shape) == 1) or leaf in ("weight_g", "gamma"):
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)
    if leaf in ("bias", "beta", "pos_bias_u", "pos_bias_v"):
        return 0.05 * torch.randn(shape, generator=gen)
    if _is_embedding(key):
        return torch.randn(shape, generator=gen)
    if part == "gpt" and key.startswith("gpt.h.") and len(shape) == 2:  # GPT-2's Conv1D is [in, out]
        fan_in = shape[0]
    else:
        fan_in = max(1, torch.Size(shape[1:]).numel()) if len(shape) > 1 else 1
    return torch.randn(shape, generator=gen) / fan_in**0.5


def _sinusoid(shape: list[int]) -> torch.Tensor:
    """The conformer's positional table [1, max_len, d]: sin on even columns, cos on odd ones."""
    _, length, dim = shape
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * -(torch.log(torch.tensor(10000.0)) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table.unsqueeze(0)


def _buffer(entry: dict[str, Any], name: str, shape: list[int], dtype: torch.dtype) -> torch.Tensor:
    spec = entry["buffers"][name]
    if "same_as" in spec:
        spec = entry["buffers"][spec["same_as"]]
    if spec.get("rule") == "arange":
        return torch.arange(shape[0], dtype=dtype)
    if spec.get("rule") == "sinusoid":
        return _sinusoid(shape).to(dtype)
    return torch.tensor(spec["values"], dtype=dtype).reshape(shape)


def _generator(seed: int, what: str) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(what.encode()))


def state_dict(entry: dict[str, Any], part: str, seed: int) -> dict[str, torch.Tensor]:
    """The random state dict of ``part`` (gpt, cfm, length_regulator, codec, campplus, bigvgan)."""
    gen = _generator(seed, part)
    out: dict[str, torch.Tensor] = {}
    for key, shape in entry[part].items():
        name = f"{part}.{key}"
        default = "int64" if key.endswith("num_batches_tracked") else "float32"  # not recorded: always int64
        dtype = getattr(torch, entry["dtypes"].get(name, default))
        if name in entry["buffers"]:
            out[key] = _buffer(entry, name, shape, dtype)
        else:
            out[key] = init_tensor(part, key, tuple(shape), gen).to(dtype)
    return out


# ---- the folder -----------------------------------------------------------------------------
def _save(path: Path, data: Any) -> None:
    with atomic_path(path) as tmp:
        torch.save(data, tmp)


def _other_parts(out: Path, tree: dict[str, Any], seed: int) -> None:
    """Call the writers of the parts other modules own, those whose module exists (an error inside
    one, or a module without its writer, is not hidden)."""
    jobs: list[tuple[str, str, Callable[[Any], Any]]] = [
        ("text", "write_tiny_vocab", lambda f: f(out)),
        ("semantic", "write_tiny_w2v", lambda f: f(out / "hf_cache" / "w2v-bert-2.0", seed)),
        ("qwen_emotion", "write_tiny_qwen", lambda f: f(out / tree["qwen_emo_path"], seed)),
    ]
    for module, function, call in jobs:
        name = f"app.models.indextts.{module}"
        if importlib.util.find_spec(name) is None:  # that part is not merged yet
            continue
        call(getattr(importlib.import_module(name), function))


def write_folder(out: str | Path, preset_name: str = TINY, seed: int = 0) -> Path:
    """Write the random folder of ``preset_name`` into ``out`` (created); returns the folder.

    Each file is written atomically; the same preset and seed give the same tensors in every
    file. The tiny folder is about 65 MB, mostly what the official code fixes: CAMPPlus (28 MB)
    and the codec's 1024-wide resampling convolutions (27 MB)."""
    tree = preset(preset_name)
    entry = official_shapes(preset_name)
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise VoxDeskError(f"{root} is a file: give a folder to write the IndexTTS model into.")
    try:
        (root / "hf_cache" / "bigvgan").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VoxDeskError(
            f"Cannot create the folder {root} ({exc.strerror or exc}): choose another one."
        ) from None
    atomic.write_text(root / "config.yaml", yaml_text(tree))
    gpt = state_dict(entry, "gpt", seed)
    gpt["mel_head.bias"][tree["gpt"]["stop_mel_token"]] += STOP_BIAS
    _save(root / tree["gpt_checkpoint"], gpt)
    del gpt
    net = {part: state_dict(entry, part, seed) for part in ("cfm", "length_regulator")}
    _save(root / tree["s2mel_checkpoint"], {"net": net})
    del net
    _save(root / "codec.pth", {"model": state_dict(entry, "codec", seed)})
    _save(root / "hf_cache" / "campplus_cn_common.bin", state_dict(entry, "campplus", seed))
    atomic.write_json(root / "hf_cache" / "bigvgan" / "config.json", BIGVGAN[preset_name])
    vocoder = state_dict(entry, "bigvgan", seed)
    vocoder["conv_post.weight_g"] *= VOCODER_GAIN
    _save(root / "hf_cache" / "bigvgan" / "bigvgan_generator.pt", {"generator": vocoder})
    gen = _generator(seed, "matrices")
    rows, dim = sum(tree["emo_num"]), tree["gpt"]["model_dim"]
    stats = {
        "mean": 0.1 * torch.randn(W2V_WIDTH, generator=gen),
        "var": 0.5 + torch.rand(W2V_WIDTH, generator=gen),
    }
    _save(root / tree["w2v_stat"], stats)
    _save(root / tree["spk_matrix"], torch.randn(rows, 192, generator=gen))
    _save(root / tree["emo_matrix"], torch.randn(rows, dim, generator=gen))
    _other_parts(root, tree, seed)
    return root


def main(argv: list[str] | None = None) -> int:
    """``python -m app.models.indextts.checkpoint OUT [--preset NAME] [--seed N]``."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--preset", default=TINY, choices=sorted(PRESETS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        root = write_folder(args.out, args.preset, args.seed)
    except VoxDeskError as exc:
        print(f"error: {exc}")
        return 1
    missing = _missing_parts(root)
    print(
        f"wrote {root}"
        + (f" (not yet written, their parts are not merged: {', '.join(missing)})" if missing else "")
    )
    return 0


def _missing_parts(root: Path) -> list[str]:
    tree = preset(TINY)
    wanted = {
        tree["dataset"]["bpe_model"]: root / tree["dataset"]["bpe_model"],
        "hf_cache/w2v-bert-2.0": root / "hf_cache" / "w2v-bert-2.0",
        tree["qwen_emo_path"]: root / tree["qwen_emo_path"],
    }
    return [name for name, path in wanted.items() if not path.exists()]


if __name__ == "__main__":
    raise SystemExit(main())
