// Context parallelism (estimator/time/context_parallel.h): the rank view, the attention
// multiplier, the K/V ring's bytes and exposure, and the model-FLOP accounting, worked out
// by hand or against the equivalent configuration the view stands for.
#include "estimator/time/context_parallel.h"

#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::base_cfg;
using test::gpt_1b;

// A Megatron bf16 run of gpt_1b at sequence 8192 on 16 GPUs: tp 2, cp 2, dp 4.
TrainConfig cp2_cfg() {
  TrainConfig c = base_cfg();
  c.tp = 2;
  c.cp = 2;
  c.dp = 4;
  c.seq_len = 8192;
  c.flash_attention = true;
  return c;
}

// gpus() counts the cp ranks; the view trades them into data parallelism and halves the
// tokens a rank holds; at cp 1 it is the configuration itself.
TEST(ContextParallel, RankView) {
  const TrainConfig c = cp2_cfg();
  EXPECT_EQ(c.gpus(), 2 * 2 * 4);  // tp x cp x dp (pp 1)
  const TrainConfig v = c.cp_rank_view();
  EXPECT_EQ(v.dp, 8);
  EXPECT_EQ(v.seq_len, 4096);
  EXPECT_EQ(v.cp, 2);
  EXPECT_EQ(v.global_batch(), 2 * c.global_batch());  // a view's batch is not the run's
  TrainConfig one = base_cfg();
  EXPECT_EQ(one.cp_rank_view(), one);
}

// Memory is the view's: 4096 tokens of activations per rank and ZeRO over dp x cp = 8.
TEST(ContextParallel, MemoryIsTheRankView) {
  const ModelSpec m = gpt_1b();
  const MemoryModel mem(m, test::cluster(test::dgx_a100(), 16));
  TrainConfig c = cp2_cfg();
  c.zero_stage = 1;
  TrainConfig v = c.cp_rank_view();
  v.cp = 1;  // the same tokens and sharding, no context parallelism
  EXPECT_DOUBLE_EQ(mem.estimate(c).device.v, mem.estimate(v).device.v);
  TrainConfig whole = c;
  whole.cp = 1;  // every rank holding all 8192 tokens
  EXPECT_GT(mem.estimate(whole).activations.v, 1.9 * mem.estimate(c).activations.v);
}

// The flash core runs cp kernels of the rank's (s / cp)^2 score blocks: at cp 2 twice the
// cp-1 core of a 4096-token sequence (each step is that kernel), and the linears' costs are
// those of 4096 tokens.
TEST(ContextParallel, AttentionCoreRunsCpSteps) {
  const ModelSpec m = gpt_1b();
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k;
  k.tp = 2;
  k.micro_batch = 2;
  k.seq_len = 4096;
  k.flash = true;
  k.framework = Framework::megatron;
  const OpCosts one = operator_costs(m, gpu, eff, k);
  k.cp = 2;
  const OpCosts two = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR(two.attn_core_fwd.v, 2.0 * one.attn_core_fwd.v, 1e-12);
  EXPECT_NEAR(two.attn_core_bwd.v, 2.0 * one.attn_core_bwd.v, 1e-12);
  EXPECT_NEAR(two.fwd.v - one.fwd.v, one.attn_core_fwd.v, 1e-12);
  EXPECT_NEAR(two.attn_core_flops_hw.v, 2.0 * one.attn_core_flops_hw.v, 1.0);
}

// A ring step hides behind 1/cp of the layer's attention: with steps of 1.0 ms forward and
// 2.0 ms backward, attention of 1.5 ms forward and 6.0 ms backward at cp 4, each of the 3
// steps exposes 1.0 - 1.5/4 = 0.625 ms forward and max(0, 2.0 - 6.0/4) = 0.5 ms backward:
// 1.875 ms and 1.5 ms. At cp 1 nothing.
TEST(ContextParallel, RingExposesWhatOutlastsTheAttention) {
  const CpRing ring{Seconds(1.0e-3), Seconds(2.0e-3)};
  const CpExposed x = cp_exposed(ring, 4, Seconds(1.5e-3), Seconds(6.0e-3));
  EXPECT_NEAR(x.fwd.v, 1.875e-3, 1e-12);
  EXPECT_NEAR(x.bwd.v, 1.5e-3, 1e-12);
  EXPECT_EQ(cp_exposed(ring, 1, Seconds(1.5e-3), Seconds(6.0e-3)).fwd.v, 0.0);
  EXPECT_EQ(cp_exposed(ring, 4, Seconds(8e-3), Seconds(16e-3)).bwd.v, 0.0);  // fully hidden
}

// One forward step sends the rank's K and V: gpt_1b has 32 heads of 64 (no GQA), 16 per rank
// at tp 2; micro-batch 2, 4096 tokens, bf16: 2 x 2 x 4096 x 16 x 64 x 2 B = 33,554,432 B. The
// backward sends K, V and their gradients, twice that. Neighbours share a node while a
// tp x cp block fits in it (2 x 2 of 8), and cross it at tp 8.
TEST(ContextParallel, RingStepBytesAndLink) {
  const ModelSpec m = gpt_1b();
  const Cluster cl = test::cluster(test::dgx_a100(), 16);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  const CollectiveModel coll(cl.node, eff);
  const TrainConfig v = cp2_cfg().cp_rank_view();
  const CpRing r = cp_ring(m, v, cl.node, coll);
  const double kv = 33554432.0;
  EXPECT_DOUBLE_EQ(r.step_fwd.v, coll.time(Collective::send_recv, Bytes(kv), CommGroup{2, 2}).v);
  EXPECT_DOUBLE_EQ(r.step_bwd.v, coll.time(Collective::send_recv, Bytes(2 * kv), CommGroup{2, 2}).v);
  TrainConfig wide = cp2_cfg();
  wide.tp = 8;
  wide.dp = 1;
  const CpRing across = cp_ring(m, wide.cp_rank_view(), cl.node, coll);
  EXPECT_GT(across.step_fwd.v, r.step_fwd.v);  // 4x fewer bytes per rank, but over the NIC
  TrainConfig none = cp2_cfg();
  none.cp = 1;
  EXPECT_EQ(cp_ring(m, none, cl.node, coll).step_fwd.v, 0.0);
}

// Model FLOPs count whole sequences: two runs on 16 GPUs with the same global batch of
// 8192-token sequences, one with cp 2 (dp 4) and one without (dp 8), do the same model
// work per step, so per GPU too. The cp run's hardware FLOPs per GPU match as well.
TEST(ContextParallel, ModelFlopsCountWholeSequences) {
  const ModelSpec m = gpt_1b();
  const StepTimeModel t = test::a100_model(m, 16);
  TrainConfig cp = cp2_cfg();
  cp.grad_accum = 4;
  TrainConfig dp = cp;
  dp.cp = 1;
  dp.dp = 8;
  dp.grad_accum = 2;  // 2 x 8 x 2 = 32 sequences, as cp's 2 x 4 x 4
  ASSERT_EQ(cp.global_batch(), dp.global_batch());
  ASSERT_EQ(cp.gpus(), dp.gpus());
  const StepTimeBreakdown a = t.estimate(cp), b = t.estimate(dp);
  EXPECT_NEAR(a.model_flops.v / b.model_flops.v, 1.0, 1e-9);
  EXPECT_NEAR(a.hw_flops.v / b.hw_flops.v, 1.0, 0.01);
  EXPECT_GT(a.step.v, 0.0);
}

}  // namespace
}  // namespace dsplan
