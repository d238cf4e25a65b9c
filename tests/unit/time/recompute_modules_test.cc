// Megatron-Core's selective recompute modules (TrainConfig::recompute_modules; operators.h
// OpCosts::modules, docs/model.md §4 "Recompute modules"): what each module's recompute
// reruns, counted in GEMM FLOPs by hand, and how the step adds them (the MoE module's
// all-to-alls again).
#include <gtest/gtest.h>

#include "core/names.h"
#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

ModelSpec mla() { return test::deepseek_v3_attention("mla-rc"); }

// A small MoE decoder: hidden 2048, 16 heads of 128, 8 experts of 1024 (SwiGLU), top-2,
// one 512-wide shared expert.
ModelSpec moe() {
  ModelSpec m = test::llama_style("moe-rc", 8, 2048, 16, 16, 128, 8192, 32000, 4096);
  m.experts = 8;
  m.topk = 2;
  m.moe_ffn = 1024;
  m.shared_ffn = 512;
  return m;
}

OpKey key(int tp, int ep) { return test::megatron_key(tp, ep); }

constexpr std::size_t at(RecomputeModule r) { return static_cast<std::size_t>(r); }

// tp 2, 4096 tokens. mla_up_proj reruns q up (4096 x 12288 x 1536) and kv up (4096 x
// (128 x 256 / 2 = 16384) x 512): 2 x 4096 x (18,874,368 + 8,388,608) = 223,338,299,392
// FLOPs. mlp reruns FC1 (4096 x 18432 x 7168) and FC2 (4096 x 7168 x 9216):
// 2 x 4096 x 7168 x 27648 = 1,623,497,637,888. The dense layer has no MoE modules; its one
// separate norm (MLA's input norm) has a forward but no FLOPs.
TEST(RecomputeModules, MlaAndDenseMlpFlops) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts o = operator_costs(mla(), gpu, eff, key(2, 1));
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::mla_up_proj)].flops.v, 223338299392.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::mlp)].flops.v, 1623497637888.0);
  EXPECT_GT(o.modules[at(RecomputeModule::mla_up_proj)].t.v, 0.0);
  EXPECT_GT(o.modules[at(RecomputeModule::layernorm)].t.v, 0.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::layernorm)].flops.v, 0.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::moe)].t.v, 0.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::moe_act)].t.v, 0.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::core_attn)].t.v, o.attn_core_fwd.v);
}

// tp 1, ep 4, 4096 tokens: 8192 token copies; a rank's 2 experts see 4096 each. moe reruns
// the router (2 x 4096 x 8 x 2048 = 134,217,728), the experts (2 x 8192 x 2048 x (2048 +
// 1024) = 103,079,215,104) and the shared expert (2 x 4096 x 2048 x (1024 + 512) =
// 25,769,803,776): 128,983,236,608. shared_experts the last alone; moe_act no GEMM.
TEST(RecomputeModules, MoeModuleFlops) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts o = operator_costs(moe(), gpu, eff, key(1, 4));
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::moe)].flops.v, 128983236608.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::shared_experts)].flops.v, 25769803776.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::moe_act)].flops.v, 0.0);
  EXPECT_GT(o.modules[at(RecomputeModule::moe_act)].t.v, 0.0);
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::mlp)].t.v, 0.0);  // no dense layer
  EXPECT_DOUBLE_EQ(o.modules[at(RecomputeModule::mla_up_proj)].t.v, 0.0);
  EXPECT_LT(o.modules[at(RecomputeModule::moe)].t.v, o.fwd.v);
}

// Selective recompute sums the modules named; none named is the attention core alone; full
// recompute reruns the forward whatever the modules say.
TEST(RecomputeModules, SetRecomputeSumsTheNamedModules) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  OpCosts o = operator_costs(mla(), gpu, eff, key(2, 1));
  set_recompute(o, Checkpointing::selective, 0);
  EXPECT_DOUBLE_EQ(o.recompute.v, o.attn_core_fwd.v);
  const std::uint8_t two = module_bit(RecomputeModule::mla_up_proj) | module_bit(RecomputeModule::mlp);
  set_recompute(o, Checkpointing::selective, two);
  EXPECT_NEAR(o.recompute.v,
              o.modules[at(RecomputeModule::mla_up_proj)].t.v + o.modules[at(RecomputeModule::mlp)].t.v,
              1e-15);
  EXPECT_DOUBLE_EQ(o.recompute_flops_hw.v, 223338299392.0 + 1623497637888.0);
  set_recompute(o, Checkpointing::full, two);
  EXPECT_DOUBLE_EQ(o.recompute.v, o.fwd.v);
  set_recompute(o, Checkpointing::none, two);
  EXPECT_DOUBLE_EQ(o.recompute.v, 0.0);
}

// In the step, recomputing the MoE module reruns its dispatch and combine all-to-alls: the
// layer's recompute is the module's forward plus the layer's forward all-to-alls.
TEST(RecomputeModules, MoeRecomputeRerunsTheAllToAlls) {
  const Cluster cl = test::cluster(test::dgx_h200(false), 16);
  const ModelSpec m = moe();
  const StepTimeModel model(m, cl, default_efficiency(cl.node.gpu));
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 16;
  cfg.ep = 8;
  cfg.seq_len = 4096;
  cfg.flash_attention = true;
  cfg.checkpointing = Checkpointing::selective;
  cfg.recompute_modules = module_bit(RecomputeModule::moe);
  const StepCosts c = model.costs(cfg);
  const OpCosts o = operator_costs(m, cl.node.gpu, default_efficiency(cl.node.gpu), key(1, 8));
  EXPECT_GT(c.layer.ep_comm_fwd.v, 0.0);
  EXPECT_NEAR(c.layer.recompute.v, o.modules[at(RecomputeModule::moe)].t.v + c.layer.ep_comm_fwd.v, 1e-12);
  cfg.recompute_modules = module_bit(RecomputeModule::moe_act);
  EXPECT_NEAR(model.costs(cfg).layer.recompute.v, o.modules[at(RecomputeModule::moe_act)].t.v, 1e-12);
}

TEST(RecomputeModules, NamesRoundTrip) {
  const std::uint8_t bits = module_bit(RecomputeModule::layernorm) | module_bit(RecomputeModule::moe_act);
  EXPECT_EQ(recompute_modules_text(bits), "moe_act,layernorm");  // Megatron's order
  EXPECT_EQ(parse_recompute_module("mla_up_proj"), RecomputeModule::mla_up_proj);
  EXPECT_FALSE(parse_recompute_module("moe_layer").has_value());
}

}  // namespace
}  // namespace dsplan
