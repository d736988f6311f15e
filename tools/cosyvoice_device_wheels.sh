#!/bin/sh
# The packages the official CosyVoice code needs for CosyVoice3Model.tts() on the benchmark device
# (torch 2.11 CUDA, transformers, triton, Python 3.12, no internet) beyond what it has, fetched here
# for cp312 manylinux into .whl_official/ (git-ignored; 9.5 MB). Used by app/models/cosyvoice/bench.py
# (docs/bench_h200.sh, section cosyvoice), which builds the model from the yaml without the frontend.
#
# Found by running that benchmark with only torch, transformers and their dependencies on the path:
# every package below is imported on the way (most through matcha-tts's matcha.utils, which pulls
# its training stack: lightning, torchmetrics, hydra, rich, gdown). Left out, and given empty
# stand-ins by the benchmark when absent because tts() never calls them: onnxruntime (16 MB;
# training-time feature extraction), torchaudio (file loading), scipy (35 MB; one Hann window),
# Pillow (8 MB; diffusers' image helpers), matplotlib (plots) and wget.
# Versions: those of the venv that made the goldens (tools/cosyvoice_official_requirements.txt),
# x-transformers 2.11.24 because newer ones need torch_einops_utils.
# Usage: sh tools/cosyvoice_device_wheels.sh [OUT]   (PYTHON=... for another interpreter)
set -eu
OUT=${1:-.whl_official}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
$PY -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 -d "$OUT" \
    hyperpyyaml==1.2.3 ruamel.yaml==0.18.17 omegaconf==2.3.0 x-transformers==2.11.24 einx==0.4.3 \
    einops==0.8.2 loguru==0.7.3 frozendict==2.5.1 conformer==0.3.2 diffusers==0.29.0 \
    lightning==2.2.4 lightning-utilities==0.15.3 torchmetrics==1.9.0 hydra-core==1.3.2 \
    rich==13.7.1 pygments==2.21.0 gdown==5.1.0 beautifulsoup4==4.15.0 soupsieve==4.1.4 \
    requests==2.34.2 urllib3==2.8.0 "setuptools==80.9.0"
# antlr4-python3-runtime 4.9.3 (omegaconf's parser) is published as an sdist only: a pure wheel
$PY -m pip wheel --no-deps -w "$OUT" antlr4-python3-runtime==4.9.3
# matcha-tts (the official third_party/Matcha-TTS) as its sdist: the device unpacks it onto the
# path; its one compiled part (monotonic alignment, training only) is never imported. Only it is
# asked for as source: pip prepares its metadata with its build requirements as wheels (~40 s)
$PY -m pip download --no-deps --no-binary=matcha-tts -d "$OUT" matcha-tts==0.0.5.1
du -ch "$OUT"/* | tail -1
