"""CPU ms per step: our one-request loop against the official eager loop (not a pytest file).

    python tests/bench_cpu_step.py [--steps 40] [--threads 1] [--preset tiny-v2]

Both run zero-shot on the same random checkpoint, fp32, a forced number of patches, with
prefill and the VAE decode included; the best of a few repeats is reported.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from official import import_official  # noqa: E402

from app.models.voxcpm.checkpoint import write_checkpoint  # noqa: E402
from app.models.voxcpm.generate import Synthesizer  # noqa: E402

TEXT = "你好世界，Hello world, this is a benchmark sentence of moderate length. 今天天气很好。"


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--preset", default="tiny-v2", choices=("tiny-v1", "tiny-v2"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_checkpoint(Path(tmp) / "m", args.preset)
        import_official()
        if args.preset == "tiny-v2":
            from voxcpm.model.voxcpm2 import VoxCPM2Model as cls
        else:
            from voxcpm.model.voxcpm import VoxCPMModel as cls
        with contextlib.redirect_stderr(io.StringIO()):
            official = cls.from_local(str(path), optimize=False, device="cpu")
        ours = Synthesizer.from_dir(path, "cpu")
        n = args.steps

        def run_official() -> None:
            torch.manual_seed(0)
            with contextlib.redirect_stderr(io.StringIO()):
                official.generate(target_text=TEXT, min_len=n, max_len=n, retry_badcase=False)

        def run_ours() -> None:
            ours.synthesize(TEXT, seed=0, min_len=n, max_len=n)

        run_official()
        run_ours()
        t_off, t_ours = _best(run_official, args.repeats), _best(run_ours, args.repeats)
        # The network alone: the official loop without its final decode, ours without the
        # per-patch streaming decode (replaced by a no-op of the same output shape).
        hop = ours.model.samples_per_patch
        ours.decoder.decode = lambda z, slots: torch.zeros(1, hop)
        official.audio_vae.decode = lambda z, *a, **k: torch.zeros(
            1, 1, z.shape[-1] * hop // ours.model.patch_size
        )
        n_off, n_ours = _best(run_official, args.repeats), _best(run_ours, args.repeats)
    print(f"{args.preset}, {n} steps, {args.threads} thread(s), prefill included, best of {args.repeats}")
    print(f"  official eager loop, with its one final VAE decode: {1000 * t_off / n:7.2f} ms/step")
    print(f"  ours, with a streaming VAE decode per patch       : {1000 * t_ours / n:7.2f} ms/step")
    print(f"  official, network only                            : {1000 * n_off / n:7.2f} ms/step")
    print(f"  ours, network only                                : {1000 * n_ours / n:7.2f} ms/step")


if __name__ == "__main__":
    main()
