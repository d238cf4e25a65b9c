#!/usr/bin/env bash
# Installs the Debian packages dsplan builds against, skipping those already present.
# Safe to run repeatedly; uses sudo only when not root. CUDA is optional and never
# installed here: with /usr/local/cuda present the GPU benchmarks are built too.
set -euo pipefail
pkgs=(cmake g++ make python3 ccache libeigen3-dev nlohmann-json3-dev libcli11-dev libxgboost-dev
      xgboost libboost-graph-dev googletest libgtest-dev libbenchmark-dev libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
