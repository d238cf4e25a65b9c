// The order in which one pipeline rank runs the forward and backward passes of its model
// chunks: the program order of that rank's compute stream.
//
// 1F1B / PipeDream-Flush (vpp = 1; Narayanan et al. 2021, §2.1; Fan et al. 2021): rank r
// of p runs min(p - r - 1, m) warm-up forwards, then alternates one forward and one
// backward, then drains the remaining backwards.
//
// Interleaved 1F1B (vpp = v > 1; Narayanan et al. 2021, §2.2): rank r holds chunks
// c = 0..v-1 at virtual stages c*p + r. Micro-batches are taken in groups of p; within a
// group forwards visit chunks 0..v-1 and backwards v-1..0, each chunk over all
// micro-batches of the group. The warm-up runs 2(p - r - 1) + (v - 1)p forwards (all of
// them when that is at least m*v), then steady one-forward-one-backward, then the
// cool-down backwards. When m is not a multiple of p, a smaller last group lets the
// warm-up reach deeper chunks and the ranks deadlock (e.g. p = 4, v = 3, m = 5), so the
// order is built for m rounded up to whole groups and the padding micro-batches are then
// dropped: removing passes from a deadlock-free order cannot create a cycle.
#pragma once

#include <vector>

namespace dsplan::sim {

struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  friend bool operator==(const PipelineOp&, const PipelineOp&) = default;
};

// Requires pp >= 1, vpp >= 1, micro_batches >= 1 and 0 <= rank < pp.
std::vector<PipelineOp> rank_order(int pp, int vpp, int micro_batches, int rank);

}  // namespace dsplan::sim
