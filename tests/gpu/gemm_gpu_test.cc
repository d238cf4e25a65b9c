// cuBLASLt GEMMs against the naive reference kernel, per dtype, on shapes that are not
// tile-aligned; plus sanity of the timing and the HBM/PCIe benchmarks.
#include "gpu_test_util.h"

namespace dsplan {
namespace {

class GemmGpu : public ::testing::TestWithParam<GemmDtype> {};

TEST_P(GemmGpu, MatchesReference) {
  DSPLAN_REQUIRE_GPU();
  const GemmDtype d = GetParam();
  for (auto [m, n, k] : {std::tuple{257, 129, 320}, {64, 64, 64}, {1000, 520, 2048}}) {
    auto r = gpu_test::bench().gemm(GemmCase{m, n, k, d, "test", true, {1, 3}});
    ASSERT_TRUE(r.ok()) << r.errors()[0].message;
    ASSERT_TRUE(r->max_rel_err);
    EXPECT_LE(*r->max_rel_err, gemm_check_tolerance(d)) << name(d) << " " << m << "x" << n << "x" << k;
    EXPECT_GT(r->median_us, 0);
    EXPECT_NEAR(r->tflops, 2.0 * m * n * k / (r->median_us * 1e-6) / 1e12, 1e-9 * r->tflops);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, GemmGpu,
                         ::testing::Values(GemmDtype::bf16, GemmDtype::fp16, GemmDtype::tf32,
                                           GemmDtype::fp32),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(BandwidthGpu, RatesArePlausible) {
  DSPLAN_REQUIRE_GPU();
  for (BandwidthKind k : {BandwidthKind::hbm_copy, BandwidthKind::hbm_triad,
                          BandwidthKind::pcie_h2d, BandwidthKind::pcie_d2h}) {
    auto r = gpu_test::bench().bandwidth(k, 256.0 * 1024 * 1024, {1, 3});
    ASSERT_TRUE(r.ok()) << r.errors()[0].message;
    // Anything from a PCIe gen3 link (>1 GB/s) to HBM3e (<10 TB/s).
    EXPECT_GT(r->GBps, 1) << name(k);
    EXPECT_LT(r->GBps, 10000) << name(k);
  }
}

}  // namespace
}  // namespace dsplan
