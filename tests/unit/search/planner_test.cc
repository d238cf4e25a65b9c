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
// rejected under a Megatron of 2024. Megatron since 2025-02 can count the embedding and
// the loss as layers: 70 + 2 = 72 = 12 x 6 units, so pp 12 splits; pp 11 does not (70, 71
// and 72 are none of them multiples of 11), but an explicit split does: ceil(70 / 11) = 7
// layers on each of the 9 middle stages, 70 - 63 = 7 left for the ends, 4 first and 3 last
// (balanced_split_test.cc); a Megatron of 2024 has neither.
TEST(Space, UnevenPipelineStagesOnlyUnderDeepSpeed) {
  const ModelSpec bloom = test::gpt("bloom-like", 70, 14336, 112, 2048, 250880, 1);
  const Cluster c = test::cluster(test::dgx_a100(), 384);
  EXPECT_EQ(pp_problem(12, bloom, c, Framework::deepspeed), "");
  EXPECT_NE(pp_problem(12, bloom, c, Framework::megatron, 202406).find("does not divide the 70 layers"),
            std::string::npos);
  EXPECT_EQ(pp_problem(12, bloom, c, Framework::megatron), "");
  EXPECT_NE(pp_problem(11, bloom, c, Framework::megatron).find("does not divide the 384 GPUs"),
            std::string::npos)
      << pp_problem(11, bloom, c, Framework::megatron);
  EXPECT_NE(pp_problem(11, bloom, c, Framework::megatron, 202406).find("does not divide the 70 layers"),
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

// The rule (points removed) that made every point of `r` invalid, or "" when some point is valid.
std::string only_rule(const PlanRequest& r) {
  const PlanResult res = plan(r);
  if (res.evaluated > 0 || res.rejections.size() != 1) return "";
  return res.rejections.begin()->first;
}

// gas = global / (micro-batch x dp) is an int: 2^32 - 1 samples at micro-batch 4 on 16
// GPUs (64 per micro-step) would need 67,108,863 micro-batches, beyond the 65,536 a step
// may accumulate. It used to wrap to a negative gas and a negative throughput.
TEST(Space, GlobalBatchNeedingTooManyMicroBatchesIsInvalid) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.micro_batch = {4};
  r.space.grad_accum.clear();
  r.space.global_batch = std::int64_t{4294967295LL - 4294967295LL % 64};  // a multiple of 64
  EXPECT_NE(only_rule(r).find("needs more than 65536 micro-batches"), std::string::npos) << only_rule(r);
  // 65,536 x 64 = 4,194,304 samples is the largest that plans.
  r.space.global_batch = std::int64_t{65536} * 64;
  const PlanResult ok = plan(r);
  ASSERT_FALSE(ok.configs.empty());
  EXPECT_EQ(ok.configs.front().cfg.grad_accum, 65536);
  EXPECT_GT(ok.configs.front().samples_per_s, 0);
}

// A head dimension of 512 (hidden 4096 over 8 heads) is beyond every FlashAttention-class
// kernel (256 at most): flash points are invalid, and the default search leaves them out.
TEST(Space, FlashNeedsHeadDimensionsUpTo256) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.model = test::gpt("wide-heads", 8, 4096, 8, 2048, 32000, 128);
  EXPECT_NE(only_rule(r).find("head dimensions up to 256 (this model's is 512)"), std::string::npos)
      << only_rule(r);
  r.space.flash.clear();
  const SearchSpace s = with_defaults(r.space, r.model, r.cluster);
  EXPECT_EQ(s.flash, std::vector<bool>{false});
  r.model = test::gpt("gpt-2.7b", 32, 2560, 32, 2048, 50257, 128);  // head dimension 80
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).flash, (std::vector<bool>{false, true}));
}

// DeepSpeed's ZeRO-Offload steps with DeepSpeedCPUAdam, and bitsandbytes' 8-bit Adam is a
// CUDA kernel: offload is Adam's only, under either framework for 8-bit Adam.
TEST(Space, OptimizerOffloadNeedsAdam) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.offload = {Offload::optimizer};
  EXPECT_EQ(only_rule(r), "");  // Adam offloads
  r.space.run.optimizer = Optimizer::sgd;
  EXPECT_NE(only_rule(r).find("DeepSpeedCPUAdam"), std::string::npos) << only_rule(r);
  r.space.run.optimizer = Optimizer::adam_8bit;
  EXPECT_NE(only_rule(r).find("8-bit Adam"), std::string::npos) << only_rule(r);
  r.space.run.framework = Framework::fsdp;
  r.space.zero = {3};
  EXPECT_NE(only_rule(r).find("8-bit Adam"), std::string::npos) << only_rule(r);
  r.space.run.optimizer = Optimizer::sgd;  // FSDP's CPU offload steps torch's SGD on the host
  EXPECT_EQ(only_rule(r), "");
}

// Interleaving is searched where it can run: Megatron with more than one micro-batch a
// step (a global batch, or a gas above 1), every V up to 16 that some searched pp can
// split the layers into (NeMo runs GPT-3 175B at VP 12). DeepSpeed's pipeline engine has no interleaved
// schedule, and one micro-batch a step is never a multiple of pp >= 2: there V is 1 only.
TEST(Space, InterleavingIsSearchedWhereItCanRun) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.vpp.clear();
  r.space.pp.clear();  // the default pp: 1, 2, 4, 8, 16 (they divide the 32 layers and 16 GPUs)
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, std::vector<int>{1});  // DeepSpeed
  r.space.run.framework = Framework::megatron;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, std::vector<int>{1});  // gas 1
  // Of V 2-16, those some searched pp splits the 32 layers into: pp 2 holds 16 layers a
  // rank, so 2, 4, 8 and 16 (3, 5, 6, 10 and 12 divide no pp's share, nor 33 or 34 units).
  const std::vector<int> wide{1, 2, 4, 8, 16};
  r.space.grad_accum = {1, 8};
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, wide);
  r.space.grad_accum.clear();
  r.space.global_batch = 512;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, wide);
  r.space.vpp = {2};  // a user's list is kept
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, std::vector<int>{2});
  r.space.vpp.clear();  // with pp 1 only, no V splits anything
  r.space.pp = {1};
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).vpp, std::vector<int>{1});
}

// Context parallelism is searched under Megatron from 8,192 tokens (NVIDIA's Llama 3
// recipes run CP 2 there), each rank keeping at least 2,048 tokens, on degrees that divide
// the GPUs: 8,192 tokens -> CP 1, 2, 4 (8192 / 4 = 2048); 131,072 on 16 GPUs -> 1-16 (32 does
// not divide 16). Elsewhere, and where no fused attention kernel runs (V100), CP is 1.
TEST(Space, ContextParallelismIsSearchedForLongSequences) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.cp.clear();
  r.space.run.framework = Framework::megatron;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).cp, std::vector<int>{1});  // 2,048 tokens
  r.space.run.seq_len = 8192;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).cp, (std::vector<int>{1, 2, 4}));
  r.space.run.seq_len = 131072;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).cp, (std::vector<int>{1, 2, 4, 8, 16}));
  r.space.run.framework = Framework::deepspeed;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).cp, std::vector<int>{1});
  r.space.run.framework = Framework::megatron;
  r.cluster = test::cluster(test::dgx1(), 16);
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).cp, std::vector<int>{1});
}

// Megatron-Core's cheap recompute modules are searched beside the attention core for a
// Megatron model with MoE layers or MLA (and only with selective checkpointing): moe_act and
// layernorm for MoE, mla_up_proj and layernorm for MLA; a dense model, another framework or
// a space without selective checkpointing keeps {0}.
TEST(Space, CheapRecomputeModulesAreSearchedForMoeAndMla) {
  PlanRequest r = gpt_2_7b_on_16_a100();
  r.space.run.framework = Framework::megatron;
  EXPECT_EQ(with_defaults(r.space, r.model, r.cluster).recompute_modules, std::vector<std::uint8_t>{0});
  ModelSpec moe = r.model;
  moe.experts = 8, moe.topk = 2, moe.moe_ffn = 2560;
  const std::uint8_t cheap = module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::layernorm);
  EXPECT_EQ(cheap_recompute_modules(moe), cheap);
  EXPECT_EQ(with_defaults(r.space, moe, r.cluster).recompute_modules, (std::vector<std::uint8_t>{0, cheap}));
  ModelSpec mla = r.model;
  mla.kv_lora_rank = 512, mla.qk_rope_head_dim = 64;
  EXPECT_EQ(cheap_recompute_modules(mla),
            module_bit(RecomputeModule::mla_up_proj) | module_bit(RecomputeModule::layernorm));
  SearchSpace full = r.space;
  full.checkpointing = {Checkpointing::full};
  EXPECT_EQ(with_defaults(full, moe, r.cluster).recompute_modules, std::vector<std::uint8_t>{0});
  SearchSpace ds = r.space;
  ds.run.framework = Framework::deepspeed;
  EXPECT_EQ(with_defaults(ds, moe, r.cluster).recompute_modules, std::vector<std::uint8_t>{0});
  // Modules without selective checkpointing are no configuration.
  TrainConfig cfg;
  cfg.checkpointing = Checkpointing::full;
  std::vector<std::string> why;
  set_recompute_modules(cheap, cfg, why);
  ASSERT_EQ(why.size(), 1u);
  cfg.checkpointing = Checkpointing::selective;
  why.clear();
  set_recompute_modules(cheap, cfg, why);
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(cfg.recompute_modules, cheap);
  cfg.fp8 = true;  // Megatron-Core refuses moe_act and layernorm under delayed scaling
  set_recompute_modules(cheap, cfg, why);
  EXPECT_EQ(why.size(), 1u);
  why.clear();
  cfg.fp8_recipe = Fp8Recipe::tensorwise;
  set_recompute_modules(cheap, cfg, why);
  EXPECT_TRUE(why.empty());
}

}  // namespace
}  // namespace dsplan
