// List scheduling of a task graph. Tasks are visited in a topological order (Boost.Graph
// topological_sort) and each starts at the earliest time at which all its predecessors
// have finished AND its stream is free; it then occupies the stream for its duration.
// Because TaskGraph chains the tasks of a stream in the order they were added, the
// result does not depend on which topological order Boost returns. Durations are
// deterministic; there is no contention model beyond one task at a time per stream.
#pragma once

#include <vector>

#include "core/units.h"
#include "simulator/task_graph.h"

namespace dsplan::sim {

struct Schedule {
  std::vector<Seconds> start;
  std::vector<Seconds> finish;
  // The predecessor whose finish fixed the task's start (ties: the longer task, then
  // the earlier id); kNoTask when the task started at time zero.
  std::vector<TaskId> binding;
  Seconds makespan;
  TaskId last = kNoTask;  // a task that finishes at the makespan
};

// Throws boost::not_a_dag if the graph has a cycle (a builder bug, never user input).
Schedule list_schedule(const TaskGraph& graph);

// The chain of binding predecessors that ends at schedule.last, earliest task first.
// Zero-length tasks (barriers, free sends) are left out.
std::vector<TaskId> critical_path(const TaskGraph& graph, const Schedule& schedule);

}  // namespace dsplan::sim
