"""Where a streaming CosyVoice request's time to first audio goes inside the engine, step by step.

The engine bench reports first audio as one figure (``first_chunk_s``). This trace builds the
same engine and voice as ``app/models/cosyvoice/bench.py`` (``--text-ids`` text ids, a 3 s voice),
runs one warm-up streaming request, then ``--requests`` streaming requests submitted together and
times every ``engine.step()`` (synchronized on CUDA), and inside it the runner's prefill, its LM
step (``_advance``), the flow calls (:func:`app.models.cosyvoice.stream.run_flow`, with the DiT
input shape) and the vocoder calls (``TokenStream.take``), with the peak memory of each step above
what was allocated before it. It prints a line per step that held a prefill, a flow call or audio,
the sums of the others, and the time of the first audio event against its parts.

    python tools/cosyvoice_engine_trace.py --folder /tmp/cv05 --device cuda
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.models.cosyvoice import bench
from app.models.cosyvoice import stream as cs
from app.models.voxcpm.prompt import VoicePrompt


class Clock:
    """Synchronized wall time per label within the current step."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.step: dict[str, float] = defaultdict(float)
        self.notes: list[str] = []

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def wrap(self, owner: Any, name: str, label: str, note: Callable[..., str] | None = None) -> None:
        fn = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self.sync()
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            self.sync()
            self.step[label] += time.perf_counter() - t0
            if note is not None:
                self.notes.append(note(*args, **kwargs))
            return out

        setattr(owner, name, timed)


def flow_note(_flow: Any, work: list[tuple[cs.TokenStream, cs.FlowJob]]) -> str:
    """``flow 28s, 100f``: each job's tokens, ``s`` streaming masks, ``f`` finalize."""
    kinds = (f"{j.upto}{'s' if j.streaming else ''}{'f' if j.finalize else ''}" for _, j in work)
    return "flow " + ", ".join(kinds)


def run(engine: Engine, clock: Clock, voice: VoicePrompt, text: str, n: int, show: bool) -> None:
    dev = clock.device
    ids = {engine.submit(SynthRequest(text, voice=voice, seed=100 + i, stream=True)) for i in range(n)}
    t_start, first, step_no = time.perf_counter(), None, 0
    quiet: dict[str, float] = defaultdict(float)
    quiet_steps = 0
    while ids:
        clock.step.clear()
        clock.notes.clear()
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
            base = torch.cuda.memory_allocated(dev)
        clock.sync()
        t0 = time.perf_counter()
        events = engine.step()
        clock.sync()
        wall = time.perf_counter() - t0
        audio = [e for e in events if isinstance(e, AudioChunk)]
        for ev in events:
            if isinstance(ev, RequestFailed):
                raise RuntimeError(ev.message)
            if isinstance(ev, RequestFinished):
                ids.discard(ev.request_id)
        if audio and first is None:
            first = time.perf_counter() - t_start
        parts = dict(clock.step)
        parts["other"] = wall - sum(parts.values())
        if show and (clock.notes or audio or "prefill" in parts):
            peak = (torch.cuda.max_memory_allocated(dev) - base) / 2**30 if dev.type == "cuda" else 0.0
            detail = "  ".join(f"{k} {1e3 * v:.1f}" for k, v in parts.items())
            got = f"  audio x{len(audio)}" if audio else ""
            print(f"  step {step_no:3d}: {1e3 * wall:7.1f} ms  [{detail}]  {'; '.join(clock.notes)}{got}"
                  f"  peak +{peak:.2f} GiB", flush=True)  # fmt: skip
        else:
            quiet_steps += 1
            for k, v in parts.items():
                quiet[k] += v
        step_no += 1
    total = time.perf_counter() - t_start
    if show:
        mean = "  ".join(f"{k} {1e3 * v / max(quiet_steps, 1):.2f}" for k, v in quiet.items())
        print(f"  {quiet_steps} other steps, mean ms: [{mean}]")
        print(f"  first audio {first:.3f} s, all done {total:.3f} s, {step_no} steps", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype")
    ap.add_argument("--text-ids", type=int, default=5)
    ap.add_argument("--requests", type=int, default=1)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--profile", action="store_true",
                    help="one more streaming request under torch.profiler: its top ops (the trace's "
                         "syncs stay in: host times include their waits)")  # fmt: skip
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    engine = Engine(EngineConfig(str(args.folder), device=args.device, dtype=args.dtype,
                                 max_num_seqs=max(args.requests, 1)))  # fmt: skip
    clock = Clock(torch.device(engine.device))
    runner = engine.runner
    clock.wrap(runner, "prefill", "prefill")
    clock.wrap(runner, "_advance", "lm")
    clock.wrap(cs, "run_flow", "flow", flow_note)
    clock.wrap(cs.TokenStream, "take", "vocoder")
    voice = VoicePrompt(prompt_audio=bench._prompt_wav(), prompt_text=bench.PROMPT_TEXT, sample_rate=16000)
    text = bench.engine_text(args.folder, args.text_ids)
    print(f"text {text!r}; warm-up", flush=True)
    run(engine, clock, voice, text, 1, show=False)
    for n in (1, args.requests) if args.requests > 1 else (1,):
        print(f"{n} streaming request(s):", flush=True)
        run(engine, clock, voice, text, n, show=True)
    if args.profile:
        profile(engine, clock, voice, text)
    engine.shutdown()


def profile(engine: Engine, clock: Clock, voice: VoicePrompt, text: str) -> None:
    """One streaming request under torch.profiler: the ops by device time, then by host time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if clock.device.type == "cuda" else [])
    with torch_profile(activities=acts) as prof:
        run(engine, clock, voice, text, 1, show=False)
    table = prof.key_averages()
    if clock.device.type == "cuda":
        print(table.table(sort_by="self_cuda_time_total", row_limit=25, max_name_column_width=60))
    print(table.table(sort_by="self_cpu_time_total", row_limit=25, max_name_column_width=60), flush=True)


if __name__ == "__main__":
    main()
