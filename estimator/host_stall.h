// The GPU time a step loses waiting for the host to issue kernels (docs/model.md §4,
// "Host dispatch floor"). Eager PyTorch issues every kernel from one CPU thread and runs
// ahead of the GPU: a kernel starts only once issued, and the host does not wait for the
// GPU inside a step. Over one rank's passes in program order, with GPU time g_i and host
// issue time h_i,
//   H_i = H_{i-1} + h_i,   G_i = max(G_{i-1} + g_i, H_i)
// (pass i ends no earlier than its last kernel is issued), which unrolls to
//   G_n = sum g + max(0, max_k (H_k - G'_k)),   G'_k = g_1 + ... + g_k,
// so the stall is the largest lead the host's issuing ever has over the GPU's work.
// Per micro-batch the passes are: embedding forward, L layer forwards (with their blocking
// TP collectives), head forward and backward, L layer recomputes + backwards, embedding
// backward; the optimizer step follows the last micro-batch. The micro-batches repeat the
// same passes, so the maximum lies in the first or the last one: no loop over them.
// Assumed: a pipeline rank (pp > 1) is the last stage (its layers and the head); sends,
// bubbles and DP collectives do not change the host's lead (they are GPU-side waits).
#pragma once

#include <algorithm>

#include "estimator/step_costs.h"

namespace dsplan {

// One walk over the passes gives both: the stall, and all the host time one rank's step
// issues (the h_i summed over its micro-batches, and the optimizer step's), which is what a
// slower host scales; a host-bound step takes at least that long.
struct HostTiming {
  Seconds stall, issue;
};

inline HostTiming host_timing(const StepCosts& c) {
  const auto& h = c.host;
  const LayerCosts& l = c.layer;
  double lead = 0, best = -1e300;  // H - G' after the passes so far, and its maximum
  double issued = 0;               // H after the passes so far
  auto passes = [&](double n, Seconds g, Seconds issue) {
    if (n <= 0) return;
    const double step = issue.v - g.v;  // identical passes: the maximum is the first or the last
    best = std::max({best, lead + step, lead + n * step});
    lead += n * step;
    issued += n * issue.v;
  };
  const double layers = c.layers_per_rank;
  const bool first = c.pp == 1;
  if (first) passes(1, c.embed_fwd, h.embed_fwd);
  passes(layers, l.fwd + l.tp_comm_fwd, h.layer_fwd);
  passes(1, c.head_fwd, h.head_fwd);
  passes(1, c.head_bwd, h.head_bwd);
  passes(layers, l.bwd + l.recompute + l.tp_comm_bwd, h.layer_bwd + h.layer_recompute);
  if (first) passes(1, c.embed_bwd, h.embed_bwd);
  const double drift = lead;  // per micro-batch
  const double m = std::max(1, c.micro_batches);
  const double within = best + std::max(0.0, (m - 1.0) * drift);
  const double at_optimizer = m * drift + h.optimizer.v - c.optimizer.v;
  return {Seconds(std::max({0.0, within, at_optimizer})), Seconds(m * issued + h.optimizer.v)};
}

inline Seconds host_stall(const StepCosts& c) { return host_timing(c).stall; }
inline Seconds host_issue(const StepCosts& c) { return host_timing(c).issue; }

}  // namespace dsplan
