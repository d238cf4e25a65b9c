// Ranking of the whole configuration space (the closed-form tier), with an optional
// refinement of the finalists by a more exact evaluator (the step simulator, supplied by
// the caller so that the estimator does not depend on the simulator). Search is ask/tell:
// a SearchStrategy proposes configurations and is told their evaluation, so strategies
// are swappable and testable; the exhaustive one enumerates the space.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/efficiency.h"
#include "estimator/memory.h"
#include "estimator/search/space.h"
#include "estimator/step_time.h"

namespace dsplan {

enum class Metric : std::uint8_t { throughput, latency, flops };

struct Evaluation {
  TrainConfig cfg;
  MemoryBreakdown memory;
  StepTimeBreakdown time;
  bool fits = false;
  bool simulated = false;  // time comes from the simulator rather than the closed form
  bool moe = false;        // the model is a mixture of experts (its own evidence regime)
  std::vector<std::string> reasons;  // why it does not fit / is invalid
  double samples_per_s = 0, tokens_per_s = 0, tflops_per_gpu = 0, hw_tflops_per_gpu = 0, mfu = 0;
  Bytes headroom;  // GPU capacity minus device memory (negative when it does not fit)
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // The next configuration to evaluate, or nothing when the strategy is done. `invalid`
  // receives the reasons when the proposed point is structurally invalid.
  virtual std::optional<TrainConfig> next(std::vector<std::string>& invalid) = 0;
  virtual void report(const Evaluation& e) = 0;
};

// Enumerates every point of a SearchSpace (with defaults applied) in a fixed order.
std::unique_ptr<SearchStrategy> make_exhaustive_strategy(const SearchSpace& s, const ModelSpec& m,
                                                         const Cluster& c);

struct PlanRequest {
  ModelSpec model;
  Cluster cluster;
  Efficiency efficiency;
  MemoryOptions memory_options;  // software stack: CUDA context, fragmentation
  SearchSpace space;     // empty dimensions are searched over their defaults
  Metric metric = Metric::throughput;
  int top = 10;          // configurations returned
  bool include_infeasible = false;  // also return configs that do not fit, ranked after
  int refine_top = 100;  // finalists re-evaluated by `refine` (0 = none)
  // Exact evaluator for finalists (e.g. the simulator); may be empty.
  std::function<StepTimeBreakdown(const TrainConfig&)> refine;
};

struct PlanResult {
  std::vector<Evaluation> configs;  // best first
  std::int64_t evaluated = 0;       // structurally valid configurations evaluated
  std::int64_t feasible = 0;        // of which fit in memory
  std::int64_t invalid = 0;         // structurally invalid points skipped
  std::map<std::string, std::int64_t> rejections;  // structural reason -> points skipped
  std::map<std::string, std::int64_t> infeasible;  // why evaluated configs do not fit -> count
  // ZeRO stage -> largest fitting micro-batch: 0 when valid configurations exist but none
  // fits; nullopt when the stage has no structurally valid configuration at all (a stage the
  // framework does not offer, e.g. ZeRO-2 under Megatron or DDP).
  std::map<int, std::optional<int>> max_micro_batch;
  // Finalists hidden because a kept one with the same layout and other checkpointing needs
  // no more memory and is no slower (not counted for pinned configurations).
  std::int64_t dominated = 0;
  bool time_ranked = true;
};

// Evaluates one configuration with both models (no ranking) into `e`, reusing its storage:
// the search loop allocates nothing once `e` has held a critical path and reasons.
void evaluate_into(const TrainConfig& cfg, const MemoryModel& mem, const StepTimeModel& time,
                   const Cluster& c, Evaluation& e);

PlanResult plan(const PlanRequest& req);

// Largest micro-batch (up to `limit`) that fits for this configuration, by doubling then
// bisection (memory grows monotonically with the micro-batch); 0 if even 1 does not fit.
int largest_fitting_micro_batch(TrainConfig cfg, const MemoryModel& mem, const Cluster& c,
                                int limit = 4096);

}  // namespace dsplan
