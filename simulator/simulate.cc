// simulate_step(): validate, build the graph, schedule it, attribute the timeline. A step
// of many micro-batches is simulated over two shorter windows and extended along the line
// through them (see kWindowMicroBatches).
#include "simulator/simulate.h"

#include <algorithm>
#include <boost/graph/topological_sort.hpp>  // boost::not_a_dag
#include <cmath>
#include <map>

#include "estimator/host_stall.h"
#include "simulator/breakdown.h"
#include "simulator/contention.h"
#include "simulator/scheduler.h"
#include "simulator/step_graph.h"

namespace dsplan {

namespace {

// Bounds the graph size (about two tasks per pass); ~100 MB of tasks at the limit.
constexpr double kMaxPasses = 2e6;
// Contention pass (contention.h): rounds of stretch-and-reschedule, stopped early once no
// compute task changes by more than a nanosecond.
constexpr int kContentionRounds = 6;
constexpr Seconds kContentionSettled{1e-9};

// Long accumulation. Once the pipeline is full, every further micro-batch adds the same
// passes to every rank in the same order: 1F1B's steady state (one forward and one
// backward per rank), and under ZeRO-2 the same reductions behind each backward. The
// makespan, and each part of its breakdown, then grow by one constant per micro-batch.
// A step of m micro-batches beyond the window w is scheduled for w and w/2 micro-batches
// and extended along the line through the two: T(m) = T(w) + (m - w)(T(w) - T(w/2))/(w/2).
// w is at least 4 pipeline fills (4 pp micro-batches) and a multiple of 2 pp, so both
// windows are whole groups of pp, as interleaved 1F1B needs.
constexpr int kWindowMicroBatches = 64;

void check_count(const char* path, int value, int min, Diagnostics& out) {
  if (value >= min) return;
  out.push_back({"", path, std::string(path + 1) + " must be at least " + std::to_string(min),
                 "got " + std::to_string(value)});
}

template <class Q>
void check_amount(const char* path, Q q, Diagnostics& out) {
  if (std::isfinite(q.v) && q.v >= 0.0) return;
  out.push_back({"", path, std::string(path + 1) + " must be finite and not negative",
                 "got " + std::to_string(q.v)});
}

void check_amounts(const StepCosts& c, Diagnostics& out) {
  const LayerCosts& l = c.layer;
  check_amount("/layer/fwd", l.fwd, out);
  check_amount("/layer/bwd", l.bwd, out);
  check_amount("/layer/recompute", l.recompute, out);
  check_amount("/layer/tp_comm_fwd", l.tp_comm_fwd, out);
  check_amount("/layer/tp_comm_bwd", l.tp_comm_bwd, out);
  check_amount("/layer/param_gather", l.param_gather, out);
  check_amount("/layer/grad_reduce", l.grad_reduce, out);
  check_amount("/layer/grad_bytes", l.grad_bytes, out);
  check_amount("/embed_fwd", c.embed_fwd, out);
  check_amount("/embed_bwd", c.embed_bwd, out);
  check_amount("/head_fwd", c.head_fwd, out);
  check_amount("/head_bwd", c.head_bwd, out);
  check_amount("/p2p", c.p2p, out);
  check_amount("/p2p_gather", c.p2p_gather, out);
  check_amount("/embed_grad_sync", c.embed_grad_sync, out);
  check_amount("/bucket_bytes", c.bucket_bytes, out);
  check_amount("/grad_reduce_tail", c.grad_reduce_tail, out);
  check_amount("/param_allgather", c.param_allgather, out);
  check_amount("/optimizer", c.optimizer, out);
  check_amount("/offload_d2h", c.offload_d2h, out);
  check_amount("/offload_h2d", c.offload_h2d, out);
  if (!(c.overlap_compute_loss >= 0.0 && c.overlap_compute_loss < 1.0))
    out.push_back({"", "/overlap_compute_loss", "overlap_compute_loss must be in [0, 1)",
                   "got " + std::to_string(c.overlap_compute_loss)});
}

std::vector<CriticalPathStep> path_steps(const sim::TaskGraph& g, const sim::Schedule& s) {
  std::vector<CriticalPathStep> out;
  for (sim::TaskId v : sim::critical_path(g, s)) {
    out.push_back({sim::task_name(g.task(v)), s.start[v], g.task(v).duration});
  }
  return out;
}

std::vector<StreamUtilisation> utilisation(const sim::TaskGraph& g, const sim::Schedule& s) {
  std::vector<Seconds> busy(g.streams().size());
  std::vector<bool> used(g.streams().size(), false);
  for (sim::TaskId v = 0; v < g.size(); ++v) {
    const int stream = g.task(v).stream;
    if (stream < 0) continue;
    busy[stream] += g.task(v).duration + g.task(v).overlapped;
    used[stream] = true;
  }
  std::vector<StreamUtilisation> out;
  for (std::size_t i = 0; i < busy.size(); ++i) {
    if (!used[i]) continue;
    const double u = s.makespan.v > 0.0 ? busy[i] / s.makespan : 0.0;
    out.push_back({sim::stream_name(g.streams()[i]), busy[i], u});
  }
  return out;
}

// Compute the rank lost beside collectives: the analytic terms its tasks carry plus what
// the contention pass stretched them by.
Seconds contention_on(const sim::StepGraph& sg, const std::vector<Seconds>& base, int rank) {
  Seconds total;
  const int stream = sg.ranks[rank].compute;
  for (sim::TaskId v = 0; v < sg.graph.size(); ++v) {
    const sim::Task& t = sg.graph.task(v);
    if (t.stream != stream || sim::category_of(t.kind) != sim::Category::compute) continue;
    total += t.contention + (t.duration - base[v]);
  }
  // The stretch is a difference of sums: where nothing was stretched, rounding leaves
  // ±1e-15 s, which must not print as a negative loss.
  return total.v < 1e-12 ? Seconds{} : total;
}

}  // namespace

int simulation_window(const StepCosts& c, int window) {
  const int pp = std::max(1, c.pp);
  const int w = std::max(std::max(2, window), 4 * pp);
  return (w + 2 * pp - 1) / (2 * pp) * (2 * pp);
}

Diagnostics validate_step_costs(const StepCosts& c) {
  Diagnostics out;
  check_count("/pp", c.pp, 1, out);
  check_count("/vpp", c.vpp, 1, out);
  check_count("/micro_batches", c.micro_batches, 1, out);
  check_count("/layers_per_rank", c.layers_per_rank, std::max(1, c.vpp), out);
  if (c.p2p_exchange && c.vpp > 1)
    out.push_back({"", "/p2p_exchange", "DeepSpeed's pipeline schedule has no interleaved stages",
                   "p2p_exchange needs vpp 1, got " + std::to_string(c.vpp)});
  check_amounts(c, out);
  if (out.empty()) {
    const int window = simulation_window(c, kWindowMicroBatches);
    const double passes = 2.0 * c.pp * c.vpp * std::min(c.micro_batches, window);
    if (passes > kMaxPasses) {
      out.push_back({"", "",
                     "the step graph would hold " + std::to_string(passes) + " passes, too many to simulate",
                     "reduce pp or vpp (at most 2e6 passes: 2 x pp x vpp x the micro-batches simulated, "
                     "at most the window of max(64, 4 pp))"});
    }
  }
  return out;
}

namespace {

// One schedule of exactly costs.micro_batches micro-batches, without the host's stall.
Expected<SimulationResult> schedule_step(const StepCosts& costs) {
  sim::StepGraph sg = sim::build_step_graph(costs);
  sim::Schedule schedule;
  // Durations before the contention pass, which stretches compute tasks in place.
  std::vector<Seconds> base(sg.graph.size());
  for (sim::TaskId v = 0; v < base.size(); ++v) base[v] = sg.graph.task(v).duration;
  try {
    schedule = sim::list_schedule(sg.graph);
    if (costs.overlap_compute_loss > 0.0) {
      for (int round = 0; round < kContentionRounds; ++round) {
        const Seconds change = sim::apply_contention(sg.graph, base, schedule, costs.overlap_compute_loss);
        schedule = sim::list_schedule(sg.graph);
        if (change.v <= kContentionSettled.v) break;
      }
    }
  } catch (const boost::not_a_dag&) {
    return Diagnostic{"", "", "internal error: the step graph has a cycle",
                      "please report the StepCosts that produced it"};
  }
  SimulationResult r;
  r.step = schedule.makespan;
  r.critical_rank = sim::critical_rank(sg, schedule);
  r.breakdown = sim::attribute(sg, schedule, r.critical_rank);
  r.breakdown.contention = contention_on(sg, base, r.critical_rank);
  r.critical_path = path_steps(sg.graph, schedule);
  r.streams = utilisation(sg.graph, schedule);
  r.tasks = sg.graph.size();
  r.micro_batches_simulated = costs.micro_batches;
  return r;
}

// `a` (w micro-batches) extended to m along the line through `b` (w/2): a + k (a - b).
SimulationResult extend(SimulationResult a, const SimulationResult& b, int m) {
  const int wa = a.micro_batches_simulated, wb = b.micro_batches_simulated;
  const double k = static_cast<double>(m - wa) / static_cast<double>(wa - wb);
  auto line = [k](Seconds x, Seconds y) { return Seconds(std::max(0.0, x.v + k * (x.v - y.v))); };
  StepTimeBreakdown& d = a.breakdown;
  const StepTimeBreakdown& e = b.breakdown;
  a.step = line(a.step, b.step);
  d.step = line(d.step, e.step);
  d.compute = line(d.compute, e.compute);
  d.comm_exposed = line(d.comm_exposed, e.comm_exposed);
  d.bubble = line(d.bubble, e.bubble);
  d.optimizer = line(d.optimizer, e.optimizer);
  d.offload = line(d.offload, e.offload);
  d.contention = line(d.contention, e.contention);
  std::map<std::string, Seconds> busy_b;
  for (const auto& s : b.streams) busy_b[s.stream] = s.busy;
  for (auto& s : a.streams) {
    s.busy = line(s.busy, busy_b[s.stream]);
    s.utilisation = a.step.v > 0.0 ? s.busy / a.step : 0.0;
  }
  return a;
}

}  // namespace

Expected<SimulationResult> simulate_step(const StepCosts& costs, int window) {
  if (Diagnostics errs = validate_step_costs(costs); !errs.empty()) return errs;
  const int w = simulation_window(costs, window);
  StepCosts a = costs, b = costs;
  a.micro_batches = std::min(w, costs.micro_batches);
  b.micro_batches = w / 2;
  auto ra = schedule_step(a);
  if (!ra) return ra;
  SimulationResult r = std::move(ra).value();
  if (costs.micro_batches > w) {
    auto rb = schedule_step(b);
    if (!rb) return rb;
    r = extend(std::move(r), rb.value(), costs.micro_batches);
  }
  // The host's kernel issuing, as in the closed form: the GPU waits, counted as compute.
  const HostTiming host = host_timing(costs);
  r.breakdown.host_stall = host.stall;
  r.breakdown.host_issue = host.issue;
  r.step += r.breakdown.host_stall;
  r.breakdown.step += r.breakdown.host_stall;
  r.breakdown.compute += r.breakdown.host_stall;
  return r;
}

Expected<SimulationResult> simulate_step(const StepCosts& costs) {
  return simulate_step(costs, kWindowMicroBatches);
}

Seconds closed_form_sum(const StepCosts& c) {
  const LayerCosts& l = c.layer;
  const double layers = c.pp == 1
                            ? c.layers_per_rank
                            : c.first_rank_layers() + c.last_rank_layers() + (c.pp - 2.0) * c.layers_per_rank;
  const Seconds per_layer = l.fwd + l.bwd + l.recompute + l.tp_comm_fwd + l.tp_comm_bwd +
                            l.param_gather * 2.0;
  const Seconds per_mb = per_layer * layers + c.embed_fwd + c.embed_bwd + c.head_fwd +
                         c.head_bwd;
  const double rounds = c.grad_reduce_every_micro_batch ? c.micro_batches : 1;
  const Seconds per_round = l.grad_reduce * layers + c.grad_reduce_tail + c.offload_d2h;
  // Sends between stages on different ranks, one each way per micro-batch and boundary.
  const double sends = c.pp > 1 ? 2.0 * c.micro_batches * (c.pp * c.vpp - 1) : 0.0;
  // DeepSpeed's partitioned stage tensors: three all-gathers per micro-batch and boundary.
  const double gathers = c.p2p_exchange && c.pp > 1 ? 1.5 * sends : 0.0;
  return per_mb * c.micro_batches + per_round * rounds + c.p2p * sends + c.p2p_gather * gathers +
         c.embed_grad_sync + c.optimizer + c.param_allgather + c.offload_h2d + host_stall(c);
}

}  // namespace dsplan
