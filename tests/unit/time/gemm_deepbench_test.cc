// The GEMM model against Baidu DeepBench's V100 results (tests/data/gemm/v100_deepbench.json:
// 95 training GEMM shapes of DeepSpeech, language models and speaker ID, each timed in fp32
// and in fp16 with cuBLAS 10.1 on a DGX-1 V100). Unlike the H100 table of
// gemm_published_test.cc these are sustained runs (400 back-to-back calls, host-timed), so
// the fp32 rows check the model's LEVEL on Volta's fp32 pipe, not only its shape dependence:
// the datasheet peak x 0.89 (efficiency_defaults.cc) with tile, wave and K efficiencies.
// The fp16 rows accumulate in fp16 (compute type CUDA_R_16F), which PyTorch never does; they
// bound the tensor-core rate from above, and are checked for shape dependence and for being
// faster than the model by a bounded common scale.
// Training-sized shapes are those with every dimension at least 128 and 2 x 1024^3 FLOPs or
// more (what a transformer layer's linears are); the narrow shapes (n = 8-64, DeepSpeech's
// inference-like batches) are a known weakness, pinned below.
#include <gtest/gtest.h>

#include <algorithm>
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
  double m, n, k;
  double fp32_ms;
  double pm, pn, pk;  // the fp16 shape DeepBench ran (dimensions cuBLAS 10 wanted aligned, padded)
  double fp16_ms;
};

std::vector<Row> load_rows() {
  std::vector<Row> rows;
  const Json j = test::load_test_data("gemm/v100_deepbench.json");
  if (!j.contains("rows")) return rows;
  for (const auto& r : j.at("rows")) {
    const auto& p = r.at("fp16_mnk");
    rows.push_back({r.at("m").get<double>(), r.at("n").get<double>(), r.at("k").get<double>(),
                    r.at("fp32_ms").get<double>(), p.at(0).get<double>(), p.at(1).get<double>(),
                    p.at(2).get<double>(), r.at("fp16_ms").get<double>()});
  }
  return rows;
}

bool training_sized(const Row& r) {
  return std::min({r.m, r.n, r.k}) >= 128 && 2.0 * r.m * r.n * r.k >= 2.0 * 1024 * 1024 * 1024;
}

// The model has no operand layout: a dimension DeepBench left unpadded because it is no
// operand's leading dimension (n in NN/TN, k in NT) costs it nothing on the GPU, so it is
// rounded up to 8 here rather than charged the misaligned rate (at most 0.1% more work).
double round8(double x) { return std::ceil(x / 8.0) * 8.0; }

// predicted / measured time.
double ratio(const Row& r, Precision p) {
  const GpuSpec gpu = *gpu_preset("v100-16gb");
  const Efficiency eff = default_efficiency(gpu);
  if (p == Precision::fp32) return estimate_gemm({r.m, r.n, r.k}, p, gpu, eff).time.v / (r.fp32_ms * 1e-3);
  const GemmShape s{round8(r.pm), round8(r.pn), round8(r.pk)};
  return estimate_gemm(s, p, gpu, eff).time.v / (r.fp16_ms * 1e-3);
}

struct Stats {
  int n = 0;
  double geo_mean = 0;  // exp(mean log ratio): the common scale
  double spread = 0;    // mean |log ratio - mean|: what one scale leaves
  double worst = 0;     // largest |ratio - 1|
};

Stats stats(const std::vector<Row>& rows, Precision p) {
  std::vector<double> lr;
  Stats s;
  for (const Row& r : rows) {
    if (!training_sized(r)) continue;
    const double x = ratio(r, p);
    lr.push_back(std::log(x));
    s.worst = std::max(s.worst, std::fabs(x - 1.0));
  }
  s.n = static_cast<int>(lr.size());
  if (lr.empty()) return s;
  double mu = 0;
  for (double x : lr) mu += x;
  mu /= s.n;
  for (double x : lr) s.spread += std::fabs(x - mu);
  s.spread /= s.n;
  s.geo_mean = std::exp(mu);
  return s;
}

TEST(GemmDeepBench, TableIsComplete) {
  const auto rows = load_rows();
  ASSERT_EQ(rows.size(), 95u);
  int sized = 0;
  for (const Row& r : rows) {
    sized += training_sized(r);
    // Padding only ever grows a dimension, by less than 8.
    EXPECT_GE(r.pm, r.m);
    EXPECT_LT(r.pm - r.m, 8);
  }
  EXPECT_EQ(sized, 33);
}

// fp32 on the fp32 pipe, sustained: the model's level and shape agree with cuBLAS. When
// this test was written: 33 training-sized shapes, geometric mean 1.006 (the model 0.6%
// slow; 1.013 before SIMT partial waves, below), mean deviation 4.7%, worst 22% slow
// (4096 x 128 x 4096 TN: 16 output tiles of 256 x 128, split K 4 ways into 64 CTAs for 80
// SMs, the model's most; cuBLAS fills the SMs better).
TEST(GemmDeepBench, VoltaFp32LevelAndShape) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  const Stats s = stats(rows, Precision::fp32);
  ASSERT_GE(s.n, 30);
  EXPECT_GT(s.geo_mean, 0.95);
  EXPECT_LT(s.geo_mean, 1.08);
  EXPECT_LT(s.spread, 0.07);
  EXPECT_LT(s.worst, 0.30);
}

// fp16 with fp16 accumulation is faster than what dsplan prices for PyTorch (fp32
// accumulation, 0.75 of the tensor peak sustained): the model is slower by one common scale
// (1.139 when written: DeepBench's large GEMMs reach 104-112 TFLOP/s, 0.83-0.90 of the
// 125.3 peak, where PyTorch's measured ~95), never faster on average, and the shape
// dependence left once that scale is allowed is small (5.8% when written).
TEST(GemmDeepBench, VoltaFp16ShapeWithinOneScale) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  const Stats s = stats(rows, Precision::fp16);
  ASSERT_GE(s.n, 30);
  EXPECT_GT(s.geo_mean, 1.05);
  EXPECT_LT(s.geo_mean, 1.25);
  EXPECT_LT(s.spread, 0.08);
}

// A partial wave on the fp32 pipe costs the most CTAs one SM holds (gemm.cc's `simt`): one
// SIMT CTA keeps an SM's FMA units busy alone. Over the 55 shapes with every dimension
// >= 64, which include the one-wave and few-wave kernels the training-sized set leaves out,
// the mean |log(predicted/measured)| is 7.0% (12.8% when a partial wave was priced as
// co-resident CTAs sharing the SM, as on tensor cores); 2048 x 64 x 2048 is -5% (+74%).
TEST(GemmDeepBench, VoltaFp32PartialWaves) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  double sum = 0;
  int n = 0;
  for (const Row& r : rows) {
    if (std::min({r.m, r.n, r.k}) < 64) continue;
    sum += std::fabs(std::log(ratio(r, Precision::fp32)));
    ++n;
    if (r.m == 2048 && r.n == 64 && r.k == 2048) {
      EXPECT_NEAR(ratio(r, Precision::fp32), 1.0, 0.10);
    }
  }
  ASSERT_EQ(n, 55);
  EXPECT_LT(sum / n, 0.09);
}

// The weakness, pinned so that a change to it is noticed: narrow fp32 GEMMs (n = 16,
// DeepSpeech's per-step batch) run on SIMT kernels with tiles far narrower than the model's
// narrowest (64), and the 8- and 16-wide products with K = 500000 split K much further than
// the model's 4 ways. They are priced at least 1.25x and 3x too slow (1.36-1.42x and
// 3.4-4.7x when written; 2.5x and 13-19x before SIMT partial waves). No transformer layer
// of a dense model has such a GEMM: its token dimension is >= 128.
TEST(GemmDeepBench, NarrowFp32ShapesArePessimistic) {
  const auto rows = load_rows();
  ASSERT_FALSE(rows.empty());
  int checked = 0;
  for (const Row& r : rows) {
    const bool narrow = r.m == 2048 && r.n == 16 && r.k == 2048;
    const bool long_k = r.m == 512 && r.n == 8 && r.k == 500000;
    if (!narrow && !long_k) continue;
    EXPECT_GT(ratio(r, Precision::fp32), narrow ? 1.25 : 3.0) << r.m << " x " << r.n << " x " << r.k;
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // NN and TN of each
}

}  // namespace
}  // namespace dsplan
