"""``voxdesk``: the command line (no arguments opens the window).

    voxdesk synth --model DIR (--text T | --text-file F) --out F.wav [--voice NAME] [sampling options]
    voxdesk synth --server URL [--api-key KEY] (--text T | --text-file F) --out F.wav [...]
    voxdesk info --model DIR
    voxdesk --version
    voxdesk write-checkpoint --preset tiny-v2 --out DIR
    voxdesk transcribe FILE [--language auto|zh|en|ja|ko|yue] [--model DIR]
    voxdesk models list | download NAME [--source S] [--accept-license]
    voxdesk dub SUBS.srt|SUBS.vtt --model DIR [--voice NAME] [--max-rate-change 0.25] --out DIR
    voxdesk book IN.epub|IN.txt|IN.md --model DIR [--voice NAME] [--seed N] --out DIR
    voxdesk train --voice NAME --data DIR|FILE --model DIR [--steps N] [--out DIR]

Every failure prints one line to stderr and exits non-zero. Subcommands register themselves
through ``SUBCOMMANDS``: append ``add_parser(subparsers)`` functions to add more (``bench``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from app.book_cli import add_book
from app.errors import UsageError, VoxDeskError
from app.synth_cli import add_synth


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


# ---- info -----------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    import torch

    from app.models.voxcpm.config import load_config
    from app.models.voxcpm.model import VoxCPM
    from app.models.voxcpm.tokenizer import check_tokenizer
    from app.models.voxcpm.weights import check_model_files

    cfg = load_config(args.model)
    files = check_model_files(args.model, cfg)  # a damaged model is an error, not a report
    tokens = check_tokenizer(args.model, cfg.lm.vocab_size)
    with torch.device("meta"):
        model = VoxCPM(cfg)
    names = ("base_lm", "residual_lm", "feat_encoder", "feat_decoder", "audio_vae")
    counts = {n: sum(p.numel() for p in getattr(model, n).parameters()) for n in names}
    total = sum(p.numel() for p in model.parameters())
    counts["projections, fsq, stop"] = total - sum(counts.values())
    release = {"voxcpm": "VoxCPM-0.5B / VoxCPM1.5", "voxcpm2": "VoxCPM2"}[cfg.architecture]
    print(f"architecture: {cfg.architecture} ({release})")
    print(f"config dtype: {cfg.dtype}; patch size {cfg.patch_size}, latent size {cfg.feat_dim}")
    vae = model.audio_vae
    print(f"sample rates: {model.encode_rate} Hz in (prompts), {model.output_rate} Hz out")
    steps = model.encode_rate / (vae.chunk_size * cfg.patch_size)
    print(f"audio per step: {model.samples_per_patch} samples ({steps:.2f} steps per second of audio)")
    for name, n in counts.items():
        print(f"  {name:<24}{n / 1e6:>10.2f} M")
    print(f"  {'total':<24}{total / 1e6:>10.2f} M")
    print(f"weights: {', '.join(p.name for p in files)} (intact, shapes match config.json)")
    print(f"tokenizer: {tokens} entries, all inside the model's vocabulary of {cfg.lm.vocab_size}")
    from app.cpu_precision import decide

    print(f"device: {f'cuda ({torch.cuda.get_device_name(0)})' if torch.cuda.is_available() else 'cpu'}")
    print(f"cpu precision: {decide().describe()} (synth and serve --dtype choose another)")
    return 0


def add_info(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="show a model's architecture, sizes and sample rates")
    p.add_argument("--model", required=True)
    p.set_defaults(func=cmd_info)


# ---- write-checkpoint -----------------------------------------------------------------------
def cmd_write_checkpoint(args: argparse.Namespace) -> int:
    from app.models.voxcpm.checkpoint import write_checkpoint

    out = write_checkpoint(args.out, args.preset, seed=args.seed)
    print(f"wrote a random {args.preset} checkpoint to {out}")
    return 0


def add_write_checkpoint(sub: argparse._SubParsersAction) -> None:
    from app.models.voxcpm.checkpoint import PRESETS

    p = sub.add_parser("write-checkpoint", help="write a randomly initialised checkpoint (tests, benchmarks)")
    p.add_argument("--preset", required=True, choices=PRESETS)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_write_checkpoint)


def add_bench(sub: argparse._SubParsersAction) -> None:
    from app.models.voxcpm.bench import add_parser

    add_parser(sub)


def add_serve(sub: argparse._SubParsersAction) -> None:
    from app.server.cli import add_parser

    add_parser(sub)


# ---- transcribe -----------------------------------------------------------------------------
def cmd_transcribe(args: argparse.Namespace) -> int:
    from app.asr import load_recognizer
    from app.audio.io import load_audio

    recognizer = load_recognizer(args.model)
    audio = load_audio(args.file, recognizer.sample_rate, reject_silence=False)
    print(recognizer.transcribe(audio, recognizer.sample_rate, args.language).text)
    return 0


def add_transcribe(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="print what is said in an audio file (local speech recognition)")
    p.add_argument("file")
    p.add_argument("--language", default="auto", help="auto (default), zh, en, ja, ko or yue")
    p.add_argument("--model", default=None, help="recognizer folder (default: the one downloaded)")
    p.set_defaults(func=cmd_transcribe)


def add_dub(sub: argparse._SubParsersAction) -> None:
    from app.longform.dub_cli import add_dub as add

    add(sub)


def add_models(sub: argparse._SubParsersAction) -> None:
    from app.models_cli import add_parser

    add_parser(sub)


def add_train(sub: argparse._SubParsersAction) -> None:
    from app.train.cli import add_parser

    add_parser(sub)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_synth,
    add_info,
    add_write_checkpoint,
    add_bench,
    add_serve,
    add_transcribe,
    add_models,
    add_dub,
    add_book,
    add_train,
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="voxdesk",
        description="Clone a voice and speak text, fully local.",
        epilog=(
            "Run voxdesk with no arguments to open the window. "
            "voxdesk --self-test [MODEL_DIR] [--device D] checks that this installation can speak "
            "(a tiny built-in test model unless MODEL_DIR is given)."
        ),
    )
    from app.version import version

    parser.add_argument("--version", action="version", version=f"VoxDesk {version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _self_test(argv: list[str]) -> int:
    """``voxdesk --self-test [MODEL_DIR] [--device D]``."""
    p = _Parser(prog="voxdesk --self-test", description="Check that this installation can speak.")
    p.add_argument("model_dir", nargs="?", default=None, help="model folder (default: a tiny test model)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    args = p.parse_args(argv)
    from app.engine.config import resolve_device
    from app.selftest import run_self_test

    try:
        resolve_device(args.device)  # an impossible device is the usual one-line error
    except VoxDeskError as exc:
        print(f"voxdesk: {exc}", file=sys.stderr)
        return 1
    return run_self_test(args.model_dir, args.device)


def _undecodable(argv: list[str]) -> str | None:
    """The first argument that is not UTF-8 text (Python keeps its bytes as lone surrogates), shown
    with the bad bytes escaped; an existing file's name is fine whatever its bytes."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            if os.path.exists(arg):
                continue
            return arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bad = _undecodable(argv)
    if bad is not None:
        print(
            f"voxdesk: the argument “{bad}” is not valid UTF-8 text. Retype it, or save the text "
            "in a UTF-8 file.",
            file=sys.stderr,
        )
        return 2
    if argv[:1] == ["--self-test"]:  # the installation check (bundle builds, support): see app/selftest.py
        return _self_test(argv[1:])
    if not argv:
        from ui.qt_check import run_window  # says which system libraries are missing, if any

        return run_window()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"voxdesk: {exc}", file=sys.stderr)
        return 2
    except VoxDeskError as exc:
        print(f"voxdesk: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("voxdesk: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line for the user
        print(f"voxdesk: internal error ({type(exc).__name__}: {exc}); please report it", file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
