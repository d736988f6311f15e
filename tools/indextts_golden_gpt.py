"""Record the official IndexTTS GPT's mel codes on a VoxDesk tiny folder (tests/data/indextts/).

Runs in the official code's venv, never in VoxDesk's (from VoxDesk's root)::

    /tmp/indexvenv/bin/python tools/indextts_golden_gpt.py /work/official/index-tts FOLDER tests/data/indextts

FOLDER is a tiny folder written by ``python -m app.models.indextts.checkpoint FOLDER``. The script
builds ``UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus")`` as ``infer_v2_5.py`` does (official
``load_checkpoint``, ``post_init_gpt2_config(kv_cache=True)``) and calls ``inference_speech`` with
``infer``'s generation defaults, a fixed random ``style [1, 192]`` and ``emovec [1, d]`` (given,
so the emotion encoder does not run), the case's settings and, per case and seed,
``torch.manual_seed(seed)`` right before the call. The codes are cut at the first stop code as
``infer`` does. It writes ``gpt_codes.npz``:

- ``style``, ``emovec``; per case ``C``: ``C_text`` (the ids as ``infer`` hands them over, with
  its trailing 1), ``C_lang``, ``C_settings`` (JSON text: ``DEFAULTS`` with the case's changes),
  ``C_seed<N>`` (the codes) and ``C_steps<N>`` (how many steps the beam search ran: fewer than
  its ``max_mel_tokens`` when the scorer ended it);
- ``trace_*``: for case ``TRACE`` and seed 1, each step's new beam codes, parents and beam scores
  (the official ``BeamSearchScorer.process`` outputs), for the first ``TRACE_STEPS`` steps;
- ``hidden`` / ``logits``: the GPT-2 stack's output over the first forward's rows of case
  ``TRACE`` (beam 0, without the masked padding rows) and the mel logits of its last row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from indextts_official import load_tree, official_import, save_npz  # noqa: E402

SEEDS = (1, 2, 3, 4)
TRACE, TRACE_STEPS = "plain", 20
# infer's generation defaults (infer_v2_5.py 732-740) as inference_speech receives them
DEFAULTS = {"num_beams": 3, "temperature": 0.8, "top_k": 30, "top_p": 0.8, "repetition_penalty": 10.0,
            "length_penalty": 0.0, "max_mel_tokens": 80}  # fmt: skip
# name: (text ids as infer hands them over: tokenizer ids + a trailing 1, language index, what
# differs from DEFAULTS). "drops" has ids 0 and 1 inside, which the official prepare_gpt_inputs drops
# (and pads for) before the GPT. On the tiny folder (its stop logit raised by the writer's STOP_BIAS)
# some 80-step runs end by the scorer before the limit; "limit" stops at 6 codes; "penalty" and
# "wide" change every other setting (length penalty 1 and temperature 1; 4 beams, no top-k, top-p
# 0.9, no repetition penalty).
CASES = {
    "plain": ([812, 45, 1290, 7, 333, 2050, 96, 1], 1, {}),
    "drops": ([0, 640, 1, 1, 77, 0, 1500, 1], 0, {}),
    "short": ([2300, 1], 7, {}),
    "long": ([(37 * i + 11) % 2390 + 5 for i in range(30)] + [1], 1, {}),
    "limit": ([812, 45, 1290, 7, 1], 1, {"max_mel_tokens": 6}),
    "penalty": ([812, 45, 1290, 7, 333, 2050, 96, 1], 1, {"length_penalty": 1.0, "temperature": 1.0}),
    "wide": ([2300, 1], 7, {"num_beams": 4, "top_k": 0, "top_p": 0.9, "repetition_penalty": 1.0}),
}


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit("usage: indextts_golden_gpt.py OFFICIAL_CHECKOUT TINY_FOLDER OUT_DIR")
    official_import(sys.argv[1])
    folder, out = Path(sys.argv[2]), Path(sys.argv[3])
    import torch
    from indextts.gpt.model_v2 import UnifiedVoice
    from indextts.utils.checkpoint import load_checkpoint
    from transformers.generation import beam_search

    cfg = load_tree(folder)
    gpt = UnifiedVoice(**cfg.gpt, spk_cond_mode="campplus")
    load_checkpoint(gpt, str(folder / cfg.gpt_checkpoint))
    gpt.eval()
    gpt.post_init_gpt2_config(use_deepspeed=False, kv_cache=True, half=False)
    stop = int(cfg.gpt.stop_mel_token)

    inputs = torch.Generator().manual_seed(20251205)
    style = torch.randn(1, 192, generator=inputs)
    emovec = torch.randn(1, int(cfg.gpt.model_dim), generator=inputs) * 0.5
    record: dict[str, object] = {"style": style, "emovec": emovec}

    steps: list[tuple] = []
    process = beam_search.BeamSearchScorer.process

    def traced(self, *args, **kwargs):
        result = process(self, *args, **kwargs)
        steps.append(tuple(result[k].clone() for k in ("next_beam_tokens", "next_beam_indices",
                                                       "next_beam_scores")))  # fmt: skip
        return result

    beam_search.BeamSearchScorer.process = traced
    first: dict[str, torch.Tensor] = {}

    def grab(_module, _args, output) -> None:
        if "hidden" not in first:
            first["hidden"] = output.last_hidden_state[0].clone()

    hook = gpt.inference_model.transformer.register_forward_hook(grab)
    for name, (ids, lang, changes) in CASES.items():
        record[f"{name}_text"] = torch.tensor(ids, dtype=torch.int32)
        record[f"{name}_lang"] = torch.tensor(lang)
        settings = {**DEFAULTS, **changes}
        record[f"{name}_settings"] = json.dumps(settings)  # text: exact floats (npz floats are float32)
        generation = {k: v for k, v in settings.items() if k != "max_mel_tokens"}
        for seed in SEEDS:
            steps.clear()
            first.clear()
            torch.manual_seed(seed)
            with torch.no_grad():
                codes, _ = gpt.inference_speech(
                    torch.zeros(1, 4, 1024),  # unused in campplus mode with emo_vec given
                    torch.tensor([ids], dtype=torch.int32),
                    torch.LongTensor([lang]),
                    emo_vec=emovec,
                    campplus_embedding=style,
                    do_sample=True, num_return_sequences=1, max_generate_length=settings["max_mel_tokens"],
                    **generation,
                )  # fmt: skip
            row = codes[0]
            hit = (row == stop).nonzero()
            cut = row[: int(hit[0, 0])] if len(hit) else row
            record[f"{name}_seed{seed}"] = cut.to(torch.int32)
            record[f"{name}_steps{seed}"] = torch.tensor(len(steps))
            print(f"{name} seed {seed}: {len(cut)} codes, {len(steps)} steps")
            if name == TRACE and seed == 1:
                n = min(TRACE_STEPS, len(steps))
                record["trace_tokens"] = torch.stack([s[0] for s in steps[:n]]).to(torch.int32)
                record["trace_parents"] = torch.stack([s[1] for s in steps[:n]]).to(torch.int32)
                record["trace_scores"] = torch.stack([s[2] for s in steps[:n]])
                with torch.no_grad():
                    pad = sum(1 for i in ids if i in (0, 1))  # the masked rows prepare_gpt_inputs adds
                    record["hidden"] = first["hidden"][pad:]
                    record["logits"] = gpt.inference_model.lm_head(first["hidden"][-1])
    hook.remove()
    print(save_npz(out / "gpt_codes.npz", **record))


if __name__ == "__main__":
    main()
