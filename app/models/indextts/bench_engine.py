"""IndexTTS's GPT beams through the engine: decode speed, eager against CUDA graphs.

    python -m app.models.indextts.bench_engine --device cpu --preset indextts25-tiny --batch 1 4
    python -m app.models.indextts.bench_engine --device cuda --preset indextts25 --dtype bf16 \\
        --batch 1 8 32 --out ix_engine.json

A random GPT of ``--preset``'s shapes (the numbers do not matter for time) behind the real
:class:`~app.models.indextts.runner.IndexRunner` in an :class:`~app.engine.engine.Engine`, with a
minimal folder beside it (config.yaml and the tiny vocabulary: what the runner reads). The voice
and the segment decoder are stand-ins (a fixed random style and emotion vector; no audio): this
times the GPT's beams only. ``--batch B``: B requests of the same text (seeds 1..B) submitted
together, run to the end (``--steps`` codes at most, 3 beams each). On CUDA each batch runs eager
and with the decode step's CUDA graphs, and the JSON says whether every request drew the same
codes both ways. Prints and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.models.indextts.beam import BeamParams
from app.models.indextts.bench_gpt import write_report
from app.models.indextts.gpt import UnifiedGPT
from app.models.indextts.pipeline import Conditioning, Parts
from app.models.indextts.presets import PRESETS, SPK_DIM, yaml_text
from app.models.indextts.vocab import write_tiny_vocab

TEXT = "The quick brown fox jumps over the lazy dog, and then it runs back home again."


def _folder(out: Path) -> Path:
    (out / "config.yaml").write_text(yaml_text(PRESETS["indextts25-tiny"]), encoding="utf-8")
    write_tiny_vocab(out)
    return out


def _engine(folder: Path, gpt: UnifiedGPT, args: argparse.Namespace, graphs: bool) -> Engine:
    style = torch.randn(1, SPK_DIM, generator=torch.Generator().manual_seed(0))
    emovec = torch.randn(1, gpt.dim, generator=torch.Generator().manual_seed(1)) * 0.1
    parts = Parts(
        conditioner=lambda _request, _generator: Conditioning(style, emovec),
        decoder=lambda codes, _cond, _generator, _last: np.asarray(codes, np.float32),
        gpt=gpt,
        params=BeamParams(max_mel_tokens=args.steps),
    )
    config = EngineConfig(
        model_dir=str(folder), device=args.device, dtype=args.dtype, cpu_precision="float32",
        max_num_seqs=max(args.batch), max_model_len=256 + args.steps, cuda_graphs=graphs,
        attention=args.attention,
    )  # fmt: skip
    return Engine(config, model=parts)


def _run(engine: Engine, batch: int, device: torch.device) -> dict:
    ids = [engine.submit(SynthRequest(text=TEXT, seed=s + 1)) for s in range(batch)]
    codes: dict[int, list[int]] = {i: [] for i in ids}
    steps, failed = 0, []
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    while engine.has_work():
        for event in engine.step():
            if isinstance(event, AudioChunk):
                codes[event.request_id] += [int(c) for c in event.samples]
            elif isinstance(event, RequestFailed):
                failed.append(event.message)
            elif isinstance(event, RequestFinished):
                pass
        steps += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    wall = time.perf_counter() - start
    return {"wall_s": round(wall, 3), "engine_steps": steps, "step_ms": round(1000 * wall / steps, 3),
            "codes_per_s": round(sum(map(len, codes.values())) / wall, 1), "failed": failed,
            "codes": [codes[i] for i in ids]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--preset", default="indextts25-tiny", choices=sorted(PRESETS))
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    parser.add_argument("--attention", default="auto")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--steps", type=int, default=60, help="codes per request at most")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    gpt = UnifiedGPT.from_config(PRESETS[args.preset]["gpt"]).eval()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(Path(tmp))
        for batch in args.batch:
            row: dict = {"batch": batch}
            for graphs in ([False, True] if device.type == "cuda" else [False]):
                engine = _engine(folder, gpt, args, graphs)
                _run(engine, 1, device)  # warm-up
                row["graphs" if graphs else "eager"] = _run(engine, batch, device)
                engine.shutdown()
            if "graphs" in row:
                row["same_codes"] = row["graphs"]["codes"] == row["eager"]["codes"]
            for key in ("eager", "graphs"):
                if key in row:
                    row[key]["codes_drawn"] = sum(map(len, row[key].pop("codes")))
            results.append(row)
            print(json.dumps(row))
    write_report(args, device, results)


if __name__ == "__main__":
    main()
