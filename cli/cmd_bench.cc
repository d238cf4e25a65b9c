// `dsplan bench`: speed of the model, measured rather than asserted in unit tests.
//  - closed-form tier: evaluations per second on one core (memory, step time, fit and
//    throughput: the planner's evaluate_into, as its search loop runs it), over the
//    structurally valid points of the gpt-2.7b / 16-GPU default space, cycled (warm memo
//    tables), and again with fresh models for every pass (cold: operator and collective
//    costs computed once per distinct shape, as in one estimate);
//  - whole-space ranking: wall time of `estimate` (both tiers) for gpt-2.7b on 16 GPUs
//    and gpt-175b on 1024 GPUs, median of repeats.
// `--passes N` runs exactly N passes of each closed-form loop instead of timing them for
// `--min-seconds`, so that an instruction counter (valgrind --tool=callgrind) sees the same
// work on every machine: wall-clock rates vary with the VM, instruction counts do not.
// Results go to docs/benchmarks.md by hand; `--json` for machines.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "cli/estimate_options.h"

namespace dsplan::cli {
namespace {

struct BenchCli {
  int repeats = 5;
  double min_seconds = 2.0;
  int passes = 0;  // > 0: fixed passes over the space instead of min_seconds
  bool json = false;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Scenario {
  std::string model;
  int gpus;
  double median_s = 0, min_s = 0;
  long long evaluated = 0;
};

int run(const BenchCli& b) {
  std::vector<Scenario> scenarios{{"gpt-2.7b", 16}, {"gpt-175b", 1024}};
  for (auto& s : scenarios) {
    EstimateOptions o;
    o.model = s.model;
    o.gpus = s.gpus;
    std::vector<double> times;
    for (int i = 0; i < std::max(1, b.repeats); ++i) {
      auto p = run_estimate(o);
      if (!p) return report(p.errors());
      times.push_back(p->seconds);
      s.evaluated = p->result.evaluated;
    }
    std::sort(times.begin(), times.end());
    s.median_s = times[times.size() / 2];
    s.min_s = times.front();
  }

  // Closed-form tier alone.
  EstimateOptions o;
  o.model = "gpt-2.7b";
  o.gpus = 16;
  auto prepared = run_estimate(o);
  if (!prepared) return report(prepared.errors());
  const PlanRequest& req = prepared->request;
  std::vector<TrainConfig> configs;
  auto strategy = make_exhaustive_strategy(req.space, req.model, req.cluster);
  std::vector<std::string> invalid;
  while (auto c = strategy->next(invalid))
    if (invalid.empty()) configs.push_back(*c);
  const MemoryModel mem(req.model, req.cluster, req.memory_options);
  const StepTimeModel time(req.model, req.cluster, req.efficiency);
  long long evals = 0;
  double sink = 0;
  Evaluation scratch;  // what the planner's loop does per configuration (evaluate_into)
  auto t0 = Clock::now();
  double elapsed = 0;
  auto more = [&b](double seconds, long long done_passes) {
    return b.passes > 0 ? done_passes < b.passes : seconds < b.min_seconds;
  };
  for (long long pass = 0; more(elapsed, pass) && !configs.empty(); ++pass) {
    for (const auto& c : configs) {
      evaluate_into(c, mem, time, req.cluster, scratch);
      sink += scratch.memory.device.v + scratch.time.step.v;
      ++evals;
    }
    elapsed = seconds_since(t0);
  }
  const double per_s = elapsed > 0 ? evals / elapsed : 0;
  // Cold: fresh models (empty operator/communication memo tables) for every pass, so each
  // configuration pays its share of the operator and collective costs as in one estimate.
  long long cold_evals = 0;
  auto t1 = Clock::now();
  double cold_elapsed = 0;
  for (long long pass = 0; more(cold_elapsed, pass) && !configs.empty(); ++pass) {
    const MemoryModel cold_mem(req.model, req.cluster, req.memory_options);
    const StepTimeModel cold_time(req.model, req.cluster, req.efficiency);
    for (const auto& c : configs) {
      evaluate_into(c, cold_mem, cold_time, req.cluster, scratch);
      sink += scratch.memory.device.v + scratch.time.step.v;
      ++cold_evals;
    }
    cold_elapsed = seconds_since(t1);
  }
  const double cold_per_s = cold_elapsed > 0 ? cold_evals / cold_elapsed : 0;

  if (b.json) {
    Json j;
    j["closed_form"] = {{"configs_per_s_per_core", per_s}, {"evaluations", evals}, {"seconds", elapsed},
                        {"cold_configs_per_s_per_core", cold_per_s}, {"cold_evaluations", cold_evals},
                        {"distinct_configs", configs.size()}, {"checksum", sink}};
    j["estimate"] = Json::array();
    for (const auto& s : scenarios)
      j["estimate"].push_back({{"model", s.model}, {"gpus", s.gpus}, {"evaluated", s.evaluated},
                               {"median_s", s.median_s}, {"min_s", s.min_s}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << std::fixed << std::setprecision(0) << "closed-form tier: " << per_s
            << " configurations/s on one core (" << evals << " evaluations of " << configs.size()
            << " distinct gpt-2.7b/16-GPU configurations in " << std::setprecision(2) << elapsed << " s)\n"
            << std::setprecision(0) << "closed-form tier, cold memo tables: " << cold_per_s
            << " configurations/s on one core (each pass over the space starts from empty tables)\n";
  for (const auto& s : scenarios)
    std::cout << "estimate --model " << s.model << " --gpus " << s.gpus << ": " << s.evaluated
              << " configurations ranked in " << std::setprecision(3) << s.median_s << " s (median of " << b.repeats
              << ", min " << s.min_s << " s)\n";
  return 0;
}

}  // namespace

void add_bench(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<BenchCli>();
  auto* sub = app.add_subcommand("bench", "Measure how fast the model evaluates and ranks configurations");
  sub->add_option("--repeats", cli->repeats, "Repeats of each whole-space estimate (default 5)")
      ->check(number_check(true, 1, 1000, "an integer in [1, 1000]"));
  sub->add_option("--min-seconds", cli->min_seconds, "Minimum time for the closed-form loop (default 2)")
      ->check(number_check(false, 0.01, 3600, "seconds, a number in [0.01, 3600]"));
  sub->add_option(
         "--passes", cli->passes,
         "Run exactly N passes of each closed-form loop instead of --min-seconds (for instruction counts)")
      ->check(number_check(true, 1, 10000, "an integer in [1, 10000]"));
  sub->add_flag("--json", cli->json, "Print results as JSON");
  sub->callback([cli, &exit_code] { exit_code = run(*cli); });
}

}  // namespace dsplan::cli
