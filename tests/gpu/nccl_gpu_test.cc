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

}  // namespace
}  // namespace dsplan
