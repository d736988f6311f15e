"""``voxdesk synth``: speak text from the command line into WAV/FLAC files.

One text goes through the one-request loop; the lines of a text file go through the engine as
one batch (with ``--check``, heard back by the recognizer: app/backcheck); ``--server`` sends them
to an OpenAI-compatible speech server instead. Registered by app/cli.py.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from app.audio.stretch import check_rate
from app.engine_args import add_engine_options, engine_config
from app.errors import VoxDeskError
from app.synth_emotion import add_emotion_options, check_emotion_options, emotion_control, language


@dataclass(frozen=True)
class Job:
    """One line of text to speak and where its audio goes."""

    text: str
    out: Path

    @property
    def fmt(self) -> str:
        return OUT_FORMATS[self.out.suffix.lower()]


OUT_FORMATS = {".wav": "WAV", ".flac": "FLAC"}


def _out_file(out: str) -> Path:
    path = Path(out)
    if path.suffix.lower() not in OUT_FORMATS:
        raise VoxDeskError(f"--out must end in .wav or .flac (got {out}): pick one of those.")
    return path


def _make_folder(folder: Path) -> None:
    from app.atomic import friendly_error

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        friendly = friendly_error(exc, folder)
        if friendly is not None:
            raise friendly from None
        reason = exc.strerror or type(exc).__name__
        raise VoxDeskError(f"Cannot create the folder {folder} ({reason}): choose another --out.") from None


def _jobs(args: argparse.Namespace) -> list[Job]:
    if not args.out.strip():
        raise VoxDeskError("--out is empty: give the file (or, with --text-file, the folder) to write.")
    if args.text_file is not None:
        try:
            lines = Path(args.text_file).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise VoxDeskError(f"Text file {args.text_file} not found.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise VoxDeskError(f"Cannot read text file {args.text_file} as UTF-8 text ({exc}).") from None
        texts = [line for line in lines if line.strip()]
        if not texts:
            raise VoxDeskError(f"Text file {args.text_file} has no text in it.")
        folder = Path(args.out)
        if folder.exists() and not folder.is_dir():
            raise VoxDeskError(f"With --text-file, --out must be a folder; {folder} is a file.")
        return [Job(t, folder / f"{i:04d}.wav") for i, t in enumerate(texts, 1)]
    if not args.text.strip():
        raise VoxDeskError("The text to speak is empty.")
    return [Job(args.text, _out_file(args.out))]


def _voice(args: argparse.Namespace, encode_rate: int, v2: bool):
    from app.audio.io import load_audio
    from app.models.voxcpm.prompt import VoicePrompt, check_voice

    if args.prompt_wav and not (args.prompt_text or "").strip():
        raise VoxDeskError("--prompt-wav needs --prompt-text (the words spoken in it).")
    if args.prompt_text and not args.prompt_wav:
        raise VoxDeskError("--prompt-text needs --prompt-wav (the recording it transcribes).")
    if args.ref_wav and not v2:
        raise VoxDeskError(
            "--ref-wav needs a VoxCPM2 model; with this model use --prompt-wav and --prompt-text."
        )
    if args.control and not v2:
        raise VoxDeskError("--control (voice design) needs a VoxCPM2 model.")
    if args.voice is not None:  # the window's library, found as the server finds it
        from app.voices.lookup import library_prompt

        if args.prompt_wav or args.ref_wav:
            raise VoxDeskError("--voice cannot be combined with --prompt-wav or --ref-wav: give one voice.")
        return library_prompt(args.voice, args.voices, encode_rate, "voxcpm2" if v2 else "voxcpm")
    if not (args.prompt_wav or args.ref_wav):
        return None
    voice = VoicePrompt(
        prompt_audio=load_audio(args.prompt_wav, encode_rate) if args.prompt_wav else None,
        prompt_text=args.prompt_text or "",
        reference_audio=load_audio(args.ref_wav, encode_rate) if args.ref_wav else None,
    )
    check_voice(voice, v2)
    return voice


def _designed(text: str, args: argparse.Namespace) -> str:
    """The voice design in front of the text, as the official CLI puts it."""
    from app.models.voxcpm.prompt import design_text

    control = (args.control or "").strip()
    return design_text(control, text) if control else text


def _spoken(text: str, args: argparse.Namespace) -> str:
    """What the one-request loop is given, in the official ``generate``'s order: whitespace
    collapsed, then (``--normalize``) numbers and symbols spelled out. (The engine does the same
    itself from ``SynthRequest.normalize``.)"""
    from app.models.voxcpm.prompt import normalize_text

    text = normalize_text(_designed(text, args))
    if args.normalize:
        from app.text.normalize import normalize_for_speech

        text = normalize_for_speech(text)
    return text


def _render(synth, jobs: list[Job], voice, args: argparse.Namespace) -> Iterator[tuple[Job, object]]:
    """Synthesize one text with the one-request loop."""
    for job in jobs:
        result = synth.synthesize(
            _spoken(job.text, args),
            voice,
            seed=args.seed,
            cfg=args.cfg,
            timesteps=args.timesteps,
            min_len=args.min_len,
            max_len=args.max_len,
            retry_badcase=not args.no_retry,
        )
        yield job, _Rendered(result.audio, result.sample_rate, result.n_patches, result.seed)


@dataclass(frozen=True)
class _Rendered:
    audio: object
    sample_rate: int
    n_patches: int
    seed: int
    note: str = ""  # e.g. the back-check's score


def _requests(jobs: list[Job], voice, args: argparse.Namespace) -> list:
    from app.engine import SynthRequest

    reqs = []
    for job in jobs:
        settings = (args.seed, args.cfg, args.timesteps, args.min_len, args.max_len, not args.no_retry)
        text = _designed(job.text, args)
        extra = {"normalize": args.normalize, "speed": args.speed, "lora": args.lora_dir}
        reqs.append(SynthRequest(text, voice, *settings, **extra))
    return reqs


def _lora(args: argparse.Namespace) -> str | None:
    """The LoRA folder to speak with: ``--lora DIR``, else the one attached to ``--voice``;
    checked against the model before anything is loaded."""
    folder = args.lora
    if folder is None and args.voice is not None:
        from app.voices.lookup import library_lora

        folder = library_lora(args.voice, args.voices)
    if folder is not None:
        from app.models.voxcpm.lora import check_lora_folder

        check_lora_folder(folder, args.model)
    return folder


def _render_batch(jobs: list[Job], voice, args: argparse.Namespace) -> Iterator[tuple[Job, _Rendered]]:
    """All lines of a text file as one batch through the engine (same audio as one by one)."""
    from app.engine import Engine

    engine = Engine(engine_config(args, max_num_seqs=min(len(jobs), 64)))
    for job, (audio, ev) in run_batch(engine, jobs, _requests(jobs, voice, args)):
        yield job, _Rendered(audio, engine.sample_rate, ev.n_patches, ev.seed)


def run_batch(engine, jobs: list[Job], reqs: list) -> Iterator[tuple[Job, tuple]]:
    """``reqs`` (one per job) through ``engine`` at once: (job, (audio, RequestFinished)) as each
    ends; the first failure is one line naming its line of text."""
    import numpy as np

    from app.engine.events import AudioChunk, RequestFailed, RequestRetried

    ids = [engine.submit(r) for r in reqs]
    by_id = dict(zip(ids, jobs, strict=True))
    chunks: dict[int, list] = {rid: [] for rid in ids}
    while by_id:
        for ev in engine.step():
            if isinstance(ev, AudioChunk):
                chunks[ev.request_id].append(ev.samples)
            elif isinstance(ev, RequestRetried):
                chunks[ev.request_id] = []  # a runaway take: the next one replaces it
            elif isinstance(ev, RequestFailed):
                raise VoxDeskError(f"Line {ids.index(ev.request_id) + 1}: {ev.message}")
            else:
                parts = chunks.pop(ev.request_id)
                audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
                yield by_id.pop(ev.request_id), (audio, ev)


def _render_remote(jobs: list[Job], args: argparse.Namespace) -> Iterator[tuple[Job, _Rendered]]:
    """Every line sent to a remote speech server (``--server``), in order, streamed back."""
    import queue

    import numpy as np

    from app.backends.remote import RemoteBackend
    from app.engine import SynthRequest
    from app.engine.events import AudioChunk, RequestFailed
    from app.models.voxcpm.prompt import design_text, normalize_text

    backend = RemoteBackend(args.server, args.api_key, timeout=args.timeout)
    try:
        model = backend.connect()
        if args.control and model.architecture != "voxcpm2":  # (sent as VoxCPM2's voice design)
            raise VoxDeskError("--control with --server needs a VoxCPM2 server.")
        # every family but VoxCPM1 copies a voice from a recording without its transcript
        voice = _voice(args, model.encoder_rate, model.architecture != "voxcpm")
        events: queue.SimpleQueue = queue.SimpleQueue()
        handles = []
        for job in jobs:
            text = normalize_text(job.text)
            text = design_text(args.control, text) if args.control else text
            settings = (args.seed, args.cfg, args.timesteps, args.min_len, args.max_len)
            extra = {"speed": args.speed, "emotion": args.emotion, "language": language(args)}
            request = SynthRequest(text, voice, *settings, **extra)
            handles.append(backend.submit(request, events.put, encoder_rate=model.encoder_rate))
        chunks: dict[int, list] = {-h: [] for h in handles}
        done: dict[int, _Rendered] = {}
        for i, handle in enumerate(handles):
            while -handle not in done:
                ev = events.get()
                if isinstance(ev, AudioChunk):
                    chunks[ev.request_id].append(ev.samples)
                elif isinstance(ev, RequestFailed):
                    where = f"Line {handles.index(-ev.request_id) + 1}: " if len(jobs) > 1 else ""
                    raise VoxDeskError(where + ev.message)
                else:
                    rate = int(ev.stats.get("sample_rate", model.sample_rate))
                    audio = np.concatenate(chunks.pop(ev.request_id))
                    done[ev.request_id] = _Rendered(audio, rate, ev.n_patches, ev.seed)
            yield jobs[i], done.pop(-handle)
    finally:
        backend.close()


def cmd_synth(args: argparse.Namespace) -> int:
    from app.audio.io import write_audio
    from app.engine.config import resolve_device
    from app.models.voxcpm.config import load_config
    from app.models.voxcpm.generate import Synthesizer

    jobs = _jobs(args)
    check_rate(args.speed)
    args.emotion = emotion_control(args)  # the options alone checked before anything loads
    if args.server and args.check:
        raise VoxDeskError("--check needs the local engine (--model DIR), not --server.")
    if args.server and args.lora:
        raise VoxDeskError("--lora needs the local engine (--model DIR), not --server.")
    if args.server:
        if args.text_file is not None:
            _make_folder(jobs[0].out.parent)
        for job, result in _render_remote(jobs, args):
            write_audio(job.out, result.audio, result.sample_rate, fmt=job.fmt)
            print(f"{job.out}: {len(result.audio) / result.sample_rate:.2f} s, seed {result.seed}")
        return 0
    if not args.model:
        raise VoxDeskError("Give --model DIR (a model on this computer) or --server URL (a speech server).")
    if args.seed is not None:  # as the official examples do before a call; the request is seeded too
        from app.synth_family import seed_everything

        seed_everything(args.seed)
    from app.engine.family import detect_family

    if detect_family(args.model) != "voxcpm":
        return _speak_family(jobs, args)
    cfg = load_config(args.model)
    check_emotion_options(args, "VoxCPM2" if cfg.is_v2 else "VoxCPM", frozenset(), ())
    device = resolve_device(args.device)
    if args.threads is not None and args.threads < 1:
        raise VoxDeskError("--threads must be at least 1.")
    if device == "cpu":
        import torch

        from app.engine.config import cpu_threads

        torch.set_num_threads(args.threads or cpu_threads())
    encode_rate = int(cfg.audio_vae.get("sample_rate", 16000))
    voice = _voice(args, encode_rate, cfg.is_v2)
    args.lora_dir = _lora(args)
    if args.check:  # through the engine, recognition beside it: see app/backcheck
        from app.backcheck.cli import render_checked

        _make_folder(jobs[0].out.parent)
        rendered = render_checked(jobs, voice, args, _requests(jobs, voice, args))
    elif args.text_file is not None or args.speed != 1.0:  # the engine applies the speed
        _make_folder(jobs[0].out.parent)
        rendered = _render_batch(jobs, voice, args)
    else:
        synth = Synthesizer.from_dir(args.model, device, cpu_precision=args.dtype, lora=args.lora_dir)
        rendered = _render(synth, jobs, voice, args)
    for job, result in rendered:
        write_audio(job.out, result.audio, result.sample_rate, fmt=job.fmt)
        seconds = len(result.audio) / result.sample_rate
        print(f"{job.out}: {seconds:.2f} s, {result.n_patches} patches, seed {result.seed}{result.note}")
    return 0


def _speak_family(jobs: list[Job], args: argparse.Namespace) -> int:
    """Another family's folder (CosyVoice, IndexTTS): every line through the engine, as
    app/synth_family says."""
    from app.audio.io import write_audio
    from app.engine import Engine
    from app.synth_family import synth_family

    _make_folder(jobs[0].out.parent)
    engine = Engine(engine_config(args, max_num_seqs=min(len(jobs), 64)))
    try:
        for job, result in synth_family(engine, jobs, args):
            write_audio(job.out, result.audio, result.sample_rate, fmt=job.fmt)
            seconds = len(result.audio) / result.sample_rate
            print(f"{job.out}: {seconds:.2f} s, seed {result.seed}{result.note}")
    finally:
        engine.shutdown()
    return 0


def add_synth(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="speak text with a VoxCPM, CosyVoice or IndexTTS model into WAV files")
    p.add_argument("--model", help="model folder (VoxCPM, CosyVoice2/3 or IndexTTS-2.5: the family is told "
                   "by its files)")  # fmt: skip
    p.add_argument("--server", help="send the text to this OpenAI-compatible speech server instead")
    p.add_argument("--api-key", help="the server's API key (with --server)")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)"
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to speak")
    src.add_argument("--text-file", help="UTF-8 file; each non-empty line is spoken to its own file")
    p.add_argument("--voice", metavar="NAME", help="a voice from the voice library, by name or id")
    p.add_argument("--voices", metavar="DIR", help="voice library folder (default: the app's own)")
    p.add_argument("--ref-wav", help="reference recording of the voice without its transcript (VoxCPM2; "
                   "CosyVoice: cross-lingual, or instruct with --control; IndexTTS: the speaker clip)")
    p.add_argument("--prompt-wav", help="prompt recording to continue from (needs --prompt-text)")
    p.add_argument("--prompt-text", help="the words spoken in --prompt-wav")
    p.add_argument("--control", help="VoxCPM2: voice design, describe the voice; CosyVoice: the instruction, "
                   "how to speak (e.g. 请用四川话表达。)")
    p.add_argument(
        "--lora",
        metavar="DIR",
        help="speak with this LoRA: a folder the official trainer wrote (lora_weights.safetensors or "
        ".ckpt, lora_config.json); default: the one attached to --voice, if any",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a new one each run); "
                   "Python's, NumPy's and torch's generators are seeded with it too, as the official "
                   "examples do")
    p.add_argument("--cfg", type=float, default=2.0, help="guidance strength (default 2.0)")
    p.add_argument("--timesteps", type=int, default=10, help="diffusion steps per patch (default 10)")
    p.add_argument("--min-len", type=int, default=2, help="minimum patches before stopping (default 2)")
    p.add_argument("--max-len", type=int, default=4096, help="maximum patches (default 4096)")
    p.add_argument(
        "--no-retry",
        action="store_true",
        help="keep a take that runs on to 6 patches per text token instead of drawing it again "
        "(up to 3 takes, as the official generate() does by default)",
    )
    p.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="F",
        help="speaking rate, 0.5 (half as fast) to 2.0 (twice as fast), pitch unchanged (default 1.0); "
        "IndexTTS-2.5 takes it as its duration factor 1/F",
    )
    add_emotion_options(p)
    p.add_argument(
        "--normalize",
        action="store_true",
        help="speak numbers, dates, money, units and symbols as words (the official TextNormalizer)",
    )
    add_engine_options(p)
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per usable core)")
    p.add_argument(
        "--out", required=True, help="output .wav or .flac file (a folder of .wav files with --text-file)"
    )
    from app.backcheck.cli import add_options

    add_options(p)
    p.set_defaults(func=cmd_synth)
