// The GEMM model against published per-shape measurements: XLA's sm_90 matmul table
// (tests/data/gemm/h100_xla_sm90_bf16.json, 375 bf16 shapes, batch 1-4, M, N, K from 256
// to 4096 on an H100 SXM). Those are isolated kernels, timed in short bursts, so they run
// faster than a GEMM inside a sustained training step, where power and clocks sit lower
// (docs/model.md §4, "GEMMs"). The test therefore checks the SHAPE dependence only: the
// ratio predicted/measured may carry one common scale, and what is left over must be small.
// The shapes checked are those of at least 2 x 2048^3 FLOPs, the size of training GEMMs;
// smaller single-wave kernels are a known weakness (docs/model.md) and are reported, not
// asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "hwdb/hwdb.h"
#include "test_data.h"

namespace dsplan {
namespace {

struct Row {
  double b, m, n, k, tflops;
};

std::vector<Row> load_rows() {
  std::vector<Row> rows;
  const Json j = test::load_test_data("gemm/h100_xla_sm90_bf16.json");
  if (!j.contains("rows")) return rows;
  for (const auto& r : j.at("rows")) {
    rows.push_back({r.at("b").get<double>(), r.at("m").get<double>(), r.at("n").get<double>(),
                    r.at("k").get<double>(), r.at("bf16_TFLOPS").get<double>()});
  }
  return rows;
}

// log(predicted/measured time) of every row with at least `min_flops` FLOPs.
std::vector<double> log_ratios(const std::vector<Row>& rows, const Efficiency& eff,
                               double min_flops) {
  const GpuSpec gpu = *gpu_preset("h100-80gb");
  std::vector<double> out;
  for (const Row& r : rows) {
    const double flops = 2.0 * r.b * r.m * r.n * r.k;
    if (flops < min_flops) continue;
    const double measured = flops / (r.tflops * 1e12);
    const double predicted = estimate_gemm({r.m, r.n, r.k, r.b}, Precision::bf16, gpu, eff).time.v;
    out.push_back(std::log(predicted / measured));
  }
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Mean absolute deviation of the log ratios from their mean: the error left once one
// common scale (isolated burst vs sustained clocks) is allowed.
double spread(const std::vector<double>& v) {
  const double mu = mean(v);
  double s = 0;
  for (double x : v) s += std::fabs(x - mu);
  return s / static_cast<double>(v.size());
}

constexpr double kTrainingSized = 2.0 * 2048 * 2048 * 2048;

TEST(GemmPublished, TableIsComplete) {
  const auto rows = load_rows();
  ASSERT_EQ(rows.size(), 375u);  // 5 sizes of M, N and K (256..4096) x batch 1, 2, 4
  int big = 0;
  for (const Row& r : rows) big += 2.0 * r.b * r.m * r.n * r.k >= kTrainingSized;
  EXPECT_GE(big, 100);
}

// With Hopper's default k_half of 160, the training-sized shapes are matched to within a
// 4.5% mean deviation once one scale is allowed (3.5% measured when this test was written).
// With the k_half of 64 the other architectures use, the spread is 5.3%: the main loop's
// fixed per-tile cost on Hopper is a larger share of a K step, since each SM does twice
// Ampere's math per clock against similar per-SM memory bandwidth.
TEST(GemmPublished, HopperShapeDependence) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  const GpuSpec gpu = *gpu_preset("h100-80gb");
  const Efficiency eff = default_efficiency(gpu);
  const auto lr = log_ratios(rows, eff, kTrainingSized);
  EXPECT_LT(spread(lr), 0.045);
  // The common scale: dsplan's sustained-training rate (0.70 of peak) is slower than the
  // isolated bursts (up to ~0.8 of peak), by 10-30%; never faster.
  EXPECT_GT(std::exp(mean(lr)), 1.10);
  EXPECT_LT(std::exp(mean(lr)), 1.30);

  Efficiency ampere_like = eff;
  ampere_like.gemm_k_half = 64;
  EXPECT_GT(spread(log_ratios(rows, ampere_like, kTrainingSized)), spread(lr));
}

// The weakness, pinned so that a change to it is noticed: kernels of one wave with short K
// (e.g. 2048 x 2048 x 512) run much slower than the tile model says (a fixed ramp and
// epilogue of several microseconds per kernel). Relative to the training-sized scale, the
// model is at least 20% optimistic on such a kernel (0.77 of the measured time, scaled,
// when this test was written).
TEST(GemmPublished, SmallSingleWaveKernelsAreOptimistic) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  const GpuSpec gpu = *gpu_preset("h100-80gb");
  const Efficiency eff = default_efficiency(gpu);
  const double scale = mean(log_ratios(rows, eff, kTrainingSized));
  const std::vector<Row> small{{1, 2048, 2048, 512, 0}};
  Row r = small[0];
  for (const Row& x : rows) {
    if (x.b == r.b && x.m == r.m && x.n == r.n && x.k == r.k) r.tflops = x.tflops;
  }
  ASSERT_GT(r.tflops, 0);
  const double lr = log_ratios({r}, eff, 0).front();
  EXPECT_LT(std::exp(lr - scale), 0.80);
}

}  // namespace
}  // namespace dsplan
