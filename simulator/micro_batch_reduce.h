// Gradient reduction after a micro-batch that is NOT the last one, for ZeRO-2/3
// (StepCosts::grad_reduce_every_micro_batch): partitioned gradients cannot accumulate
// unreduced, so every micro-batch's backward reduces its buckets, then grad_reduce_tail,
// and with offload copies them to the host. DeepSpeed synchronises the device at the end
// of every backward (the reduction epilogue), so the rank's next forward or backward waits
// for all of it.
//
// To keep the graph small (one or two tasks per rank and micro-batch instead of one per
// bucket) the overlap with that micro-batch's backward is computed here, not scheduled:
// the rank's backward passes of the micro-batch (chunks v-1..0) are laid end to end,
// layers at a uniform rate within a pass (head before, embedding after, ZeRO-3 gather
// exposure spread over the layers), buckets are planned as in the last micro-batch's
// per-layer tail (plan_tail_pieces) and reduced first-in-first-out on dp_comm from the
// moment they fill; with offload each reduced bucket is then copied first-in-first-out to
// the host. What is left after the backward ends becomes a task; what ran under the
// backward is recorded as the task's `overlapped` time (stream utilisation only).
// With vpp = 1 this equals what the per-layer tail would schedule, because the previous
// micro-batch's reductions have drained before the backward starts; with vpp > 1 the
// forwards interleaved between a micro-batch's chunk passes are ignored (the reduction
// gets less cover than it would have). Contention is first order: the hidden reduction
// slows the backward by loss x hidden, and the reduction left after it shrinks by as much
// (never below the last bucket's own reduction after it fills). With
// StepCosts::gather_shares_reduce the layers' prefetched ZeRO-3 gathers queue on the same
// communicator, at each layer's start, ahead of the reductions issued after them.
#pragma once

#include "core/units.h"
#include "estimator/step_costs.h"

namespace dsplan::sim {

struct MicroBatchReduction {
  Seconds reduce_exposed;  // after the rank's last backward pass of the micro-batch:
                           // reduction still running, then grad_reduce_tail
  Seconds reduce_hidden;   // reduction work done during the backward
  Seconds copy_exposed;    // offload: copy still running after the reduction task ends
  Seconds copy_hidden;     // offload: copy work done before that
  // Compute the micro-batch's backward loses beside the reduction it hides
  // (estimator/overlap.h): loss x reduce_hidden, added to the rank's last backward pass of
  // the micro-batch, which in turn hides that much more of the reduction.
  Seconds contention;
};

// Same for every non-last micro-batch of `rank`. Without overlap_grad_reduce nothing is
// hidden: the whole reduction and tail, then the whole copy, follow the backward.
MicroBatchReduction micro_batch_reduction(const StepCosts& costs, int rank);

}  // namespace dsplan::sim
