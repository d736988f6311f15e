"""``voxdesk bench``: throughput, latency and memory of the engine, with the official package's
loops side by side when it is importable.

Measures, on one model folder: ms per decode step at batch 1; aggregate sequence-steps/s and
RTF at each concurrency (all requests share one cached voice, fixed length); time to the first
audio chunk (p50/p90); time from start to ready; peak GPU memory; and a profile of one decode
step (host work, graph replay, and an eager breakdown by component).
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from app import atomic
from app.cpu_precision import device_line
from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import RequestFailed, RequestFinished
from app.engine.request import SynthRequest
from app.engine.voice import VoicePrompt

WORDS = "The quick brown fox jumps over the lazy dog while the band plays on.".split()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _text(engine: Engine, steps: int) -> str:
    """The shortest sentence whose official length cap (6 patches a token + 10) allows ``steps``."""
    words: list[str] = []
    while 6 * len(engine.runner.tokenizer(" ".join(words))) + 10 < steps or not words:
        words.append(WORDS[len(words) % len(WORDS)])
    return " ".join(words)


def _voice(engine: Engine, patches: int) -> VoicePrompt | None:
    """A voice of ``patches`` latent patches: a reference recording for VoxCPM2, a prompt
    recording with its transcript (continuation, the only cloning mode) for VoxCPM1;
    ``None`` (zero-shot) when ``patches`` is 0."""
    if patches <= 0:
        return None
    m = engine.runner.model
    rate = m.encode_rate
    t = np.arange(patches * m.patch_size * m.audio_vae.chunk_size) / rate
    noise = np.random.default_rng(0).standard_normal(t.size)
    audio = (0.3 * np.sin(2 * np.pi * 180 * t) + 0.05 * noise).astype(np.float32)
    if m.cfg.is_v2:
        return VoicePrompt(reference_audio=audio)
    return VoicePrompt(prompt_audio=audio, prompt_text=" ".join(WORDS[:8]))


def run_batch(
    engine: Engine,
    n: int,
    steps: int,
    voice: VoicePrompt | None,
    seed0: int = 0,
    loras: list[str] | None = None,
) -> dict[str, Any]:
    """``n`` concurrent requests of exactly ``steps`` patches, submitted together; request ``i``
    speaks with ``loras[i % len(loras)]`` when LoRA folders are given."""
    text = _text(engine, steps)
    reqs = [
        SynthRequest(
            text,
            voice=voice,
            seed=seed0 + i,
            min_len=10**6,
            max_len=steps,
            retry_badcase=False,
            lora=loras[i % len(loras)] if loras else None,
        )
        for i in range(n)
    ]
    _sync(engine.device)
    t0 = time.perf_counter()
    ids = {engine.submit(r) for r in reqs}
    step_s: list[float] = []
    finished: list[RequestFinished] = []
    while ids:
        t = time.perf_counter()
        events = engine.step()
        step_s.append(time.perf_counter() - t)
        for ev in events:
            if isinstance(ev, RequestFinished | RequestFailed):
                ids.discard(ev.request_id)
                if isinstance(ev, RequestFailed):
                    raise RuntimeError(f"benchmark request failed: {ev.message}")
                finished.append(ev)
    wall = time.perf_counter() - t0
    patches = sum(f.n_patches for f in finished)
    audio = sum(f.stats["audio_s"] for f in finished)
    steady = step_s[2:-1] or step_s
    return {
        "concurrency": n,
        "steps": steps,
        "wall_s": wall,
        "ms_per_step": 1e3 * statistics.median(steady),
        "seq_steps_per_s": patches / wall,
        "steady_seq_steps_per_s": n / statistics.median(steady),
        "rtf_aggregate": wall / audio,
        "rtf_p50": _pct([f.stats["rtf"] for f in finished], 50),
        "first_chunk_ms_p50": 1e3 * _pct([f.stats["first_chunk_s"] for f in finished], 50),
        "first_chunk_ms_p90": 1e3 * _pct([f.stats["first_chunk_s"] for f in finished], 90),
        "cached_tokens_p50": _pct([f.stats["cached_tokens"] for f in finished], 50),
    }


def profile_step(engine: Engine, n: int, reps: int = 20) -> dict[str, float]:
    """Where one decode step of ``n`` rows spends its time: host preparation, graph replay, host
    copies, the same step run eagerly, and its GPU kernel time per section (profiler)."""
    r, dev = engine.runner, engine.device
    if dev.type != "cuda":
        return {}
    reqs = [
        SynthRequest(_text(engine, 64), seed=900 + i, min_len=10**6, max_len=64, retry_badcase=False)
        for i in range(n)
    ]
    for q in reqs:
        engine.submit(q)
    while len(engine.scheduler.running) < n:  # admit and prefill everyone
        engine.step()
    seqs = engine.scheduler.running[:n]
    out: dict[str, float] = {}

    def clock(fn) -> float:
        _sync(dev)
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        _sync(dev)
        return 1e3 * (time.perf_counter() - t) / reps

    out["host_fill_ms"] = clock(lambda: r._fill(seqs))
    if r.graphs is not None:
        out["graph_replay_ms"] = clock(lambda: r.graphs.replay(n))
    out["host_collect_ms"] = clock(lambda: r._collect(n))
    steps = engine.config.graph_timesteps
    with torch.inference_mode():
        out["eager_step_ms"] = clock(lambda: r.step_core(n, steps, r._width))
    out.update(_kernel_profile(lambda: r.step_core(n, steps, r._width), dev))
    if n == 1:  # a lone request's prefill, over its cached voice prefix (graph when captured)
        seq = seqs[0]
        cached = seq.num_cached_tokens

        def again() -> None:
            seq.num_computed = cached
            r.prefill([seq])

        out["prefill_ms"] = clock(again)
        out["prefill_tokens"] = float(len(seq) - cached)
    for seq in list(engine.scheduler.running):
        engine.scheduler.finish(seq)
    return out


def _kernel_profile(fn, dev: torch.device) -> dict[str, float]:
    """GPU kernel time of one eager run of ``fn``, per labelled step section and in total."""
    from torch.profiler import ProfilerActivity, profile

    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        _sync(dev)
    out: dict[str, float] = {}
    total = 0.0
    for ev in prof.key_averages():
        gpu = getattr(ev, "device_time_total", 0.0) / 1e3
        if ev.key.startswith("step."):
            out[f"gpu_{ev.key[5:]}_ms"] = gpu
        total += getattr(ev, "self_device_time_total", 0.0) / 1e3
    out["gpu_kernels_ms"] = total
    return out


def bench_engine(
    config: EngineConfig,
    concurrencies: list[int],
    steps: int,
    t_process: float,
    voice_patches: int = 32,
    loras: int = 0,
) -> dict[str, Any]:
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    engine = Engine(config)
    res: dict[str, Any] = {
        "device": str(engine.device),
        "precision": device_line(str(engine.device), engine.precision),
        "attention": engine.runner.base_kv.backend,
        "cuda_graphs": engine.runner.graphs is not None,
        "engine_init_s": engine.ready_s,
        "ready_from_process_start_s": time.perf_counter() - t_process,
        "kv_cache_gb": engine.kv_bytes / 1024**3,
        "kv_blocks": len(engine.scheduler.blocks.blocks),
        "threads": torch.get_num_threads(),
        "voice_patches": voice_patches,
        "patch_ms_of_audio": 1e3 * engine.runner.model.samples_per_patch / engine.sample_rate,
    }
    voice = _voice(engine, voice_patches)
    warm = run_batch(engine, 1, 8, voice, seed0=10**6)  # encodes and caches the voice
    res["warmup_first_chunk_ms"] = warm["first_chunk_ms_p50"]
    res["batches"] = [run_batch(engine, n, steps, voice, seed0=1000 * n) for n in concurrencies]
    res["profile"] = {str(n): profile_step(engine, n) for n in (1, max(concurrencies))}
    if loras:  # after the plain runs, which then had no adapter code in the step (bench_lora.py)
        from app.models.voxcpm.bench_lora import bench_loras

        res["lora"] = bench_loras(engine, res["batches"], steps, voice, loras)
    if engine.device.type == "cuda":
        res["peak_gpu_gb"] = torch.cuda.max_memory_allocated() / 1024**3
        res["peak_gpu_reserved_gb"] = torch.cuda.max_memory_reserved() / 1024**3
    res["peak_rss_gb"] = peak_rss_gb()
    if engine.device.type == "cuda":
        res["vae_error"] = vae_error(engine, voice_patches or 32)
    engine.shutdown()
    return res


@torch.inference_mode()
def vae_error(engine: Engine, patches: int) -> dict[str, float]:
    """The streaming VAE decoder in bf16 and fp16 against fp32, patch by patch, on the latents of
    the bench's reference recording: relative L2 error and largest sample error of the audio."""
    from app.models.voxcpm.batch import decoder_in
    from app.models.voxcpm.streaming_vae import StreamingDecoder

    m = engine.runner.model
    wav = _voice(engine, patches)
    audio = wav.reference_audio if wav.reference_audio is not None else wav.prompt_audio
    z = m.encode_audio(torch.from_numpy(audio)[None], "right")  # [1, n, P, D]
    z = z.flatten(1, 2).transpose(1, 2)  # [1, D, n*P]
    out: dict[str, float] = {}
    ref = None
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        dec = StreamingDecoder(decoder_in(m.audio_vae, dtype), 1)
        wave = torch.cat(
            [
                dec.decode(z[..., j : j + m.patch_size], [0]).float()
                for j in range(0, z.shape[-1], m.patch_size)
            ],
            -1,
        )
        if ref is None:
            ref = wave
            continue
        name = str(dtype).removeprefix("torch.")
        out[f"{name}_rel_l2"] = float((wave - ref).norm() / ref.norm())
        out[f"{name}_max_abs"] = float((wave - ref).abs().max())
    return out


def fidelity(config: EngineConfig, steps: int, voice_patches: int) -> dict[str, float]:
    """One request (same text, voice and seed) from ``config`` and from the same engine with fp32
    float weights: relative L2 error of the first patch, of all patches, and of the audio. The
    decode loop feeds each patch back, so later patches drift further than the first."""
    from dataclasses import replace

    outs = []
    for cfg in (config, replace(config, dtype="float32", cpu_precision="float32", vae_dtype="float32")):
        engine = Engine(replace(cfg, max_num_seqs=1))
        voice = _voice(engine, voice_patches)
        req = SynthRequest(
            _text(engine, steps), voice=voice, seed=7, min_len=10**6, max_len=steps, retry_badcase=False
        )
        rid = engine.submit(req)
        audio: list[np.ndarray] = []
        seqs = {}
        while engine.has_work():
            for seq in engine.scheduler.running:
                seqs[seq.id] = seq
            for ev in engine.step():
                if hasattr(ev, "samples") and ev.request_id == rid:
                    audio.append(ev.samples)
        seq = seqs[rid]
        patches = np.stack(seq.patches[seq.num_prompt :])
        outs.append((np.concatenate(audio), patches))
        engine.shutdown()

    def rel(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    (audio, lat), (ref_audio, ref_lat) = outs
    return {
        "first_patch_rel_l2": rel(lat[0], ref_lat[0]),
        "patches_rel_l2": rel(lat, ref_lat),
        "audio_rel_l2": rel(audio, ref_audio),
        "patches": float(len(lat)),
    }


def peak_rss_gb() -> float:
    """The process's peak resident memory so far (NaN where ``resource`` is missing: Windows)."""
    try:
        import resource
    except ImportError:
        return float("nan")
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB on Linux


def _model_in_dtype(model_dir: str, dtype: str, into: Path) -> str:
    """A copy of ``model_dir`` in ``into`` whose config.json names ``dtype`` (the official
    loader runs in the config's dtype); the weight files are linked, not copied, where the
    file system allows."""
    for src in Path(model_dir).iterdir():
        if src.name != "config.json" and src.is_file():
            try:
                (into / src.name).symlink_to(src.resolve())
            except OSError:  # Windows without the symlink privilege
                shutil.copy2(src, into / src.name)
    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    (into / "config.json").write_text(json.dumps({**cfg, "dtype": dtype}))
    return str(into)


def bench_official(
    model_dir: str,
    compiled: bool,
    device: str = "cuda",
    steps: tuple[int, int] = (20, 60),
    dtype: str | None = None,
) -> dict[str, Any]:
    """ms/step of the official loop (zero-shot), from two lengths so prefill and the final
    decode cancel out; on ``device`` in the official package's own dtype for it (the
    checkpoint's), or in ``dtype``. Needs the official ``voxcpm`` package."""
    if dtype:
        with tempfile.TemporaryDirectory(prefix="voxdesk-official-") as tmp:
            return bench_official(_model_in_dtype(model_dir, dtype, Path(tmp)), compiled, device, steps)
    import importlib

    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    v2 = cfg.get("architecture") == "voxcpm2"
    mod = importlib.import_module("voxcpm.model.voxcpm2" if v2 else "voxcpm.model.voxcpm")
    cls = mod.VoxCPM2Model if v2 else mod.VoxCPMModel
    dev = torch.device(device)
    t0 = time.perf_counter()
    model = cls.from_local(model_dir, optimize=compiled, device=device)
    text = " ".join(WORDS * 4)
    load = time.perf_counter() - t0

    def run(n: int) -> float:
        torch.manual_seed(0)
        _sync(dev)
        t = time.perf_counter()
        model.generate(target_text=text, min_len=10**6, max_len=n, retry_badcase=False)
        _sync(dev)
        return time.perf_counter() - t

    t0 = time.perf_counter()
    run(min(steps[0], 4) if dev.type == "cpu" else steps[0])  # warm-up (compilation when optimized)
    warm = time.perf_counter() - t0
    a, b = run(steps[0]), run(steps[1])
    dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
    return {
        "load_s": load,
        "warmup_s": warm,
        "ms_per_step": 1e3 * (b - a) / (steps[1] - steps[0]),
        "dtype": dtype,
        "device": str(dev),
        "peak_rss_gb": peak_rss_gb(),
    }


def table(res: dict[str, Any]) -> str:
    lines = [
        f"device {res['precision']} ({res['threads']} threads)  attention {res['attention']}  "
        f"graphs {res['cuda_graphs']}  peak RSS {res['peak_rss_gb']:.2f} GB  "
        f"ready {res['engine_init_s']:.1f} s (process {res['ready_from_process_start_s']:.1f} s)  "
        f"peak {res.get('peak_gpu_gb', float('nan')):.2f} GB",
        f"{'conc':>5} {'ms/step':>8} {'seq-steps/s':>12} {'steady':>9} {'RTF agg':>8} {'RTF p50':>8} "
        f"{'TTFB p50':>9} {'TTFB p90':>9}",
    ]
    for b in res["batches"]:
        lines.append(
            f"{b['concurrency']:>5} {b['ms_per_step']:>8.2f} {b['seq_steps_per_s']:>12.0f} "
            f"{b['steady_seq_steps_per_s']:>9.0f} {b['rtf_aggregate']:>8.4f} {b['rtf_p50']:>8.4f} "
            f"{b['first_chunk_ms_p50']:>8.1f}ms {b['first_chunk_ms_p90']:>8.1f}ms"
        )
    for n, prof in res.get("profile", {}).items():
        if prof:
            lines.append(f"profile B={n}: " + ", ".join(f"{k} {v:.2f}" for k, v in prof.items()))
    for name, off in res.get("official", {}).items():
        lines.append(f"official {name}: {off}")
    if "lora" in res:
        from app.models.voxcpm.bench_lora import lora_table

        lines.append(lora_table(res["lora"]))
    return "\n".join(lines)


def run_cli(argv: list[str]) -> int:
    """``python -m``-style entry for machines without the app's CLI dependencies."""
    import argparse

    parser = argparse.ArgumentParser(prog="voxdesk")
    add_parser(parser.add_subparsers(required=True))
    args = parser.parse_args(["bench", *argv])
    return args.func(args)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("bench", help="measure the engine (and the official package, if installed)")
    p.add_argument("--model", required=True, help="model folder (official layout)")
    p.add_argument("--device", default="auto")
    p.add_argument(
        "--dtype",
        default=None,
        help="the model's dtype on any device (default: on the CPU "
        "bf16 where it has native bf16, else fp32; on a GPU the checkpoint's)",
    )
    p.add_argument("--cpu-weights", default=None, choices=["int8"], help="CPU: int8 Linear weights")
    p.add_argument("--fidelity", action="store_true", help="CPU: also compare one request with fp32")
    p.add_argument(
        "--measure-cpu",
        action="store_true",
        help="only time each CPU precision on this model and recommend one (as Settings › On the CPU › "
        "Measure on this computer)",
    )
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per usable core)")
    p.add_argument("--concurrency", default="1,4,16,64", help="comma-separated request counts")
    p.add_argument("--steps", type=int, default=100, help="patches per request")
    p.add_argument("--voice-patches", type=int, default=32, help="reference voice length; 0: zero-shot")
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--attention", default="auto", choices=["auto", "sdpa", "triton", "flash"])
    p.add_argument("--eager", action="store_true", help="no CUDA graphs")
    p.add_argument("--no-prefill-graphs", action="store_true", help="eager prefill (decode graphs kept)")
    p.add_argument("--no-overlap", action="store_true", help="VAE decode on the LM's CUDA stream")
    p.add_argument("--vae-dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--official", action="store_true", help="also time the official eager loop")
    p.add_argument("--official-compiled", action="store_true", help="also time official optimize()")
    p.add_argument("--official-only", action="store_true", help="time the official eager loop alone")
    p.add_argument(
        "--official-dtype",
        default=None,
        choices=["float32", "bfloat16", "float16"],
        help="run the official loops in this dtype (default: the checkpoint's)",
    )
    p.add_argument(
        "--peer", default=None, metavar="PEER_NVV_PY", help="also run this peer_nvv.py (same python)"
    )
    p.add_argument(
        "--loras",
        type=int,
        default=0,
        help="also run each concurrency with this many random LoRAs (r 32, LM + DiT) and compare",
    )
    p.add_argument("--json", default=None, help="write the results here")
    p.set_defaults(func=main)


def main(args) -> int:
    from app.engine.config import cpu_threads, resolve_device

    t_process = _process_start()
    conc = [int(c) for c in args.concurrency.split(",") if c.strip()]
    device = resolve_device(args.device)
    threads = args.threads or (cpu_threads() if device == "cpu" else None)
    if threads:
        torch.set_num_threads(threads)
    config = EngineConfig(
        model_dir=args.model,
        device=device,
        dtype=args.dtype,
        max_num_seqs=max(conc),
        max_model_len=args.max_model_len,
        attention=args.attention,
        cuda_graphs=not args.eager,
        prefill_graphs=not args.no_prefill_graphs,
        overlap_vae=not args.no_overlap,
        vae_dtype=args.vae_dtype,
        threads=threads,
        cpu_precision=args.cpu_weights or "auto",
        lora_slots=max(8, args.loras),
    )
    cpu_steps = (max(2, args.steps // 4), args.steps)
    if args.measure_cpu:
        from app.engine.cpu_measure import measure

        print(measure(args.model, threads=threads or cpu_threads()).summary())
        return 0
    if args.official_only:
        eager = bench_official(args.model, False, device, cpu_steps, args.official_dtype)
        res = {"official": {"eager": eager}}
        print(f"official eager: {res['official']['eager']}")
    else:
        res = bench_engine(config, conc, args.steps, t_process, args.voice_patches, args.loras)
        official = {}
        steps = cpu_steps if device == "cpu" else (20, 60)
        if args.official:
            official["eager"] = bench_official(args.model, False, device, steps, args.official_dtype)
        if args.official_compiled:
            official["optimize"] = bench_official(args.model, True, device, steps, args.official_dtype)
        if official:
            res["official"] = official
            one = res["batches"][0]["ms_per_step"]
            res["speedup_vs_official"] = {k: v["ms_per_step"] / one for k, v in official.items()}
        if args.fidelity:
            res["fidelity"] = fidelity(config, min(args.steps, 12), args.voice_patches)
            print(f"fidelity vs fp32: {res['fidelity']}")
        print(table(res))
    if args.peer:
        res["peer"] = run_peer(args.peer, args.model, conc, args.steps)
    if args.json:
        atomic.write_text(args.json, json.dumps(res, indent=1))
    return 0


def run_peer(script: str, model: str, conc: list[int], steps: int) -> dict[str, Any]:
    """The peer engine's own benchmark (``shared/peer-bench/peer_nvv.py``), run by the same
    Python right after ours, so both figures come from one call on one machine state."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peer.json"
        cmd = [
            sys.executable,
            script,
            model,
            "--concurrency",
            ",".join(map(str, conc)),
            "--steps",
            str(steps),
        ]
        proc = subprocess.run([*cmd, "--json", str(out)], capture_output=True, text=True)
        print(proc.stdout[-4000:], end="")
        if proc.returncode != 0 or not out.exists():
            print(proc.stderr[-4000:], end="")
            return {"error": f"peer benchmark exited with {proc.returncode}"}
        return json.loads(out.read_text())


def _process_start() -> float:
    """perf_counter() value at process start (psutil when present, else now)."""
    try:
        import psutil

        return time.perf_counter() - (time.time() - psutil.Process().create_time())
    except ImportError:
        return time.perf_counter()
