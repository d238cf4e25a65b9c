// DeepSeek-V3's training layout (docs/model.md §4.11 "Multi-token prediction and explicit
// pipeline splits"): Megatron's explicit uneven split (first and last virtual stages given,
// the middle ones even) and the multi-token prediction modules on the last stage, in step
// time, parameters and model FLOPs. Hand-derived numbers below.
#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/params.h"
#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "fixtures.h"

namespace dsplan {
namespace {

TrainConfig split(int pp, int vpp, int first, int last) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.pp = pp;
  c.vpp = vpp;
  c.pp_first_layers = first;
  c.pp_last_layers = last;
  return c;
}

// 61 layers on 16 stages as NVIDIA's DeepSeek-V3 recipe splits them: 3 first, 2 last, the
// 14 others (61 - 5) / 14 = 4 each. On 8 x 2 virtual stages with 4 first and 1 last, the 14
// middle chunks hold 4 each: rank 0 4 + 4, the middle ranks 8, the last 4 + 1.
TEST(ExplicitSplit, StageLayers) {
  const TrainConfig a = split(16, 1, 3, 2);
  ASSERT_TRUE(a.pipeline_split_fits(61));
  const TrainConfig::StageLayers s = a.stage_layers(61);
  EXPECT_EQ(s.first, 3);
  EXPECT_EQ(s.middle, 4);
  EXPECT_EQ(s.last, 2);
  EXPECT_EQ(s.most(), 4);
  const TrainConfig::StageLayers v = split(8, 2, 4, 1).stage_layers(61);
  EXPECT_EQ(v.first, 8);
  EXPECT_EQ(v.middle, 8);
  EXPECT_EQ(v.last, 5);
  // Megatron-Bridge's 'Et|(tt|)*30mL' on 8 x 4: 1 first, 0 last (the MTP and loss), 30 x 2.
  const TrainConfig b = split(8, 4, 1, 0);
  ASSERT_TRUE(b.pipeline_split_fits(61));
  EXPECT_EQ(b.stage_layers(61).first, 7);
  EXPECT_EQ(b.stage_layers(61).last, 6);
  EXPECT_FALSE(split(16, 1, 3, 3).pipeline_split_fits(61));  // 55 does not split 14 ways
  EXPECT_FALSE(split(2, 1, 61, 0).pipeline_split_fits(61));  // the last rank without a layer
  TrainConfig ds = a;
  ds.framework = Framework::deepspeed;
  EXPECT_FALSE(ds.pipeline_split_fits(61));  // Megatron's flags
  TrainConfig set = a;
  EXPECT_TRUE(set.set_pipeline_split(61));
  EXPECT_FALSE(set.pp_account_embedding || set.pp_account_loss);
}

// A 48-layer model whose odd layers are MoE, split 11 / 12 / 12 / 13: the ranks hold 5, 6, 6
// and 7 MoE layers, so the busiest rank is priced as 7 MoE layers of its 13.
TEST(ExplicitSplit, MoeShareFollowsTheSplit) {
  ModelSpec m;
  m.layers = 48;
  m.hidden = 1024;
  m.heads = 8;
  m.ffn_hidden = 2048;
  m.experts = 16;
  m.topk = 1;
  m.moe_ffn = 512;
  m.moe_layer_step = 2;
  EXPECT_DOUBLE_EQ(moe_layer_share(m, split(4, 1, 11, 13)), 7.0 / 13);
}

// A dense 8-layer decoder (h 1024, 8 heads, MLP 4096, untied vocabulary 32000), one GPU.
ModelSpec small() {
  ModelSpec m = test::llama_style("small", 8, 1024, 8, 8, 128, 4096, 32000, 2048);
  m.gated_mlp = false;
  return m;
}

TrainConfig one_gpu(int mtp) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.seq_len = 2048;
  c.flash_attention = true;
  c.mtp_layers = mtp;
  return c;
}

// One MTP module adds to the head's passes a layer (with its collectives, none on one GPU),
// its 2h x h projection at 2h^2 / (the layer's 12 h^2 matmul weights) = 1/6 of the layer's
// linear GEMM time, and the head again.
TEST(MultiTokenPrediction, StepCostsOnTheLastStage) {
  const ModelSpec m = small();
  const Cluster cl = test::cluster(test::dgx_h200(false), 1);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  const StepTimeModel model(m, cl, eff);
  const StepCosts a = model.costs(one_gpu(0)), b = model.costs(one_gpu(1));
  OpKey k;
  k.seq_len = 2048;
  k.flash = true;
  k.framework = Framework::megatron;
  const OpCosts op = operator_costs(m, cl.node.gpu, eff, k);
  EXPECT_NEAR(b.head_fwd.v, 2.0 * a.head_fwd.v + a.layer.fwd.v + op.fwd_linear.v / 6.0, 1e-12);
  EXPECT_NEAR(b.head_bwd.v, 2.0 * a.head_bwd.v + a.layer.bwd.v + op.bwd_linear.v / 6.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.layer.fwd.v, a.layer.fwd.v);
}

// Its parameters: a layer (attention 4 h^2 + MLP 8 h^2 + two norms 2h), the projection 2h^2
// and its two norms 2h, 16-bit each: 2 x (14 h^2 + 4h) bytes more weights on the one GPU.
TEST(MultiTokenPrediction, ParametersOnTheLastStage) {
  const ModelSpec m = small();
  const Cluster cl = test::cluster(test::dgx_h200(false), 1);
  const MemoryModel mm(m, cl);
  const double h = 1024;
  EXPECT_NEAR(mm.estimate(one_gpu(1)).params.v - mm.estimate(one_gpu(0)).params.v, 2.0 * (14 * h * h + 4 * h),
              1.0);
}

}  // namespace
}  // namespace dsplan
