#!/usr/bin/env bash
# Builds the CUDA binaries here and stages them in .gpu/ for the lent GPU machine, which has
# CUDA, cuBLAS, NCCL and PyTorch but none of the Debian packages dsplan builds against
# (xgboost, Eigen, CLI11, nlohmann-json, googletest). Carry `.gpu` with the device tool and
# run `scripts/gpu_checks.sh PHASE` there; it finds .gpu/dsplan and the libraries below.
# MPI is left out (single-node bootstrap): the lent machine has no OpenMPI.
# .gpu/ is ignored (.gitignore), so it travels to the GPU machine only when carried.
set -euo pipefail
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DDSPLAN_WITH_CUDA=ON \
      -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
cmake --build build-gpu -j "$(nproc)" --target dsplan dsplan_bench_cuda \
      calibrate_gemm_gpu_test calibrate_nccl_gpu_test
rm -rf .gpu && mkdir -p .gpu
cp build-gpu/dsplan build-gpu/libdsplan_bench_cuda.so build-gpu/tests/gpu/calibrate_*_gpu_test .gpu/
# The shared libraries of the Debian packages and the CUDA runtime (small); cuBLAS and NCCL
# are too large to carry and are found on the GPU machine.
for lib in libxgboost.so.0 libdmlc.so.0 libcudart.so.13; do
  cp -L "$(ldd build-gpu/dsplan build-gpu/libdsplan_bench_cuda.so | awk -v l="$lib" '$1 == l {print $3; exit}')" .gpu/
done
strip .gpu/dsplan .gpu/calibrate_*_gpu_test
du -sh .gpu
