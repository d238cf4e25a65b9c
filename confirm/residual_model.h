// The residual model confirm learns from measured runs: gradient-boosted trees (XGBoost,
// through its C API, hidden behind a pimpl) predicting log(measured / predicted
// throughput) from the configuration, the model shape and the estimator's predicted
// breakdown. exp() of its output is a correction factor for the prediction; estimate can
// apply a saved model to every configuration it ranks.
//
// Assumptions: one model per cluster kind (the runs it learns from share hardware);
// failed/OOM runs teach nothing here (they carry no throughput).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "confirm/plan.h"
#include "core/diagnostic.h"
#include "core/json_reader.h"

namespace dsplan {

using FeatureRow = std::vector<float>;

// The correction factors (measured / predicted throughput) a residual model may apply.
// dsplan's predictions of real runs are within 40% (docs/accuracy.md), so a factor beyond
// 5x either way is no correction of an estimate but a sign that the model, or the runs it
// learned from, are broken: leaf 705 gave 2.5e306 and made the corrected throughput
// infinite. confirm trains only on runs inside the narrower [kMinTrainingRatio,
// kMaxTrainingRatio], so a model it writes (whose boosted sum can overshoot its targets a
// little) stays inside the factor range; estimate refuses a model that leaves it.
inline constexpr double kMinResidualFactor = 0.2, kMaxResidualFactor = 5.0;
inline constexpr double kMinTrainingRatio = 0.25, kMaxTrainingRatio = 4.0;

// Why exp(log_factor) may not correct a prediction (not finite, or outside
// [kMinResidualFactor, kMaxResidualFactor]); "" when it may.
std::string residual_factor_problem(double log_factor);

// The cluster an estimate or plan JSON is for, as Plan::cluster_key() names it:
// "<hardware.name>/<hardware.gpu.name>" ("" when `hardware` does not say).
std::string cluster_key_of(const Json& hardware);

const std::vector<std::string>& residual_feature_names();
FeatureRow residual_features(const TrainConfig& cfg, const ModelSpec& model, const Prediction& pred);

class ResidualModel {
 public:
  ResidualModel();
  ~ResidualModel();
  ResidualModel(ResidualModel&&) noexcept;
  ResidualModel& operator=(ResidualModel&&) noexcept;

  // Trains on rows (each residual_features()) and targets log(measured/predicted).
  // `cluster` is recorded in the saved model.
  static Expected<ResidualModel> train(const std::vector<FeatureRow>& rows,
                                       const std::vector<float>& targets, const std::string& cluster,
                                       int rounds = 60);
  // Loads a model saved by save(); a model trained on another feature set is refused.
  static Expected<ResidualModel> load(const std::string& path);
  // Writes XGBoost's JSON model format (with dsplan attributes) to `path`.
  Expected<bool> save(const std::string& path) const;

  // Predicted log(measured/predicted) per row.
  Expected<std::vector<double>> predict(const std::vector<FeatureRow>& rows) const;

  int training_runs() const;
  const std::string& cluster() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What apply_residual_model did, for estimate to say so.
struct ResidualApplied {
  int configs = 0;       // configurations annotated
  int training_runs = 0; // runs the model learned from
  std::string cluster;   // cluster the runs came from
};

// Loads the model at `model_path` and annotates every element of `configs` (the array
// estimate --json writes) with "residual": {"factor", "samples_per_s", "step_s"}, the
// corrected predictions; with `resort`, the array is stably re-sorted by corrected
// throughput (best first). Configurations that do not fit keep their place at the end.
// `cluster` (cluster_key_of the estimate's "hardware"; "" = not checked) must be the one
// the model learned on, as a calibration profile must match the GPU it was measured on.
// A factor outside [kMinResidualFactor, kMaxResidualFactor] for any configuration
// refuses the whole model (see residual_model.cc for why not just that configuration).
Expected<ResidualApplied> apply_residual_model(const std::string& model_path, const ModelSpec& model,
                                               Json& configs, bool resort = true,
                                               const std::string& cluster = "");

}  // namespace dsplan
