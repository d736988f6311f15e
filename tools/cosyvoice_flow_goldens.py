"""Record CosyVoice2's streaming flow schedule on a long token list (an extra golden).

Runs in the official code's venv, like tools/cosyvoice_goldens.py (whose helpers it uses)::

    /work/cosyvenv/bin/python tools/cosyvoice_flow_goldens.py --official /work/official/CosyVoice \\
        --model DIR2 --out tests/data/cosyvoice/cosyvoice2_flow_stream.npz

The stream golden of ``goldens`` has two chunks (one non-final); this one drives the official
``CosyVoice2Model.tts`` with ``source_speech_token`` (its voice-conversion path: the tokens are
given, no LM) and ``stream=True`` on 150 tokens after a 19-token prompt, so the schedule covers
a padded first chunk (19 + 6 = 25), the hop doubling (31, then 50 tokens) and a final chunk
after two non-final ones. The prompt tokens, prompt mel (cut to 19 tokens / 38 frames) and
speaker embedding come from ``cosyvoice2_stream.npz``; the tokens are that golden's 43 then 107
drawn with ``numpy.random.default_rng(0)``. Written: ``tokens``, ``prompt_token``,
``prompt_feat``, ``embedding``, ``mel_0``, ``mel_1``, ... (the vocoder's inputs, 8-frame mel cache
included) and ``second_call_chunks``: how many vocoder calls a second identical call makes (the
hop stays doubled on the model object between calls, cli/model.py:360).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cosyvoice_goldens import _drop_top_level, _InlineThread, _official  # noqa: E402

PROMPT_TOKENS, TOKENS = 19, 150


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official", required=True)
    ap.add_argument("--model", required=True, help="a cosyvoice2-tiny folder (checkpoint.py)")
    ap.add_argument("--inputs", default="tests/data/cosyvoice/cosyvoice2_stream.npz")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    _official(args.official)
    import cosyvoice.cli.model as official_model
    import torch
    from cosyvoice.utils.common import set_all_random_seed
    from hyperpyyaml import load_hyperpyyaml

    official_model.threading.Thread = _InlineThread
    torch.set_num_threads(args.threads)
    folder = Path(args.model)
    conf = load_hyperpyyaml(_drop_top_level((folder / "cosyvoice2.yaml").read_text(encoding="utf-8"),
                                            ("llm", "get_tokenizer")))  # fmt: skip
    flow, hift = conf["flow"], conf["hift"]
    flow.load_state_dict(torch.load(folder / "flow.pt", weights_only=True), strict=True)
    hift_state = torch.load(folder / "hift.pt", weights_only=True)
    hift.load_state_dict({k.replace("generator.", ""): v for k, v in hift_state.items()}, strict=True)
    model = official_model.CosyVoice2Model(None, flow.eval(), hift.eval())

    given = np.load(args.inputs)
    extra = np.random.default_rng(0).integers(0, 6561, TOKENS - given["tokens"].size)
    tokens = np.concatenate([given["tokens"], extra]).astype(np.int64)
    inputs = {"prompt_token": given["input_flow_prompt_speech_token"][:, :PROMPT_TOKENS],
              "prompt_feat": given["input_prompt_speech_feat"][:, : 2 * PROMPT_TOKENS],
              "embedding": given["input_flow_embedding"]}  # fmt: skip
    mels: list[np.ndarray] = []
    orig = hift.inference

    def hift_inference(*a, **k):
        mels.append(k["speech_feat"].detach().numpy().astype(np.float32).copy())
        return orig(*a, **k)

    hift.inference = hift_inference

    def call() -> None:
        set_all_random_seed(1234)
        for _ in model.tts(source_speech_token=torch.from_numpy(tokens)[None],
                           flow_prompt_speech_token=torch.from_numpy(inputs["prompt_token"]),
                           prompt_speech_feat=torch.from_numpy(inputs["prompt_feat"]),
                           flow_embedding=torch.from_numpy(inputs["embedding"]), stream=True):  # fmt: skip
            pass

    call()
    first = list(mels)
    mels.clear()
    call()
    arrays = {"tokens": tokens, **inputs, "second_call_chunks": np.array(len(mels))}
    arrays |= {f"mel_{i}": m for i, m in enumerate(first)}
    np.savez_compressed(args.out, **arrays)
    print(f"{len(first)} chunks of {[m.shape[2] for m in first]} frames; a second call: {len(mels)}")


if __name__ == "__main__":
    main()
