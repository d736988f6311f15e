"""``voxdesk bench --loras N``: throughput with many LoRAs in the batch against none, one engine.

The engine first runs the plain batches (no LoRA has been seen: no adapter code in the step).
Then ``N`` random LoRAs of the official recipe's shape (rank 32, alpha 32, LM + DiT attention)
for this model are written, each warmed once (loading into its slot, the one layout change and
graph recapture, its prompt's prefix-cache entry), and every concurrency runs again twice: each
request with one of the ``N`` LoRAs in turn, and with none on the LoRA-enabled engine (all rows
in slot 0, which still pays for the masked low-rank GEMMs). ``ratio`` is LoRA over plain
throughput (seq-steps/s); the issue's target is at least 0.8 for 16 requests with 8 LoRAs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from app.engine.engine import Engine
from app.engine.voice import VoicePrompt
from app.models.voxcpm.lora import LoRAConfig, write_random_lora

RECIPE = LoRAConfig(r=32, alpha=32)  # conf/voxcpm_v2/voxcpm_finetune_lora.yaml: LM + DiT


def bench_loras(
    engine: Engine, plain: list[dict[str, Any]], steps: int, voice: VoicePrompt | None, n: int
) -> dict[str, Any]:
    """``plain``: the no-LoRA batches already run on ``engine`` (one per concurrency)."""
    from app.models.voxcpm.bench import run_batch

    with tempfile.TemporaryDirectory(prefix="voxdesk-lora-bench-") as tmp:
        folders = [
            str(write_random_lora(Path(tmp) / f"lora{i}", engine.runner.model.cfg, RECIPE, seed=i, std=0.01))
            for i in range(n)
        ]
        for i, folder in enumerate(folders):  # load each into its slot, cache its prompt's KV
            run_batch(engine, 1, 8, voice, seed0=10**6 + i, loras=[folder])
        rows = []
        for base in plain:
            c = base["concurrency"]
            lora = run_batch(engine, c, steps, voice, seed0=5000 * c, loras=folders)
            none = run_batch(engine, c, steps, voice, seed0=7000 * c)
            rows.append(
                {
                    "concurrency": c,
                    "plain_seq_steps_per_s": base["seq_steps_per_s"],
                    "lora_seq_steps_per_s": lora["seq_steps_per_s"],
                    "no_lora_on_lora_engine_seq_steps_per_s": none["seq_steps_per_s"],
                    "plain_ms_per_step": base["ms_per_step"],
                    "lora_ms_per_step": lora["ms_per_step"],
                    "ratio": lora["seq_steps_per_s"] / base["seq_steps_per_s"],
                    "steady_ratio": lora["steady_seq_steps_per_s"] / base["steady_seq_steps_per_s"],
                }
            )
    bank = engine.runner.lora
    return {
        "loras": n,
        "rank": RECIPE.r,
        "slots": engine.config.lora_slots,
        "adapted_modules": len(bank.names) if bank else 0,
        "cuda_graphs": engine.runner.graphs is not None,
        "rows": rows,
    }


def lora_table(res: dict[str, Any]) -> str:
    head = f"LoRAs {res['loras']} (r {res['rank']}, {res['adapted_modules']} modules, {res['slots']} slots)"
    lines = [head]
    for r in res["rows"]:
        lines.append(
            f"{r['concurrency']:>5} plain {r['plain_seq_steps_per_s']:.0f} seq-steps/s, "
            f"LoRA {r['lora_seq_steps_per_s']:.0f} ({r['ratio']:.2f}x, steady {r['steady_ratio']:.2f}x), "
            f"none on the LoRA engine {r['no_lora_on_lora_engine_seq_steps_per_s']:.0f}"
        )
    return "\n".join(lines)
