// List scheduler and critical-path trace-back. See scheduler.h.
#include "simulator/scheduler.h"

#include <algorithm>

namespace dsplan::sim {

namespace {

// True when predecessor `a` should bind rather than `b` (same finish time).
bool prefer(const TaskGraph& g, TaskId a, TaskId b) {
  const double da = g.task(a).duration.v, db = g.task(b).duration.v;
  if (da != db) return da > db;
  return a < b;
}

void schedule_one(const TaskGraph& g, TaskId v, std::vector<Seconds>& stream_free,
                  Schedule& s) {
  Seconds start;
  TaskId binding = kNoTask;
  for (auto [e, end] = boost::in_edges(v, g.graph()); e != end; ++e) {
    const TaskId u = boost::source(*e, g.graph());
    const Seconds f = s.finish[u];
    if (binding == kNoTask || f > start || (f == start && prefer(g, u, binding))) {
      start = f;
      binding = u;
    }
  }
  const Task& t = g.task(v);
  if (t.stream >= 0) {
    // The stream predecessor is an in-edge as well, so this never moves the start;
    // it states the one-task-at-a-time rule independently of how edges were added.
    start = max(start, stream_free[t.stream]);
    stream_free[t.stream] = start + t.duration;
  }
  s.start[v] = start;
  s.finish[v] = start + t.duration;
  s.binding[v] = binding;
}

}  // namespace

Schedule list_schedule(const TaskGraph& g) {
  const std::size_t n = g.size();
  Schedule s;
  s.start.assign(n, Seconds{});
  s.finish.assign(n, Seconds{});
  s.binding.assign(n, kNoTask);
  std::vector<Seconds> stream_free(g.streams().size(), Seconds{});
  // Any topological order gives the same schedule: a task's start is the latest finish of
  // its predecessors (its stream predecessor among them), ties broken by prefer().
  if (g.ids_are_topological()) {
    for (TaskId v = 0; v < n; ++v) schedule_one(g, v, stream_free, s);
  } else {
    for (const TaskId v : g.topological_order()) schedule_one(g, v, stream_free, s);  // throws on a cycle
  }
  for (TaskId v = 0; v < n; ++v) {
    if (s.last == kNoTask || s.finish[v] > s.makespan) {
      s.makespan = s.finish[v];
      s.last = v;
    }
  }
  return s;
}

std::vector<TaskId> critical_path(const TaskGraph& g, const Schedule& s) {
  std::vector<TaskId> path;
  for (TaskId v = s.last; v != kNoTask; v = s.binding[v]) {
    if (g.task(v).duration.v > 0.0) path.push_back(v);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace dsplan::sim
