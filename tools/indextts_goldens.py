"""Record the official IndexTTS-2.5 modules' weight layout, and check a tiny folder against it.

Runs in the official code's venv (tools/indextts_official_requirements.txt, see
tests/data/indextts/README.md), never in VoxDesk's; of VoxDesk it reads only
app/models/indextts/presets.py (plain data, loaded by file path). Two commands::

    python tools/indextts_goldens.py shapes /work/official/index-tts \\
        --out app/models/indextts/official_shapes.json
    python tools/indextts_goldens.py check /work/official/index-tts FOLDER [--infer]

``shapes`` builds, for every preset, the modules ``IndexTTS2.__init__`` builds
(``UnifiedVoice(**gpt, spk_cond_mode="campplus")``, ``MyModel(s2mel)``'s ``cfm`` and
``length_regulator``, ``EnhancedCodec``, ``CAMPPlus(80, 192)``, ``BigVGAN(config.json)``; the real
preset on the meta device) and records each ``state_dict()``'s keys and shapes, the dtype of
every non-float32 entry, and the persistent buffers' contents: verbatim when small, or the rule
that rebuilds them (``arange``, ``sinusoid``: the conformer's positional table). The real preset's
buffers (meta tensors have no values) take the tiny preset's values for the same name and shape.
app/models/indextts/checkpoint.py writes random weights for exactly these keys.

``check`` loads every file of a written folder the way the official code does, but strictly:
``load_state_dict(strict=True)`` on the same dicts the official loaders read (any missing,
unexpected or mis-shaped key fails), the buffers compared with the official modules' own, the
matrices and statistics checked for shape; then it runs the official loaders themselves
(``load_checkpoint``, ``load_checkpoint2``, ``EnhancedCodec.load_checkpoint``) and fails if they
print a warning, and builds ``IndexTTS2(cfg_path, model_dir, device="cpu", use_qwen_emo=False)``
when the folder has the text vocabulary and the w2v-BERT folder (and with ``use_qwen_emo=True``
when it has the QwenEmotion folder); ``--infer`` then speaks one short sentence with it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import logging
import math
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from indextts_official import load_tree, official_import  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PRESETS_FILE = REPO / "app" / "models" / "indextts" / "presets.py"
SHAPES_FILE = REPO / "app" / "models" / "indextts" / "official_shapes.json"
PARTS = ("gpt", "cfm", "length_regulator", "codec", "campplus", "bigvgan")
SMALL = 4096  # buffers up to this many values are recorded verbatim


def _presets() -> Any:
    """app/models/indextts/presets.py, loaded by path (app/models/__init__ needs VoxDesk's venv)."""
    sys.path.insert(0, str(REPO))
    spec = importlib.util.spec_from_file_location("voxdesk_indextts_presets", PRESETS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(tree: dict[str, Any], bigvgan_config: dict[str, Any]) -> dict[str, Any]:
    """The official modules of one preset, by part name (built on the current default device)."""
    from indextts.codec.models import EnhancedCodec
    from indextts.gpt.model_v2 import UnifiedVoice
    from indextts.s2mel.modules.bigvgan import bigvgan
    from indextts.s2mel.modules.bigvgan.env import AttrDict
    from indextts.s2mel.modules.campplus.DTDNN import CAMPPlus
    from indextts.s2mel.modules.commons import MyModel
    from omegaconf import OmegaConf

    cfg = OmegaConf.create(tree)
    s2mel = MyModel(cfg.s2mel)
    return {
        "gpt": UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus"),
        "cfm": s2mel.models["cfm"],
        "length_regulator": s2mel.models["length_regulator"],
        "codec": EnhancedCodec(**cfg.semantic_codec, cfg=cfg.semantic_codec),
        "campplus": CAMPPlus(feat_dim=80, embedding_size=192),
        "bigvgan": bigvgan.BigVGAN(AttrDict(bigvgan_config), use_cuda_kernel=False),
    }


def sinusoid(shape: list[int]) -> Any:
    """The conformer's positional table ``pe`` [1, max_len, d] (PE(p, 2i) = sin, PE(p, 2i+1) = cos)."""
    import torch

    _, length, dim = shape
    position = torch.arange(length).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2) * -(math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table.unsqueeze(0)


def _rule(value: Any) -> dict[str, Any]:
    import torch

    if value.dtype == torch.int64 and value.dim() == 1 and torch.equal(value, torch.arange(value.numel())):
        return {"rule": "arange"}
    if value.dim() == 3 and value.shape[0] == 1 and torch.equal(value, sinusoid(list(value.shape))):
        return {"rule": "sinusoid"}
    if value.numel() <= SMALL:
        return {"values": value.flatten().tolist()}
    raise SystemExit(f"error: a buffer of shape {list(value.shape)} has no rule: add one to _rule")


def record(modules: dict[str, Any], meta: bool, tiny: dict[str, Any] | None) -> dict[str, Any]:
    """Keys, shapes, dtypes and buffer contents of ``modules`` (``tiny``: the tiny preset's entry)."""
    import torch

    entry: dict[str, Any] = {"dtypes": {}, "buffers": {}}
    for part, module in modules.items():
        state = module.state_dict()
        entry[part] = {k: list(v.shape) for k, v in state.items()}
        for key, value in state.items():
            if value.dtype != torch.float32 and not key.endswith("num_batches_tracked"):  # int64, always
                entry["dtypes"][f"{part}.{key}"] = str(value.dtype).removeprefix("torch.")
        persistent = {n for n, _ in module.named_buffers()} & set(state)
        for key in sorted(persistent):
            name, value = f"{part}.{key}", state[key]
            if key.endswith(("running_mean", "running_var", "num_batches_tracked")):
                continue  # BatchNorm statistics are weights of a trained model: random, see the writer
            if not meta:
                entry["buffers"][name] = _rule(value)
                continue
            leaf = key.rsplit(".", 1)[-1]
            same = [
                (k, _resolve(tiny["buffers"], k)) for k in tiny["buffers"] if k.rsplit(".", 1)[-1] == leaf
            ]
            rule = next((v for k, v in same if "rule" in v), None)
            values = next((v for k, v in same if "values" in v and len(v["values"]) == value.numel()), None)
            if rule is None and values is None:
                raise SystemExit(f"error: no tiny buffer gives the values of {name}")
            entry["buffers"][name] = rule or values
    _share(entry["buffers"])
    return entry


def _share(buffers: dict[str, Any]) -> None:
    """Replace repeated contents by ``{"same_as": first key}`` (BigVGAN's filters are all alike)."""
    first: dict[str, str] = {}
    for key, spec in buffers.items():
        if "values" in spec:
            seen = first.setdefault(json.dumps(spec["values"]), key)
            if seen != key:
                buffers[key] = {"same_as": seen}


def _resolve(buffers: dict[str, Any], key: str) -> dict[str, Any]:
    spec = buffers[key]
    return buffers[spec["same_as"]] if "same_as" in spec else spec


def _compact_json(obj: object) -> str:
    """Indented JSON with each list of numbers on one line (one state-dict key per line)."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    flat = re.sub(r"\[\s*([-0-9.e+,\s]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    return flat + "\n"


def cmd_shapes(args: argparse.Namespace) -> None:
    official_import(args.official)
    import torch

    presets = _presets()
    table: dict[str, Any] = {}
    for name in (presets.TINY, presets.REAL):
        tree, voc = presets.PRESETS[name], presets.BIGVGAN[name]
        meta = name != presets.TINY
        torch.manual_seed(0)
        with torch.device("meta") if meta else contextlib.nullcontext():
            modules = build(tree, voc)
        entry = {"tree": tree, "bigvgan_config": voc, **record(modules, meta, table.get(presets.TINY))}
        table[name] = entry
        sizes = ", ".join(f"{p} {sum(math.prod(s) for s in entry[p].values()):,}" for p in PARTS)
        print(f"{name}: {sizes} values; buffers {len(entry['buffers'])}")
    out = Path(args.out)
    out.write_text(_compact_json(table), encoding="utf-8")
    print(f"wrote {out}")


# ---- check ----------------------------------------------------------------------------------
def _load(path: Path) -> Any:
    import torch

    return torch.load(str(path), map_location="cpu", weights_only=True)


def _strict(module: Any, state: dict[str, Any], what: str) -> None:
    module.load_state_dict(state, strict=True)  # raises on a missing / unexpected / mis-shaped key
    own = module.state_dict()
    for key, value in state.items():
        if value.dtype != own[key].dtype:
            raise SystemExit(f"error: {what}: {key} is {value.dtype}, the module has {own[key].dtype}")
    print(f"{what}: {len(state)} keys load strictly")


def _buffers_match(fresh: Any, state: dict[str, Any], what: str) -> None:
    """The file's persistent buffers equal those the official module computes itself."""
    import torch

    own = fresh.state_dict()
    for name, _ in fresh.named_buffers():
        if name in own and not name.endswith(("running_mean", "running_var", "num_batches_tracked")):
            if not torch.equal(own[name], state[name]):
                diff = (own[name].double() - state[name].double()).abs().max().item()
                raise SystemExit(f"error: {what}: buffer {name} differs from the official one by {diff}")


@contextlib.contextmanager
def _silent(what: str) -> Any:
    """Fail if the official loader prints or logs a warning (a key it skipped or kept random)."""
    out = io.StringIO()
    records: list[str] = []

    class Grab(logging.Handler):
        def emit(self, rec: logging.LogRecord) -> None:
            if rec.levelno >= logging.WARNING:
                records.append(rec.getMessage())

    handler = Grab()
    logging.getLogger().addHandler(handler)
    try:
        with contextlib.redirect_stdout(out):
            yield
    finally:
        logging.getLogger().removeHandler(handler)
    said = [
        line
        for line in out.getvalue().splitlines()
        if re.search(r"missing|unexpected|Skipped|mismatch", line)
    ]
    if said or records:
        raise SystemExit(f"error: {what} warned: {(said + records)[0]}")
    print(f"{what}: the official loader is silent")


def cmd_check(args: argparse.Namespace) -> None:
    official_import(args.official)
    folder = Path(args.folder).resolve()
    cfg = load_tree(folder)
    tree = _to_plain(cfg)
    voc = json.loads((folder / "hf_cache" / "bigvgan" / "config.json").read_text(encoding="utf-8"))
    modules = build(tree, voc)
    fresh = build(tree, voc)
    gpt = _load(folder / cfg.gpt_checkpoint)
    gpt = gpt.get("model", gpt)
    s2mel = _load(folder / cfg.s2mel_checkpoint)["net"]
    files = {
        "gpt": gpt,
        "cfm": s2mel["cfm"],
        "length_regulator": s2mel["length_regulator"],
        "codec": _load(folder / "codec.pth")["model"],
        "campplus": _load(folder / "hf_cache" / "campplus_cn_common.bin"),
        "bigvgan": _load(folder / "hf_cache" / "bigvgan" / "bigvgan_generator.pt")["generator"],
    }
    if set(s2mel) != {"cfm", "length_regulator"}:
        raise SystemExit(f"error: s2mel.pth net holds {sorted(s2mel)}")
    for part in PARTS:
        _strict(modules[part], files[part], part)
        _buffers_match(fresh[part], files[part], part)
    emo_num, dim = list(cfg.emo_num), int(cfg.gpt.model_dim)
    stats = _load(folder / cfg.w2v_stat)
    checks = {
        "w2v_stat mean": (stats["mean"].shape, (1024,)),
        "w2v_stat var": (stats["var"].shape, (1024,)),
        "spk_matrix": (_load(folder / cfg.spk_matrix).shape, (sum(emo_num), 192)),
        "emo_matrix": (_load(folder / cfg.emo_matrix).shape, (sum(emo_num), dim)),
    }
    for what, (got, want) in checks.items():
        if tuple(got) != want:
            raise SystemExit(f"error: {what} is {tuple(got)}, the official code needs {want}")
    if not bool((stats["var"] > 0).all()):
        raise SystemExit("error: w2v_stat var has values <= 0")
    shapes = ", ".join(f"{what} {list(want)}" for what, (_, want) in checks.items())
    print(f"matrices and statistics: {shapes}")

    from indextts.codec.models import EnhancedCodec
    from indextts.gpt.model_v2 import UnifiedVoice
    from indextts.s2mel.modules.commons import MyModel, load_checkpoint2
    from indextts.utils.checkpoint import load_checkpoint

    with _silent("load_checkpoint(gpt)"):
        load_checkpoint(UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus"), str(folder / cfg.gpt_checkpoint))
    with _silent("load_checkpoint2(s2mel)"):
        load_checkpoint2(MyModel(cfg.s2mel), None, str(folder / cfg.s2mel_checkpoint), load_only_params=True,
                         ignore_modules=[], is_distributed=False)  # fmt: skip
    with _silent("EnhancedCodec.load_checkpoint"):
        EnhancedCodec(**cfg.semantic_codec, cfg=cfg.semantic_codec).load_checkpoint(str(folder / "codec.pth"))
    _whole(folder, cfg, args.infer)


def _to_plain(cfg: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=False)


def _whole(folder: Path, cfg: Any, infer: bool) -> None:
    """``IndexTTS2`` itself, when the folder has the parts the other writers add."""
    needs = {
        "the tiktoken vocabulary": folder / cfg.dataset.bpe_model,
        "hf_cache/w2v-bert-2.0": folder / "hf_cache" / "w2v-bert-2.0" / "config.json",
    }
    missing = [what for what, path in needs.items() if not path.exists()]
    if missing:
        print(f"IndexTTS2 not built: the folder lacks {' and '.join(missing)} (the text and audio parts' "
              "write_tiny_* add them once merged)")  # fmt: skip
        return
    from indextts.infer_v2_5 import IndexTTS2

    with_qwen = (folder / cfg.qwen_emo_path / "config.json").is_file()
    tts = IndexTTS2(cfg_path=str(folder / "config.yaml"), model_dir=str(folder), device="cpu",
                    use_qwen_emo=with_qwen)  # fmt: skip
    print(f"IndexTTS2 built from {folder} (use_qwen_emo={with_qwen}): {type(tts).__name__}")
    if infer:
        _speak(tts, folder)


def _speak(tts: Any, folder: Path) -> None:
    """One short official ``infer`` (a synthetic 2 s prompt, seed 1, at most 80 codes)."""
    import numpy as np
    import soundfile
    import torch

    rate = 22050
    t = np.arange(2 * rate) / rate
    tone = 0.3 * np.sin(2 * np.pi * 180 * t) * np.hanning(t.size)
    prompt = folder / "check_prompt.wav"
    soundfile.write(str(prompt), tone.astype(np.float32), rate)
    try:
        torch.manual_seed(1)
        sr, wav = tts.infer(spk_audio_prompt=str(prompt), text="你好，世界。", output_path=None, lang="zh",
                            max_mel_tokens=80)  # fmt: skip
    finally:
        prompt.unlink()
    print(f"IndexTTS2.infer spoke {len(wav) / sr:.2f} s at {sr} Hz (peak {int(np.abs(wav).max())} of 32767)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("shapes", help="record official_shapes.json")
    p.add_argument("official", help="the index-tts checkout")
    p.add_argument("--out", default=str(SHAPES_FILE))
    p = sub.add_parser("check", help="load a written folder with the official loaders, strictly")
    p.add_argument("official", help="the index-tts checkout")
    p.add_argument("folder")
    p.add_argument("--infer", action="store_true", help="and speak one short sentence with IndexTTS2.infer")
    args = ap.parse_args()
    {"shapes": cmd_shapes, "check": cmd_check}[args.cmd](args)


if __name__ == "__main__":
    main()
