"""``voxdesk synth``'s IndexTTS-2.5 options: how to feel, apart from the voice, and the text's language.

- ``--emotion-wav W2 [--emotion-weight A]``: the emotion of a second recording (``--ref-wav`` stays
  the voice whose timbre is copied);
- ``--emotion-vector v1,…,v8``: eight weights in :data:`~app.engine.request.EMOTIONS` order, each
  0..1, adding up to at most 1 (the rest is the voice's own emotion);
- ``--emotion-text TEXT``: a sentence describing the emotion, read by the folder's QwenEmotion
  (``""``: it reads the spoken text itself);
- ``--emotion-weight A``: how strongly, 0..1 (the official ``emo_alpha``), with any of the three;
- ``--language CODE``: one of the family's languages (default: guessed from the text).

Every mistake is a :class:`UsageError` (one line, exit code 2): what the options alone tell (two
emotions, a bad or silent file, 7 numbers, a value out of range) before the model loads; what the
loaded family cannot honour (no emotion, no QwenEmotion, another language) once it has.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.errors import UsageError, VoxDeskError

if TYPE_CHECKING:
    from app.engine.request import EmotionControl

SOURCES = ("emotion_wav", "emotion_vector", "emotion_text")


def _flag(attr: str) -> str:
    return "--" + attr.replace("_", "-")


def add_emotion_options(p: argparse.ArgumentParser) -> None:
    from app.engine.request import EMOTIONS

    g = p.add_argument_group("emotion and language (IndexTTS-2.5)")
    g.add_argument(
        "--emotion-wav",
        metavar="W2",
        help="a second recording: its emotion, not its voice, is spoken (--ref-wav stays the voice)",
    )
    g.add_argument(
        "--emotion-vector",
        metavar="V1,...,V8",
        help="8 weights from 0 to 1, adding up to at most 1 (the rest is the voice's own emotion), in "
        f"this order: {', '.join(EMOTIONS)}",
    )
    g.add_argument(
        "--emotion-text",
        metavar="TEXT",
        help="a sentence describing the emotion, read by the model's QwenEmotion (an optional "
        'download); "" reads the spoken text itself',
    )
    g.add_argument(
        "--emotion-weight",
        type=float,
        metavar="A",
        help="how strongly the emotion is spoken, 0 to 1 (default 1; the official emo_alpha)",
    )
    g.add_argument(
        "--language",
        metavar="CODE",
        default="",
        help="the text's language: zh, en, ja, es or ar (default: auto, guessed from the text)",
    )


def parse_vector(text: str) -> tuple[float, ...]:
    """``"0.8,0,0,0,0,0,0,0"`` → 8 checked weights (:func:`~app.engine.request.check_vector`)."""
    from app.engine.request import EMOTIONS, check_vector

    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"--emotion-vector takes {len(EMOTIONS)} numbers separated by commas "
                         f"({', '.join(EMOTIONS)}); got {text!r}.") from None  # fmt: skip
    try:
        return tuple(check_vector(values))
    except VoxDeskError as exc:
        raise UsageError(f"--emotion-vector: {exc}") from None


def emotion_control(args: argparse.Namespace) -> EmotionControl | None:
    """The request's emotion from the options (the clip read here), checked; None without one."""
    from app.engine.request import EmotionControl

    given = [attr for attr in SOURCES if getattr(args, attr) is not None]
    if len(given) > 1:
        raise UsageError(f"{_flag(given[0])} and {_flag(given[1])} are two emotions: give one of "
                         "--emotion-wav, --emotion-vector and --emotion-text.")  # fmt: skip
    if not given:
        if args.emotion_weight is not None:
            raise UsageError("--emotion-weight needs an emotion: --emotion-wav, --emotion-vector or "
                             "--emotion-text.")  # fmt: skip
        return None
    weight = 1.0 if args.emotion_weight is None else args.emotion_weight
    if args.emotion_wav is not None:
        from app.audio.io import read_audio

        try:
            clip, rate = read_audio(args.emotion_wav, max_rate=48_000)
        except VoxDeskError as exc:
            raise UsageError(f"--emotion-wav: {exc}") from None
        control = EmotionControl(clip=clip, clip_rate=rate, weight=weight)
    elif args.emotion_vector is not None:
        control = EmotionControl(vector=parse_vector(args.emotion_vector), weight=weight)
    else:
        control = EmotionControl(text=args.emotion_text.strip(), weight=weight)
    try:
        control.check()
    except VoxDeskError as exc:
        raise UsageError(f"{_flag(given[0])}: {exc}") from None
    return control


def check_emotion_options(
    args: argparse.Namespace, label: str, controls: frozenset[str], languages: tuple[str, ...]
) -> None:
    """One line for an emotion or language option the loaded family (``label``, its ``controls``
    and ``languages``: :class:`~app.engine.family.FamilyInfo`'s) cannot honour."""
    given = next((attr for attr in SOURCES if getattr(args, attr) is not None), None)
    if given is not None and "emotion" not in controls:
        raise UsageError(f"{_flag(given)} needs a model that speaks emotions (IndexTTS-2.5); {label} does "
                         "not: leave it out.")  # fmt: skip
    if given == "emotion_text" and "emotion_text" not in controls:
        raise UsageError(f"--emotion-text needs the QwenEmotion model, which this {label} folder lacks: "
                         "download it (voxdesk models, or the window's Models page) into the folder, or "
                         "give --emotion-wav or --emotion-vector.")  # fmt: skip
    code = language(args)
    if not code:
        return
    if "language" not in controls:
        raise UsageError(f"--language is not a setting of {label} (it reads the language from the text): "
                         "leave it out.")  # fmt: skip
    if code not in languages:
        raise UsageError(f"--language {args.language.strip()!r} is not one {label} speaks: use one of "
                         f"{', '.join(languages)}, or leave it out to guess from the text.")  # fmt: skip


def language(args: argparse.Namespace) -> str:
    """The request's language code ("" or "auto": guessed from the text)."""
    code = args.language.strip().lower()
    return "" if code == "auto" else code
