// Hand mapping of published.json rows to dsplan inputs for the memory validation test:
// which model architecture, framework, GPU and memory figure (allocator vs nvidia-smi)
// each source describes. The batch shape and parallel degrees are read from the row.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "estimator/memory.h"

namespace dsplan {

// Which MemoryBreakdown total a published figure corresponds to.
// states = params + grads + optimizer: what is allocated between iterations, outside
// forward/backward (a memory_allocated() reading taken after the optimizer step).
enum class Figure { states, allocated, reserved, device };

struct MappedRow {
  std::string id;
  ModelSpec model;
  Cluster cluster;
  TrainConfig cfg;
  MemoryOptions options;     // CUDA context of the row's software stack
  Figure figure = Figure::device;
  double measured_MiB = 0;   // memory rows
  int best_micro_batch = 0;  // autotuner rows
  bool autotuner_ran = true; // autotuner rows: the stage produced a metric
  std::string caveat;        // why a row may be off, printed in the table
};

// nullopt for rows without a memory figure or autotuner micro-batch.
std::optional<MappedRow> map_row(const nlohmann::json& row);

}  // namespace dsplan
