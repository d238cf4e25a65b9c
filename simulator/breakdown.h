// Turns a schedule into a StepTimeBreakdown, seen from one "critical" rank: the rank
// whose last forward/backward finishes last (the one that drains the pipeline; the
// lowest such rank on ties). Its timeline [0, makespan] is split exactly into:
//   compute      its forward/backward tasks, less their blocking collectives;
//   comm_exposed those blocking collectives (TP, unprefetched ZeRO-3 gathers), its
//                blocking sends and exchanges (on its compute stream), plus time its
//                compute stream waits on communication;
//   bubble       time it waits on another rank's compute (pipeline fill and drain);
//   optimizer    the optimizer step (GPU or CPU Adam) and waits on it;
//   offload      waits on PCIe copies to or from the host.
// A wait is explained by walking the chain of binding predecessors back from the task
// that ends it: each task on the chain accounts for the part of the wait during which
// it ran; a compute task on another rank accounts for all that is left. So
// compute + comm_exposed + bubble + optimizer + offload == step.
#pragma once

#include <string>
#include <vector>

#include "estimator/step_time.h"
#include "simulator/scheduler.h"
#include "simulator/step_graph.h"

namespace dsplan::sim {

int critical_rank(const StepGraph& graph, const Schedule& schedule);

// model_flops and hw_flops are left zero for the caller; critical_path holds
// summarise_path() of the schedule's critical path.
StepTimeBreakdown attribute(const StepGraph& graph, const Schedule& schedule, int rank);

// One line per kind of task on the path, largest total first:
// "backward: 12 tasks, 45.600 ms".
std::vector<std::string> summarise_path(const TaskGraph& graph,
                                        const std::vector<TaskId>& path);

}  // namespace dsplan::sim
