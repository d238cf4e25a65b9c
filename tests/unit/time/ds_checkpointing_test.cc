// DeepSpeed's activation checkpointing options (TrainConfig::ds_partition_activations,
// ds_cpu_checkpointing; docs/model.md §4.5 "DeepSpeed's checkpoint options"): the input a
// recomputed layer keeps is split over the TP ranks (and all-gathered before the recompute)
// or kept in host memory (copied down in the forward and up before the recompute, blocking).
// Hand-derived on an 8-layer, h = 4096 GPT at sequence 2048, micro-batch 2, 16-bit, on 8
// H200s at TP 2: a layer input is 2 B x 2048 x 2 x 4096 = 33,554,432 B.
#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/search/space.h"
#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

constexpr double kInput = 2.0 * 2048 * 2 * 4096;  // 33,554,432 B

TrainConfig ds_run(Checkpointing ck, bool partition, bool host) {
  TrainConfig cfg;
  cfg.framework = Framework::deepspeed;
  cfg.precision = Precision::bf16;
  cfg.tp = 2;
  cfg.dp = 4;
  cfg.zero_stage = 1;
  cfg.seq_len = 2048;
  cfg.micro_batch = 2;
  cfg.checkpointing = ck;
  cfg.recompute_layers = 4;
  cfg.ds_partition_activations = partition;
  cfg.ds_cpu_checkpointing = host;
  return cfg;
}

ModelSpec model() { return test::gpt("gpt-4096", 8, 4096, 32, 2048, 50257, 128); }

TEST(DsCheckpointing, TheInputIsWhatALayerKeeps) {
  EXPECT_DOUBLE_EQ(layer_checkpoint_input_bytes(model(), ds_run(Checkpointing::full, false, false)), kInput);
}

// Partitioned, each of the 8 layers keeps half its input: 8 x 33,554,432 / 2 = 134,217,728 B
// fewer. On the host, none of the 8: 268,435,456 B fewer on the GPU, and the node's 8 GPUs
// hold 8 x 8 x 33,554,432 = 2,147,483,648 B more in host memory.
TEST(DsCheckpointing, MemoryKeepsAPartitionOrNothing) {
  const MemoryModel mm(model(), test::cluster(test::dgx_h200(true), 8));
  const MemoryBreakdown base = mm.estimate(ds_run(Checkpointing::full, false, false));
  const MemoryBreakdown split = mm.estimate(ds_run(Checkpointing::full, true, false));
  const MemoryBreakdown host = mm.estimate(ds_run(Checkpointing::full, false, true));
  EXPECT_NEAR(base.activations.v - split.activations.v, 134217728.0, 1.0);
  EXPECT_NEAR(base.activations.v - host.activations.v, 268435456.0, 1.0);
  EXPECT_NEAR(host.host.v - base.host.v, 2147483648.0, 1.0);
  // Both: the host holds the partitions, 1,073,741,824 B for the node.
  const MemoryBreakdown both = mm.estimate(ds_run(Checkpointing::full, true, true));
  EXPECT_NEAR(both.host.v - base.host.v, 1073741824.0, 1.0);
}

// On the host: 33,554,432 B each way over the H200's PCIe Gen5 at 63 GB/s x 0.84 = 52.92
// GB/s, 0.63406 ms, on every layer's forward and recompute (full recompute: all 8 layers).
// Block recompute of 4 of 8 layers spreads half of that over each layer.
TEST(DsCheckpointing, HostCopiesBlockTheForwardAndTheRecompute) {
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  const Efficiency eff = default_efficiency(c.node.gpu);
  ASSERT_DOUBLE_EQ(eff.pcie_fraction, 0.84);
  const StepTimeModel tm(model(), c, eff);
  const double copy = kInput / (63e9 * 0.84);
  const StepCosts base = tm.costs(ds_run(Checkpointing::full, false, false));
  const StepCosts host = tm.costs(ds_run(Checkpointing::full, false, true));
  EXPECT_NEAR((host.layer.fwd - base.layer.fwd).v, copy, 1e-9);
  EXPECT_NEAR((host.layer.recompute - base.layer.recompute).v, copy, 1e-9);
  EXPECT_EQ(host.layer.bwd.v, base.layer.bwd.v);
  const StepCosts block0 = tm.costs(ds_run(Checkpointing::block, false, false));
  const StepCosts block = tm.costs(ds_run(Checkpointing::block, false, true));
  EXPECT_NEAR((block.layer.fwd - block0.layer.fwd).v, 0.5 * copy, 1e-9);
  EXPECT_GT(tm.estimate(ds_run(Checkpointing::full, false, true)).step.v,
            tm.estimate(ds_run(Checkpointing::full, false, false)).step.v);
}

// Partitioned: the forward cuts the rank's half out with a copy on the GPU (read and write
// 16,777,216 B at 4.8 TB/s x the HBM fraction, one kernel), and the recompute first
// all-gathers the whole input over the TP pair.
TEST(DsCheckpointing, PartitionsAreCutAndGathered) {
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  const Efficiency eff = default_efficiency(c.node.gpu);
  const StepTimeModel tm(model(), c, eff);
  const StepCosts base = tm.costs(ds_run(Checkpointing::full, false, false));
  const StepCosts split = tm.costs(ds_run(Checkpointing::full, true, false));
  const double cut = 2.0 * kInput / 2 / (c.node.gpu.hbm_bw.v * eff.hbm_fraction) + eff.kernel_overhead.v;
  EXPECT_NEAR((split.layer.fwd - base.layer.fwd).v, cut, 1e-9);
  const CollectiveModel coll(c.node, eff);
  const double gather = coll.time(Collective::all_gather, Bytes(kInput), CommGroup{2, 2}).v;
  EXPECT_GT(gather, 0.0);
  EXPECT_NEAR((split.layer.recompute - base.layer.recompute).v, gather, 1e-9);
}

// The options act on DeepSpeed's recomputed layers only: at TP 1 there is nothing to
// partition, and without recompute, or under Megatron, nothing changes.
TEST(DsCheckpointing, InertWhereNothingIsRecomputedOrSplit) {
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  const StepTimeModel tm(model(), c, default_efficiency(c.node.gpu));
  const MemoryModel mm(model(), c);
  TrainConfig a = ds_run(Checkpointing::full, false, false), b = ds_run(Checkpointing::full, true, false);
  a.tp = b.tp = 1;
  a.dp = b.dp = 8;
  EXPECT_EQ(tm.estimate(a).step.v, tm.estimate(b).step.v);
  EXPECT_EQ(mm.estimate(a).allocated.v, mm.estimate(b).allocated.v);
  for (Checkpointing ck : {Checkpointing::none, Checkpointing::selective}) {
    EXPECT_EQ(tm.estimate(ds_run(ck, true, true)).step.v, tm.estimate(ds_run(ck, false, false)).step.v);
    EXPECT_EQ(mm.estimate(ds_run(ck, true, true)).host.v, mm.estimate(ds_run(ck, false, false)).host.v);
  }
  TrainConfig mg = ds_run(Checkpointing::full, true, true), mg0 = ds_run(Checkpointing::full, false, false);
  mg.framework = mg0.framework = Framework::megatron;
  EXPECT_EQ(tm.estimate(mg).step.v, tm.estimate(mg0).step.v);
}

// Megatron-DeepSpeed's pipeline model recomputes uniformly only (it turns the block method
// off, model/gpt_model.py): a DeepSpeed plan with block recompute in a pipeline would run
// without recompute, so it is no configuration; at pp 1 (no pipeline model) and under
// Megatron it is one.
TEST(DsCheckpointing, BlockRecomputeNeedsNoDeepSpeedPipeline) {
  const ModelSpec m = test::gpt("gpt-4096", 8, 4096, 32, 2048, 50257, 128);
  const Cluster node = test::cluster(test::dgx_h200(true), 8);
  SearchSpace s;
  s.run.recompute_layers = 1;
  TrainConfig cfg;
  auto why =
      make_config(s, m, node, 1, 1, 2, 1, 1, 1, 4, Checkpointing::block, true, false, Offload::none, cfg);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.back().find("block recompute in a DeepSpeed pipeline"), std::string::npos);
  EXPECT_TRUE(
      make_config(s, m, node, 1, 1, 1, 1, 1, 1, 4, Checkpointing::block, true, false, Offload::none, cfg)
          .empty());
  s.run.framework = Framework::megatron;
  EXPECT_TRUE(
      make_config(s, m, node, 1, 1, 2, 1, 1, 1, 4, Checkpointing::block, true, false, Offload::none, cfg)
          .empty());
}

}  // namespace
}  // namespace dsplan
