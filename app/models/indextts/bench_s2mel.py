"""S2Mel benchmark: VoxDesk's DiT + CFM solver, and optionally the official CFM, on random weights.

    python -m app.models.indextts.bench_s2mel --preset indextts25 --device cuda \\
        --prompt 300 --frames 600,1500 --batch 1,4,16 --json s2mel.json [--official CHECKOUT]

The estimator's weights are drawn for the preset's official keys (app/models/indextts/checkpoint.py,
``official_shapes.json``), so no folder is needed. Per total length T (prompt frames included; 86
frames a second): one request's solve (25 steps, guidance 0.7, so 25 estimator calls on 2 rows),
then ``B`` requests of T frames solved together (:func:`app.models.indextts.cfm.euler`, 2·B rows a
call), as ms per solve and ms per request (median of ``--repeat`` runs after one warm-up). With
``--official`` the checkout's ``CFM.inference`` runs the same request on the same weights (B = 1,
float32 as ``infer_v2_5.py`` runs it), and the largest difference of the two mels is reported.
``--dtype bfloat16`` runs VoxDesk's side in bfloat16 (the official side stays float32).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import torch

from app import atomic
from app.models.indextts import cfm
from app.models.indextts.checkpoint import official_shapes, state_dict
from app.models.indextts.dit import S2MelDiT
from app.models.indextts.presets import PRESETS, preset


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(run: Callable[[], Any], device: torch.device, repeat: int) -> float:
    """Median ms of ``repeat`` runs after one warm-up."""
    run()
    times = []
    for _ in range(repeat):
        _sync(device)
        start = time.perf_counter()
        run()
        _sync(device)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def _namespace(value: Any) -> Any:
    """The config as nested attributes (what the official code reads with ``args.DiT.depth`` and
    ``hasattr``), without munch."""
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: _namespace(v) for k, v in value.items()})
    return value


def official_cfm(checkout: str, s2mel: dict[str, Any], weights: dict[str, torch.Tensor]) -> torch.nn.Module:
    """The checkout's ``CFM`` with ``weights`` loaded strictly; the modules its files import but
    inference never runs (munch, einops, tqdm) get a stand-in when absent."""
    for name, attrs in (("munch", {"Munch": dict}), ("einops", {}), ("tqdm", {"tqdm": lambda it: it})):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.SimpleNamespace(**attrs)  # type: ignore[assignment]
    sys.path.insert(0, str(Path(checkout).resolve()))
    from indextts.s2mel.modules.flow_matching import CFM

    model = CFM(_namespace(s2mel))
    model.load_state_dict(weights, strict=True)
    model.estimator.setup_caches(max_batch_size=1, max_seq_length=8192)
    return model.eval()


Inputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]  # noise, cond, prompt mel, style


def _ours(dit: S2MelDiT, inputs: Inputs, batch: int, dtype: torch.dtype) -> torch.Tensor:
    """``batch`` copies of the request solved together."""
    noise, cond, prompt_mel, style = (a.expand(batch, *a.shape[1:]).to(dtype) for a in inputs)
    return cfm.euler(dit, noise, cond, prompt_mel, style)


def _official(model: torch.nn.Module, inputs: Inputs) -> torch.Tensor:
    _, cond, prompt_mel, style = inputs
    lens = torch.tensor([cond.shape[1]], device=cond.device)
    return model.inference(cond.clone(), lens, prompt_mel, style, None, 25, inference_cfg_rate=0.7)


def run(args: argparse.Namespace) -> dict[str, Any]:
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    s2mel = preset(args.preset)["s2mel"]
    weights = state_dict(official_shapes(args.preset), "cfm", args.seed)
    dit = S2MelDiT.from_config(s2mel).load(weights).to(device, dtype)
    official = official_cfm(args.official, s2mel, weights).to(device) if args.official else None
    content, mels = s2mel["DiT"]["content_dim"], s2mel["DiT"]["in_channels"]
    gen = torch.Generator().manual_seed(args.seed)
    rows = []
    for frames in args.frames:
        cond = torch.randn(1, frames, content, generator=gen).to(device)
        prompt_mel = (torch.randn(1, mels, args.prompt, generator=gen) - 4).to(device)
        style = torch.randn(1, 192, generator=gen).to(device)
        noise = torch.randn(1, mels, frames, generator=gen).to(device)
        row: dict[str, Any] = {"frames": frames, "prompt": args.prompt}
        inputs = (noise, cond, prompt_mel, style)
        for batch in args.batch:
            ms = _timed(partial(_ours, dit, inputs, batch, dtype), device, args.repeat)
            row[f"voxdesk_b{batch}_ms"] = round(ms, 2)
            row[f"voxdesk_b{batch}_ms_per_request"] = round(ms / batch, 2)
        if official is not None:
            theirs = partial(_official, official, inputs)
            row["official_b1_ms"] = round(_timed(theirs, device, args.repeat), 2)
            torch.manual_seed(args.seed)
            want = theirs()
            torch.manual_seed(args.seed)
            got = cfm.solve(dit, cond.to(dtype), prompt_mel.to(dtype), style.to(dtype))
            row["max_abs_diff_vs_official"] = (got.float() - want).abs().max().item()
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {
        "preset": args.preset,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "dtype": args.dtype,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "steps": 25,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="indextts25", choices=sorted(PRESETS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    ap.add_argument("--prompt", type=int, default=300, help="prompt frames in each request")
    ap.add_argument("--frames", type=lambda s: [int(n) for n in s.split(",")], default=[600, 1500])
    ap.add_argument("--batch", type=lambda s: [int(n) for n in s.split(",")], default=[1, 4])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--official", help="an index-tts checkout: also time its CFM.inference")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    if any(f <= args.prompt for f in args.frames):
        ap.error("every --frames value must exceed --prompt")
    with torch.inference_mode():
        result = run(args)
    if args.json:
        atomic.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
