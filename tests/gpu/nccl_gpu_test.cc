// NCCL collectives over all local GPUs: every output element is checked on the device
// against its closed form (collectives.cu); needs at least two GPUs.
#include "gpu_test_util.h"

namespace dsplan {
namespace {

TEST(NcclGpu, EveryCollectiveGivesTheExpectedOutput) {
  DSPLAN_REQUIRE_GPU();
  const auto& dev = gpu_test::device().value();
  if (dev.scopes.empty()) {
    std::cout << "SKIPPED: NCCL test needs at least 2 GPUs" << std::endl;
    GTEST_SKIP() << "SKIPPED: NCCL test needs at least 2 GPUs";
  }
  const auto [scope, ranks] = dev.scopes.front();
  for (int c = 0; c < static_cast<int>(Collective::kCount); ++c)
    for (double bytes : {4096.0, 1048576.0 + 4096, 64.0 * 1048576}) {  // the middle is not a power of two
      auto r = gpu_test::bench().collective(Collective(c), scope, bytes, {1, 3});
      ASSERT_TRUE(r.ok()) << r.errors()[0].message;
      ASSERT_TRUE(r->correct);
      EXPECT_TRUE(*r->correct) << name(Collective(c)) << " " << bytes << " B";
      EXPECT_EQ(r->ranks, ranks);
      EXPECT_NEAR(r->busbw_GBps, r->algbw_GBps * bus_factor(Collective(c), ranks), 1e-9);
    }
}

TEST(NcclGpu, ComputeBesideACollectiveIsMeasured) {
  // overlap.cu on every local GPU: the batch beside the collectives cannot be much faster
  // than alone (a loss below -5% would be noise beyond the timer's), nor lose more than
  // 90%; the record's loss is 1 - alone / beside by construction.
  DSPLAN_REQUIRE_GPU();
  const auto& dev = gpu_test::device().value();
  if (dev.scopes.empty()) {
    std::cout << "SKIPPED: overlap test needs at least 2 GPUs" << std::endl;
    GTEST_SKIP() << "SKIPPED: overlap test needs at least 2 GPUs";
  }
  const auto [scope, ranks] = dev.scopes.front();
  for (Collective c : {Collective::all_gather, Collective::reduce_scatter}) {
    auto r = gpu_test::bench().overlap(c, scope, 256.0 * 1048576, {1, 12});
    ASSERT_TRUE(r.ok()) << r.errors()[0].message;
    EXPECT_EQ(r->ranks, ranks);
    EXPECT_GT(r->gemm_alone_us, 0.0);
    EXPECT_GT(r->comm_us, 0.0);
    EXPECT_NEAR(r->loss, 1.0 - r->gemm_alone_us / r->gemm_beside_us, 1e-12);
    EXPECT_GT(r->loss, -0.05) << name(c);
    EXPECT_LT(r->loss, 0.9) << name(c);
    std::cout << name(c) << ": alone " << r->gemm_alone_us << " us, beside " << r->gemm_beside_us
              << " us, collectives " << r->comm_us << " us, loss " << r->loss << std::endl;
  }
}

}  // namespace
}  // namespace dsplan
