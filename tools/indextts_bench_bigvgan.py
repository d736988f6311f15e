"""Time VoxDesk's BigVGAN v2 against the official module at real shapes on the CPU (random weights).

Runs in the official code's venv with this repository on the path::

    cd CHECKOUT && OMP_WAIT_POLICY=PASSIVE PYTHONPATH=CHECKOUT:VOXDESK /tmp/indexvenv/bin/python \
        VOXDESK/tools/indextts_bench_bigvgan.py CHECKOUT [--frames 86] [--calls 3] [--threads 2] [--json OUT]

Builds the official ``BigVGAN`` from ``presets.BIGVGAN["indextts25"]``
(nvidia/bigvgan_v2_22khz_80band_256x: 1536 channels, 256x) with its own random initialisation,
saves it as a ``hf_cache/bigvgan`` folder in a temporary directory, loads that with
:meth:`BigVGAN.from_folder` and times both on the same random mel (``frames`` = 86 is one second
at 22 050 Hz): the median wall and CPU (all threads) ms of ``calls`` calls after one warm-up, the
two alternating, and the largest difference between their outputs. A figure, not a test.
``OMP_WAIT_POLICY=PASSIVE`` matters only on a shared machine: there, threads that spin at each
parallel region's barrier while another process holds the core made the same 2-thread call take
11 to 49 s instead of about 4.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from indextts_official import official_import  # noqa: E402


def _interleaved(fns: dict[str, Callable[[Any], Any]], x: Any, calls: int) -> dict[str, dict[str, Any]]:
    """Per function: the median wall and CPU (all threads) ms of ``calls`` calls, the calls
    alternating so that a busy machine slows both alike, after one warm-up call each; and the
    last output."""
    out = {name: fn(x) for name, fn in fns.items()}
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(calls):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            out[name] = fn(x)
            wall[name].append((time.perf_counter() - start) * 1e3)
            cpu[name].append((time.process_time() - start_cpu) * 1e3)
    return {
        name: {"wall": statistics.median(wall[name]), "cpu": statistics.median(cpu[name]), "out": out[name]}
        for name in fns
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="the official index-tts checkout")
    ap.add_argument("--frames", type=int, default=86)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    official_import(args.checkout)
    import torch
    from indextts.s2mel.modules.bigvgan import bigvgan as official
    from indextts.s2mel.modules.bigvgan.env import AttrDict

    from app.models.indextts.bigvgan import BigVGAN
    from app.models.indextts.presets import BIGVGAN, REAL

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    theirs = official.BigVGAN(AttrDict(dict(BIGVGAN[REAL])))
    with tempfile.TemporaryDirectory() as tmp:
        torch.save({"generator": theirs.state_dict()}, Path(tmp) / "bigvgan_generator.pt")
        (Path(tmp) / "config.json").write_text(json.dumps(BIGVGAN[REAL]))
        ours = BigVGAN.from_folder(tmp)
    theirs.remove_weight_norm()
    theirs.eval()
    mel = torch.randn(1, 80, args.frames, generator=torch.Generator().manual_seed(1)) * 2 - 4
    with torch.inference_mode():
        timed = _interleaved(
            {"official": lambda x: theirs(x).squeeze().unsqueeze(0), "voxdesk": ours}, mel, args.calls
        )
    official, voxdesk = timed["official"], timed["voxdesk"]
    result = {
        "what": "BigVGAN v2 22kHz 80-band 256x, random weights, CPU",
        "frames": args.frames,
        "seconds_of_audio": args.frames * 256 / 22050,
        "threads": args.threads,
        "calls": args.calls,
        "official_ms": round(official["wall"], 1),
        "voxdesk_ms": round(voxdesk["wall"], 1),
        "official_cpu_ms": round(official["cpu"], 1),
        "voxdesk_cpu_ms": round(voxdesk["cpu"], 1),
        "max_abs_diff": float((voxdesk["out"] - official["out"]).abs().max()),
        "params_m": round(sum(p.numel() for p in ours.parameters()) / 1e6, 1),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
