// Default efficiencies per architecture. Sources (docs/model.md §4 Step time):
//  - GEMM: cuBLAS reaches ~75-80% of the V100 fp16 tensor peak, ~80% of A100 and ~70% of
//    H100 dense bf16/fp16 on large aligned GEMMs (sustained clocks sit below the tensor
//    boost clock under load); fp32 SGEMM on the fp32 pipe reaches ~85% (V100: 89%,
//    measured 14 of 15.7 TFLOP/s; its fp16 95 of 125, the 0.75 below).
//  - FP8 (Hopper): 0.95 of the bf16 fraction of the FP8 peak (0.665). Measured FP8 and
//    bf16 GEMMs of the same shapes on an H100 and an H200 (session 22, cuBLASLt through
//    PyTorch) reach 0.94-0.97 of bf16's fraction at large K (docs/model.md §4.1, "FP8
//    linears"). Other GPUs have no FP8 peak, so no FP8 GEMM.
//  - HBM: STREAM-like elementwise kernels reach ~80% of datasheet bandwidth.
//  - PCIe: measured pinned copies / line rate (reference §1): Gen3 12.15/15.75 = 0.77,
//    Gen4 25.1/31.5 = 0.80, Gen5 52.8/63 = 0.84.
//  - Kernel overhead: launch + tail gap per kernel, 3-5 us (reference §3).
//  - k_half (main-loop efficiency K/(K + k_half)): 64; Hopper 160, the value that best fits
//    the shape dependence of XLA's measured sm_90 GEMM table (tests/data/gemm, docs/model.md
//    §4.1): an H100 SM does twice an A100 SM's math per clock, so the memory-bound per-tile
//    costs are worth more K steps.
#include "estimator/time/efficiency_defaults.h"

namespace dsplan {

namespace {

constexpr std::size_t idx(Precision p) { return static_cast<std::size_t>(p); }

double pcie_fraction_for(int gen) {
  if (gen >= 5) return 0.84;
  if (gen == 4) return 0.80;
  return 0.77;
}

}  // namespace

Efficiency default_efficiency(const GpuSpec& gpu) {
  Efficiency e;
  e.source = "datasheet defaults";
  e.gemm_k_half = 64;
  e.hbm_fraction = 0.8;
  e.pcie_fraction = pcie_fraction_for(gpu.pcie_gen);
  e.gemm_peak_fraction[idx(Precision::fp32)] = 0.85;
  switch (gpu.arch) {
    case GpuArch::volta:
      e.gemm_peak_fraction[idx(Precision::fp16)] = 0.75;
      // fp32 on the fp32 pipe: 14 of 15.7 TFLOP/s measured (mli/transformers-benchmarks
      // micro_bench, V100 "Matrix Multiplication FP32 / FP16: 14 / 95").
      e.gemm_peak_fraction[idx(Precision::fp32)] = 0.89;
      e.gemm_peak_fraction[idx(Precision::bf16)] = 0.89;  // no bf16 TC: fp32 pipe
      e.kernel_overhead = us(5);
      break;
    case GpuArch::ampere:
      e.gemm_peak_fraction[idx(Precision::fp16)] = 0.80;
      e.gemm_peak_fraction[idx(Precision::bf16)] = 0.80;
      e.kernel_overhead = us(4);
      break;
    case GpuArch::hopper:
      e.gemm_peak_fraction[idx(Precision::fp16)] = 0.70;
      e.gemm_peak_fraction[idx(Precision::bf16)] = 0.70;
      e.gemm_peak_fraction[idx(Precision::fp8)] = 0.95 * 0.70;  // see the header
      e.gemm_k_half = 160;  // see the header
      e.kernel_overhead = us(3);
      break;
  }
  return e;
}

}  // namespace dsplan
