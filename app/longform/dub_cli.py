"""``voxdesk dub SUBS.srt|SUBS.vtt (--model DIR | --server URL) --out DIR``: subtitles spoken to their
timing, by the local engine or a speech server (app/backends).

Writes into ``--out``: ``track.wav`` (the video's length, silence between cues), ``cues/``
(one file per cue), ``spoken.srt`` (the cues as spoken), ``report.json`` and ``report.txt``
(the cues that still overrun their slot, and by how much). Overruns are listed, not errors:
the exit status is 0 once the files are written. Registered by app/cli.py.

``--model DIR`` is any family's folder (detected as ``voxdesk synth`` does). A cue's
``[Voice|emotion]`` tag is spoken by a model with the "emotion" control (IndexTTS-2.5; a server
says so in /v1/models); other models speak it without, and one stderr line counts those cues.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from app.engine_args import add_engine_options, engine_config
from app.errors import VoxDeskError
from app.longform.dub import DEFAULT_MAX_RATE_CHANGE, DEFAULT_TAKES, DubProgress, DubSettings
from app.voices.emotion import EmotionSpec

log = logging.getLogger(__name__)


class CueBar:
    """Cues done, a bar and the ETA, redrawn in place on a terminal; on a pipe, a line per tenth."""

    WIDTH = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.tty = stream, stream.isatty()
        self.last_draw, self.last_tenth = 0.0, -1

    def __call__(self, p: DubProgress) -> None:
        share = p.done / p.total if p.total else 1.0
        eta = "" if p.eta is None else f"  about {_minutes(p.eta)} left"
        line = f"[{'#' * int(share * self.WIDTH):<{self.WIDTH}}] {p.done} of {p.total} cues{eta}"
        if self.tty:
            now = time.monotonic()
            if now - self.last_draw >= 0.1 or p.done == p.total:
                self.last_draw = now
                self.stream.write("\r" + line.ljust(79))
                self.stream.flush()
        elif int(share * 10) > self.last_tenth:
            self.last_tenth = int(share * 10)
            print(line, file=self.stream, flush=True)

    def end(self) -> None:
        if self.tty and self.last_draw:
            self.stream.write("\n")
            self.stream.flush()


def _minutes(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def _settings(args: argparse.Namespace) -> DubSettings:
    return DubSettings(
        max_rate_change=args.max_rate_change,
        takes=args.takes,
        seed=args.seed,
        cfg_value=args.cfg,
        inference_timesteps=args.timesteps,
        stretch_short=args.stretch_short,
        normalize=args.normalize,
        min_len=args.min_len,
        max_len=args.max_len,
    )


def cmd_dub(args: argparse.Namespace) -> int:
    from app.longform.subtitles import load_subtitles

    cues = load_subtitles(args.subtitles)
    settings = _settings(args)
    if bool(args.model) == bool(args.server):
        raise VoxDeskError("Give --model DIR (a model on this computer) or --server URL (a speech server).")
    remote = None
    if args.server:
        from app.backends.remote import RemoteBackend

        remote = RemoteBackend(args.server, args.api_key, timeout=args.timeout)
    try:
        return _dub(args, cues, settings, remote)
    finally:
        if remote is not None:
            remote.close()


@dataclass(frozen=True)
class _Served:
    """What the cue voices and emotions are made for: the local folder's family or the server's model."""

    architecture: str
    rate_in: int  # the rate voice audio is handed over at
    label: str  # the model, as the emotion notice names it
    controls: frozenset[str] = frozenset()
    model_id: str | None = None  # the key of the library's cached voice features (local families)
    family: bool = False  # a family other than VoxCPM: voices are made by its controls


def cue_emotions(cues: list, served: _Served, voices: str | None) -> Callable[[EmotionSpec], Any] | None:
    """``dub``'s ``emotion_for`` for the cues' ``[Voice|emotion]`` tags, as the window's dubbing
    makes it: a model with the "emotion" control gets each distinct emotion's control (a clip
    names a library voice, as the cue voices do); any other model speaks them without, and one line
    on stderr says how many cues that is (nothing the user wrote is dropped silently)."""
    from app.voices.emotion import to_control
    from app.voices.library import VoiceLibrary

    tagged = sum(1 for c in cues if c.speakable and not c.emotion.is_none())
    if not tagged:
        return None
    if "emotion" not in served.controls:
        cues_word = "cue carries an emotion" if tagged == 1 else "cues carry an emotion"
        print(f"voxdesk: {tagged} {cues_word} ([Voice|emotion]) that {served.label} does not take: "
              "spoken without it (IndexTTS-2.5 takes emotions).", file=sys.stderr)  # fmt: skip
        return None
    library = VoiceLibrary(voices)

    def emotion_for(spec: EmotionSpec) -> Any:
        try:
            return to_control(spec, library)
        except (OSError, ValueError, RuntimeError) as exc:  # a recording that cannot be read: its cues fail
            log.warning("reading the emotion recording of %r", spec.voice, exc_info=True)
            raise VoxDeskError(f"The recording of “{spec.voice}” (@{spec.voice}) could not be read "
                               f"({exc.__class__.__name__}): import it again.") from None  # fmt: skip

    return emotion_for


def _served(args: argparse.Namespace, cues: list, remote) -> tuple[_Served, Any]:
    """What the dub speaks with, and the engine when a local family other than VoxCPM had to be
    loaded to say so (its voice rate and controls are the loaded family's)."""
    if remote is not None:
        model = remote.connect()
        return _Served(model.architecture, model.encoder_rate, model.name, model.controls), None
    from app.engine.family import detect_family

    if detect_family(args.model) == "voxcpm":
        from app.models.voxcpm.config import load_config

        cfg = load_config(args.model)
        label = "VoxCPM2" if cfg.is_v2 else "VoxCPM"
        return _Served(cfg.architecture, int(cfg.audio_vae.get("sample_rate", 16000)), label), None
    from app.engine import Engine
    from app.engine.host import model_id

    engine = Engine(_engine_config(args, cues))
    info = engine.info
    served = _Served(info.architecture, info.voice_rate, info.label, info.controls,
                     model_id(engine, args.model), family=True)  # fmt: skip
    return served, engine


def _engine_config(args: argparse.Namespace, cues: list) -> Any:
    return engine_config(args, max_num_seqs=min(max(len(cues), 1), 64))


def _dub(args: argparse.Namespace, cues: list, settings: DubSettings, remote) -> int:
    from pathlib import Path

    from app.longform.dub_files import existing, track_seconds

    if args.duration is not None:
        track_seconds(cues, args.duration)  # a too-short --duration fails now
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise VoxDeskError(f"--out must be a folder; {out} is a file.")
    taken = existing(out, cues)
    if taken and not args.overwrite:
        raise VoxDeskError(
            f"{out} already holds a dub ({taken[0].name}, {len(taken)} files in all): add --overwrite to "
            "replace it, or choose another --out."
        )
    served, engine = _served(args, cues, remote)
    try:
        return _speak(args, cues, settings, remote, served, engine, out)
    finally:
        if engine is not None:
            engine.shutdown()


def _speak(args: argparse.Namespace, cues: list, settings: DubSettings, remote, served: _Served,
           engine: Any, out: Any) -> int:  # fmt: skip
    from app.longform.dub import dub
    from app.longform.dub_files import export_dub, overruns, summary, track_seconds
    from app.synth_cli import _make_folder
    from app.voices.lookup import library_prompt

    prompts: dict[str, object] = {}
    family = (served.model_id, served.controls) if served.family else ()

    def prompt_for(name: str | None):
        name = name or args.voice
        if name is None:
            return None
        if name.casefold() not in prompts:
            prompts[name.casefold()] = library_prompt(name, args.voices, served.rate_in, served.architecture,
                                                      *family)  # fmt: skip
        return prompts[name.casefold()]

    for name in {None, *(c.voice for c in cues if c.speakable)}:
        prompt_for(name)  # an unknown voice is one line before anything is spoken
    emotion_for = cue_emotions(cues, served, args.voices)
    _make_folder(out)
    checker = policy = None
    if args.check:
        from app.asr import load_recognizer
        from app.backcheck.cli import policy as check_policy
        from app.backcheck.worker import CheckWorker

        policy = check_policy(args)
        checker = CheckWorker(load_recognizer(args.asr_model))
    host = None
    if remote is not None:
        backend, rate = remote, remote.model.sample_rate
    else:
        from app.engine import Engine
        from app.engine.host import EngineHost

        engine = engine or Engine(_engine_config(args, cues))
        backend = host = EngineHost(engine).start()
        rate = engine.sample_rate
    bar = CueBar(sys.stderr)
    cancel = threading.Event()
    try:
        results = dub(backend, cues, prompt_for, rate, settings, checker=checker, policy=policy,
                      cancel=cancel, progress=bar, emotion_for=emotion_for)  # fmt: skip
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        bar.end()
        if host is not None:
            host.close()
        if checker is not None:
            checker.close()
    files = export_dub(out, results, rate, args.duration, overwrite=True)
    if checker is not None and checker.error:
        print(f"voxdesk: {checker.error}", file=sys.stderr)
    for r in results:
        if r.status == "failed":
            print(f"cue {r.cue.number}: {r.message}", file=sys.stderr)
    print(summary(results))
    print(f"{files.track}: {track_seconds(cues, args.duration):.2f} s; {len(files.cues)} cue files in "
          f"{out / 'cues'}; {files.srt}; {files.report_txt}")  # fmt: skip
    if overruns(results):
        print(f"{len(overruns(results))} cues overrun their slot: see {files.report_txt}")
    return 0


def add_dub(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dub", help="speak SRT/WebVTT subtitles inside their time slots (a dub track)")
    p.add_argument("subtitles", metavar="SUBS", help="an .srt or .vtt file")
    p.add_argument("--model", help="model folder (config.json, weights, tokenizer)")
    p.add_argument("--server", help="speak through this OpenAI-compatible speech server instead")
    p.add_argument("--api-key", help="the server's API key (with --server)")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)"
    )
    p.add_argument(
        "--voice", metavar="NAME", help="voice of cues without a [Voice] tag (default: the model's)"
    )
    p.add_argument("--voices", metavar="DIR", help="voice library folder (default: the app's own)")
    p.add_argument(
        "--max-rate-change",
        type=float,
        default=DEFAULT_MAX_RATE_CHANGE,
        help="most a take is sped up to fit its slot (default 0.25: up to 1.25x)",
    )
    p.add_argument(
        "--takes",
        type=int,
        default=DEFAULT_TAKES,
        help=f"most takes of a cue that overruns, the first included (default {DEFAULT_TAKES})",
    )
    p.add_argument("--stretch-short", action="store_true", help="slow short takes towards their slot")
    p.add_argument(
        "--duration", type=float, help="the video's length in seconds (default: the last cue's end)"
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a new one each run)")
    p.add_argument("--cfg", type=float, default=2.0, help="guidance strength (default 2.0)")
    p.add_argument("--timesteps", type=int, default=10, help="diffusion steps per patch (default 10)")
    p.add_argument("--min-len", type=int, default=2, help="minimum patches per take (default 2)")
    p.add_argument("--max-len", type=int, default=4096, help="maximum patches per take (default 4096)")
    p.add_argument("--normalize", action="store_true", help="speak numbers and symbols as words")
    add_engine_options(p)
    p.add_argument("--out", required=True, help="folder for the track, cue files, spoken SRT and report")
    p.add_argument("--overwrite", action="store_true", help="replace result files already in --out")
    from app.backcheck.cli import add_options

    add_options(p)
    p.set_defaults(func=cmd_dub)
