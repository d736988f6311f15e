"""IndexTTS GPT speed on the paged cache: prefill and one beam-search step.

    python -m app.models.indextts.bench_gpt --device cpu --preset indextts25-tiny
    python -m app.models.indextts.bench_gpt --device cuda --preset indextts25 --dtype bf16 \\
        --batch 1 4 16 --out ix_gpt.json

Random weights (the layout of ``--preset``; numbers do not matter for time). ``--batch B``:
B requests of ``--text`` text ids, 3 beams each, decoded together for ``--steps`` steps, every
beam a row of one paged KV cache (``--attention``: sdpa, triton or flash). Each step times the
forward of the B·3 rows, the mel head, and each request's ``BeamState.step`` (the official
processors and one multinomial over 3·V per request). Beams keep their rows (no reorder): the
engine re-points block tables, which costs no KV traffic. Prints and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from app.engine.attention import PagedKVCache, batch_context, pick_backend
from app.models.indextts.beam import BeamParams, BeamState
from app.models.indextts.gpt import UnifiedGPT, mel_position
from app.models.indextts.presets import PRESETS


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def run(model: UnifiedGPT, batch: int, args: argparse.Namespace, device: torch.device) -> dict:
    dtype = next(model.parameters()).dtype
    n, bs, spec = 3, 256, model.kv_spec()
    params = BeamParams(max_mel_tokens=args.steps + 1)
    gen = torch.Generator(device=device).manual_seed(0)
    cond = model.conditioning(torch.randn(1, 192, device=device, dtype=dtype),
                              torch.randn(1, model.dim, device=device, dtype=dtype))  # fmt: skip
    prompt = model.prompt(cond, torch.randint(2, 2000, (args.text,)).tolist(), 1)
    rows, length = batch * n, len(prompt)
    per_row = -(-(length + args.steps + 2) // bs)
    kv = PagedKVCache(spec.num_layers, rows * per_row, bs, spec.num_kv_heads, spec.head_dim, dtype, device,
                      args.attention)  # fmt: skip
    tables = [list(range(r * per_row, (r + 1) * per_row)) for r in range(rows)]
    # no stop code (-1 is never drawn): every request runs all the steps
    states = [BeamState(params, [1, model.start_mel], gen, stop_token=-1) for _ in range(batch)]

    _sync(device)
    start = time.perf_counter()
    kv.context, _ = batch_context(tables, [0] * rows, [length] * rows, length, bs, kv.scratch_block, device)
    hidden = model(prompt[None].expand(rows, -1, -1).contiguous(), kv)[:, -1]
    _sync(device)
    prefill = time.perf_counter() - start

    step_times, beam_times = [], []
    for step in range(args.steps):
        _sync(device)
        t0 = time.perf_counter()
        logits = model.logits(hidden).float()
        tokens: list[int] = []
        for q, state in enumerate(states):
            codes, _ = state.step(logits[q * n : (q + 1) * n])
            tokens += codes
        _sync(device)
        t1 = time.perf_counter()
        starts = [length + step] * rows
        kv.context, _ = batch_context(tables, starts, [1] * rows, 1, bs, kv.scratch_block, device)
        pos = torch.full((rows,), mel_position(step), device=device)
        hidden = model(model.mel_embeds(torch.tensor(tokens, device=device), pos)[:, None], kv)[:, 0]
        _sync(device)
        t2 = time.perf_counter()
        beam_times.append(t1 - t0)
        step_times.append(t2 - t0)
    warm = step_times[len(step_times) // 4 :]
    beam_warm = beam_times[len(beam_times) // 4 :]
    return {
        "batch": batch,
        "beams": n,
        "prompt_rows": length,
        "prefill_ms": round(prefill * 1000, 2),
        "step_ms": round(1000 * sum(warm) / len(warm), 3),
        "beam_search_ms": round(1000 * sum(beam_warm) / len(beam_warm), 3),
        "codes_per_s": round(batch / (sum(warm) / len(warm)), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--preset", default="indextts25-tiny", choices=sorted(PRESETS))
    parser.add_argument("--dtype", default="fp32", choices=("fp32", "bf16", "fp16"))
    parser.add_argument("--attention", default="auto")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--text", type=int, default=60, help="text ids per request")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    args.attention = pick_backend(device, args.attention)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    torch.manual_seed(0)
    with torch.device(device):
        model = UnifiedGPT.from_config(PRESETS[args.preset]["gpt"])
    model = model.to(dtype).eval()
    with torch.inference_mode():
        results = [run(model, b, args, device) for b in args.batch]
    write_report(args, device, results)


def write_report(args: argparse.Namespace, device: torch.device, results: list[dict]) -> None:
    """Print the run's JSON report (device, settings, one row per batch) and write it to ``--out``."""
    report = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "preset": args.preset, "dtype": args.dtype, "attention": args.attention,
              "torch": torch.__version__, "steps": args.steps, "threads": torch.get_num_threads(),
              "results": results}  # fmt: skip
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
