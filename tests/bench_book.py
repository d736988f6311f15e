"""The long book of issue 20: a generated book through the book runner, then the audiobook export.

    python tests/bench_book.py --device cpu --json book_cpu.json                  # tiny VoxCPM2 here
    python tests/bench_book.py --preset voxcpm2 --model /tmp/v2 --device cuda --json book_gpu.json

The book (``--chars`` characters of sentences drawn from a fixed vocabulary, in ``--chapters``
Markdown chapters, the same text for the same arguments) goes the way ``voxdesk book`` takes it:
Markdown import (app/longform/book.py), a book project (app/longform/project.py), the
:class:`~app.longform.runner.BookRunner` over an :class:`~app.engine.host.EngineHost` with a
window of ``--window`` segments in flight (continuous batching), then ``export_book`` (one MP3 a
chapter and the M4B, as ``--formats`` asks). Random weights have no meaningful stop head, so each
request is given the number of patches real speech of its text takes (``--chars-per-second``, 14
by default, ~150 words a minute, at VoxCPM2's 6.25 patches a second): ``min_len = max_len`` = that
many, the bad-case retry off, as ``voxdesk bench`` fixes its lengths. Everything else is the real
code. With real shapes that is also the real audio (0.16 s a patch); the tiny model's VAE makes
only 1 ms a patch, so its export is no measure: ``--export-hours H`` times the export alone on H
hours of speech-like 48 kHz audio in per-segment FLAC files, laid out as the book's project.

Reported (JSON): characters per second of generation and the audio made (seconds, × real time),
the process RSS every ``--sample-s`` seconds with the characters done (and the RSS growth over the
second half of the run: flat means the book is not held in memory), the project's own files
(book.json, the generation log, chapter state) against the characters done, the segment audio on
disk, and the export's time, × real time and output sizes. Reading RSS needs Linux (/proc).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = (
    "the river ran past old stone houses where a quiet light fell across the morning market and "
    "children carried bread while their mothers spoke of rain that had not come for many weeks so "
    "the farmers waited under tall trees counting clouds that drifted slowly toward distant hills"
).split()


def book_text(chars: int, chapters: int, seed: int = 0) -> str:
    """A Markdown book of about ``chars`` characters of prose in ``chapters`` chapters."""
    rng = random.Random(seed)
    per_chapter = chars // chapters
    out = [f"# A Generated Book of {chars:,} Characters\n"]
    for n in range(1, chapters + 1):
        out.append(f"\n## Chapter {n}\n")
        size = 0
        while size < per_chapter:
            sentences = []
            for _ in range(rng.randint(3, 6)):
                words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
                sentences.append(" ".join(words).capitalize() + rng.choice(".....?!"))
            paragraph = " ".join(sentences)
            out.append(paragraph + "\n\n")
            size += len(paragraph)
    return "".join(out)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return math.nan


def folder_bytes(folder: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())


PATCH_HZ = 6.25  # VoxCPM2: 48 kHz out, 4 latent frames a patch, 1,920 samples a frame


class FixedLength:
    """The runner's backend: the engine host, each request given the patches real speech of its
    text takes (random weights' stop head means nothing)."""

    def __init__(self, host, patches_per_char: float) -> None:
        self.host = host
        self.patches_per_char = patches_per_char

    def submit(self, request, sink, on_latents=None) -> int:
        n = max(2, math.ceil(len(request.text) * self.patches_per_char))
        return self.host.submit(dataclasses.replace(request, min_len=n, max_len=n, retry_badcase=False), sink)

    def cancel(self, handle: int) -> None:
        self.host.cancel(handle)

    def close(self) -> None:
        self.host.close()


class Sampler(threading.Thread):
    """RSS, characters done and the project's own file sizes every ``every`` seconds."""

    def __init__(self, root: Path | None, every: float) -> None:
        super().__init__(daemon=True)
        self.root, self.every = root, every
        self.done_chars = 0
        self.samples: list[dict] = []
        self._halt = threading.Event()
        self._t0 = time.monotonic()

    def take(self) -> None:
        self.samples.append(
            {
                "t_s": round(time.monotonic() - self._t0, 2),
                "rss_mb": round(rss_mb(), 1),
                "done_chars": self.done_chars,
                **({"project_files_bytes": project_bytes(self.root)} if self.root else {}),
            }
        )

    def run(self) -> None:
        while not self._halt.wait(self.every):
            self.take()

    def stop(self) -> None:
        self._halt.set()
        self.join()
        self.take()


def project_bytes(root: Path) -> int:
    """book.json, the generation log and the chapters' state files: what grows besides the audio."""
    return (
        folder_bytes(root, "*.json") + folder_bytes(root, "*.log") + folder_bytes(root, "chapters/*/*.json")
    )


def export_alone(hours: float, chapters: int, work: Path, formats: tuple[str, ...], every: float) -> dict:
    """Time the export alone on ``hours`` of speech-like 48 kHz audio: per-segment FLAC files (24-bit,
    as the book project writes them) of ~7 s each with the project's pauses, in ``chapters`` chapters."""
    import numpy as np
    import soundfile as sf
    from audiobook_media import jpeg, speechlike

    from app.longform.audiobook_export import BookMeta, ChapterAudio, export_audiobook

    rate, seconds = 48000, 7.0
    clips = [speechlike(seconds + 0.37 * i, rate, 0.05 + 0.02 * i, seed=i) for i in range(8)]
    count = math.ceil(hours * 3600 / (seconds + 1.3 + 0.55))
    folder = work / "segments"
    folder.mkdir(parents=True, exist_ok=True)
    parts: list[list[tuple[Path, float]]] = [[] for _ in range(chapters)]
    t = time.perf_counter()
    for i in range(count):
        path = folder / f"{i:05d}.flac"
        sf.write(path, clips[i % len(clips)], rate, subtype="PCM_24")
        parts[i * chapters // count].append((path, 0.3 if i % 4 else 0.8))
    write_s = time.perf_counter() - t
    book = [ChapterAudio(f"Chapter {n + 1}", p) for n, p in enumerate(parts)]
    sampler = Sampler(None, every)
    sampler.take()
    sampler.start()
    t, cpu = time.perf_counter(), time.process_time()
    try:
        export = export_audiobook(
            book, BookMeta("Export bench", "VoxDesk", jpeg()), work / "export", formats=formats
        )
    finally:
        export_s, cpu_s = time.perf_counter() - t, time.process_time() - cpu
        sampler.stop()
    audio_s = sum(c.duration for c in export.chapters)
    return {
        "segments": count,
        "segment_write_s": round(write_s, 1),
        "segment_audio_bytes": folder_bytes(folder, "*.flac"),
        "audio_s": round(audio_s, 1),
        "seconds": round(export_s, 1),
        "x_real_time": round(audio_s / export_s, 1),
        "seconds_per_audio_hour": round(export_s / (audio_s / 3600), 1),
        "cpu_s": round(cpu_s, 1),  # all threads of the process: under load the figure that carries over
        "cpu_s_per_audio_hour": round(cpu_s / (audio_s / 3600), 1),
        "formats": ",".join(formats),
        "m4b_bytes": export.m4b.stat().st_size if export.m4b else None,
        "mp3_bytes": sum(p.stat().st_size for p in export.chapter_files),
        "loudness_lufs": [round(c.loudness + c.gain_db, 2) for c in export.chapters],
        "rss_start_mb": sampler.samples[0]["rss_mb"],
        "rss_peak_mb": max(x["rss_mb"] for x in sampler.samples),
        "rss_end_mb": sampler.samples[-1]["rss_mb"],
        "samples": sampler.samples,
        "clip_peak": float(max(np.abs(c).max() for c in clips)),
    }


def growth_mb(samples: list[dict]) -> float:
    """RSS at the end minus RSS halfway through the generation (MB)."""
    half = samples[len(samples) // 2 :]
    return round(half[-1]["rss_mb"] - half[0]["rss_mb"], 1) if len(half) > 1 else math.nan


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", help="model folder (default: a tiny VoxCPM2 written to a temporary folder)")
    p.add_argument("--preset", default="tiny-v2", help="checkpoint preset written when --model is absent "
                   "or empty (tiny-v2; voxcpm2 for real shapes)")  # fmt: skip
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: the engine's)")
    p.add_argument("--chars", type=int, default=100_000)
    p.add_argument("--chapters", type=int, default=12)
    p.add_argument("--window", type=int, default=16, help="segments in flight (the CLI's default)")
    p.add_argument("--chars-per-second", type=float, default=14.0, help="speaking rate the lengths follow")
    p.add_argument("--timesteps", type=int, default=10)
    p.add_argument("--formats", default="mp3,m4b")
    p.add_argument("--sample-s", type=float, default=1.0)
    p.add_argument("--export-hours", type=float, default=None,
                   help="only time the export, on this many hours of speech-like audio")  # fmt: skip
    p.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)

    import torch

    from app.engine import Engine, EngineConfig
    from app.engine.host import EngineHost
    from app.longform.book import import_book
    from app.longform.book_export import export_book
    from app.longform.project import BookProject, BookSettings
    from app.longform.runner import BookRunner
    from app.models.voxcpm.checkpoint import write_checkpoint

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-book-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict = {"args": vars(args), "torch": torch.__version__, "load_average": os.getloadavg()}
    try:
        if args.export_hours:
            result["export_alone"] = export_alone(
                args.export_hours, args.chapters, work, tuple(args.formats.split(",")), args.sample_s
            )
            print(json.dumps({k: v for k, v in result["export_alone"].items() if k != "samples"}, indent=1))
            return 0
        model = Path(args.model) if args.model else work / "model"
        if not (model / "model.safetensors").exists():
            t = time.perf_counter()
            write_checkpoint(model, args.preset)
            result["checkpoint_write_s"] = round(time.perf_counter() - t, 1)
        source = work / "book.md"
        source.write_text(book_text(args.chars, args.chapters), encoding="utf-8")
        book = import_book(source)
        root = work / "project"
        shutil.rmtree(root, ignore_errors=True)
        settings = BookSettings(seed=1, timesteps=args.timesteps)
        project = BookProject.create(root, book, settings, source=source.name)
        segments = sum(c.segments for c in project.chapters)
        result["book"] = {
            "chars": project.total_chars,
            "chapters": len(project.chapters),
            "segments": segments,
        }

        t = time.perf_counter()
        if args.threads:
            torch.set_num_threads(args.threads)
        cfg = EngineConfig(
            model_dir=str(model), device=args.device, max_num_seqs=args.window, threads=args.threads
        )
        engine = Engine(cfg)
        result["engine_ready_s"] = round(time.perf_counter() - t, 1)
        backend = FixedLength(EngineHost(engine).start(), PATCH_HZ / args.chars_per_second)
        sampler = Sampler(root, args.sample_s)
        sampler.take()
        sampler.start()
        last = [0.0]

        def progress(snap) -> None:
            sampler.done_chars = snap.done_chars
            if time.monotonic() - last[0] > 10 or not snap.running:
                last[0] = time.monotonic()
                print(f"{snap.done_chars:,}/{snap.total_chars:,} chars, {snap.chars_per_s or 0:.1f} chars/s, "
                      f"RSS {rss_mb():.0f} MB", file=sys.stderr, flush=True)  # fmt: skip

        t, cpu = time.perf_counter(), time.process_time()
        try:
            final = BookRunner(project, backend, None, int(engine.sample_rate), window=args.window).run(
                progress
            )
        finally:
            gen_s, gen_cpu_s = time.perf_counter() - t, time.process_time() - cpu
            sampler.stop()
            backend.close()
        audio_s = sum(
            float(line.split("\t")[4]) for line in (root / "generation.log").read_text().splitlines()
        )
        result["generation"] = {
            "seconds": round(gen_s, 1),
            "done_chars": final.done_chars,
            "chars_per_s": round(final.done_chars / gen_s, 1),
            "cpu_s": round(gen_cpu_s, 1),
            "audio_s": round(audio_s, 1),
            "x_real_time": round(audio_s / gen_s, 2),
            "rss_start_mb": sampler.samples[0]["rss_mb"],
            "rss_peak_mb": max(s["rss_mb"] for s in sampler.samples),
            "rss_end_mb": sampler.samples[-1]["rss_mb"],
            "rss_growth_second_half_mb": growth_mb(sampler.samples),
            "project_files_bytes": project_bytes(root),
            "segment_audio_bytes": folder_bytes(root, "chapters/*/*.flac"),
            "samples": sampler.samples,
        }
        if args.device == "cuda":
            result["generation"]["gpu_peak_mb"] = round(torch.cuda.max_memory_allocated() / 2**20)
        del engine, backend
        if project.is_done():
            out = work / "export"
            rss0 = rss_mb()
            t, cpu = time.perf_counter(), time.process_time()
            export = export_book(project, out, formats=tuple(args.formats.split(",")))
            export_s, export_cpu_s = time.perf_counter() - t, time.process_time() - cpu
            files = [*export.chapter_files, *([export.m4b] if export.m4b else [])]
            result["export"] = {
                "seconds": round(export_s, 1),
                "cpu_s": round(export_cpu_s, 1),
                "formats": args.formats,
                "audio_s": round(sum(c.duration for c in export.chapters), 1),
                "x_real_time": round(sum(c.duration for c in export.chapters) / export_s, 1),
                "sample_rate": export.sample_rate,
                "rss_before_mb": round(rss0, 1),
                "rss_after_mb": round(rss_mb(), 1),
                "m4b_bytes": export.m4b.stat().st_size if export.m4b else None,
                "mp3_bytes": sum(p.stat().st_size for p in export.chapter_files),
                "files": len(files),
            }
        print(json.dumps({k: v for k, v in result.items() if k != "generation"}, indent=1))
        print(json.dumps({k: v for k, v in result.get("generation", {}).items() if k != "samples"}, indent=1))
    finally:
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
