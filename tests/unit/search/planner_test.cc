// Planner ranking: configurations that another finalist dominates on memory and time with
// only a different checkpointing choice are hidden; pinned ones never are.
#include "estimator/search/planner.h"

#include <gtest/gtest.h>

#include "estimator/time/efficiency_defaults.h"
#include "fixtures.h"

namespace dsplan {
namespace {

PlanRequest gpt_2_7b_on_16_a100() {
  PlanRequest r;
  r.model = test::gpt("gpt-2.7b", 32, 2560, 32, 2048, 50257, 128);
  r.cluster = test::cluster(test::dgx_a100(), 16);
  r.efficiency = default_efficiency(r.cluster.node.gpu);
  r.space.run.seq_len = 2048;
  r.space.zero = {1};
  r.space.tp = {1};
  r.space.pp = {1};
  r.space.vpp = {1};
  r.space.micro_batch = {4, 8};
  r.space.grad_accum = {1};
  r.space.flash = {true};
  r.space.sequence_parallel = {false};
  r.space.offload = {Offload::none};
  r.top = 20;
  r.refine_top = 0;
  return r;
}

// With FlashAttention the attention core keeps no s x s tensors, so selective recompute
// saves no memory (the memory model gives both the same device figure) and costs the
// flash forward again: each "selective" finalist is dominated by its "none" twin and is
// hidden. Full recompute saves memory, so it stays although it is slower.
TEST(Planner, HidesCheckpointingThatSavesNoMemory) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.checkpointing = {Checkpointing::none, Checkpointing::selective, Checkpointing::full};
  const PlanResult res = plan(r);
  ASSERT_EQ(res.evaluated, 6);  // 2 micro-batches x 3 checkpointing choices
  EXPECT_EQ(res.dominated, 2);  // the two selective ones
  ASSERT_EQ(res.configs.size(), 4u);
  int full = 0;
  for (const auto& e : res.configs) {
    EXPECT_NE(e.cfg.checkpointing, Checkpointing::selective);
    full += e.cfg.checkpointing == Checkpointing::full;
  }
  EXPECT_EQ(full, 2);
  // Check the premise on the evaluations themselves.
  r.space.checkpointing = {Checkpointing::selective};
  r.space.micro_batch = {8};
  const Evaluation sel = plan(r).configs.at(0);
  r.space.checkpointing = {Checkpointing::none};
  const Evaluation none = plan(r).configs.at(0);
  EXPECT_LE(none.memory.device.v, sel.memory.device.v);
  EXPECT_LT(none.time.step.v, sel.time.step.v);
}

// A pinned configuration is what the user asked about: returned even when dominated.
TEST(Planner, PinnedConfigurationIsNeverHidden) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.micro_batch = {8};
  r.space.checkpointing = {Checkpointing::selective};
  const PlanResult res = plan(r);
  ASSERT_EQ(res.configs.size(), 1u);
  EXPECT_EQ(res.configs[0].cfg.checkpointing, Checkpointing::selective);
  EXPECT_EQ(res.dominated, 0);
}

// A cluster whose nodes have no network, planned over two nodes: the data-parallel
// reduction has no bandwidth, so the step time is not finite. The planner returns no such
// configuration as fitting (the CLI refuses this cluster earlier; the planner is a library
// and must not rank a NaN or infinite step either way).
TEST(Planner, NoFiniteStepTimeIsNeverRanked) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.cluster.node.nics_per_node = 0;
  r.cluster.node.nic_bw = BytesPerSecond{0};
  r.space.micro_batch = {4};
  r.space.checkpointing = {Checkpointing::none};
  r.include_infeasible = true;
  const PlanResult res = plan(r);
  ASSERT_FALSE(res.configs.empty());
  for (const Evaluation& e : res.configs) {
    EXPECT_FALSE(e.fits);
    ASSERT_FALSE(e.reasons.empty());
    EXPECT_NE(e.reasons.back().find("no finite step time"), std::string::npos) << e.reasons.back();
  }
  EXPECT_EQ(res.feasible, 0);
}

// Megatron-LM splits layers evenly across stages; DeepSpeed's PipelineModule partitions
// any count. BLOOM-176B ran 70 layers on 12 stages (tp 4 x pp 12 x dp 8 = 384 GPUs):
// valid under DeepSpeed, where the slowest stage holds ceil(70 / 12) = 6 layers, and
// rejected under Megatron.
TEST(Space, UnevenPipelineStagesOnlyUnderDeepSpeed) {
  const ModelSpec bloom = test::gpt("bloom-like", 70, 14336, 112, 2048, 250880, 1);
  const Cluster c = test::cluster(test::dgx_a100(), 384);
  EXPECT_EQ(pp_problem(12, bloom, c, Framework::deepspeed), "");
  EXPECT_NE(pp_problem(12, bloom, c, Framework::megatron).find("does not divide the 70 layers"),
            std::string::npos);
  EXPECT_NE(pp_problem(71, bloom, c, Framework::deepspeed).find("exceeds the 70 layers"),
            std::string::npos);
  EXPECT_NE(pp_problem(5, bloom, c, Framework::deepspeed).find("does not divide the 384 GPUs"),
            std::string::npos);

  PlanRequest r;
  r.model = bloom;
  r.cluster = c;
  r.efficiency = default_efficiency(c.node.gpu);
  r.space.run.seq_len = 2048;
  r.space.zero = {1};
  r.space.tp = {4};
  r.space.pp = {12};
  r.space.vpp = {1};
  r.space.micro_batch = {2};
  r.space.global_batch = std::int64_t{2048};
  r.space.checkpointing = {Checkpointing::full};
  r.space.flash = {false};
  r.space.sequence_parallel = {false};
  r.space.offload = {Offload::none};
  r.top = 1;
  const PlanResult res = plan(r);
  ASSERT_EQ(res.configs.size(), 1u);
  EXPECT_EQ(res.invalid, 0);
  EXPECT_TRUE(res.configs.front().fits) << res.configs.front().memory.device.v;
  // 2048 / (2 x 8) = 128 micro-batches per step.
  EXPECT_EQ(res.configs.front().cfg.grad_accum, 128);
}

}  // namespace
}  // namespace dsplan
