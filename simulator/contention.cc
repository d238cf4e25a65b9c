// The contention pass: see contention.h.
#include "simulator/contention.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace dsplan::sim {

namespace {

using Interval = std::pair<double, double>;

// Union of the intervals, sorted and merged.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// When `work` seconds of compute started at `start` finish, at rate (1 - loss) inside
// the busy intervals and 1 outside.
double finish_of(double start, double work, const std::vector<Interval>& busy, double loss) {
  const double rate = 1.0 - loss;
  double t = start;
  // The first interval that ends after the start (ends are sorted: the union is disjoint).
  auto it = std::upper_bound(busy.begin(), busy.end(), start,
                             [](double x, const Interval& i) { return x < i.second; });
  for (; it != busy.end() && work > 0.0; ++it) {
    const double a = std::max(it->first, t), b = it->second;
    if (a > t) {
      if (work <= a - t) return t + work;
      work -= a - t;
      t = a;
    }
    const double capacity = (b - t) * rate;
    if (work <= capacity) return t + work / rate;
    work -= capacity;
    t = b;
  }
  return t + work;
}

bool is_compute(TaskKind k) { return category_of(k) == Category::compute; }

bool is_collective(StreamKind k) { return k == StreamKind::dp_comm || k == StreamKind::gather; }

}  // namespace

Seconds apply_contention(TaskGraph& g, const std::vector<Seconds>& base, const Schedule& s,
                         double loss) {
  if (loss <= 0.0 || loss >= 1.0) return Seconds{};
  int ranks = 0;
  for (const Stream& st : g.streams()) ranks = std::max(ranks, st.rank + 1);
  std::vector<std::vector<Interval>> busy(ranks);
  for (TaskId v = 0; v < g.size(); ++v) {
    const Task& t = g.task(v);
    if (t.stream < 0 || t.duration.v <= 0.0) continue;
    const Stream& st = g.streams()[t.stream];
    if (is_collective(st.kind)) busy[st.rank].push_back({s.start[v].v, s.finish[v].v});
  }
  for (auto& b : busy) b = merged(std::move(b));
  Seconds largest;
  for (TaskId v = 0; v < g.size(); ++v) {
    const Task& t = g.task(v);
    if (t.stream < 0 || !is_compute(t.kind) || base[v].v <= 0.0) continue;
    const std::vector<Interval>& b = busy[g.streams()[t.stream].rank];
    const Seconds d(b.empty() ? base[v].v : finish_of(s.start[v].v, base[v].v, b, loss) - s.start[v].v);
    largest = max(largest, Seconds(std::abs(d.v - t.duration.v)));
    g.set_duration(v, d);
  }
  return largest;
}

}  // namespace dsplan::sim
