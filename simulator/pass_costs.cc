// Pass and layer durations from StepCosts. See pass_costs.h for the model.
#include "simulator/pass_costs.h"

#include <algorithm>

namespace dsplan::sim {

int chunk_layers(const StepCosts& c, int rank, int chunk) {
  const int v = std::max(1, c.vpp);
  const int n = rank == 0          ? c.first_rank_layers()
                : rank == c.pp - 1 ? c.last_rank_layers()
                                   : c.layers_per_rank;
  const int mc = c.middle_chunk_layers;
  if (v > 1 && mc > 0) {
    // The ends' differences sit in the first rank's first chunk and the last rank's last.
    if (rank == 0 && chunk == 0) return std::max(0, c.first_rank_layers() - (v - 1) * mc);
    if (rank == c.pp - 1 && chunk == v - 1) return std::max(0, c.last_rank_layers() - (v - 1) * mc);
    return mc;
  }
  const int base = n / v, extra = n % v;
  // The first rank's missing layer (embedding counted as one) is its first chunk's.
  if (rank == 0 && n < c.layers_per_rank) return base + (chunk >= v - extra ? 1 : 0);
  return base + (chunk < extra ? 1 : 0);
}

Seconds layer_tp_comm(const StepCosts& c, bool forward) {
  return forward ? c.layer.tp_comm_fwd : c.layer.tp_comm_bwd;
}

Seconds layer_time(const StepCosts& c, bool forward) {
  const Seconds work = forward ? c.layer.fwd : c.layer.bwd + c.layer.recompute;
  return work + layer_tp_comm(c, forward);
}

int p2p_gathers(const StepCosts& c, int rank, bool forward) {
  if (!c.p2p_exchange || c.pp <= 1) return 0;
  return forward ? (rank > 0 ? 1 : 0) : (rank < c.pp - 1 ? 2 : 0);
}

PassCost pass_cost(const StepCosts& c, int rank, int chunk, bool forward) {
  const int n = chunk_layers(c, rank, chunk);
  const Seconds layer = layer_time(c, forward);
  const GatherOverlap g =
      gather_overlap(c.layer.param_gather, layer, n, c.zero3_prefetch, c.overlap_compute_loss);
  PassCost cost;
  cost.blocking_comm = layer_tp_comm(c, forward) * n + g.exposed;
  cost.duration = layer * n + g.exposed + g.contention;
  cost.contention = g.contention;
  const Seconds gathers = c.p2p_gather * p2p_gathers(c, rank, forward);
  cost.duration += gathers;
  cost.blocking_comm += gathers;
  if (rank == 0 && chunk == 0) cost.duration += forward ? c.embed_fwd : c.embed_bwd;
  if (rank == c.pp - 1 && chunk == c.vpp - 1) cost.duration += forward ? c.head_fwd : c.head_bwd;
  return cost;
}

}  // namespace dsplan::sim
