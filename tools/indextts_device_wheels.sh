#!/bin/sh
# The packages the official IndexTTS-2.5 code (indextts/infer_v2_5.py, plain cloning) needs on the
# benchmark device (Python 3.12, torch 2.11 CUDA, transformers 5.x, no internet) beyond or instead of
# what its image has, fetched here for cp312 manylinux into .whl_ixofficial/ (git-ignored; 17 MB).
# Installed there with `pip install --no-deps --target` into a folder that only the official side's
# process puts first on its path (app/models/indextts/bench_vs_official.py --official-path;
# docs/bench_h200.sh, section indextts); VoxDesk's side keeps the image's transformers.
#
# The official pins transformers 4.52.1 (its vendored generate needs that version's internals), so
# tokenizers 0.21 and huggingface_hub < 1.0 come with it. librosa (+ soxr, audioread, pooch,
# decorator, platformdirs), soundfile (+ cffi, pycparser), omegaconf (+ antlr4), munch and
# openai-whisper are not in the image. Left out, given a stand-in by app/models/indextts/bench_official.py
# when absent because plain cloning never runs them: modelscope (6 MB; QwenEmotion only) and wetext
# (45 MB of grammars; the benchmark's text needs no normalising). fugashi/unidic (Japanese) and
# nemo_text_processing are imported lazily, never on this path.
# antlr4-python3-runtime 4.9.3 and openai-whisper 20250625 are published as sdists only: pure wheels
# are built from them here (no compiled parts).
# Usage: sh tools/indextts_device_wheels.sh [OUT]   (PYTHON=... for another interpreter)
set -eu
OUT=${1:-.whl_ixofficial}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
$PY -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    -d "$OUT" \
    transformers==4.52.1 tokenizers==0.21.0 huggingface_hub==0.36.2 librosa==0.10.2.post1 \
    soundfile==0.13.1 soxr==1.0.0 audioread==3.1.0 pooch==1.8.2 decorator==5.2.1 platformdirs==4.5.0 \
    omegaconf==2.3.0 munch==4.0.0 cffi==2.0.0 pycparser==2.23
$PY -m pip wheel --no-deps -w "$OUT" antlr4-python3-runtime==4.9.3 openai-whisper==20250625
du -ch "$OUT"/* | tail -1
