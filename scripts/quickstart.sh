#!/usr/bin/env bash
# Quick start: install what is missing, build dsplan, and plan a 2.7B GPT on 16 GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dsplan
./build/dsplan estimate --model gpt-2.7b --gpus 16 "$@"
