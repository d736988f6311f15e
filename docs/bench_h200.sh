#!/bin/bash
# One device run (nvidia-h200): GPU tests, then `voxdesk bench` with the official eager loop and
# the peer (nano-vllm-voxcpm, ../shared/peer-bench copied to peer-bench/) from the same call,
# then the ablation (each optimization switched off alone). Real-size random checkpoints come
# from the core's checkpoint writer. Needs .whl/ carried (voxcpm 2.0.3, nano-vllm-voxcpm 2.0.5,
# the pydantic stack) and peer-bench/ carried. Writes log.txt and results.tgz (JSON) under $OUT.
# cpu: VoxCPM-0.5B real shapes on two of the host's cores (taskset), ours in its default (the
# automatic CPU precision: bf16 on this AMX host) / fp32 / int8 and the official eager loop in its
# default (bf16) and fp32, back to back, in the background beside the GPU sections (cpu.log); then
# the bf16 CPU parity test (tests/test_cpu_bf16_parity.py) on the same cores.
# cpu2: VoxCPM2 real shapes on two host cores, the same runs as cpu (without the parity test).
# serve: `voxdesk serve` on the GPU with VoxCPM2 real shapes under the load generator (1, 8, 32
# clients, then a 1,000-request soak: RSS and GPU memory every 500 requests). cpu and cpu2 use the
# same two host cores (14, 15): ask for one of them per call.
# lora: VoxCPM2 real shapes, 16 concurrent requests without LoRAs, then the same 16 with 8 random
# LoRAs of the official recipe (r 32, alpha 32, LM + DiT) in the same batches, one engine
# (app/models/voxcpm/bench_lora.py; target: at least 0.8 of the plain throughput).
# book: a 100,000-character book through the book runner and the audiobook export (tests/bench_book.py).
# train: LoRA training (tests/bench_train.py): step time and peak memory of VoxCPM2 and VoxCPM1.5 at the
# plans chosen for 8/12/24 GB cards, then 300 steps on a synthetic set with the loss going down.
# family: the engine refactor (issue 18: VoxCPM behind app/engine/family.py) against the tree before it:
# VoxCPM2 real shapes, 1/16/64 concurrent, 100 patches, this tree (A) and commit abac047 (B, from
# .oldtree.tar carried: `git archive abac047 -o .oldtree.tar`) alternated A B A B in fresh processes
# (tools/bench_family_ab.py): family_*.json, family_ab.json and family_ab.md (the table) under $OUT.
# firstaudio: the first engine step of 64 requests split into its phases, this tree (A) against abac047
# (B, the same .oldtree.tar), A B A B in fresh processes (tools/first_step_probe.py): host time per
# phase, the same with a sync after each phase, the step's device syncs and garbage collections, and
# how many requests had audio after it; probe_*.json under $OUT/firstaudio.
# cosyvoice: CosyVoice3 real shapes (app/models/cosyvoice/bench.py): the official CosyVoice3Model.tts()
# loop against VoxDesk's LM and engine, GPU and 2 CPU cores; the graphs checks (real shapes: tokens; the
# tiny preset: tokens and audio within 1e-3), the stream probe and the engine trace (where a streamed
# request's first audio goes, step by step, fp32 then bf16).
# indextts: IndexTTS-2.5 real shapes, random weights: the sections ixvs then ixparts (each can be asked for
# alone). Carry .whl/ (ours: tiktoken etc.), .whl_ixofficial/ (sh tools/indextts_device_wheels.sh: the
# official side's pinned transformers 4.52.1, librosa, ...) and official_indextts/indextts/ (mkdir
# official_indextts; cp -r /work/official/index-tts/indextts official_indextts/: the pinned checkout's
# package, commit ee40fa7).
# ixvs: whole requests (app/models/indextts/bench_vs_official.py), the released shapes' folder written once
# to /tmp/ix25 (5.5 GB): the official IndexTTS2.infer loop (3 beams, bf16 GPT) and its accel engine
# (flash_attn from tools/flash_attn_shim: torch SDPA; one sampled sequence, no beams), one request after
# another, against VoxDesk's engine at 1/16/64 concurrent (bf16 GPT, CUDA graphs) and at 1/4 with a 1 GB
# KV cache (the peak for a 12 GB card); 200 codes (8 s of audio) a request. In the background on cores
# 14,15: the official loop against VoxDesk on 2 CPU threads, one cold request of 25 codes each with a 2 s
# voice (ix_cpu.log; on a 2-core AVX2 machine the official side took 413 s with a 4 s voice). Writes
# ix_vs_official.json, ix_vs_cpu.json (each side's figures as soon as it is done). Limits: 450 s GPU, 470 s
# CPU after the folder's write (about 6 minutes on this 2-core machine, likely 1-2 on the device): the
# call stays under 10 minutes; ixparts (about 5 more) needs a call of its own.
# ixparts: the GPT's 3 beams per request through the engine, eager against CUDA graphs (and whether both
# give the same codes), the GPT step alone, and the S2Mel solve against the official CFM.
# Time limits (seconds) for a short device session: CV_GPU_S, CV_GRAPHS_S (0 skips the graphs checks),
# CV_PROBE_S (0 skips tools/cosyvoice_stream_probe.py),
# IX_GPU_S, IX_CPU_S; CV_NO_CPU=1 / IX_NO_CPU=1 skip the CosyVoice / IndexTTS CPU half.
# Usage: bash docs/bench_h200.sh [cpu] [cpu2] [tests] [main] [ablation] [v15] [mem] [serve] [lora] [book] [train]
#        [family] [firstaudio] [cosyvoice] [indextts] [ixvs] [ixparts]
set -o pipefail
OUT=${OUT:-/tmp/bench-out}
RES=/tmp/bench-res
mkdir -p "$OUT" "$RES"
exec > >(tee -a "$OUT/log.txt") 2>&1
trap 'tar czf "$OUT/results.tgz" -C "$RES" .' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
BENCH='import sys; sys.path.insert(0, "tests"); from official import import_official; import_official(); from app.models.voxcpm.bench import run_cli; sys.exit(run_cli(sys.argv[1:]))'
bench() { python3 -c "$BENCH" "$@" 2>&1 | grep -v -E "it/s|Warning|warn\(" ; }
export -f bench; export BENCH
want() { [ -z "$ARGS" ] || [[ " $ARGS " == *" $1 "* ]]; }
ARGS="$*"
ckpt() {  # preset folder
    [ -f "$2/model.safetensors" ] || python3 -c "from app.models.voxcpm.checkpoint import write_checkpoint as w; w('$2', '$1')"
}
cpu_vs_official() {  # LABEL TIMEOUT INT8_ARGS BENCH_ARGS...: ours default, fp32, int8, official eager
    local label=$1 limit=$2 int8=$3 run  # (in the checkpoint's dtype, bf16, and in fp32)
    shift 3
    for run in "default:" "fp32:--dtype float32" "int8:$int8" "official:--official-only" \
        "official_fp32:--official-only --official-dtype float32"; do
        echo "== $label ${run%%:*}"
        # shellcheck disable=SC2086  # the switches are several words
        taskset -c 14,15 timeout "$limit" bash -c 'bench "$@"' _ "$@" ${run#*:} --json "$RES/${label}_${run%%:*}.json"
    done
}
cat .whl/COMMIT 2>/dev/null
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,clocks.mem --format=csv
if want cpu2 || want main || want ablation || want serve || want mem || want lora || want book || want family || want firstaudio; then
    t=$(date +%s); ckpt voxcpm2 /tmp/v2; echo "write v2 checkpoint: $(( $(date +%s) - t )) s"
fi
if want cpu; then
    (
        ckpt voxcpm-0.5b /tmp/v05
        C="--model /tmp/v05 --device cpu --threads 2 --concurrency 1 --steps 30 --voice-patches 0"
        echo "== cpu streaming VAE decode per patch: transposed convs as GEMM (default) vs torch's"
        taskset -c 14,15 python3 - <<'PY'
import time, torch, torch.nn.functional as F
from app.models.voxcpm import vae_layers
from app.models.voxcpm.streaming_vae import StreamingDecoder
from app.models.voxcpm.weights import load_model
torch.set_num_threads(2)
m = load_model("/tmp/v05", "cpu", "float32")
z = torch.randn(1, m.feat_dim, 30 * m.patch_size, generator=torch.Generator().manual_seed(0))
gemm = vae_layers.conv_transpose_gemm
out = {}
with torch.inference_mode():
    for name, fn in (("gemm", gemm), ("torch", lambda x, w, b, s: F.conv_transpose1d(x, w, b, s)), ("gemm2", gemm)):
        vae_layers.conv_transpose_gemm = fn
        dec = StreamingDecoder(m.audio_vae, 1)
        dec.decode(z[..., : m.patch_size], [0]); dec.reset([0])
        t = time.perf_counter()
        wav = torch.cat([dec.decode(z[..., j : j + m.patch_size], [0]) for j in range(0, z.shape[-1], m.patch_size)], -1)
        out[name] = wav
        print(f"{name}: {1e3 * (time.perf_counter() - t) / 30:.1f} ms per patch")
    t = time.perf_counter(); full = m.audio_vae.decode(z)[:, 0]; print(f"whole decode: {1e3 * (time.perf_counter() - t) / 30:.1f} ms per patch")
    print("gemm vs torch max abs", float((out["gemm"] - out["torch"]).abs().max()), "vs whole", float((out["gemm"] - full).abs().max()))
PY
        cpu_vs_official cpu 200 "--cpu-weights int8 --fidelity" $C
        echo "== cpu bf16 parity with the official bf16 CPU loop (skipped without native bf16)"
        python3 -c 'from app.cpu_precision import decide; print(decide().describe())'
        taskset -c 14,15 timeout 300 python3 -m pytest -q -rs -s -p no:cacheprovider \
            tests/test_cpu_bf16_parity.py 2>&1 | grep -E "bf16 |passed|failed|skipped|Error|assert" | tail -20
    ) > "$OUT/cpu.log" 2>&1 &
    CPU_PID=$!
    taskset -cp 0-11 $$ > /dev/null  # the GPU sections keep off the cores the CPU runs use
fi
if want cpu2; then
    (
        C="--model /tmp/v2 --device cpu --threads 2 --concurrency 1 --steps 8 --voice-patches 0"
        cpu_vs_official cpu2 280 "--cpu-weights int8" $C
    ) > "$OUT/cpu2.log" 2>&1 &
    CPU2_PID=$!
    taskset -cp 0-11 $$ > /dev/null
fi
if want tests; then
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_engine_gpu.py tests/test_kernels.py \
        tests/test_engine_attention.py 2>&1 | tail -15
fi
if want main; then  # defaults, the official eager loop and the peer, one call
    echo "== main: defaults + official eager + peer"
    timeout 300 bash -c 'bench "$@"' _ --model /tmp/v2 --concurrency 1,16,64 --steps 100 --official \
        --peer peer-bench/peer_nvv.py --json "$RES/main.json"
fi
if want ablation; then  # each optimization off alone (60 patches per request)
    A="--model /tmp/v2 --concurrency 1,16,64 --steps 60"
    echo "== ablation: defaults";            timeout 90 bash -c 'bench "$@"' _ $A --json "$RES/abl_default.json"
    echo "== ablation: no prefill graphs";   timeout 90 bash -c 'bench "$@"' _ $A --no-prefill-graphs --json "$RES/abl_noprefill.json"
    echo "== ablation: no fused kernels";    VOXDESK_FUSED=0 timeout 90 bash -c 'bench "$@"' _ $A --json "$RES/abl_unfused.json"
    echo "== ablation: no VAE overlap";      timeout 90 bash -c 'bench "$@"' _ $A --no-overlap --json "$RES/abl_nooverlap.json"
    echo "== ablation: bf16 VAE (a setting)"; timeout 90 bash -c 'bench "$@"' _ $A --vae-dtype bfloat16 --json "$RES/abl_vae16.json"
fi
if want v15; then
    ckpt voxcpm1.5 /tmp/v15
    echo "== VoxCPM1.5, 16 concurrent"
    timeout 120 bash -c 'bench "$@"' _ --model /tmp/v15 --concurrency 1,16 --steps 100 --voice-patches 32 --json "$RES/v15.json"
fi
if want mem; then  # VoxCPM2 with 4 concurrent requests: memory for a consumer card
    ckpt voxcpm2 /tmp/v2
    echo "== VoxCPM2, 4 concurrent (memory)"
    timeout 90 bash -c 'bench "$@"' _ --model /tmp/v2 --concurrency 1,4 --steps 60 --json "$RES/v2_mem4.json"
fi
if want serve; then  # the speech server on the GPU, real shapes, under load and a 1,000-request soak
    ckpt voxcpm2 /tmp/v2
    echo "== serve: VoxCPM2 on CUDA, 1/8/32 clients x 64 requests of 20 patches, soak 1,000"
    timeout 400 python3 -m app.server.loadgen --model /tmp/v2 --device cuda --concurrency 1,8,32 \
        --requests 64 --soak 1000
fi
if want lora; then  # many LoRAs in one batch against none (under 4 minutes)
    echo "== lora: VoxCPM2, 16 concurrent, 8 LoRAs (r 32, LM + DiT) vs none"
    timeout 240 bash -c 'bench "$@"' _ --model /tmp/v2 --concurrency 16 --steps 100 --loras 8 \
        --json "$RES/lora.json"
fi
if want book; then  # issue 20: a 100,000-character book through the book runner, then its MP3s + M4B
    ckpt voxcpm2 /tmp/v2  # (needs the av wheel in .whl/; 316 s on the H200 host, 229 s of it the export)
    echo "== book: VoxCPM2 on CUDA, 100,000 characters, window 16, export mp3+m4b"
    timeout 570 python3 tests/bench_book.py --model /tmp/v2 --device cuda --chars 100000 --chapters 12 \
        --json "$RES/book_gpu.json" 2>&1 | grep -v -E "Warning|warn\("
fi
if want train; then  # LoRA training: the plans for 8/12/24 GB cards measured, and a 300-step loss curve
    ckpt voxcpm2 /tmp/v2
    ckpt voxcpm1.5 /tmp/v15
    echo "== train: VoxCPM2 and VoxCPM1.5 LoRA step time and peak memory (8/12/24 GB plans), 300 steps"
    timeout 300 python3 tests/bench_train.py --device cuda --ckpt voxcpm2=/tmp/v2 --ckpt voxcpm1.5=/tmp/v15 \
        --json "$RES/train.json"
fi
if want family; then  # this tree (A) against abac047 (B), alternated; about 4 x 60 s
    echo "== family: engine bench, this tree vs abac047, A B A B"
    OLD=$(mktemp -d) && tar xf .oldtree.tar -C "$OLD" || { echo "family: no .oldtree.tar carried"; OLD=; }
    [ -n "$OLD" ] && timeout 560 python3 tools/bench_family_ab.py --model /tmp/v2 --old "$OLD" --device cuda \
        --concurrency 1,16,64 --steps 100 --rounds 2 --timeout 130 --extra-path /tmp/site --out "$OUT/family" \
        2>&1 | grep -v -E "it/s|Warning|warn\("
fi
if want firstaudio; then  # the 64-request first step of this tree (A) and abac047 (B) by phase; about 4 x 60 s
    echo "== firstaudio: the first step of 64 requests by phase, this tree vs abac047, A B A B"
    OLD=$(mktemp -d) && tar xf .oldtree.tar -C "$OLD" || { echo "firstaudio: no .oldtree.tar carried"; OLD=; }
    [ -n "$OLD" ] && timeout 560 python3 tools/first_step_probe.py --model /tmp/v2 --old "$OLD" --device cuda \
        --rounds 2 --timeout 130 --extra-path /tmp/site --out "$OUT/firstaudio" 2>&1 | grep -v -E "it/s|Warning|warn\("
fi
if want cosyvoice; then  # issue 18 §6: CosyVoice3 real shapes, the official tts() loop against VoxDesk
    # carried: .whl_official/ (sh tools/cosyvoice_device_wheels.sh) and official_cosyvoice/cosyvoice/
    # (cp -r /work/official/CosyVoice/cosyvoice official_cosyvoice/: the checkout's package, commit ace7c47)
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/offsite .whl_official/*.whl
    mkdir -p /tmp/matcha && tar xzf .whl_official/matcha-tts-0.0.5.1.tar.gz -C /tmp/matcha
    export CVPATH=$PYTHONPATH:/tmp/offsite:/tmp/matcha/matcha-tts-0.0.5.1
    cv() { PYTHONPATH=$CVPATH python3 -m app.models.cosyvoice.bench "$@" 2>&1 | grep --line-buffered -v -E "it/s|Warning|warn\(|autocast"; }
    export -f cv
    t=$(date +%s); PYTHONPATH=$CVPATH python3 -c "from app.models.cosyvoice.bench import write_folder as w; from pathlib import Path; w(Path('/tmp/cv05'), 'cosyvoice3-0.5b')"
    echo "write cosyvoice3-0.5b: $(( $(date +%s) - t )) s"
    [ -n "$CV_NO_CPU" ] || (  # CPU, two host cores: the official loop and VoxDesk's LM, real shapes, 40 tokens a request
        echo "== cosyvoice cpu: cosyvoice3-0.5b, 2 threads, 1 request"
        taskset -c 14,15 timeout 450 bash -c 'cv "$@"' _ --folder /tmp/cv05 --device cpu \
            --threads 2 --concurrency 1 --text-tokens 2 --official official_cosyvoice --sides official,lm,engine \
            --json "$RES/cosyvoice_cpu.json"
    ) > "$OUT/cosyvoice_cpu.log" 2>&1 &
    CVCPU_PID=$!; [ -n "$CV_NO_CPU" ] && CVCPU_PID=
    taskset -cp 0-11 $$ > /dev/null
    echo "== cosyvoice gpu: cosyvoice3-0.5b, official tts() at 1 (it serves one at a time), VoxDesk at 1/16/64"
    timeout "${CV_GPU_S:-170}" bash -c 'cv "$@"' _ --folder /tmp/cv05 --device cuda --concurrency 1,16,64 \
        --official-concurrency 1 --text-tokens 5 --official official_cosyvoice --json "$RES/cosyvoice_gpu.json"
    if [ "${CV_GRAPHS_S:-90}" != 0 ]; then
        echo "== cosyvoice graphs: the graphed engine (LM step, DiT per shape) against the eager one, real shapes then tiny"
        PYTHONPATH=$CVPATH timeout "${CV_GRAPHS_S:-90}" python3 tools/cosyvoice_graphs_check.py --model /tmp/cv05 \
            --device cuda --concurrency 1,16 --text "收到好友" --json "$RES/cv_graphs.json" 2>&1 \
            | grep --line-buffered -v -E "Warning|warn\("
        PYTHONPATH=$CVPATH timeout 60 python3 tools/cosyvoice_graphs_check.py --preset cosyvoice3-tiny \
            --device cuda --concurrency 1,16 --audio-tol 1e-3 --json "$RES/cv_graphs_tiny.json" 2>&1 \
            | grep --line-buffered -v -E "Warning|warn\("
    fi
    if [ "${CV_PROBE_S:-90}" != 0 ]; then  # where the first streamed chunk's time and memory go
        echo "== cosyvoice stream probe: each flow and vocoder call, whole against streaming, ours and official"
        PYTHONPATH=$CVPATH timeout "${CV_PROBE_S:-90}" python3 tools/cosyvoice_stream_probe.py --folder /tmp/cv05 \
            --tokens 100 --device cuda --official official_cosyvoice 2>&1 | grep --line-buffered -v -E "Warning|warn\("
    fi
    echo "== cosyvoice engine trace: one streamed request, then 16, step by step (fp32, then bf16 LM and flow)"
    for dt in float32 bfloat16; do
        PYTHONPATH=$CVPATH timeout 90 python3 tools/cosyvoice_engine_trace.py --folder /tmp/cv05 --device cuda \
            --dtype $dt --requests 16 2>&1 | grep --line-buffered -v -E "Warning|warn\("
    done
    [ -n "$CVCPU_PID" ] && { echo "waiting for the cosyvoice cpu section"; wait $CVCPU_PID; cat "$OUT/cosyvoice_cpu.log"; }
fi
[ -n "$CPU_PID" ] && { echo "waiting for the cpu section"; wait $CPU_PID; cat "$OUT/cpu.log"; }
[ -n "$CPU2_PID" ] && { echo "waiting for the cpu2 section"; wait $CPU2_PID; cat "$OUT/cpu2.log"; }
if want indextts || want ixvs; then  # issue 19 section 5: whole requests against the official loop and accel
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/ixoff .whl_ixofficial/*.whl
    t=$(date +%s); python3 -c "from app.models.indextts.bench_folder import bench_folder as b; print(b('/tmp/ix25', 'indextts25'))"
    echo "write indextts25 folder: $(( $(date +%s) - t )) s, $(du -sh /tmp/ix25 | cut -f1)"
    ixvs() { timeout "$1" python3 -m app.models.indextts.bench_vs_official "${@:2}" --folder /tmp/ix25 \
        --official "$PWD/official_indextts" --official-path /tmp/ixoff 2>&1 | grep -v -E "it/s|Warning|warn\("; }
    export -f ixvs
    [ -n "$IX_NO_CPU" ] || (
        echo "== indextts cpu: indextts25, 2 threads, 1 cold request of 25 codes, 2 s voice, official then VoxDesk"
        taskset -c 14,15 bash -c 'ixvs "$@"' _ "${IX_CPU_S:-470}" --device cpu --threads 2 --concurrency 1 --codes 25 \
            --clip-seconds 2 --no-warmup --official-requests 1 --official-timeout 290 --json "$RES/ix_vs_cpu.json"
    ) > "$OUT/ix_cpu.log" 2>&1 &
    IXCPU_PID=$!; [ -n "$IX_NO_CPU" ] && IXCPU_PID=
    taskset -cp 0-11 $$ > /dev/null
    echo "== indextts gpu: official loop + accel (serial) vs VoxDesk at 1/16/64, memory at 1/4, 200 codes"
    ixvs "${IX_GPU_S:-270}" --device cuda --concurrency 1,16,64 --mem-concurrency 1,4 --codes 120 --official-requests 1 \
        --official-timeout 200 --json "$RES/ix_vs_official.json"
    [ -n "$IXCPU_PID" ] && { echo "waiting for the indextts cpu section"; wait $IXCPU_PID; cat "$OUT/ix_cpu.log"; }
fi
if want indextts || want ixparts; then
    ix() { echo "== $1"; timeout 150 python3 -m "app.models.indextts.$@" 2>&1 | grep -v -E "it/s|Warning|warn\("; }
    ix bench_engine --device cuda --preset indextts25 --dtype bfloat16 --batch 1 8 32 --steps 200 --out "$RES/ix_engine.json"
    ix bench_gpt --device cuda --preset indextts25 --dtype bf16 --batch 1 4 16 --steps 100 --out "$RES/ix_gpt.json"
    official=(); [ -d official_indextts ] && official=(--official "$PWD/official_indextts")
    ix bench_s2mel --device cuda --preset indextts25 --prompt 300 --frames 600,1500 --batch 1,4,16 --repeat 5 \
        "${official[@]}" --json "$RES/ix_s2mel.json"
fi
