#!/bin/bash
# One device run (nvidia-h200): engine GPU tests, then `voxdesk bench` on real-size random
# checkpoints written by the core's checkpoint writer, with the official package side by side.
# Needs .whl/ (voxcpm 2.0.3 + pydantic stack) carried; writes logs and JSON under $OUT.
# Usage: bash docs/bench_h200.sh [tests] [v2] [v2-engine] [v2-opt] [official-compiled] [v15]
set -o pipefail
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
BENCH='import sys; sys.path.insert(0, "tests"); from official import import_official; import_official(); from app.engine.bench import run_cli; sys.exit(run_cli(sys.argv[1:]))'
want() { [ $# -eq 0 ] || [[ " $ARGS " == *" $1 "* ]]; }
ARGS="$*"
ckpt() {  # preset folder
    [ -f "$2/model.safetensors" ] || python3 -c "from app.models.voxcpm.checkpoint import write_checkpoint as w; w('$2', '$1')"
}
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if want tests; then
    timeout 240 python3 -m pytest -q -x -p no:cacheprovider tests/test_engine_gpu.py tests/test_engine_attention.py 2>&1 | tail -25 | tee "$OUT/gpu_tests.log"
fi
if want v2; then
    t=$(date +%s); ckpt voxcpm2 /tmp/v2; echo "write v2 checkpoint: $(( $(date +%s) - t )) s" | tee "$OUT/ckpt.log"
    timeout 300 python3 -c "$BENCH" --model /tmp/v2 --concurrency 1,4,16,64 --steps 100 --official --json "$OUT/v2.json" 2>&1 | grep -v "it/s" | tail -20 | tee "$OUT/v2.log"
    python3 -c "$BENCH" --model /tmp/v2 --concurrency 1,16 --steps 60 --attention sdpa --json "$OUT/v2_sdpa.json" 2>&1 | tail -8 | tee "$OUT/v2_sdpa.log"
fi
if want v2-engine; then  # the engine alone (no official loops, no SDPA variant)
    ckpt voxcpm2 /tmp/v2
    timeout 300 python3 -c "$BENCH" --model /tmp/v2 --concurrency 1,4,16,64 --steps 100 --json "$OUT/v2_engine.json" 2>&1 | grep -v "it/s" | tail -20 | tee "$OUT/v2_engine.log"
fi
if want v2-opt; then  # the optional prefill graphs and VAE overlap
    ckpt voxcpm2 /tmp/v2
    timeout 120 python3 -c "$BENCH" --model /tmp/v2 --concurrency 1,64 --steps 60 --prefill-graphs --overlap --json "$OUT/v2_opt.json" 2>&1 | grep -v "it/s" | tail -8 | tee "$OUT/v2_opt.log"
fi
if want official-compiled; then
    ckpt voxcpm2 /tmp/v2
    python3 -c "$BENCH" --model /tmp/v2 --concurrency 1,64 --steps 40 --eager --json "$OUT/v2_eager.json" 2>&1 | tail -8 | tee "$OUT/v2_eager.log"
    timeout 420 python3 -c "$BENCH" --model /tmp/v2 --concurrency 1 --steps 100 --official-compiled --json "$OUT/v2_compiled.json" 2>&1 | grep -v "it/s" | tail -8 | tee "$OUT/v2_compiled.log"
fi
if want v15; then
    ckpt voxcpm1.5 /tmp/v15
    python3 -c "$BENCH" --model /tmp/v15 --concurrency 1,16 --steps 100 --max-model-len 2048 --official --json "$OUT/v15.json" 2>&1 | grep -v "it/s" | tail -12 | tee "$OUT/v15.log"
fi
