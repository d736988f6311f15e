"""Per-call cost of CosyVoice3's token2wav in VoxDesk: the whole run against the streaming schedule.

Loads a CosyVoice3 folder's flow and vocoder only (no LM, no engine) and feeds ``--tokens``
random speech tokens and a 3 s random prompt through :class:`app.models.cosyvoice.stream.TokenStream`
and :func:`~app.models.cosyvoice.stream.run_flow` exactly as the runner does, once not streaming
(one flow call, one vocoder call) and once streaming (a chunk at 25 + 3 tokens, the hop doubling to
100, the rest at the end). For each flow call and each vocoder call it prints the wall time
(synchronized on CUDA), the DiT calls and their input shape, and on CUDA the peak memory allocated
during the call above what was allocated before it (``torch.cuda.max_memory_allocated``), so a
streaming-only spike shows at the call that makes it. ``--official CHECKOUT`` runs the official
``CosyVoice3Model.token2wav`` on the same tokens and schedule after it (needs the official
side's imports on PYTHONPATH, as ``app/models/cosyvoice/bench_official.py`` does).

    python tools/cosyvoice_stream_probe.py --folder /tmp/cv05 --tokens 80 --device cuda
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from app.models.cosyvoice import stream as cs
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.flow_v3 import FlowV3
from app.models.cosyvoice.hift import HiFT
from app.models.cosyvoice.weights import load_pt

PROMPT_TOKENS = 75


def timed(device: torch.device, label: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn``, print its wall time and (CUDA) its peak memory above the memory before it."""
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    t0 = time.perf_counter()
    out = fn()
    if cuda:
        torch.cuda.synchronize(device)
    line = f"  {label}: {time.perf_counter() - t0:.3f} s"
    if cuda:
        line += f", peak +{(torch.cuda.max_memory_allocated(device) - base) / 2**30:.2f} GiB"
    print(line, flush=True)
    return out


def count_dit(flow: FlowV3, calls: list[tuple[int, ...]]) -> None:
    """Record the input shape of every DiT call in ``calls``."""
    forward = flow.estimator.forward

    def wrapped(*args: Any, **kwargs: Any) -> torch.Tensor:
        calls.append(tuple(args[0].shape))
        return forward(*args, **kwargs)

    flow.estimator.forward = wrapped


def run_job(
    flow: FlowV3, s: cs.TokenStream, job: cs.FlowJob, calls: list[tuple[int, ...]], device: torch.device
) -> None:
    """One flow call of ``s`` and its vocoder call, each timed; the DiT calls it made."""
    calls.clear()
    [mel] = timed(device, f"flow {job}", lambda: cs.run_flow(flow, [(s, job)]))
    print(f"    {len(calls)} DiT calls of {calls[0]}", flush=True)
    timed(device, f"vocoder, mel so far {s.offset * 2 + mel.shape[2]} frames", lambda: s.take(job, mel))


def voxdesk(folder: Path, tokens: list[int], voice: cs.Voice, device: torch.device) -> None:
    cfg = load_config(folder / "cosyvoice3.yaml")
    flow = FlowV3.from_config(cfg)
    flow.load(load_pt(folder / "flow.pt"))
    hift = HiFT.from_config(cfg)
    hift.load(load_pt(folder / "hift.pt"))
    flow, hift = flow.to(device).eval(), hift.to(device).eval()
    calls: list[tuple[int, ...]] = []
    count_dit(flow, calls)
    for streaming in (False, True, False, True):  # the first pair warms the kernels up
        print(f"voxdesk {'stream' if streaming else 'whole'}:", flush=True)
        s = cs.TokenStream("cosyvoice3", hift, voice, streaming)
        t0 = time.perf_counter()
        for token in tokens:
            s.push(token)
            while s.due():
                run_job(flow, s, s.job(final=False), calls, device)
        run_job(flow, s, s.job(final=True), calls, device)
        print(f"  total {time.perf_counter() - t0:.3f} s", flush=True)


def official(checkout: str, folder: Path, tokens: list[int], voice: cs.Voice, device: torch.device) -> None:
    from app.models.cosyvoice.bench_official import load_official

    model, _ = load_official(checkout, folder)
    tok = torch.tensor(tokens)[None]
    args = {"prompt_token": voice.tokens.cpu(), "prompt_feat": voice.feat.cpu(),
            "embedding": voice.embedding.cpu(), "uuid": "probe"}  # fmt: skip
    for stream in (False, True, False, True):
        print(f"official {'stream' if stream else 'whole'}:", flush=True)
        model.hift_cache_dict["probe"] = None
        hop, offset, t0 = cs.HOP_START, 0, time.perf_counter()
        while stream and len(tokens) - offset >= hop + cs.PRE_LOOKAHEAD:
            upto = offset + hop + cs.PRE_LOOKAHEAD
            call = dict(token=tok[:, :upto], token_offset=offset, stream=True, finalize=False)
            timed(device, f"token2wav upto {upto}", lambda call=call: model.token2wav(**args, **call))
            offset, hop = offset + hop, min(cs.HOP_MAX, hop * cs.HOP_SCALE)
        call = dict(token=tok, token_offset=offset, finalize=True)
        timed(device, f"token2wav final from {offset}", lambda call=call: model.token2wav(**args, **call))
        print(f"  total {time.perf_counter() - t0:.3f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True)
    ap.add_argument("--tokens", type=int, default=80)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--official", help="a CosyVoice checkout: also run its token2wav")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    g = torch.Generator().manual_seed(0)
    voice = cs.Voice(
        torch.randint(0, 6561, (1, PROMPT_TOKENS), generator=g).to(device),
        (torch.randn(1, 2 * PROMPT_TOKENS, 80, generator=g) - 5).to(device),
        torch.randn(1, 192, generator=g).to(device),
    )
    tokens = torch.randint(0, 6561, (args.tokens,), generator=g).tolist()
    voxdesk(args.folder, tokens, voice, device)
    if args.official:
        if device.type == "cpu":
            torch.cuda.is_available = lambda: False  # the official model picks CUDA by itself
        official(args.official, args.folder, tokens, voice, device)


if __name__ == "__main__":
    main()
