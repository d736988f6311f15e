"""CosyVoice2's flow (FlowV2) alone: ms per call at real shapes (not a pytest file).

    python tests/bench_flow_v2.py --device cuda --out flow_v2.json [--dtypes float32,bfloat16]
    python tests/bench_flow_v2.py --device cpu --size tiny --threads 2 --out /tmp/flow_v2.json

Random weights of the released CosyVoice2-0.5B sizes (``--size real``: 512-wide encoder with 6 + 4
conformer blocks, 8 heads, 2048 feed-forward; U-Net 256 channels, 4 transformer blocks per
level, 12 mid levels; 112.5 M parameters) or of the tiny test preset. Two calls, each for
batches of 1 and 16 identical-length requests:

- ``first_chunk``: a 3 s prompt (75 tokens) + the first streaming chunk (25 tokens + 3 of
  look-ahead), ``streaming=True, finalize=False`` → 50 mel frames: on the path to first audio;
- ``sentence``: the same prompt + 250 tokens (10 s of speech), ``streaming=False, finalize=True``.

Each figure is the median of ``--repeats`` calls after two warm-up calls (CUDA synchronised),
with the peak CUDA memory; the JSON also records the device, dtype and torch version.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.models.cosyvoice.conformer import UpsampleConformerEncoder  # noqa: E402
from app.models.cosyvoice.flow_v2 import FlowV2  # noqa: E402
from app.models.cosyvoice.unet import CausalUNet  # noqa: E402

SIZES = {  # (encoder heads, ff, blocks), (U-Net channels, heads, head dim, blocks, mid levels)
    "real": ((8, 2048, 6), (256, 8, 64, 4, 12)),  # examples/libritts/cosyvoice2/conf/cosyvoice2.yaml
    "tiny": ((2, 64, 1), (32, 2, 16, 1, 1)),  # app/models/cosyvoice/presets.py cosyvoice2-tiny
}
PROMPT_TOKENS, CALLS = 75, {"first_chunk": (28, True, False), "sentence": (250, False, True)}


def build(size: str) -> FlowV2:
    (heads, ff, blocks), (channels, u_heads, head_dim, n_blocks, mid) = SIZES[size]
    encoder = UpsampleConformerEncoder(heads=heads, hidden=ff, blocks=blocks, chunk=25)
    estimator = CausalUNet(320, 80, channels, u_heads, head_dim, n_blocks, mid, chunk=50)
    return FlowV2(encoder, estimator, vocab_size=6561).eval()


def measure(flow: FlowV2, batch: int, tokens: int, streaming: bool, finalize: bool, repeats: int) -> dict:
    device = flow.encoder_proj.weight.device
    gen = torch.Generator().manual_seed(0)
    feat = torch.randn(batch, 2 * PROMPT_TOKENS, 80, generator=gen)
    args = (
        torch.randint(0, 6561, (batch, tokens), generator=gen).to(device), torch.full((batch,), tokens),
        torch.randint(0, 6561, (batch, PROMPT_TOKENS), generator=gen).to(device),
        torch.full((batch,), PROMPT_TOKENS), feat.to(device), torch.full((batch,), feat.shape[1]),
        torch.randn(batch, 192, generator=gen).to(device), streaming, finalize,
    )  # fmt: skip
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(repeats + 2):
        sync()
        start = time.perf_counter()
        mel = flow.inference(*args)
        sync()
        if i >= 2:
            times.append(time.perf_counter() - start)
    out = {"batch": batch, "tokens": tokens, "mel_frames": int(mel.shape[-1]),
           "ms": round(1000 * statistics.median(times), 2)}  # fmt: skip
    if device.type == "cuda":
        out["peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="real", choices=sorted(SIZES))
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    results = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
               "torch": torch.__version__, "size": args.size, "threads": torch.get_num_threads(),
               "runs": []}  # fmt: skip
    for name in args.dtypes.split(","):
        flow = build(args.size).to(device, getattr(torch, name))
        results["parameters_m"] = round(sum(p.numel() for p in flow.parameters()) / 1e6, 2)
        for call, (tokens, streaming, finalize) in CALLS.items():
            for batch in (int(b) for b in args.batches.split(",")):
                row = measure(flow, batch, tokens, streaming, finalize, args.repeats)
                results["runs"].append(row := {"dtype": name, "call": call, **row})
                print(json.dumps(row), flush=True)
        del flow
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
