"""``voxdesk serve --model DIR [--host H] [--port P] [--api-key KEY] [--device D]``."""

from __future__ import annotations

import argparse
import os
import sys

from app.engine_args import add_engine_options, engine_config
from app.errors import VoxDeskError


def served_model(engine, model_dir: str):
    from app.engine.host import model_id
    from app.server.app import ServedModel

    return ServedModel(
        name=engine.model_name,
        model_id=model_id(engine, model_dir),
        architecture=engine.info.architecture,
        sample_rate=int(engine.info.sample_rate),
        encoder_rate=int(engine.info.voice_rate),
        controls=engine.info.controls,
        label=engine.info.label,
        languages=tuple(engine.info.languages),
    )


def _default_voice(library, name: str | None) -> str | None:
    """``--default-voice``, checked before the model loads: a library voice, or None (``default``)."""
    from app.voices.lookup import find_voice, is_model_default

    if is_model_default(name):
        return None
    if find_voice(library, name) is None:
        raise VoxDeskError(
            f"--default-voice {name!r} is not in the voice library ({library.root}): give a voice's name "
            "or id, or leave it out so that OpenAI's stock names speak as 'default'."
        )
    return name


def cmd_serve(args: argparse.Namespace) -> int:
    from app.engine import Engine
    from app.engine.host import EngineHost
    from app.paths import check_writable
    from app.server.app import ServerConfig, ServerState
    from app.server.run import check_address, serve_forever
    from app.voices.library import VoiceLibrary

    api_key = args.api_key or os.environ.get("VOXDESK_API_KEY") or None
    check_address(args.host, api_key)  # before the model is loaded: fail fast
    if args.max_pending < 1:
        raise VoxDeskError("--max-pending must be at least 1.")
    check_writable([args.voices] if args.voices else None)  # a read-only data folder: one plain line
    library = VoiceLibrary(args.voices) if args.voices else VoiceLibrary()
    default_voice = _default_voice(library, args.default_voice)
    print(f"loading {args.model} …", file=sys.stderr, flush=True)
    engine = Engine(engine_config(args, max_num_seqs=args.max_batch))
    host = EngineHost(engine).start()
    state = ServerState(ServerConfig(api_key=api_key, max_pending=args.max_pending,
                                     cors_origins=tuple(args.cors_origin or ()),
                                     default_voice=default_voice), library)  # fmt: skip
    state.attach(host, served_model(engine, args.model))

    def ready(port: int) -> None:
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"VoxDesk speech server on http://{shown}:{port}/v1 (model {engine.model_name}; "
              "Ctrl+C stops it)", flush=True)  # fmt: skip

    try:
        serve_forever(state, args.host, args.port, ready)
    except KeyboardInterrupt:  # Ctrl+C is how a server is stopped: not an error
        print("stopped", file=sys.stderr)
    finally:
        host.close()
        engine.shutdown()
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve an OpenAI-compatible speech API (POST /v1/audio/speech)")
    p.add_argument("--model", required=True, help="model folder (config.json, weights, tokenizer)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this computer)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--api-key", help="require this key (Authorization: Bearer KEY); needed off loopback")
    add_engine_options(p)
    p.add_argument("--voices", help="voice library folder (default: the app's own)")
    p.add_argument("--default-voice", metavar="NAME",
                   help="library voice that OpenAI's stock names (alloy, echo, nova, …) speak as "
                   "(default: the model's own voice, as 'default')")  # fmt: skip
    p.add_argument("--max-batch", type=int, default=64, help="requests decoded together (default 64)")
    p.add_argument("--max-pending", type=int, default=128,
                   help="requests admitted before the server answers 429 (default 128)")  # fmt: skip
    p.add_argument("--cors-origin", action="append", help="allow browser pages from this origin (repeatable)")
    p.set_defaults(func=cmd_serve)
