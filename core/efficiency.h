// The seam between datasheet peaks and what a cluster delivers. The step-time model
// multiplies datasheet figures by these fractions and uses these overheads. Without a
// calibration profile, default_efficiency() (estimator/) supplies documented defaults;
// `dsplan calibrate` fits the same struct from measurements, so the model code never
// knows which one it got.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/units.h"

namespace dsplan {

enum class Collective : std::uint8_t {
  all_reduce, reduce_scatter, all_gather, broadcast, send_recv, kCount
};
enum class CommScope : std::uint8_t { intra_node, inter_node, kCount };

// Alpha-beta fit of one collective in one scope: t(n) = latency + n * busbw_factor / busbw,
// with nccl-tests' bus-bandwidth factor (2(p-1)/p for all-reduce, (p-1)/p for
// all-gather/reduce-scatter, 1 otherwise) and n the nccl-tests message size S.
struct CollectiveFit {
  Seconds latency;
  BytesPerSecond busbw;
};

// What limits a memory-bound kernel besides HBM (estimator/time/elementwise.h): a plain
// stream (copy, add, cast, scaling, dropout's mask multiply) only the bytes; the others
// also the arithmetic or index math per element, which runs at a rate set by the SMs and
// their clock, not by HBM. `blended` is every kernel not measured on its own (norms,
// reductions, rotary, the optimizer), priced at hbm_fraction.
enum class MemKernel : std::uint8_t {
  blended,
  stream,
  dropout_fwd,  // Philox random numbers, mask and scaled output
  softmax_fwd,  // row softmax (rows of the sequence length)
  softmax_bwd,
  mask,         // where / masked_fill with a broadcast boolean mask
  gelu,         // one fused gelu kernel (tanh form)
  index_add,    // rows added into a tensor with atomics by PyTorch's index_add (a row gather's backward)
  scatter_add,  // the same by scatter_add with an index expanded over the row (Megatron's unpermute)
  kCount
};

struct Efficiency {
  std::string source = "datasheet defaults";  // or the calibration profile's path
  // GEMM model (estimator/gemm): achieved fraction of tensor-core peak for a large,
  // aligned GEMM in each precision (index = Precision), the K at which the main loop
  // reaches half its asymptotic rate, and the fixed launch/epilogue cost per kernel.
  std::array<double, 6> gemm_peak_fraction{0.8, 0.8, 0.8, 0.8, 0.8, 0.8};
  double gemm_k_half = 64;
  // MXFP8's block-scaled GEMMs (an E8M0 scale per 32 elements of each operand) run at this
  // fraction of the per-tensor FP8 GEMMs' rate (Blackwell: 0.951, efficiency_defaults.cc).
  double mxfp8_gemm_rate = 1.0;
  Seconds kernel_overhead = us(4);
  // Host (CPU) time the framework spends to issue one kernel in eager PyTorch: Python,
  // the ATen dispatcher, autograd recording, cudaLaunchKernel (5-25 us per op). A pass
  // whose kernels are shorter than this on the GPU is launch-bound: it takes
  // kernels x host_op_overhead (docs/model.md §4, "Host dispatch floor").
  Seconds host_op_overhead = us(10);
  // Memory-bound kernels reach this fraction of datasheet HBM bandwidth.
  double hbm_fraction = 0.8;
  // Per-class memory-bound kernels (MemKernel; docs/model.md §4, "Memory-bound kernels by
  // class"). 0 turns the classes off: every kernel costs bytes / (HBM x hbm_fraction).
  // Otherwise a stream kernel reaches stream_hbm_fraction of HBM, and a class with an
  // issue limit (elements per SM per clock, 0 = none) takes the smooth maximum of its
  // stream time and its issue time, (t_stream^3 + t_issue^3)^(1/3).
  double stream_hbm_fraction = 0.0;
  std::array<double, static_cast<std::size_t>(MemKernel::kCount)> issue_elems_per_sm_clk{};
  // Pinned host<->device copies reach this fraction of the PCIe line rate.
  double pcie_fraction = 0.8;
  // An offloaded optimizer step on the host (CPU Adam and DeepSpeed's passes around it)
  // reaches this fraction of the node's DRAM bandwidth, shared by its ranks. 0.2: what two
  // published training runs on known hosts took (docs/model.md §4.5 "Optimizer and
  // offload", session 49); ZeRO-Offload's isolated CPU Adam benchmark (Ren et al. Table 4)
  // reached 0.53.
  double host_mem_fraction = 0.2;
  // Fraction of compute throughput lost while an NCCL collective runs beside it (its
  // channels occupy SMs and it streams through HBM): a compute window C with M of
  // collective running alongside takes max(M, C + overlap_compute_loss x M) instead of
  // max(M, C) (docs/model.md §4.6, "Overlap contention"). 0 = perfect overlap.
  double overlap_compute_loss = 0.19;
  // Measured collective fits override the NCCL-structure model when present.
  std::array<std::array<std::optional<CollectiveFit>, 2>, 5> collectives{};
};

}  // namespace dsplan
