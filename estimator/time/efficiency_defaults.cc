// Default efficiencies per architecture. Sources (docs/model.md §4 Step time):
//  - GEMM: cuBLAS reaches ~75-80% of the V100 fp16 tensor peak, ~80% of A100 and ~70% of
//    H100 dense bf16/fp16 on large aligned GEMMs (sustained clocks sit below the tensor
//    boost clock under load); fp32 SGEMM on the fp32 pipe reaches ~85% (V100: 89%,
//    measured 14 of 15.7 TFLOP/s; its fp16 95 of 125, the 0.75 below).
//  - FP8 (Hopper): 0.95 of the bf16 fraction of the FP8 peak (0.665). Measured FP8 and
//    bf16 GEMMs of the same shapes on an H100 and an H200 (session 22, cuBLASLt through
//    PyTorch) reach 0.94-0.97 of bf16's fraction at large K (docs/model.md §4.1, "FP8
//    linears"). Other GPUs have no FP8 peak, so no FP8 GEMM.
//  - NVFP4 (Blackwell): FP8's fraction (0.665) of the FP4 peak. No block-scaled FP4 GEMM
//    was measured here; NVIDIA's cuBLAS 12.9 release post reports FP4 matmuls up to 2.3x
//    its FP8 ones on Blackwell (peaks 2x apart), so FP4's share is not below FP8's at the
//    best shapes (docs/model.md §4.1, "NVFP4 linears").
//  - Blackwell's block-scaled GEMMs, measured by Transformer Engine's GEMM profiling guide
//    (docs/examples/gemm_profiling, on a B300 through cuBLAS, inputs quantized beforehand):
//    the twelve GEMMs of a 4096/16384 layer at 15,872 tokens take 6.812 ms per layer with
//    per-tensor FP8 and 7.161 ms with MXFP8, so MXFP8 runs at 6.812/7.161 = 0.951 of FP8's
//    rate, taken for every Blackwell part. The same layer's NVFP4 GEMMs take 3.764 ms, 1.81x
//    FP8's speed where the B300's dense FP4 peak is 3x its FP8 peak: priced at FP8's
//    fraction of a 4x-bf16 FP4 peak (the B200's), dsplan gives 3.59 ms (-4.7%; its bf16 is
//    -4.8% and FP8 -0.3% on the same layer). So on Blackwell Ultra (FP4 at 6x bf16) the
//    NVFP4 fraction is scaled by 4/6: its 1.5x FP4 peak does not show in these GEMMs
//    (docs/model.md §4.1, "Block-scaled GEMMs on Blackwell").
//  - TF32 (fp32 with TF32 tensor-core matmuls): 0.95 of the bf16 fraction of the TF32 peak.
//    The same tensor cores at half the rate on operands twice as wide move the same bytes
//    per FLOP, and the GEMM fits of dsplan's own H100 and H200 calibration passes (session
//    53, tests/data/calibrate: 21 and 9 TF32 shapes beside 164 and 61 bf16 ones) put TF32 at
//    0.774 and 0.798 of its peak where bf16 is at 0.807 and 0.852: 0.96 and 0.94 of bf16's
//    share. Not measured on Ampere, which takes the same ratio.
//  - HBM: STREAM-like elementwise kernels reach ~80% of datasheet bandwidth, the blended
//    rate of every memory-bound kernel. Hopper prices them by class instead (MemKernel):
//    PyTorch's copy, add and dropout backward reach 0.88-0.91 of HBM on an H100 and an
//    H200 alike (0.89 taken); gelu, dropout forward, softmax and the broadcast where are
//    also limited by their per-element arithmetic, at 5.4, 2.7, 2.9 (backward 1.07) and 1.57
//    elements per SM per clock, fitted to the same kernels on both GPUs (session 22's
//    scripts/elementwise_rates.py; docs/model.md §4, "Memory-bound kernels by class").
//    Other GPUs keep the blend: their kernels were not measured.
//  - PCIe: measured pinned copies / line rate (reference §1): Gen3 12.15/15.75 = 0.77,
//    Gen4 25.1/31.5 = 0.80, Gen5 52.8/63 = 0.84.
//  - Kernel overhead: launch + tail gap per kernel, 3-5 us (reference §3).
//  - k_half (main-loop efficiency K/(K + k_half)): 64; Hopper 160, the value that best fits
//    the shape dependence of XLA's measured sm_90 GEMM table (tests/data/gemm, docs/model.md
//    §4.1): an H100 SM does twice an A100 SM's math per clock, so the memory-bound per-tile
//    costs are worth more K steps.
//  - Blackwell (B200): no kernel of it measured here. It takes Hopper's values, each for a
//    stated reason (docs/model.md §2 "B200"): cuBLAS's share of the tensor peak is assumed
//    unchanged; k_half stays 160 because a B200 SM's math per byte of HBM bandwidth
//    (8192 FLOP/clk x 1.856 GHz over 7.7 TB/s / 148 SMs: 292 FLOP/B) is an H100's (295); the
//    memory-bound kernels' per-SM issue rates are per SM clock, and a Blackwell SM's
//    non-tensor pipes are a Hopper SM's (128 fp32 lanes, the same load/store width).
#include "estimator/time/efficiency_defaults.h"

namespace dsplan {

namespace {

constexpr std::size_t idx(Precision p) { return static_cast<std::size_t>(p); }
constexpr std::size_t mk(MemKernel k) { return static_cast<std::size_t>(k); }

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
    case GpuArch::blackwell:  // see the header
      e.gemm_peak_fraction[idx(Precision::fp16)] = 0.70;
      e.gemm_peak_fraction[idx(Precision::bf16)] = 0.70;
      e.gemm_peak_fraction[idx(Precision::fp8)] = 0.95 * 0.70;    // see the header
      e.gemm_peak_fraction[idx(Precision::nvfp4)] = 0.95 * 0.70;  // see the header
      e.gemm_k_half = 160;  // see the header
      e.kernel_overhead = us(3);
      e.stream_hbm_fraction = 0.89;  // see the header
      e.issue_elems_per_sm_clk[mk(MemKernel::gelu)] = 5.4;
      e.issue_elems_per_sm_clk[mk(MemKernel::dropout_fwd)] = 2.7;
      e.issue_elems_per_sm_clk[mk(MemKernel::softmax_fwd)] = 2.9;
      e.issue_elems_per_sm_clk[mk(MemKernel::softmax_bwd)] = 1.07;
      e.issue_elems_per_sm_clk[mk(MemKernel::mask)] = 1.57;
      // Rows added with atomics, measured on an H200 (session 42, scripts/atomic_rows.py and
      // moe_layer_profile.py; 32,768-65,536 rows of 2,048-7,168 elements): index_add 0.45-0.50
      // elements per SM clock in bf16 (0.534 ms for 32,768 x 2,048), scatter_add_ with an
      // expanded index 0.97-1.01 (bf16; 1.04-1.22 in fp32). Not measured on other GPUs, where
      // such passes are priced as streams.
      e.issue_elems_per_sm_clk[mk(MemKernel::index_add)] = 0.48;
      e.issue_elems_per_sm_clk[mk(MemKernel::scatter_add)] = 1.0;
      break;
  }
  // TF32 at 0.95 of bf16's share of its peak (see the header); none on Volta: the fp32 pipe's.
  e.gemm_peak_fraction[idx(Precision::tf32)] = gpu.tf32_tc_flop_per_clk_sm > 0
                                                   ? 0.95 * e.gemm_peak_fraction[idx(Precision::bf16)]
                                                   : e.gemm_peak_fraction[idx(Precision::fp32)];
  if (gpu.arch == GpuArch::blackwell) {  // see the header
    e.mxfp8_gemm_rate = 0.951;
    const double bf16 = gpu.matmul_peak(Precision::bf16).v, fp4 = gpu.matmul_peak(Precision::nvfp4).v;
    if (bf16 > 0 && fp4 > 4.0 * bf16) e.gemm_peak_fraction[idx(Precision::nvfp4)] *= 4.0 * bf16 / fp4;
  }
  return e;
}

}  // namespace dsplan
