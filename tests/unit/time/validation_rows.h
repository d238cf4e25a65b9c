// The published rows the step-time model is checked against: for each id of
// shared/validation/published.json, the model, cluster and configuration as the row
// describes them (inferred fields as the row's "inferred" list says), and which measured
// quantity to compare. Measured values are read from the JSON, never copied here.
#pragma once

#include <string>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan::test {

enum class Metric {
  iteration_ms,     // measured.iteration_time_ms vs step
  samples_per_s,    // measured.samples_per_s (or samples_per_s_end_to_end) vs batch / step
  autotuner,        // measured.ds_autotuner_metric_samples_per_s (fwd + bwd + step only)
  megatron_tflops,  // measured.tflops_per_gpu with F = 96 B s l h^2 (1 + s/6h + V/16lh)
};

struct Row {
  std::string id;
  ModelSpec model;
  Cluster cluster;
  TrainConfig cfg;
  Metric metric;
  bool end_to_end = false;  // includes data loading etc. the model does not price
};

std::vector<Row> validation_rows();

}  // namespace dsplan::test
