// Program order of one pipeline rank: 1F1B warm-up/steady/cool-down and the interleaved
// schedule's chunk order (Narayanan et al. 2021, §2.2).
#include "simulator/pipeline_order.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace dsplan::sim {
namespace {

PipelineOp F(int mb, int chunk = 0) { return {true, mb, chunk}; }
PipelineOp B(int mb, int chunk = 0) { return {false, mb, chunk}; }

TEST(PipelineOrder, OneFOneBFirstRankWarmsUpWithPMinusOneForwards) {
  // p = 4, m = 6, rank 0: 3 warm-up forwards, 3 F/B pairs, 3 cool-down backwards.
  EXPECT_EQ(rank_order(4, 1, 6, 0),
            (std::vector<PipelineOp>{F(0), F(1), F(2), F(3), B(0), F(4), B(1), F(5), B(2),
                                     B(3), B(4), B(5)}));
}

TEST(PipelineOrder, OneFOneBLastRankAlternatesFromTheStart) {
  EXPECT_EQ(rank_order(4, 1, 3, 3),
            (std::vector<PipelineOp>{F(0), B(0), F(1), B(1), F(2), B(2)}));
}

TEST(PipelineOrder, WarmUpIsCappedByTheMicroBatches) {
  // p = 4, m = 2, rank 0 would warm up with 3 forwards but only 2 exist.
  EXPECT_EQ(rank_order(4, 1, 2, 0), (std::vector<PipelineOp>{F(0), F(1), B(0), B(1)}));
}

TEST(PipelineOrder, InterleavedVisitsChunksInGroupsOfPMicroBatches) {
  // p = 2, v = 2, m = 4, rank 0: warm-up 2(p-r-1) + (v-1)p = 4 forwards.
  // Forward sequence: group {0,1} chunk 0 then chunk 1, group {2,3} likewise;
  // backward sequence: the same groups, chunk 1 first.
  EXPECT_EQ(rank_order(2, 2, 4, 0),
            (std::vector<PipelineOp>{F(0, 0), F(1, 0), F(0, 1), F(1, 1),             // warm-up
                                     F(2, 0), B(0, 1), F(3, 0), B(1, 1), F(2, 1), B(0, 0),
                                     F(3, 1), B(1, 0),                              // steady
                                     B(2, 1), B(3, 1), B(2, 0), B(3, 0)}));         // cool-down
}

TEST(PipelineOrder, EveryPassRunsOnceAndForwardPrecedesBackward) {
  for (int p = 1; p <= 5; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = 1; m <= 9; ++m) {
        for (int r = 0; r < p; ++r) {
          std::set<std::tuple<bool, int, int>> seen;
          for (const PipelineOp& op : rank_order(p, v, m, r)) {
            EXPECT_TRUE(seen.insert({op.forward, op.micro_batch, op.chunk}).second);
            if (!op.forward) {
              EXPECT_TRUE(seen.count({true, op.micro_batch, op.chunk}));
            }
          }
          EXPECT_EQ(seen.size(), static_cast<std::size_t>(2 * m * v))
              << "p=" << p << " v=" << v << " m=" << m << " r=" << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dsplan::sim
