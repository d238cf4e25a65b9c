// Step time of one training configuration: the closed-form tier evaluated for every
// point of the search space. The simulator (simulator/) refines the finalists from the
// same per-operator costs. Formulas and sources: docs/model.md, "Step time".
#pragma once

#include <string>
#include <vector>

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"

namespace dsplan {

struct StepTimeBreakdown {
  Seconds step;           // one optimizer step (grad_accum micro-batches)
  Seconds compute;        // GPU compute on the critical path (forward, backward, recompute)
  Seconds comm_exposed;   // communication not hidden behind compute
  Seconds bubble;         // pipeline fill/drain idle time
  Seconds optimizer;      // optimizer step on the GPU (or CPU Adam when offloaded)
  Seconds offload;        // exposed PCIe transfer time for offload
  Flops model_flops;      // per GPU per step, 6*P*T-style (no recompute)
  Flops hw_flops;         // per GPU per step, including recompute
  std::vector<std::string> critical_path;  // human-readable, most significant first
};

class StepTimeModel {
 public:
  StepTimeModel(const ModelSpec& model, const Cluster& cluster, const Efficiency& eff);
  StepTimeBreakdown estimate(const TrainConfig& cfg) const;

 private:
  ModelSpec model_;
  Cluster cluster_;
  Efficiency eff_;
};

}  // namespace dsplan
