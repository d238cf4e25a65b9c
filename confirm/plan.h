// The candidates confirm runs: read from the JSON that `dsplan estimate --json` prints
// ({model, hardware, search, configs: [...]}, best first). Each config becomes a
// TrainConfig plus the estimator's predicted numbers. The reader is strict about the
// keys confirm uses (type and range errors name the JSON path) and tolerant of keys it
// does not use, so that the estimate output can grow without breaking older plans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_reader.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

// What the estimator predicted for one configuration (units in the names).
struct Prediction {
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double step_s = 0;
  double compute_s = 0;
  double comm_exposed_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;
  double allocated_gib = 0;
  double reserved_gib = 0;
  double device_gib = 0;
  double host_gib = 0;
  double params_gib = 0;
  double grads_gib = 0;
  double optimizer_gib = 0;
  double activations_gib = 0;
  double buffers_gib = 0;
  // The config's "evidence" (estimate's accuracy band for its regime): what published and
  // real runs of its kind measured, as measured step / predicted step; 0 when none.
  std::string regime;
  double band_low = 0, band_high = 0;
  double memory_band_low = 0, memory_band_high = 0;  // peak memory, measured / predicted
};

struct Candidate {
  TrainConfig cfg;
  Prediction pred;
  std::string name;  // experiment_name(cfg), made unique within the plan
  int rank = 0;      // 0-based position in the estimate's ranking
  Json source;       // the plan's JSON for this config (kept in the runs database)
};

struct Plan {
  ModelSpec model;
  Json model_json;  // the plan's "model" object without "params"
  std::int64_t params = 0;
  std::string hardware;  // system preset name, e.g. "dgx-a100"
  std::string gpu;       // GPU name, e.g. "a100-80gb"
  int num_gpus = 1;
  int gpus_per_node = 1;
  int gpus_per_host = 0;              // GPUs a launcher starts per host; 0 = gpus_per_node
  std::vector<Candidate> candidates;  // only configurations that fit, best first

  // Runs measured on one cluster teach the residual model for that cluster only.
  std::string cluster_key() const { return hardware + "/" + gpu; }
};

// Parses an estimate --json document. `file` names it in diagnostics.
Expected<Plan> parse_plan(const Json& j, const std::string& file);

// One element of "configs" (what estimate's config_to_json writes) as a Candidate;
// used by parse_plan and by apply_residual_model.
Expected<Candidate> parse_candidate(const Json& j, const std::string& file, const std::string& path);

}  // namespace dsplan
