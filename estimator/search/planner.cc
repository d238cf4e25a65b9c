// Exhaustive ask/tell search over the configuration space, two-tier ranking (closed form
// for every point, an exact evaluator for the finalists) and the per-stage largest
// fitting micro-batch. Throughput metrics follow the usual conventions: samples/s =
// global batch / step time; model TFLOP/s exclude recompute, hardware TFLOP/s include it;
// MFU = model FLOP/s over the GPU's dense matmul peak in the training precision.
#include "estimator/search/planner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <set>
#include <unordered_map>

#include "estimator/params.h"

namespace dsplan {
namespace {

class ExhaustiveStrategy final : public SearchStrategy {
 public:
  ExhaustiveStrategy(const SearchSpace& s, const ModelSpec& m, const Cluster& c)
      : s_(with_defaults(s, m, c)), m_(m), c_(c) {
    sizes_ = {s_.zero.size(),
              s_.tp.size(),
              s_.pp.size(),
              s_.vpp.size(),
              s_.micro_batch.size(),
              s_.global_batch ? size_t{1} : s_.grad_accum.size(),
              s_.checkpointing.size(),
              s_.flash.size(),
              s_.sequence_parallel.size(),
              s_.offload.size(),
              s_.cp.size(),
              s_.ep.size(),
              s_.recompute_modules.size()};
    total_ = 1;
    for (size_t n : sizes_) total_ *= n;
  }

  std::optional<TrainConfig> next(std::vector<std::string>& invalid) override {
    if (i_ >= total_) return std::nullopt;
    std::array<size_t, 13> ix{};
    size_t rest = i_++;
    for (int d = 12; d >= 0; --d) {
      ix[d] = rest % sizes_[d];
      rest /= sizes_[d];
    }
    TrainConfig cfg;
    int gas = s_.global_batch ? 1 : s_.grad_accum[ix[5]];
    invalid = make_config(s_, m_, c_, s_.zero[ix[0]], s_.tp[ix[1]], s_.pp[ix[2]], s_.vpp[ix[3]],
                          s_.cp[ix[10]], s_.micro_batch[ix[4]], gas, s_.checkpointing[ix[6]], s_.flash[ix[7]],
                          s_.sequence_parallel[ix[8]], s_.offload[ix[9]], cfg);
    set_expert_parallel(m_, s_.ep[ix[11]], cfg, invalid);
    set_recompute_modules(s_.recompute_modules[ix[12]], cfg, invalid);
    return cfg;
  }
  void report(const Evaluation&) override {}

 private:
  SearchSpace s_;
  ModelSpec m_;
  Cluster c_;
  std::array<size_t, 13> sizes_{};
  size_t total_ = 0, i_ = 0;
};

// Higher is better.
double score(const Evaluation& e, Metric metric) {
  switch (metric) {
    case Metric::throughput: return e.samples_per_s;
    case Metric::latency: return e.time.step.v > 0 ? -e.time.step.v : 0;
    case Metric::flops: return e.tflops_per_gpu;
  }
  return 0;
}

bool better(const Evaluation& a, const Evaluation& b, Metric metric) {
  if (a.fits != b.fits) return a.fits;
  // Among configurations that do not fit, the closest to fitting comes first.
  if (!a.fits && a.headroom != b.headroom) return a.headroom > b.headroom;
  double sa = score(a, metric), sb = score(b, metric);
  if (sa != sb) return sa > sb;
  return a.headroom > b.headroom;
}

void fill_throughput(Evaluation& e, const Cluster& c) {
  const double step = e.time.step.v;
  if (step <= 0) return;
  e.samples_per_s = static_cast<double>(e.cfg.global_batch()) / step;
  e.tokens_per_s = e.samples_per_s * e.cfg.seq_len;
  e.tflops_per_gpu = e.time.model_flops.v / step / 1e12;
  e.hw_tflops_per_gpu = e.time.hw_flops.v / step / 1e12;
  const double peak = c.node.gpu.matmul_peak(e.cfg.gemm_precision()).v;  // tf32: its peak
  e.mfu = peak > 0 ? e.time.model_flops.v / step / peak : 0;
}

// Two configurations that differ only in activation checkpointing.
bool same_but_checkpointing(const TrainConfig& a, TrainConfig b) {
  b.checkpointing = a.checkpointing;
  b.recompute_layers = a.recompute_layers;
  b.recompute_modules = a.recompute_modules;
  return a == b;
}

// Removes from a best-first list each configuration that another one kept before it
// dominates: the same layout with other checkpointing, no more device memory and no worse
// on the metric (e.g. selective recompute next to FlashAttention, which saves nothing).
// Only configurations with the same layout can dominate each other, so the kept ones are
// looked up by a hash of layout fields checkpointing leaves alone (collisions are checked
// in full): linear in the list, where comparing every pair was quadratic in --top.
void drop_dominated(std::vector<Evaluation>& best, Metric metric, std::int64_t& dropped) {
  auto layout = [](const TrainConfig& c) {
    std::size_t h = 0;
    for (int v : {c.zero_stage, int(c.offload), c.tp, c.pp, c.dp, c.vpp, c.cp, c.ep, c.etp, c.micro_batch,
                  c.grad_accum, c.seq_len, int(c.flash_attention), int(c.attention)})
      h = h * 1000003u + std::hash<int>{}(v);
    return h;
  };
  std::vector<Evaluation> kept;
  kept.reserve(best.size());
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_layout;
  for (auto& e : best) {
    auto& same = by_layout[layout(e.cfg)];
    const bool dominated = std::any_of(same.begin(), same.end(), [&](std::size_t i) {
      const Evaluation& k = kept[i];
      return same_but_checkpointing(k.cfg, e.cfg) && k.memory.device <= e.memory.device &&
             !better(e, k, metric);
    });
    if (dominated) {
      ++dropped;
    } else {
      same.push_back(kept.size());
      kept.push_back(std::move(e));
    }
  }
  best = std::move(kept);
}

void check_fit(Evaluation& e, const Cluster& c) {
  e.headroom = c.node.gpu.memory - e.memory.device;
  e.fits = e.memory.device <= c.node.gpu.memory;
  if (!e.fits) e.reasons.push_back("out of GPU memory");
  if (e.memory.host.v > c.node.host_memory.v && c.node.host_memory.v > 0) {
    e.fits = false;
    e.reasons.push_back("out of host memory");
  }
  // Degenerate hardware figures (a zero bandwidth on a path the config uses) give an
  // infinite or undefined time: not a plan anyone can run, so never ranked.
  if (!std::isfinite(e.time.step.v) || !(e.time.step.v > 0)) {
    e.fits = false;
    e.reasons.push_back("no finite step time: a bandwidth or rate this configuration needs is zero");
  }
}

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive_strategy(const SearchSpace& s, const ModelSpec& m,
                                                         const Cluster& c) {
  return std::make_unique<ExhaustiveStrategy>(s, m, c);
}

void evaluate_into(const TrainConfig& cfg, const MemoryModel& mem, const StepTimeModel& time,
                   const Cluster& c, Evaluation& e) {
  e.cfg = cfg;
  e.moe = is_moe(time.model());
  e.memory = mem.estimate(cfg);
  time.estimate_into(cfg, e.time);
  e.fits = false;
  e.simulated = false;
  e.reasons.clear();
  e.samples_per_s = e.tokens_per_s = e.tflops_per_gpu = e.hw_tflops_per_gpu = e.mfu = 0;
  check_fit(e, c);
  fill_throughput(e, c);
}

int largest_fitting_micro_batch(TrainConfig cfg, const MemoryModel& mem, const Cluster& c,
                                int limit) {
  auto fits = [&](int b) {
    cfg.micro_batch = b;
    return mem.estimate(cfg).device <= c.node.gpu.memory;
  };
  if (!fits(1)) return 0;
  int lo = 1, hi = 2;
  while (hi <= limit && fits(hi)) { lo = hi; hi *= 2; }
  if (hi > limit) return fits(limit) ? limit : lo;  // lo fits; search (lo, limit]
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

PlanResult plan(const PlanRequest& req) {
  PlanResult out;
  const MemoryModel mem(req.model, req.cluster, req.memory_options);
  const StepTimeModel time(req.model, req.cluster, req.efficiency);
  const SearchSpace space = with_defaults(req.space, req.model, req.cluster);
  auto strategy = make_exhaustive_strategy(space, req.model, req.cluster);
  const size_t keep = static_cast<size_t>(std::max(req.top, req.refine_top));
  const Metric metric = req.metric;
  auto worse_first = [metric](const Evaluation& a, const Evaluation& b) { return better(a, b, metric); };

  std::vector<Evaluation> best;     // heap whose front is the worst kept (feasible)
  std::vector<Evaluation> rejected; // heap of infeasible ones when include_infeasible
  // Per stage: the feasible configs at the largest micro-batch seen (capped), from which
  // the largest fitting micro-batch is found by bisection beyond the searched list.
  std::map<int, std::vector<TrainConfig>> deepest;
  std::set<int> valid_stages;  // stages with at least one structurally valid configuration
  std::vector<std::string> invalid;
  Evaluation e;  // scratch, reused for every configuration
  const bool pinned = space.pinned();

  while (auto cfg = strategy->next(invalid)) {
    if (!invalid.empty()) {
      ++out.invalid;
      for (const auto& r : invalid) ++out.rejections[r];
      if (pinned) {  // the user asked for exactly this point: return it with its reasons
        Evaluation bad;
        bad.cfg = *cfg;
        bad.memory = mem.estimate(*cfg);
        bad.reasons = invalid;
        bad.headroom = req.cluster.node.gpu.memory - bad.memory.device;
        out.configs.push_back(std::move(bad));
      }
      continue;
    }
    evaluate_into(*cfg, mem, time, req.cluster, e);
    ++out.evaluated;
    valid_stages.insert(e.cfg.zero_stage);
    strategy->report(e);
    if (e.fits) {
      ++out.feasible;
      auto& v = deepest[e.cfg.zero_stage];
      if (!v.empty() && e.cfg.micro_batch > v.front().micro_batch) v.clear();
      if ((v.empty() || e.cfg.micro_batch == v.front().micro_batch) && v.size() < 256) v.push_back(e.cfg);
    } else {
      for (const auto& r : e.reasons) ++out.infeasible[r];
    }
    auto& heap = e.fits ? best : rejected;
    if (!e.fits && !req.include_infeasible && !pinned) continue;
    // Copies, not moves: `e` is the scratch the next configuration is evaluated into.
    if (heap.size() < keep) {
      heap.push_back(e);
      std::push_heap(heap.begin(), heap.end(), worse_first);
    } else if (better(e, heap.front(), metric)) {
      std::pop_heap(heap.begin(), heap.end(), worse_first);
      heap.back() = e;
      std::push_heap(heap.begin(), heap.end(), worse_first);
    }
  }

  for (int stage : space.zero) {
    if (!valid_stages.count(stage)) {
      out.max_micro_batch[stage] = std::nullopt;
      continue;
    }
    int most = 0;
    for (const auto& cfg : deepest[stage])
      most = std::max(most, largest_fitting_micro_batch(cfg, mem, req.cluster));
    out.max_micro_batch[stage] = most;
  }

  std::sort(best.begin(), best.end(), worse_first);
  if (req.refine && req.refine_top > 0) {
    const size_t n = std::min(best.size(), static_cast<size_t>(req.refine_top));
    for (size_t i = 0; i < n; ++i) {
      best[i].time = req.refine(best[i].cfg);
      best[i].simulated = true;
      fill_throughput(best[i], req.cluster);
    }
    std::sort(best.begin(), best.begin() + static_cast<long>(n), worse_first);
  }
  if (!pinned) drop_dominated(best, metric, out.dominated);
  if (best.size() > static_cast<size_t>(req.top)) best.resize(static_cast<size_t>(req.top));
  std::sort(rejected.begin(), rejected.end(), worse_first);
  if (rejected.size() > static_cast<size_t>(req.top)) rejected.resize(static_cast<size_t>(req.top));
  for (auto& e : best) out.configs.push_back(std::move(e));
  for (auto& e : rejected) out.configs.push_back(std::move(e));
  return out;
}

}  // namespace dsplan
