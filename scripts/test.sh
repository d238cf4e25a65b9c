#!/usr/bin/env bash
# Builds everything and runs every test (CI runs this through .ci/run).
# Tests labelled `gpu` skip visibly when no CUDA device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 300
