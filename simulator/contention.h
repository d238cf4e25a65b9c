// Compute slowed beside collectives on a scheduled step (estimator/overlap.h). The
// explicit overlaps of the graph, the last micro-batch's per-layer backward next to its
// bucket reductions on dp_comm and its ZeRO-3 gathers on the gather stream, are known only
// once scheduled. A compute task of a rank progresses at its full rate except while a
// task of that rank's dp_comm or gather stream runs, when it progresses at (1 - loss);
// its new duration integrates that rate from its scheduled start. Stretching moves the
// collectives too, so simulate_step() alternates this pass with list scheduling until the
// durations settle (a few rounds; a compute task wholly under a collective converges to
// base / (1 - loss)). p2p sends, host copies (DMA engines) and the CPU optimizer are not
// counted; analytic overlaps (pass_costs.h, micro_batch_reduce.h) carry their own terms.
#pragma once

#include <vector>

#include "core/units.h"
#include "simulator/scheduler.h"
#include "simulator/task_graph.h"

namespace dsplan::sim {

// Sets the duration of every compute task (forward, backward, tail pieces) from its
// `base` duration (indexed by task id) and `schedule`. Returns the largest change.
Seconds apply_contention(TaskGraph& graph, const std::vector<Seconds>& base,
                         const Schedule& schedule, double loss);

}  // namespace dsplan::sim
