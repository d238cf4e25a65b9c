// Megatron-Core's accounted pipeline split (--account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split; TrainConfig::stage_layers, docs/model.md §4.10):
// the layer arithmetic, a hand-derived single-micro-batch schedule in the simulator, and
// Llama 3.1 405B (126 layers) on pp 8, which only this split runs, priced by both tiers.
#include <gtest/gtest.h>

#include <cmath>

#include "core/json/model_json.h"
#include "estimator/memory.h"
#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "hwdb/hwdb.h"
#include "simulator/simulate.h"

namespace dsplan {
namespace {

TrainConfig megatron(int pp, int vpp) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.pp = pp;
  c.vpp = vpp;
  return c;
}

TEST(PipelineSplit, LayerArithmetic) {
  // 126 layers, pp 8: 126 % 8 = 6, but 126 + 2 = 128 = 8 x 16 units; the first rank holds
  // 16 - 1 = 15 layers (and the embedding), the middle ranks 16, the last 15 (and the loss).
  TrainConfig c = megatron(8, 1);
  ASSERT_TRUE(c.set_pipeline_split(126));
  EXPECT_TRUE(c.pp_account_embedding && c.pp_account_loss);
  auto s = c.stage_layers(126);
  EXPECT_EQ(s.first, 15);
  EXPECT_EQ(s.middle, 16);
  EXPECT_EQ(s.last, 15);
  EXPECT_EQ(s.most(), 16);
  // 15 + 6 x 16 + 15 = 126: every layer is placed once.
  EXPECT_EQ(s.first + 6 * s.middle + s.last, 126);
  // Interleaved, vpp 8: 128 / (8 x 8) = 2 units per chunk (NVIDIA's 405B recipes).
  c = megatron(8, 8);
  EXPECT_TRUE(c.set_pipeline_split(126));
  // pp 16 x vpp 8 leaves 1 unit per chunk: the first chunk holds the embedding alone and
  // the last the loss (the Llama 3 paper's layout); 126 + 2 = 128 = 16 x 8. pp 8 x vpp 32
  // would need 256 units.
  c = megatron(16, 8);
  EXPECT_TRUE(c.set_pipeline_split(126));
  EXPECT_EQ(c.stage_layers(126).first, 7);
  c = megatron(8, 32);
  EXPECT_FALSE(c.set_pipeline_split(126));
  // 2 layers on pp 4: 4 units, 1 a rank, and the end ranks would hold no layer.
  c = megatron(4, 1);
  EXPECT_FALSE(c.set_pipeline_split(2));
  // 127 layers, pp 8: 129 % 8 = 1, 128 % 8 = 0 with the loss alone: first 16, last 15.
  c = megatron(8, 1);
  ASSERT_TRUE(c.set_pipeline_split(127));
  EXPECT_FALSE(c.pp_account_embedding);
  EXPECT_TRUE(c.pp_account_loss);
  s = c.stage_layers(127);
  EXPECT_EQ(s.first, 16);
  EXPECT_EQ(s.last, 15);
  // Even splits stay even; pp 5 splits none of 126, 127, 128, so Megatron takes an explicit
  // split: ceil(126 / 5) = 26 on the 3 middle stages, 126 - 78 = 48 for the ends, 24 each
  // (balanced_split_test.cc); a 2024 Megatron has neither.
  c = megatron(7, 1);
  ASSERT_TRUE(c.set_pipeline_split(126));
  EXPECT_FALSE(c.pp_account_embedding || c.pp_account_loss);
  EXPECT_EQ(c.stage_layers(126).first, 18);  // 126 / 7
  c = megatron(5, 1);
  ASSERT_TRUE(c.set_pipeline_split(126));
  EXPECT_EQ(c.pp_first_layers, 24);
  EXPECT_EQ(c.pp_last_layers, 24);
  EXPECT_EQ(c.stage_layers(126).middle, 26);
  c = megatron(5, 1);
  c.megatron_release = 202406;
  EXPECT_FALSE(c.set_pipeline_split(126));
  c = megatron(8, 1);
  c.megatron_release = 202406;
  EXPECT_FALSE(c.set_pipeline_split(126));
  // DeepSpeed's partitioner takes any count, priced at its largest stage: ceil(126/8) = 16.
  c = megatron(8, 1);
  c.framework = Framework::deepspeed;
  ASSERT_TRUE(c.set_pipeline_split(126));
  EXPECT_EQ(c.stage_layers(126).first, 16);
  EXPECT_EQ(c.stage_layers(126).last, 16);
  // Asked for Megatron-DeepSpeed's 'type:transformer|embedding' partition (BLOOM-176B: 70
  // layers, pp 12): 72 units, 6 a stage, 5 layers beside each embedding. Asked where the
  // units do not divide (pp 7: 72 % 7 = 2), the even 70 / 7 = 10 stands.
  c = megatron(12, 1);
  c.framework = Framework::deepspeed;
  c.pp_account_embedding = c.pp_account_loss = true;
  ASSERT_TRUE(c.set_pipeline_split(70));
  EXPECT_TRUE(c.pp_account_embedding && c.pp_account_loss);
  EXPECT_EQ(c.stage_layers(70).first, 5);
  EXPECT_EQ(c.stage_layers(70).middle, 6);
  EXPECT_EQ(c.stage_layers(70).last, 5);
  c.pp = 7;
  ASSERT_TRUE(c.set_pipeline_split(70));
  EXPECT_FALSE(c.pp_account_embedding || c.pp_account_loss);
  EXPECT_EQ(c.stage_layers(70).first, 10);
}

TEST(PipelineSplit, OneMicroBatchWalksEveryStage) {
  // pp 3, one micro-batch: the step is every stage's forward then every backward. Layer
  // forward 0.5 ms, backward 1 ms; embedding 0.2 + 0.3 ms, head 0.4 + 0.6 ms.
  //  accounted (1, 2, 1 layers): 0.5 + 0.2 | 1.0 | 0.5 + 0.4, then 0.6 + 1.0 | 2.0 | 1.0 + 0.3
  //    = 0.7 + 1.0 + 0.9 + 1.6 + 2.0 + 1.3 = 7.5 ms;
  //  even (2 layers on every rank): 1.2 + 1.0 + 1.4 + 2.6 + 2.0 + 2.3 = 10.5 ms.
  StepCosts c;
  c.pp = 3;
  c.layers_per_rank = 2;
  c.layer.fwd = ms(0.5);
  c.layer.bwd = ms(1.0);
  c.embed_fwd = ms(0.2);
  c.embed_bwd = ms(0.3);
  c.head_fwd = ms(0.4);
  c.head_bwd = ms(0.6);
  auto even = simulate_step(c);
  c.first_layers = c.last_layers = 1;
  auto accounted = simulate_step(c);
  ASSERT_TRUE(even.ok() && accounted.ok());
  EXPECT_NEAR(in_ms(even->step), 10.5, 1e-9);
  EXPECT_NEAR(in_ms(accounted->step), 7.5, 1e-9);
}

// Llama 3.1 405B, Megatron bf16, tp 8 x pp 8 (x vpp 8) x dp 4 on 32 DGX H100 nodes,
// micro-batch 1, sequence 8192, 64 micro-batches, flash attention, full recompute.
struct Case {
  StepTimeModel time;
  MemoryModel memory;
};

Case llama405b() {
  const auto m = model_preset("llama3.1-405b");
  const auto node = system_preset("dgx-h100");
  EXPECT_TRUE(m.ok() && node.ok());
  Cluster cl;
  cl.node = node.value();
  cl.num_gpus = 256;
  return {StepTimeModel(m.value(), cl, default_efficiency(cl.node.gpu)), MemoryModel(m.value(), cl, {})};
}

TrainConfig run405b(int vpp) {
  TrainConfig c = megatron(8, vpp);
  c.precision = Precision::bf16;
  c.tp = 8;
  c.dp = 4;
  c.sequence_parallel = true;
  c.micro_batch = 1;
  c.grad_accum = 64;
  c.seq_len = 8192;
  c.flash_attention = true;
  c.checkpointing = Checkpointing::full;
  c.zero_stage = 1;
  EXPECT_TRUE(c.set_pipeline_split(126));
  return c;
}

TEST(PipelineSplit, Llama405bLighterEndsShortenTheStep) {
  const Case k = llama405b();
  const TrainConfig accounted = run405b(1);
  // The even-split pricing of the same degrees (DeepSpeed-style, ceil(126 / 8) = 16): 16
  // layers on every rank, and the embedding and the head on top of the end ranks'.
  TrainConfig even = accounted;
  even.pp_account_embedding = even.pp_account_loss = false;
  const StepTimeBreakdown a = k.time.estimate(accounted), e = k.time.estimate(even);
  // The slowest rank is a middle one with 16 layers either way, so a micro-batch costs the
  // same; fill and drain cross lighter end ranks: the step can only be shorter, by at most
  // about the two layers it takes off them (2 of 8 x 16 layer-passes of 71 micro-batch slots).
  EXPECT_LT(a.step.v, e.step.v);
  EXPECT_GT(a.step.v, 0.97 * e.step.v);
  // The first rank holds a layer fewer than the even pricing assumed: less memory.
  EXPECT_LT(k.memory.estimate(accounted).device.v, k.memory.estimate(even).device.v);
}

TEST(PipelineSplit, Llama405bBothTiersAgree) {
  const Case k = llama405b();
  for (int vpp : {1, 8}) {
    const TrainConfig c = run405b(vpp);
    const StepTimeBreakdown closed = k.time.estimate(c);
    auto sim = simulate_step(k.time.costs(c));
    ASSERT_TRUE(sim.ok()) << "vpp " << vpp;
    EXPECT_NEAR(sim->step.v / closed.step.v, 1.0, 0.05) << "vpp " << vpp;
  }
  // The Llama 3 paper's layout, pp 16 x vpp 8 (dp 2): rank 0's first chunk holds only the
  // embedding and the last rank's last chunk only the loss. The simulator schedules the
  // empty chunks, and both tiers still agree.
  TrainConfig c = run405b(8);
  c.pp = 16;
  c.dp = 2;
  ASSERT_TRUE(c.set_pipeline_split(126));
  const StepCosts costs = k.time.costs(c);
  EXPECT_EQ(costs.first_rank_layers(), 7);
  auto sim = simulate_step(costs);
  ASSERT_TRUE(sim.ok());
  EXPECT_TRUE(std::isfinite(sim->step.v));
  EXPECT_NEAR(sim->step.v / k.time.estimate(c).step.v, 1.0, 0.05);
}

}  // namespace
}  // namespace dsplan
