// The fits recover parameters exactly from noise-free model data, clamp what must be
// non-negative, and refuse records that cannot support them.
#include <gtest/gtest.h>

#include "calibrate/bench/plan.h"
#include "calibrate/fit/fit.h"
#include "calibrate/fit/gemm_model.h"
#include "synthetic.h"

namespace dsplan {
namespace {

using testing::a100_80gb;

std::vector<GemmRecord> model_records(const std::array<double, 4>& frac, double k_half,
                                      Seconds overhead) {
  std::vector<GemmRecord> out;
  const auto peaks = gemm_peaks(a100_80gb());
  for (int d = 0; d < 4; ++d)
    for (const auto& c : gemm_grid(GemmDtype(d), 108, false)) {
      Seconds t = gemm_time({c.m, c.n, c.k}, peaks[d], 108, {frac[d], k_half, overhead});
      out.push_back({c.m, c.n, c.k, GemmDtype(d), c.label, t.v * 1e6,
                     2.0 * c.m * c.n * c.k / t.v / 1e12, {}});
    }
  return out;
}

TEST(FitGemm, RecoversNoiseFreeParameters) {
  const std::array<double, 4> frac{0.75, 0.81, 0.66, 0.9};
  auto fit = fit_gemm(model_records(frac, 120, us(6)), gemm_peaks(a100_80gb()), 108);
  ASSERT_TRUE(fit.ok()) << fit.errors()[0].to_string();
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(fit->per_dtype[d]);
    EXPECT_NEAR(fit->per_dtype[d]->peak_fraction, frac[d], 1e-4) << name(GemmDtype(d));
  }
  EXPECT_NEAR(fit->k_half, 120, 0.1);
  EXPECT_NEAR(in_us(fit->overhead), 6, 1e-3);
  EXPECT_LT(fit->rms_rel_error, 1e-5);
}

TEST(FitGemm, RefinementRecoversTheStepTimeModelsParameters) {
  // Data priced by the step-time model itself (estimate_gemm, with tile efficiencies,
  // split-K, alignment penalty and HBM roofline): the seed (simplified model) is close,
  // the refinement on the same model must land on the generating values.
  const std::array<double, 4> frac{0.75, 0.81, 0.66, 0.9};
  const GpuSpec gpu = a100_80gb();
  std::vector<GemmRecord> recs;
  for (int d = 0; d < 4; ++d)
    for (const auto& c : gemm_grid(GemmDtype(d), 108, false)) {
      const double t = model_gemm_time({c.m, c.n, c.k}, GemmDtype(d), gpu, {frac[d], 120, us(6)}, 0.85).v;
      recs.push_back({c.m, c.n, c.k, GemmDtype(d), c.label, t * 1e6, 2.0 * c.m * c.n * c.k / t / 1e12, {}});
    }
  auto seed = fit_gemm(recs, gemm_peaks(gpu), 108);
  ASSERT_TRUE(seed.ok());
  GemmFitResult fit = refine_gemm_fit(recs, gpu, 0.85, *seed);
  for (int d = 0; d < 4; ++d)
    EXPECT_NEAR(fit.per_dtype[d]->peak_fraction, frac[d], 0.005) << name(GemmDtype(d));
  EXPECT_NEAR(fit.k_half, 120, 6);
  EXPECT_NEAR(in_us(fit.overhead), 6, 0.3);
  EXPECT_LT(fit.rms_rel_error, 0.005);
  EXPECT_LE(fit.rms_rel_error, seed->rms_rel_error);
}

TEST(FitGemm, NegativeOverheadIsClampedToZero) {
  // Data generated with zero overhead and then shaved by 0.5 us would pull the intercept
  // below zero; the fit must report 0, never a negative launch cost.
  auto recs = model_records({0.8, 0.8, 0.8, 0.8}, 64, us(0));
  for (auto& r : recs) r.median_us = std::max(0.01, r.median_us - 0.5);
  auto fit = fit_gemm(recs, gemm_peaks(a100_80gb()), 108);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->overhead.v, 0.0);
}

TEST(FitGemm, TooFewRecordsIsAnError) {
  auto recs = model_records({0.8, 0.8, 0.8, 0.8}, 64, us(4));
  recs.resize(3);  // 3 rows of one dtype: overhead, k_half, fraction need at least 4
  auto fit = fit_gemm(recs, gemm_peaks(a100_80gb()), 108);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.errors()[0].message.find("too few GEMM records"), std::string::npos);
}

CollectiveRecord coll(Collective c, double bytes, double lat_us, double busbw_GBps, int ranks) {
  const double t = lat_us * 1e-6 + bytes * bus_factor(c, ranks) / (busbw_GBps * 1e9);
  return {c, CommScope::intra_node, ranks, bytes, t * 1e6, bytes / t / 1e9,
          bytes / t / 1e9 * bus_factor(c, ranks), true};
}

TEST(FitCollectives, RecoversAlphaBeta) {
  // all_reduce on 8 ranks: t = 12 us + S * 2*7/8 / 230 GB/s; e.g. 1 GiB: 12e-6 +
  // 1073741824 * 1.75 / 230e9 = 8.18e-3 s.
  std::vector<CollectiveRecord> recs;
  for (double b : collective_sizes(false, 0)) recs.push_back(coll(Collective::all_reduce, b, 12, 230, 8));
  EXPECT_NEAR(recs.back().time_us, 12 + 1073741824.0 * 1.75 / 230e9 * 1e6, 1e-6);
  auto fit = fit_collectives(recs);
  ASSERT_TRUE(fit.ok());
  ASSERT_EQ(fit->size(), 1u);
  EXPECT_NEAR(in_us((*fit)[0].fit.latency), 12, 1e-6);
  EXPECT_NEAR(in_GBps((*fit)[0].fit.busbw), 230, 1e-6);
  EXPECT_EQ((*fit)[0].ranks, 8);
  EXPECT_EQ((*fit)[0].samples, 11);
}

TEST(FitCollectives, NegativeLatencyIsClamped) {
  // Pure bandwidth data minus 1 us: the free intercept would be -1 us.
  std::vector<CollectiveRecord> recs;
  for (double b : {1e6, 1e7, 1e8}) {
    auto r = coll(Collective::broadcast, b, 0, 100, 4);
    r.time_us -= 1;
    recs.push_back(r);
  }
  auto fit = fit_collectives(recs);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ((*fit)[0].fit.latency.v, 0.0);
  EXPECT_GT(in_GBps((*fit)[0].fit.busbw), 99);
}

TEST(FitCollectives, OneSizeIsNotEnough) {
  auto fit = fit_collectives({coll(Collective::all_gather, 1e6, 5, 100, 8),
                              coll(Collective::all_gather, 1e6, 5, 100, 8)});
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.errors()[0].message.find("all_gather (intra_node)"), std::string::npos);
}

TEST(FitBandwidth, IgnoresBuffersThatFitInL2) {
  // A100 L2 is 40 MB, so HBM records below 160 MB are cache-inflated and skipped.
  std::vector<BandwidthRecord> recs{{BandwidthKind::hbm_copy, 64e6, 10, 6400},
                                    {BandwidthKind::hbm_copy, 1e9, 560, 1785.7},
                                    {BandwidthKind::hbm_triad, 1e9, 550, 1818.2},
                                    {BandwidthKind::pcie_h2d, 1e8, 4000, 25},
                                    {BandwidthKind::pcie_d2h, 1e8, 3800, 26}};
  FittedParams f;
  fit_bandwidth(recs, a100_80gb(), f);
  EXPECT_DOUBLE_EQ(f.hbm_GBps, 1818.2);
  ASSERT_TRUE(f.hbm_fraction);
  EXPECT_NEAR(*f.hbm_fraction, 1818.2 / 2039, 1e-12);
  ASSERT_TRUE(f.pcie_fraction);
  EXPECT_NEAR(*f.pcie_fraction, (25 + 26) / 2.0 / 31.5, 1e-12);  // mean of both directions
}

TEST(FitOverlap, MedianOfTheRunsTheCollectivesCovered) {
  auto rec = [](double alone, double beside, double comm) {
    OverlapRecord o;
    o.ranks = 8;
    o.bytes = 1e9;
    o.gemm_alone_us = alone;
    o.gemm_beside_us = beside;
    o.comm_us = comm;
    o.loss = 1 - alone / beside;
    return o;
  };
  // 1 - 100/125 = 0.2 and 1 - 100/150 = 1/3 are covered (comm >= beside); the third run's
  // collectives ended first (50 < 110), so its 0.09 is left out: median (0.2 + 1/3) / 2.
  auto f = fit_overlap({rec(100, 125, 200), rec(100, 150, 300), rec(100, 110, 50)});
  ASSERT_TRUE(f);
  EXPECT_NEAR(*f, (0.2 + 1.0 / 3) / 2, 1e-12);
  EXPECT_FALSE(fit_overlap({rec(100, 110, 50)}));  // nothing covered: no value
  EXPECT_FALSE(fit_overlap({}));
  // 1 - 100/10000 = 0.99 is clamped to 0.9; a faster batch beside (noise) to 0.
  EXPECT_NEAR(*fit_overlap({rec(100, 10000, 20000)}), 0.9, 1e-12);
  EXPECT_NEAR(*fit_overlap({rec(100, 95, 200)}), 0.0, 1e-12);
}

TEST(FitRecords, RejectsRecordsFromAnotherGpu) {
  RawRecords r = testing::synthetic_records(testing::Truth{}, 1);
  GpuSpec h100 = a100_80gb();
  h100.name = "h100-sxm";
  h100.sm_count = 132;
  auto p = fit_records(r, h100);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.errors()[0].json_path, "/provenance/sm_count");
  EXPECT_NE(p.errors()[0].message.find("108 SMs"), std::string::npos);
}

TEST(FitRecords, FasterThanTheDatasheetMeansTheWrongGpu) {
  RawRecords r = testing::synthetic_records(testing::Truth{}, 1);
  GpuSpec slow = a100_80gb();
  slow.name = "slow";
  slow.tensor_clock_MHz = 705;  // half the clock: bf16 would reach 1.56 of "peak"
  auto p = fit_records(r, slow);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.errors()[0].hint.find("--gpu"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
