// Uncalibrated validation of the closed-form step time against published measurements
// (shared/validation/published.json): prints a per-row table to the test log and checks
// the error budget and the orderings the sources report. Row set: validation_rows.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "validation_rows.h"

namespace dsplan::test {
namespace {

nlohmann::json load_published() {
  std::ifstream in(std::string(DSPLAN_SHARED_DIR) + "/validation/published.json");
  EXPECT_TRUE(in.good()) << "published.json not found under " << DSPLAN_SHARED_DIR;
  return nlohmann::json::parse(in);
}

const nlohmann::json* find_row(const nlohmann::json& all, const std::string& id) {
  for (const auto& r : all)
    if (r.at("id") == id) return &r;
  return nullptr;
}

double megatron_table1_flops(const ModelSpec& m, const TrainConfig& c) {
  const double B = double(c.micro_batch) * c.grad_accum * c.dp, s = c.seq_len, l = m.layers,
               h = m.hidden, V = double(m.vocab);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

struct Result {
  std::string id;
  double measured = 0, predicted = 0, error = 0;
  bool end_to_end = false;
  std::string unit;
};

Result evaluate(const Row& row, const nlohmann::json& measured) {
  const StepTimeModel model(row.model, row.cluster, default_efficiency(row.cluster.node.gpu));
  const StepTimeBreakdown b = model.estimate(row.cfg);
  Result r{row.id};
  r.end_to_end = row.end_to_end;
  const double batch = double(row.cfg.global_batch());
  switch (row.metric) {
    case Metric::iteration_ms:
      r.measured = measured.at("iteration_time_ms");
      r.predicted = in_ms(b.step);
      r.unit = "ms";
      break;
    case Metric::samples_per_s:
      r.measured = measured.contains("samples_per_s") ? measured.at("samples_per_s").get<double>()
                                                      : measured.at("samples_per_s_end_to_end").get<double>();
      r.predicted = batch / b.step.v;
      r.unit = "samples/s";
      break;
    case Metric::autotuner:
      r.measured = measured.at("ds_autotuner_metric_samples_per_s");
      r.predicted = batch / b.step.v;
      r.unit = "samples/s";
      break;
    case Metric::megatron_tflops:
      r.measured = measured.at("tflops_per_gpu");
      r.predicted = megatron_table1_flops(row.model, row.cfg) / b.step.v / row.cfg.gpus() / 1e12;
      r.unit = "TFLOP/s";
      break;
  }
  r.error = (r.predicted - r.measured) / r.measured;
  return r;
}

std::vector<Result> run_all() {
  const nlohmann::json all = load_published();
  std::vector<Result> out;
  for (const Row& row : validation_rows()) {
    const nlohmann::json* j = find_row(all, row.id);
    EXPECT_NE(j, nullptr) << row.id;
    if (!j) continue;
    out.push_back(evaluate(row, j->at("measured")));
  }
  return out;
}

TEST(Validation, PublishedRowsWithinUncalibratedBudget) {
  const std::vector<Result> rs = run_all();
  ASSERT_GE(rs.size(), 40u);
  double sum = 0, worst = 0;
  std::string worst_id;
  std::printf("%-44s %10s %10s %7s  %s\n", "row", "measured", "predicted", "error", "unit");
  for (const Result& r : rs) {
    std::printf("%-44s %10.2f %10.2f %+6.1f%%  %s%s\n", r.id.c_str(), r.measured, r.predicted,
                100 * r.error, r.unit.c_str(), r.end_to_end ? " (end-to-end)" : "");
    sum += std::fabs(r.error);
    if (std::fabs(r.error) > worst) worst = std::fabs(r.error), worst_id = r.id;
  }
  const double mape = sum / rs.size();
  std::printf("rows %zu  MAPE %.1f%%  worst %.1f%% (%s)\n", rs.size(), 100 * mape, 100 * worst,
              worst_id.c_str());
  EXPECT_LE(mape, 0.15);
  EXPECT_LE(worst, 0.40) << worst_id;
}

}  // namespace
}  // namespace dsplan::test
