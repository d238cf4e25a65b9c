// Attribution of the critical rank's timeline to compute, exposed communication, bubble,
// optimizer and offload. See breakdown.h for the rules.
#include "simulator/breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace dsplan::sim {

namespace {

struct Tally {
  double compute = 0, comm = 0, bubble = 0, optimizer = 0, offload = 0;

  void add(Category c, double t) {
    switch (c) {
      case Category::compute: bubble += t; break;  // another rank's compute
      case Category::comm: comm += t; break;
      case Category::offload: offload += t; break;
      case Category::optimizer: optimizer += t; break;
      case Category::none: break;
    }
  }
};

// Explains the wait [a, b) of the critical rank's compute stream, starting from task x,
// which finishes at b, and following binding predecessors.
void explain_wait(const StepGraph& sg, const Schedule& s, int own_stream, TaskId x, double a,
                  double b, Tally& tally) {
  while (a < b && x != kNoTask) {
    const Task& t = sg.graph.task(x);
    if (t.stream == own_stream) break;
    const Category c = category_of(t.kind);
    if (c == Category::compute) {
      tally.bubble += b - a;
      return;
    }
    const double lo = std::max(a, s.start[x].v);
    tally.add(c, b - lo);
    b = lo;
    x = s.binding[x];
  }
  if (a < b) tally.bubble += b - a;
}

void add_busy(const Task& t, Tally& tally) {
  const Category c = category_of(t.kind);
  if (c == Category::optimizer || c == Category::comm) {
    // The optimizer step, or a send or exchange that holds the compute stream.
    tally.add(c, t.duration.v);
    return;
  }
  tally.compute += (t.duration - t.blocking_comm).v;
  tally.comm += t.blocking_comm.v;
}

}  // namespace

int critical_rank(const StepGraph& sg, const Schedule& s) {
  int best = 0;
  for (int r = 1; r < static_cast<int>(sg.last_compute.size()); ++r) {
    if (s.finish[sg.last_compute[r]] > s.finish[sg.last_compute[best]]) best = r;
  }
  return best;
}

StepTimeBreakdown attribute(const StepGraph& sg, const Schedule& s, int rank) {
  const TaskGraph& g = sg.graph;
  const int own = sg.ranks[rank].compute;
  Tally tally;
  double a = 0.0;
  for (TaskId v = 0; v < g.size(); ++v) {
    if (g.task(v).stream != own) continue;
    explain_wait(sg, s, own, s.binding[v], a, s.start[v].v, tally);
    add_busy(g.task(v), tally);
    a = s.finish[v].v;
  }
  if (a < s.makespan.v) {
    // Nothing on this rank's compute stream ends the step: follow the last task.
    const TaskId last = s.last;
    const Task& t = g.task(last);
    const double lo = std::max(a, s.start[last].v);
    if (category_of(t.kind) == Category::compute) {
      tally.bubble += s.makespan.v - a;
    } else {
      tally.add(category_of(t.kind), s.makespan.v - lo);
      explain_wait(sg, s, own, s.binding[last], a, lo, tally);
    }
  }
  StepTimeBreakdown out;
  out.step = s.makespan;
  out.compute = Seconds(tally.compute);
  out.comm_exposed = Seconds(tally.comm);
  out.bubble = Seconds(tally.bubble);
  out.optimizer = Seconds(tally.optimizer);
  out.offload = Seconds(tally.offload);
  out.critical_path = summarise_path(g, critical_path(g, s));
  return out;
}

std::vector<std::string> summarise_path(const TaskGraph& g, const std::vector<TaskId>& path) {
  std::map<std::string, std::pair<int, double>> by_kind;
  for (TaskId v : path) {
    const Task& t = g.task(v);
    auto& [count, total] = by_kind[kind_name(t.kind)];
    ++count;
    total += t.duration.v;
  }
  std::vector<std::pair<double, std::string>> lines;
  for (const auto& [name, ct] : by_kind) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %d task%s, %.3f ms", name.c_str(), ct.first,
                  ct.first == 1 ? "" : "s", ct.second * 1e3);
    lines.emplace_back(ct.second, buf);
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> out;
  for (auto& l : lines) out.push_back(std::move(l.second));
  return out;
}

}  // namespace dsplan::sim
