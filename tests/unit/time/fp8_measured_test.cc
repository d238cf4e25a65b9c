// The FP8 GEMM model against FP8 and bf16 GEMMs measured on the same GPU
// (tests/data/gemm/fp8_vs_bf16_session22.json: torch._scaled_mm and torch.matmul on an H100
// SXM and an H200, session 22). What is checked is the RATIO of the bf16 to the FP8 time of
// each shape, which is what pricing a layer in FP8 instead of bf16 changes: the bf16 level
// itself is set against sustained training runs (docs/model.md §4, "GEMMs"), and the
// isolated kernels here run in short bursts above it.
//
// Transformer Engine runs its forward GEMM with cuBLASLt's fast accumulation and its two
// gradient GEMMs without, so the H100 rows compare with (fast + 2 x plain) / 3. The H200
// rows have the plain FP8 time only; they are the second GPU. Shapes with K < 512 are left
// out: there both kernels are bound by writing the 16-bit output, a regime training linears
// (K = hidden or FFN width / TP) do not reach.
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
  double m, n, k, bf16_us, fp8_us;
};

std::vector<Row> load(const std::string& gpu_key) {
  std::vector<Row> rows;
  const Json j = test::load_test_data("gemm/fp8_vs_bf16_session22.json");
  if (!j.contains(gpu_key)) return rows;
  for (const auto& r : j.at(gpu_key)) {
    const double plain = r.at("fp8_us").get<double>();
    const double fp8 = r.contains("fp8_fast_us") ? (r.at("fp8_fast_us").get<double>() + 2.0 * plain) / 3.0 : plain;
    rows.push_back({r.at("m").get<double>(), r.at("n").get<double>(), r.at("k").get<double>(),
                    r.at("bf16_us").get<double>(), fp8});
  }
  return rows;
}

struct Fit {
  int n = 0;
  double mean = 0, rms = 0;  // of predicted / measured (bf16 time / FP8 time) - 1
};

Fit compare(const std::vector<Row>& rows, const GpuSpec& gpu, const Efficiency& eff) {
  Fit f;
  for (const Row& r : rows) {
    if (r.k < 512) continue;
    const GemmShape s{r.m, r.n, r.k, 1};
    const double predicted = estimate_gemm(s, Precision::bf16, gpu, eff).time.v /
                             estimate_gemm(s, Precision::fp8, gpu, eff).time.v;
    const double e = predicted / (r.bf16_us / r.fp8_us) - 1.0;
    f.mean += e;
    f.rms += e * e;
    ++f.n;
  }
  if (f.n > 0) f.mean /= f.n, f.rms = std::sqrt(f.rms / f.n);
  return f;
}

TEST(Fp8Measured, DataIsComplete) {
  EXPECT_EQ(load("h100_sxm_80gb").size(), 28u);  // 2 x 8 square shapes + 12 model linears
  EXPECT_EQ(load("h200_sxm_141gb").size(), 16u);
}

// Default efficiencies (FP8 at 0.95 of bf16's fraction, k_half 2.5 x bf16's): the speed-up
// FP8 brings is right to within a few percent on average on both GPUs, and the shape
// dependence to within 7% RMS (the measurements themselves scatter by about 5%: two 8192^2
// shapes ran 10-15% below their neighbours, clock or power dips in one run). Session 22:
// mean -0.6%, RMS 5.5% on the H100; +0.7%, 3.9% on the H200.
TEST(Fp8Measured, SpeedUpOverBf16MatchesTheMeasuredRatio) {
  const GpuSpec h100 = *gpu_preset("h100-80gb");
  const GpuSpec h200 = *gpu_preset("h200-141gb");
  const Fit a = compare(load("h100_sxm_80gb"), h100, default_efficiency(h100));
  const Fit b = compare(load("h200_sxm_141gb"), h200, default_efficiency(h200));
  EXPECT_EQ(a.n, 24);  // 12 square shapes with K >= 512, 12 model linears
  EXPECT_EQ(b.n, 12);
  EXPECT_LT(std::fabs(a.mean), 0.03) << "H100 mean " << a.mean;
  EXPECT_LT(a.rms, 0.07) << "H100 rms " << a.rms;
  EXPECT_LT(std::fabs(b.mean), 0.03) << "H200 mean " << b.mean;
  EXPECT_LT(b.rms, 0.07) << "H200 rms " << b.rms;
}

// The test has teeth: FP8 at bf16's own fraction of its peak over-states the speed-up by
// more than the bound allows. (The model before session 22, which also had k_half at 2 x
// bf16's, was +7.2% / 9.4% RMS on the H100 and +9.6% / 11.7% on the H200.)
TEST(Fp8Measured, FullBf16FractionOverstatesTheSpeedUp) {
  const GpuSpec h100 = *gpu_preset("h100-80gb");
  Efficiency eff = default_efficiency(h100);
  eff.gemm_peak_fraction[static_cast<std::size_t>(Precision::fp8)] =
      eff.gemm_peak_fraction[static_cast<std::size_t>(Precision::bf16)];
  EXPECT_GT(compare(load("h100_sxm_80gb"), h100, eff).mean, 0.03);
}

}  // namespace
}  // namespace dsplan
