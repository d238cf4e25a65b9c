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
  const std::vector<PipelineOp> fwd = pass_sequence(true, pp, vpp, m);
  const std::vector<PipelineOp> bwd = pass_sequence(false, pp, vpp, m);
  const int total = static_cast<int>(fwd.size());
  const int warmup = warmup_count(pp, vpp, m, rank);
  std::vector<PipelineOp> order;
  order.reserve(2 * fwd.size());
  for (int i = 0; i < warmup; ++i) order.push_back(fwd[i]);
  for (int i = 0; i < total - warmup; ++i) {
    order.push_back(fwd[warmup + i]);
    order.push_back(bwd[i]);
  }
  for (int i = total - warmup; i < total; ++i) order.push_back(bwd[i]);
  return order;
}

}  // namespace dsplan::sim
