// Human-readable descriptions of one evaluated configuration, shared by `estimate
// --explain` and `validate --explain`: a one-line label and the memory/time breakdown
// with the simulator's critical path. Printing only; no modelling.
#pragma once

#include <iosfwd>
#include <string>

#include "core/json_reader.h"
#include "estimator/search/planner.h"
#include "estimator/step_costs.h"
#include "estimator/step_time.h"

namespace dsplan::cli {

// "z1 tp2 pp1 dp8 mbs4 gas2 ckpt=full flash".
std::string describe_config(const Evaluation& e);

// Memory per GPU, step-time breakdown and critical path of `e`, each line after `indent`.
void print_breakdown(std::ostream& os, const Evaluation& e, const std::string& indent = "");

// Where one micro-batch's time goes on a rank of the busiest stage, from the StepCosts the
// simulator schedules: one layer's forward and backward split into linear GEMMs, attention
// core and the rest (memory-bound kernels, framework passes), its recompute and exposed TP
// collectives, its ZeRO-3 gather and DP reduction (each as if alone), the embedding, the
// head (its logits GEMMs' share) and the pipeline send. Text, and the same as JSON.
void print_micro_batch(std::ostream& os, const StepTimeModel& m, const TrainConfig& cfg,
                       const std::string& indent = "");
Json micro_batch_json(const StepTimeModel& m, const TrainConfig& cfg);

}  // namespace dsplan::cli
