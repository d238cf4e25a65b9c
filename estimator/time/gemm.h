// GEMM time on one GPU: tile and wave quantisation over the SMs, a main-loop efficiency
// eta(K) = K/(K + k_half), an alignment penalty, and a roofline against HBM traffic.
// Follows NVIDIA's "Matrix Multiplication Background" guide (tile/wave quantisation) as
// summarised in shared/reference/hardware-and-comm.md §3; derivation in docs/model.md §4 Step time.
// Assumes cuBLAS picks, among a few CTA tiles, the one that finishes first.
#pragma once

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/time/memo_cache.h"

namespace dsplan {

// C[M,N] = A[M,K] * B[K,N], `batch` independent products (bmm).
struct GemmShape {
  double m = 0, n = 0, k = 0, batch = 1;
  // Per-head attention products whose head dimension is not a multiple of 8: every head's
  // operands start at a misaligned address (misaligned_rate's `heads` case).
  bool heads_misaligned = false;
  // m or k is no operand's leading dimension: a linear's row (token) count, m of its forward
  // and data-gradient GEMMs and k of its weight gradient. cuBLAS wants only the leading
  // dimensions aligned, so in 16-bit a misaligned one there costs nothing (DeepBench's V100
  // GEMMs with n = 9124 in that place ran at the full tensor-core rate, docs/model.md §4.1).
  // FP8 keeps the check: Transformer Engine requires every dimension to be a multiple of 16.
  bool m_free = false, k_free = false;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// How the model priced one GEMM (exposed for tests and explanations).
struct GemmEstimate {
  int tile_m = 0, tile_n = 0;
  int ctas_per_sm = 1;
  double tiles = 0;        // CTAs launched
  double waves = 0;        // ceil(tiles / (SMs x ctas_per_sm)); stream-K: tiles / slots
  double eta_tile = 1;     // useful / computed area
  double eta_wave = 1;     // tiles / (waves x slots); 1 under stream-K
  bool stream_k = false;   // the partial last wave spread over every SM (Hopper)
  double eta_k = 1;        // main-loop efficiency K/(K + k_half)
  double eta_align = 1;    // 1, or the penalty for misaligned dimensions
  Seconds t_math;          // tensor-core (or fp32-pipe) time of all waves
  Seconds t_mem;           // HBM time of operands and result
  Seconds time;            // max(t_math, t_mem) + kernel overhead
  Flops flops;             // 2 M N K batch (useful work)
};

GemmEstimate estimate_gemm(const GemmShape& s, Precision p, const GpuSpec& gpu,
                           const Efficiency& eff);

// The fraction of the aligned tensor-core rate a 16-bit GEMM keeps when one of its
// dimensions is not a multiple of 8: `heads` for per-head attention products whose head
// dimension is the misaligned one.
double misaligned_rate(bool heads, Precision p, const GpuSpec& gpu);

inline Seconds gemm_time(const GemmShape& s, Precision p, const GpuSpec& gpu,
                         const Efficiency& eff) {
  return estimate_gemm(s, p, gpu, eff).time;
}

// GEMM estimates of one GPU and efficiency set, memoised by shape and precision: a search
// asks for a few hundred distinct shapes some ten thousand times (the same linears under
// every checkpointing, attention and framework choice). A MemoCache: not thread-safe (it
// belongs to one StepTimeModel, estimator/step_time.h).
class GemmMemo {
 public:
  // estimate_gemm(s, p, gpu, eff), computed on a miss. gpu and eff must be the same on
  // every call to one memo.
  const GemmEstimate& get(const GemmShape& s, Precision p, const GpuSpec& gpu, const Efficiency& eff);

 private:
  struct Key {
    GemmShape shape;
    Precision precision = Precision::bf16;
    bool operator==(const Key&) const = default;
  };
  MemoCache<Key, GemmEstimate, 1024> table_;  // a search's shapes fit
};

// Bytes per element of GEMM operands in this precision (NVFP4: half a byte and an E4M3
// scale per 16 elements).
inline double element_bytes(Precision p) {
  return p == Precision::fp32 || p == Precision::tf32 ? 4.0
         : p == Precision::fp8                        ? 1.0
         : p == Precision::nvfp4                      ? kNvfp4Bytes
                                                      : 2.0;
}

}  // namespace dsplan
