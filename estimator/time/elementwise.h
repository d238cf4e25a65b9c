// Memory-bound work of one transformer layer (norms, dropout, residual adds, activation,
// rotary, autocast casts, and the s x s score passes of standard attention), counted as
// bytes and elements per kernel class (MemKernel, core/efficiency.h), and its time.
// Model (docs/model.md §4, "Memory-bound kernels by class"): a kernel of class c moving B
// bytes over N elements takes
//   t = B / (HBM x hbm_fraction)                          classes off, or c = blended;
//   t = (t_s^3 + t_i^3)^(1/3), t_s = B / (HBM x stream_hbm_fraction),
//       t_i = N / (issue_elems_per_sm_clk[c] x SMs x boost clock)   otherwise (t_i = 0
//   without an issue limit).
// The cube smooths the corner of max(t_s, t_i): PyTorch's dropout forward and softmax,
// timed on an H100 and an H200, sit 15-20% below both limits near it, and one exponent
// fits both GPUs. Assumes the kernel runs on every SM at the boost clock.
#pragma once

#include <array>
#include <cstddef>

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/units.h"
#include "estimator/time/op_dims.h"

namespace dsplan {

inline constexpr std::size_t kMemKernels = static_cast<std::size_t>(MemKernel::kCount);

// Bytes and elements of one pass's memory-bound kernels, by class, and how many kernels.
struct MemWork {
  std::array<double, kMemKernels> bytes{}, elems{};
  int kernels = 0;
  void add(MemKernel k, double b, double n) {
    bytes[static_cast<std::size_t>(k)] += b;
    elems[static_cast<std::size_t>(k)] += n;
  }
  void merge(const MemWork& o) {
    for (std::size_t i = 0; i < kMemKernels; ++i) bytes[i] += o.bytes[i], elems[i] += o.elems[i];
    kernels += o.kernels;
  }
  double total_bytes() const;
};

// A forward pass's elementwise work and its backward's.
struct Elementwise {
  MemWork fwd, bwd;
};

// Time of one class's bytes and elements; of a whole MemWork (launch overheads excluded).
Seconds mem_seconds(MemKernel k, double bytes, double elems, const GpuSpec& gpu, const Efficiency& eff);
Seconds mem_seconds(const MemWork& w, const GpuSpec& gpu, const Efficiency& eff);

// The passes over the s x s scores of all local heads (standard attention only).
Elementwise score_elementwise(const op::Dims& d);
// The MLP activation over `ffn` elements of its intermediate (a layer's: T f / t; an MoE
// layer's routed experts: their token copies x the expert width).
Elementwise activation_elementwise(const op::Dims& d, double ffn);
// A layer's other elementwise kernels.
Elementwise layer_elementwise(const op::Dims& d);

}  // namespace dsplan
