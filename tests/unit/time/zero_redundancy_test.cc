// torch DDP with ZeroRedundancyOptimizer (framework ddp, ZeRO stage 1): the planner accepts
// it (and nothing deeper), DDP's all-reduce is unchanged, the updated fp32 parameters are
// broadcast after the step, and the step runs on the most loaded rank's whole parameters.
#include <gtest/gtest.h>

#include <algorithm>

#include "estimator/search/space.h"
#include "estimator/time/parallel_comm.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::A100Comm;
using test::a100_model;
using test::base_cfg;
using test::gpt_1b;

TrainConfig ddp_cfg(int zero) {
  TrainConfig c = base_cfg();
  c.framework = Framework::ddp;
  c.zero_stage = zero;
  return c;
}

std::vector<std::string> reasons_for(int zero) {
  SearchSpace s;
  s.run = ddp_cfg(zero);
  TrainConfig cfg;
  return make_config(s, gpt_1b(), test::cluster(test::dgx_a100(), 8), zero, 1, 1, 1, 1, 2, 4,
                     Checkpointing::none, true, false, Offload::none, cfg);
}

TEST(ZeroRedundancy, DdpShardsOnlyTheOptimizerState) {
  EXPECT_TRUE(reasons_for(0).empty());
  EXPECT_TRUE(reasons_for(1).empty());
  for (int zero : {2, 3}) {
    const auto why = reasons_for(zero);
    ASSERT_EQ(why.size(), 1u) << "stage " << zero;
    EXPECT_NE(why[0].find("ZeroRedundancyOptimizer"), std::string::npos) << why[0];
  }
}

// DDP all-reduces every gradient bucket as without the wrapper. Afterwards each rank
// broadcasts the parameters it owns, fp32 and one tensor at a time: 4 B per parameter over
// the bus (a broadcast's bus volume is its size), where DeepSpeed's ZeRO-1 all-gathers
// 16-bit parameters: 2 B x 7/8 on 8 ranks. At equal bus bandwidth the ratio is
// 4 / (2 x 7/8) = 2.29. The 24 x 12 + 5 = 293 broadcasts (18 MB each) then pay NCCL's
// per-call latency, some 20-30 us each: 6-9 ms more against DeepSpeed's ~10 ms for two
// 5e8-element buckets (2.6 GB x 7/8 at ~240 GB/s), so the ratio lies between 2.29 and 4.
TEST(ZeroRedundancy, AllReducesThenBroadcastsFp32Parameters) {
  const A100Comm a(8);
  const ParallelComm z0 = a.of(ddp_cfg(0)), z1 = a.of(ddp_cfg(1));
  EXPECT_DOUBLE_EQ(z1.layer_grad_reduce.v, z0.layer_grad_reduce.v);
  EXPECT_DOUBLE_EQ(z1.grad_reduce_tail.v, z0.grad_reduce_tail.v);
  EXPECT_FALSE(z1.every_micro_batch);
  EXPECT_EQ(z0.param_allgather.v, 0.0);
  TrainConfig ds = base_cfg();
  ds.framework = Framework::deepspeed;
  ds.zero_stage = 1;
  const double ratio = z1.param_allgather.v / a.of(ds).param_allgather.v;
  EXPECT_GT(ratio, 2.29);
  EXPECT_LT(ratio, 4.0);
  EXPECT_EQ(stage_tensors(a.m, stage_params(a.m, ddp_cfg(1)), ddp_cfg(1)), 293);
}

// The step: gpt_1b has P = 1.31e9 parameters, so P/8 = 164M outweighs its largest tensor
// (the 51200 x 2048 = 105M embedding) and the owner of the most steps P/8 with torch's
// foreach AdamW at 96 B/param (bf16: 84 + norm 4 + clip 8). Gradient clipping still reads
// and scales the replicated gradients of the other 7P/8: 12 B/param. Against DDP's 96 B
// for all P: (96/8 + 12 x 7/8) / 96 = 22.5 / 96 = 0.234 of the bytes (launches aside).
TEST(ZeroRedundancy, StepRunsOnTheOwnedShard) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  const double ratio = t.costs(ddp_cfg(1)).optimizer.v / t.costs(ddp_cfg(0)).optimizer.v;
  EXPECT_NEAR(ratio, 22.5 / 96, 0.02);
  // With a vocabulary of 1.6M the embedding (3.3e9 parameters) is the largest tensor and
  // more than P/8: its owner steps all of it, so sharding saves much less.
  ModelSpec big_vocab = gpt_1b();
  big_vocab.vocab = 1'600'000;
  const StepTimeModel tb = a100_model(big_vocab, 8);
  EXPECT_GT(tb.costs(ddp_cfg(1)).optimizer.v / tb.costs(ddp_cfg(0)).optimizer.v, 0.6);
}

}  // namespace
}  // namespace dsplan
