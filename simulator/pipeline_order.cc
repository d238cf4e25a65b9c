// Per-rank program order for 1F1B and interleaved 1F1B. See pipeline_order.h.
#include "simulator/pipeline_order.h"

#include <algorithm>

namespace dsplan::sim {

namespace {

// Forward (or backward) passes of one rank in issue order: groups of pp micro-batches,
// chunks ascending for forwards and descending for backwards.
std::vector<PipelineOp> pass_sequence(bool forward, int pp, int vpp, int m) {
  std::vector<PipelineOp> seq;
  seq.reserve(static_cast<std::size_t>(m) * vpp);
  for (int first = 0; first < m; first += pp) {
    const int last = std::min(first + pp, m);
    for (int i = 0; i < vpp; ++i) {
      const int chunk = forward ? i : vpp - 1 - i;
      for (int mb = first; mb < last; ++mb) seq.push_back({forward, mb, chunk});
    }
  }
  return seq;
}

int warmup_count(int pp, int vpp, int m, int rank) {
  const int total = m * vpp;
  const int warmup = vpp == 1 ? pp - rank - 1 : 2 * (pp - rank - 1) + (vpp - 1) * pp;
  return std::min(warmup, total);
}

}  // namespace

std::vector<PipelineOp> rank_order(int pp, int vpp, int m, int rank) {
  // Interleaving pads the micro-batches to whole groups of pp and drops the padding
  // afterwards (see pipeline_order.h).
  const int padded = vpp == 1 ? m : (m + pp - 1) / pp * pp;
  const std::vector<PipelineOp> fwd = pass_sequence(true, pp, vpp, padded);
  const std::vector<PipelineOp> bwd = pass_sequence(false, pp, vpp, padded);
  const int total = static_cast<int>(fwd.size());
  const int warmup = warmup_count(pp, vpp, padded, rank);
  std::vector<PipelineOp> order;
  order.reserve(2 * fwd.size());
  auto push = [&](const PipelineOp& op) {
    if (op.micro_batch < m) order.push_back(op);
  };
  for (int i = 0; i < warmup; ++i) push(fwd[i]);
  for (int i = 0; i < total - warmup; ++i) {
    push(fwd[warmup + i]);
    push(bwd[i]);
  }
  for (int i = total - warmup; i < total; ++i) push(bwd[i]);
  return order;
}

}  // namespace dsplan::sim
