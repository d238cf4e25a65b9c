// The runs database: every experiment confirm has completed, as JSON beside the results
// (or the calibration profile), so that the residual model learns from all confirmed runs
// for a cluster, across confirm invocations and models. Each record keeps the plan's own
// config and model JSON, so features are recomputed when the feature set changes.
//
// File: {"version": 1, "runs": [{"cluster", "name", "model": {...}, "config": {...},
//        "outcome", "reason", "measured": {"throughput", "latency", "FLOPS_per_gpu",
//        "peak_memory_GiB"}}]}
#pragma once

#include <string>
#include <vector>

#include "confirm/classify.h"
#include "confirm/residual_model.h"
#include "core/diagnostic.h"
#include "core/json_reader.h"

namespace dsplan {

struct RunRecord {
  std::string cluster;
  std::string name;
  Json model;   // model JSON as in the plan (without "params")
  Json config;  // the plan's config element (layout + predictions)
  Outcome outcome = Outcome::failed;
  std::string reason;
  Measured measured;
  int overflow_skips = 0;  // fp16 steps skipped in the run: its measurement does not train
};

class RunsDb {
 public:
  // A missing file is an empty database; a corrupt one is a diagnostic.
  static Expected<RunsDb> load(const std::string& path);
  Expected<bool> save() const;  // writes atomically (temporary file + rename)

  // Replaces the record with the same cluster, model name and experiment name, or appends.
  void upsert(const RunRecord& r);
  const std::vector<RunRecord>& runs() const { return runs_; }
  const std::string& path() const { return path_; }

  // Successful runs of `cluster` as training rows and log(measured/predicted) targets.
  // A run whose measurement is absurd (measurement_problem), or whose measured/predicted
  // ratio is outside [kMinTrainingRatio, kMaxTrainingRatio], teaches nothing: it is named
  // with the reason in `left_out` (when given) instead.
  void training_set(const std::string& cluster, std::vector<FeatureRow>& rows, std::vector<float>& targets,
                    std::vector<std::string>* left_out = nullptr) const;

 private:
  std::string path_;
  std::vector<RunRecord> runs_;
};

}  // namespace dsplan
