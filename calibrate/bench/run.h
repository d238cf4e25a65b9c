// Drives a Bench through a plan: one measurement at a time, reporting progress through a
// callback (the CLI draws the bar), checking each benchmark's own correctness result, and
// assembling the raw records with their provenance. Knows nothing about CUDA.
#pragma once

#include <functional>
#include <string>

#include "calibrate/bench/bench.h"
#include "calibrate/bench/plan.h"

namespace dsplan {

struct Progress {
  size_t done = 0, total = 0;        // plan items
  double done_cost = 0, total_cost = 0;  // plan cost weights (seconds, rough)
  std::string label;                 // the item about to run ("" when finished)
};
using ProgressFn = std::function<void(const Progress&)>;

// Stops at the first failed measurement or failed correctness check, with its diagnostic.
Expected<RawRecords> run_plan(Bench& bench, const DeviceInfo& dev, const BenchPlan& plan,
                              const std::string& command, const ProgressFn& progress);

}  // namespace dsplan
