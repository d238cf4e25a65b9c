// The accumulator the operator costs are summed in (operators.cc, recompute_modules.cc):
// GEMM time and FLOPs (gemm.h, through a shared memo when given), memory-bound kernels over
// HBM (elementwise.h) plus the kernel overhead, and the kernels the host issues. Internal to
// estimator/time.
#pragma once

#include <algorithm>

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/units.h"
#include "estimator/time/elementwise.h"
#include "estimator/time/gemm.h"

namespace dsplan::op {

struct Acc {
  const GpuSpec& gpu;
  const Efficiency& eff;
  Precision p;
  Seconds t;
  Flops f;
  int launches = 0;          // kernels the host issues
  GemmMemo* memo = nullptr;  // GEMM estimates shared across operator_costs calls, or none
  Precision gemm_p = p;      // operand precision of the GEMMs (fp8 for FP8 linears)
  double gemm_stretch = 1;   // their time over the modelled one (MXFP8's block-scaled GEMMs)
  Seconds gemm_t{};          // the part of t spent in GEMMs (reported, OpCosts::fwd_linear)
  // The linears' operands from here on: `linear_p` (fp8 or nvfp4 for low-precision linears,
  // the 16-bit type otherwise), MXFP8's block-scaled GEMMs running at
  // Efficiency::mxfp8_gemm_rate of the per-tensor FP8 ones.
  void linear_operands(Precision linear_p, bool mxfp8) {
    gemm_p = linear_p;
    gemm_stretch = mxfp8 && linear_p == Precision::fp8 ? 1.0 / eff.mxfp8_gemm_rate : 1.0;
  }
  void gemm(double m, double n, double k, double batch = 1, bool heads_misaligned = false) {
    gemm(GemmShape{m, n, k, batch, heads_misaligned});
  }
  void gemm(const GemmShape& s) {
    const GemmEstimate g = memo ? memo->get(s, gemm_p, gpu, eff) : estimate_gemm(s, gemm_p, gpu, eff);
    t += g.time * gemm_stretch;
    gemm_t += g.time * gemm_stretch;
    f += g.flops;
    launches += 1;
  }
  // wgrad of a forward GEMM C[m,n] = A[m,k] B[k,n]: dB = A^T dC.
  void gemm_wgrad(double m, double n, double k, double batch = 1, bool heads = false) {
    gemm(k, n, m, batch, heads);
  }
  // dgrad of that GEMM: dA = dC B^T.
  void gemm_dgrad(double m, double n, double k, double batch = 1, bool heads = false) {
    gemm(m, k, n, batch, heads);
  }
  // dgrad + wgrad of that GEMM.
  void gemm_bwd(double m, double n, double k, double batch = 1, bool heads = false) {
    gemm_dgrad(m, n, k, batch, heads);
    gemm_wgrad(m, n, k, batch, heads);
  }
  // A linear y[rows, n] = x[rows, k] W^T: its row count (tokens, or samples for a pooler) is
  // no operand's leading dimension in any of its three GEMMs (GemmShape::m_free).
  // `batch` equal linears at once (an MoE layer's grouped expert GEMMs).
  void linear(double rows, double n, double k, double batch = 1) {
    gemm(GemmShape{.m = rows, .n = n, .k = k, .batch = batch, .m_free = true});
  }
  void linear_dgrad(double rows, double n, double k, double batch = 1) {
    gemm(GemmShape{.m = rows, .n = k, .k = n, .batch = batch, .m_free = true});
  }
  void linear_wgrad(double rows, double n, double k, double batch = 1) {
    gemm(GemmShape{.m = k, .n = n, .k = rows, .batch = batch, .k_free = true});
  }
  void linear_bwd(double rows, double n, double k) {
    linear_dgrad(rows, n, k);
    linear_wgrad(rows, n, k);
  }
  void mem(double bytes, int kernels = 1) { mem(MemKernel::blended, bytes, 0, kernels); }
  void mem(MemKernel c, double bytes, double elems, int kernels) {
    t += mem_seconds(c, bytes, elems, gpu, eff) + eff.kernel_overhead * kernels;
    launches += kernels;
  }
  void mem(const MemWork& w) {
    t += mem_seconds(w, gpu, eff) + eff.kernel_overhead * w.kernels;
    launches += w.kernels;
  }
  void flops_kernel(double flops, double fraction, double bytes) {
    const double rate = gpu.matmul_peak(p).v * fraction;
    const double mem_t = mem_seconds(MemKernel::blended, bytes, 0, gpu, eff).v;
    t += Seconds(std::max(flops / rate, mem_t)) + eff.kernel_overhead;
    f += Flops(flops);
    launches += 1;
  }
};

// Host time to issue a pass's kernels (the pass's GPU time is kept apart: the host runs
// ahead of the GPU, estimator/host_stall.h).
inline Seconds host_time(int launches, const Efficiency& eff) { return eff.host_op_overhead * launches; }

}  // namespace dsplan::op
