// Durations of the compute tasks built from StepCosts: one forward or backward pass of a
// model chunk for one micro-batch, and the per-layer pieces of the last backward.
//
// A pass over n layers costs n layer costs, plus the embedding on rank 0's chunk 0 and
// the head (final norm, logits, loss) on the last rank's last chunk. Tensor-parallel
// collectives block the compute stream, so they are added to the pass and recorded as
// its blocking communication; recomputation is added to the backward.
//
// ZeRO-3 gathers of the n layers of a pass (gather g, layer compute c):
//   without prefetch each layer waits for its own gather:         n (g + c)
//   with prefetch the gather of layer i+1 runs during layer i, so the gathers run back
//   to back while compute keeps up:                               n max(g, c) + min(g, c)
// (the first gather of a pass is never hidden). The excess over n c is blocking
// communication. Beside a gather the compute runs slower (estimator/overlap.h): each of
// the n - 1 windows where a gather runs beside a layer becomes max(g, c + loss g), and
// the excess over max(g, c) is compute.
// The last micro-batch's backward is built per layer with explicit gather tasks on the
// gather stream instead (backward_tail.h); the scheduler's contention pass slows its
// compute beside them (contention.h).
#pragma once

#include "core/units.h"
#include "estimator/overlap.h"
#include "estimator/step_costs.h"

namespace dsplan::sim {

struct PassCost {
  Seconds duration;       // time on the compute stream
  Seconds blocking_comm;  // part of it spent in blocking collectives
  Seconds contention;     // part of it lost beside prefetched gathers
};

// Layers chunk `chunk` of rank `rank` holds: the rank's layers (StepCosts::
// first_rank_layers on rank 0, last_rank_layers on the last) over vpp, the first
// (layers mod vpp) chunks holding one more; on rank 0 with the embedding counted as a layer,
// its first chunk holds the fewer (Megatron-Core's split).
int chunk_layers(const StepCosts& costs, int rank, int chunk);

// One layer's compute-stream time (TP collectives included) in one direction.
Seconds layer_time(const StepCosts& costs, bool forward);
Seconds layer_tp_comm(const StepCosts& costs, bool forward);

// All-gathers of DeepSpeed's partitioned stage tensors in one pass of `rank`
// (StepCosts::p2p_gather): a forward gathers its received input (not on the first rank),
// a backward its own output and the received gradient (not on the last rank).
int p2p_gathers(const StepCosts& costs, int rank, bool forward);

// A whole pass of chunk `chunk` on rank `rank` for one micro-batch.
PassCost pass_cost(const StepCosts& costs, int rank, int chunk, bool forward);

}  // namespace dsplan::sim
