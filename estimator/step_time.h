// Step time of one training configuration: the closed-form tier evaluated for every
// point of the search space. The simulator (simulator/) refines the finalists from the
// same per-operator costs (costs()). Formulas and sources: docs/model.md §4 Step time.
//
// Performance: estimate() is called ~1e5-1e6 times per search. The constructor
// precomputes model constants; per-layer operator costs (keyed by tp, sp, micro-batch,
// sequence, flash, precision, framework; each checkpointing mode derived from one entry)
// and per-parallelism communication costs (the micro-batch and sequence in the key only
// with a pipeline) are memoised in fixed-size tables allocated once. A StepTimeModel
// is therefore NOT thread-safe: give each thread its own copy (copies start with empty
// tables). estimate_into() reuses the breakdown's storage and does not allocate once warm.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/step_costs.h"

namespace dsplan {

struct StepTimeBreakdown {
  Seconds step;           // one optimizer step (grad_accum micro-batches)
  Seconds compute;        // GPU compute on the critical path (forward, backward, recompute)
  Seconds comm_exposed;   // communication not hidden behind compute
  Seconds bubble;         // pipeline fill/drain idle time
  Seconds optimizer;      // optimizer step on the GPU (or CPU Adam when offloaded)
  Seconds offload;        // exposed PCIe transfer time for offload
  // Part of `compute`: what the compute lost running beside overlapped ZeRO-3 gathers and
  // DP reductions (docs/model.md §4.6, "Overlap contention"). Megatron's asynchronous TP
  // backward's share is in its TP communication instead.
  Seconds contention;
  // Part of `compute`: the GPU waiting for the host to issue kernels (estimator/host_stall.h).
  Seconds host_stall;
  // Not a part of the step: all the host time its kernels take to issue (host_issue()).
  Seconds host_issue;
  Flops model_flops;      // per GPU per step, 6*P*T-style (no recompute)
  Flops hw_flops;         // per GPU per step, including recompute
  std::vector<std::string> critical_path;  // human-readable, most significant first
};

// How one layer's forward and backward passes (StepCosts::layer.fwd, .bwd) and the head's
// divide, for --explain; reported, never scheduled: the linear GEMMs (data and weight
// gradients), the attention core (with context parallelism its exposed ring steps); the
// rest of a pass is memory-bound kernels and framework passes. Head: its logits GEMMs.
struct OperatorSplit {
  Seconds fwd_linear, bwd_linear, fwd_attention, bwd_attention;
  Seconds head_fwd_linear, head_bwd_linear;
};

class StepTimeModel {
 public:
  StepTimeModel(const ModelSpec& model, const Cluster& cluster, const Efficiency& eff);
  StepTimeModel(const StepTimeModel& o);
  StepTimeModel& operator=(const StepTimeModel& o);
  StepTimeModel(StepTimeModel&&) noexcept;
  StepTimeModel& operator=(StepTimeModel&&) noexcept;
  ~StepTimeModel();

  StepTimeBreakdown estimate(const TrainConfig& cfg) const;
  void estimate_into(const TrainConfig& cfg, StepTimeBreakdown& out) const;
  // Per-operator costs of the most loaded pipeline stage, for the simulator. estimate()
  // is the closed form over exactly these costs.
  StepCosts costs(const TrainConfig& cfg) const;
  // The split of costs(cfg)'s layer and head passes (not on the search's path).
  OperatorSplit operator_split(const TrainConfig& cfg) const;

  const ModelSpec& model() const { return model_; }
  const Cluster& cluster() const { return cluster_; }
  const Efficiency& efficiency() const { return eff_; }

  struct Caches;  // memo tables (estimator/time/step_time.cc)

 private:
  ModelSpec model_;
  Cluster cluster_;
  Efficiency eff_;
  double matmul_params_per_layer_ = 0;  // weights only, for model FLOPs
  double attn_width_ = 0;               // heads x head_dim
  mutable std::unique_ptr<Caches> caches_;
};

}  // namespace dsplan
