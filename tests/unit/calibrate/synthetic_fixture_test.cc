// The committed SYNTHETIC fixture (known parameters + 3% noise, see synthetic.h) refits to
// those parameters within tolerances that the noise level justifies, and the generator
// still produces data that fit the same way.
#include <gtest/gtest.h>

#include "calibrate/profile.h"
#include "records_fixture.h"
#include "synthetic.h"

namespace dsplan {
namespace {

const std::string kFixture = std::string(DSPLAN_TEST_DATA) + "/calibrate/synthetic_a100_records.json";

RawRecords load_fixture() { return testing::load_records(kFixture); }

// ~100+ GEMM rows with 3% independent noise: each fraction is pinned to well under 3%;
// k_half and overhead are weaker (they rest on the small-K and tiny shapes), so 20%.
void expect_recovers(const CalibrationProfile& p, const testing::Truth& t) {
  const FittedParams& f = p.fitted;
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(f.gemm[d]) << name(GemmDtype(d));
    EXPECT_NEAR(f.gemm[d]->peak_fraction, t.peak_fraction[d], 0.03 * t.peak_fraction[d])
        << name(GemmDtype(d));
  }
  EXPECT_NEAR(f.gemm_k_half, t.k_half, 0.2 * t.k_half);
  EXPECT_NEAR(in_us(f.kernel_overhead), in_us(t.overhead), 0.2 * in_us(t.overhead));
  EXPECT_NEAR(f.gemm_rms_rel_error, t.noise, 0.5 * t.noise);  // the residual is the noise
  ASSERT_TRUE(f.hbm_fraction);
  EXPECT_NEAR(*f.hbm_fraction, t.hbm_fraction, 0.1 * t.hbm_fraction);  // max of 4 noisy rates
  ASSERT_TRUE(f.overlap_compute_loss);
  // Two runs, each loss 1 - a/b with a and b 3% noisy: the median is within 0.05.
  EXPECT_NEAR(*f.overlap_compute_loss, t.overlap_loss, 0.05);
  ASSERT_EQ(f.collectives.size(), 5u);
  for (const auto& c : f.collectives) {
    const int i = static_cast<int>(c.collective);
    EXPECT_EQ(c.scope, CommScope::intra_node);
    EXPECT_EQ(c.ranks, 8);
    EXPECT_NEAR(in_GBps(c.fit.busbw), t.busbw_GBps[i], 0.05 * t.busbw_GBps[i]) << name(c.collective);
    EXPECT_NEAR(in_us(c.fit.latency), t.latency_us[i], 0.1 * t.latency_us[i]) << name(c.collective);
  }
}

TEST(SyntheticFixture, IsLabelledSynthetic) {
  RawRecords r = load_fixture();
  EXPECT_EQ(r.provenance.kind.rfind("synthetic:", 0), 0u) << r.provenance.kind;
  EXPECT_NE(r.provenance.kind.find("not a measurement"), std::string::npos);
  EXPECT_GT(r.gemm.size(), 100u);
  EXPECT_EQ(r.collectives.size(), 55u);  // 5 collectives x 11 sizes (1 KiB .. 1 GiB, x4)
  EXPECT_EQ(r.overlap.size(), 2u);       // GEMMs beside all_gather and reduce_scatter
}

TEST(SyntheticFixture, FitRecoversTheGeneratingParameters) {
  auto p = fit_records(load_fixture(), testing::a100_80gb());
  ASSERT_TRUE(p.ok()) << p.errors()[0].to_string();
  expect_recovers(*p, testing::Truth{});
}

TEST(SyntheticFixture, GeneratorStillMatchesTheCommittedFixture) {
  // Same truth and seed as make_synthetic_fixture: the fits must agree closely with the
  // committed file's (a change to the plan or the generator shows up here).
  auto fresh = fit_records(testing::synthetic_records(testing::Truth{}, 2024), testing::a100_80gb());
  auto committed = fit_records(load_fixture(), testing::a100_80gb());
  ASSERT_TRUE(fresh.ok() && committed.ok());
  const char* hint = "the plan, the generator or estimate_gemm() changed: regenerate the fixture "
                     "with make_synthetic_fixture (docs/calibration.md, Tests)";
  for (int d = 0; d < 4; ++d)
    EXPECT_NEAR(fresh->fitted.gemm[d]->peak_fraction, committed->fitted.gemm[d]->peak_fraction, 1e-6)
        << hint;
  EXPECT_NEAR(fresh->fitted.gemm_k_half, committed->fitted.gemm_k_half, 1e-3) << hint;
}

TEST(SyntheticFixture, OtherSeedsRecoverToo) {
  for (std::uint64_t seed : {7u, 99u, 12345u}) {
    auto p = fit_records(testing::synthetic_records(testing::Truth{}, seed), testing::a100_80gb());
    ASSERT_TRUE(p.ok());
    expect_recovers(*p, testing::Truth{});
  }
}

}  // namespace
}  // namespace dsplan
