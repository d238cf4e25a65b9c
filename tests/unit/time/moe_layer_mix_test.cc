// MoE models with dense layers (ModelSpec::first_dense_layers, moe_layer_step; docs/model.md
// §4.11 "Dense layers among the MoE ones"): which share of the busiest pipeline rank's
// layers are MoE, and how the estimators blend an MoE and a dense layer at that share
// (operators, TP and expert collectives, a rank's parameters and memory). Hand-derived
// numbers below.
#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/params.h"
#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/moe.h"
#include "estimator/time/operators.h"
#include "estimator/time/parallel_comm.h"
#include "fixtures.h"

namespace dsplan {
namespace {

// A Llama-4-Maverick-shaped decoder cut small: 48 layers, h 1024, 8 heads of 128, 2 KV
// heads, SwiGLU; every other layer (1, 3, ..., 47) routes to top-1 of 16 experts of width
// 512 plus a 512-wide shared expert, the others run a dense MLP of 2048. Untied vocab 1000.
ModelSpec alternating() {
  ModelSpec m = test::llama_style("alternating-test", 48, 1024, 8, 2, 128, 2048, 1000, 4096);
  m.experts = 16;
  m.topk = 1;
  m.moe_ffn = 512;
  m.shared_ffn = 512;
  m.moe_layer_step = 2;
  return m;
}

// DeepSeek-V3's layout: 61 layers, the first 3 dense.
ModelSpec first_dense() {
  ModelSpec m = alternating();
  m.layers = 61;
  m.moe_layer_step = 1;
  m.first_dense_layers = 3;
  return m;
}

TrainConfig megatron(int pp, int vpp = 1) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.pp = pp;
  c.vpp = vpp;
  c.seq_len = 2048;
  c.flash_attention = true;
  return c;
}

TEST(MoeLayerMix, WhichLayersAreMoe) {
  const ModelSpec a = alternating();
  EXPECT_FALSE(is_moe_layer(a, 0));
  EXPECT_TRUE(is_moe_layer(a, 1));
  EXPECT_TRUE(is_moe_layer(a, 47));
  EXPECT_EQ(moe_layer_count(a), 24);
  const ModelSpec d = first_dense();
  EXPECT_FALSE(is_moe_layer(d, 2));
  EXPECT_TRUE(is_moe_layer(d, 3));
  EXPECT_EQ(moe_layer_count(d), 58);
  ModelSpec plain = d;
  plain.experts = 0;
  EXPECT_EQ(moe_layer_count(plain), 0);
  EXPECT_FALSE(has_dense_layers(plain));
}

// The busiest rank's share: the most MoE layers any rank holds over the most layers.
TEST(MoeLayerMix, ShareOfTheBusiestRank) {
  const ModelSpec a = alternating();
  EXPECT_DOUBLE_EQ(moe_layer_share(a, megatron(1)), 24.0 / 48);
  EXPECT_DOUBLE_EQ(moe_layer_share(a, megatron(4)), 6.0 / 12);  // 12 layers a rank, 6 MoE each
  // pp 16: 3 layers a rank; rank 1 holds layers 3, 4, 5, two of them MoE.
  EXPECT_DOUBLE_EQ(moe_layer_share(a, megatron(16)), 2.0 / 3);
  // pp 4 x vpp 4: chunks of 3 layers, chunk j to rank j mod 4. An odd chunk (layers 3j..3j+2
  // with 3j odd) holds two MoE layers, an even one one: rank 1 holds chunks 1, 5, 9, 13,
  // 8 MoE layers of 12.
  EXPECT_DOUBLE_EQ(moe_layer_share(a, megatron(4, 4)), 8.0 / 12);
  const ModelSpec d = first_dense();
  EXPECT_DOUBLE_EQ(moe_layer_share(d, megatron(1)), 58.0 / 61);
  // pp 8: ceil(61 / 8) = 8 layers a rank; rank 0 holds the 3 dense layers, rank 1 eight MoE.
  EXPECT_DOUBLE_EQ(moe_layer_share(d, megatron(8)), 1.0);
  // The accounted split on 2 ranks: (61 + 1 + 1) / 2 is not whole; with the embedding only,
  // 62 / 2 = 31 units a rank, 30 layers on rank 0 (3 dense) and 31 on rank 1, all MoE.
  TrainConfig acc = megatron(2);
  acc.pp_account_embedding = true;
  EXPECT_DOUBLE_EQ(moe_layer_share(d, acc), 31.0 / 31);
  ModelSpec every = alternating();
  every.moe_layer_step = 1;
  EXPECT_DOUBLE_EQ(moe_layer_share(every, megatron(16)), 1.0);
}

// Parameters: attention 1024 x (1024 + 2 x 256) + 1024 x 1024 = 2,621,440; norms 2 x 1024.
// MoE layer: shared 3 x 1024 x 512 = 1,572,864, router 1024 x 16 = 16,384, experts
// 16 x 3 x 1024 x 512 = 25,165,824. Dense layer: 3 x 1024 x 2048 = 6,291,456.
TEST(MoeLayerMix, ParametersCountEachKindOfLayer) {
  const ModelSpec m = alternating();
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.per_layer(), 2621440 + 2048 + 1572864 + 16384 + 25165824);
  EXPECT_EQ(c.dense_layer(), 2621440 + 2048 + 6291456);
  EXPECT_EQ(c.all_layers(), 24 * c.per_layer() + 24 * c.dense_layer());
  // embedding and head 2 x 1000 x 1024, final norm 1024
  EXPECT_EQ(total_params(m), c.all_layers() + 2 * 1000 * 1024 + 1024);
  // a token runs 1 of the 16 experts: 15 x 3 x 1024 x 512 idle in each of the 24 MoE layers
  EXPECT_EQ(total_params(m) - active_params(m), std::int64_t{24} * 15 * 3 * 1024 * 512);
  // matmul weights a token runs, averaged over the layers: attention, then half MoE
  // (shared + router + one expert: 1,572,864 + 16,384 + 1,572,864) and half dense.
  EXPECT_DOUBLE_EQ(matmul_params_per_layer(m),
                   2621440.0 + 0.5 * (1572864.0 + 16384.0 + 1572864.0) + 0.5 * 6291456.0);
}

// The layer's operators at share s are s x the MoE layer's + (1 - s) x the dense layer's.
TEST(MoeLayerMix, OperatorsBlendTheTwoKinds) {
  const ModelSpec m = alternating();
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 2048;
  k.flash = true;
  k.framework = Framework::megatron;
  k.ep = 4;
  const OpCosts moe = operator_costs(m, gpu, eff, k);  // share 1: an MoE layer
  const OpCosts dense = operator_costs(dense_layer_view(m), gpu, eff, k);
  k.moe_share = 0.5;
  const OpCosts mixed = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR(mixed.fwd.v, 0.5 * (moe.fwd.v + dense.fwd.v), 1e-15);
  EXPECT_NEAR(mixed.bwd.v, 0.5 * (moe.bwd.v + dense.bwd.v), 1e-15);
  EXPECT_NEAR(mixed.fwd_flops_hw.v, 0.5 * (moe.fwd_flops_hw.v + dense.fwd_flops_hw.v), 1.0);
  EXPECT_NEAR(mixed.host.fwd.v, 0.5 * (moe.host.fwd.v + dense.host.fwd.v), 1e-15);
  EXPECT_NE(moe.fwd.v, dense.fwd.v);
  EXPECT_DOUBLE_EQ(mixed.head_fwd.v, moe.head_fwd.v);
}

// Without shared experts an MoE layer keeps one TP pair, a dense layer two: at share 1/2 a
// layer averages 1.5 pairs. The all-to-alls run in the MoE half only.
TEST(MoeLayerMix, CollectivesOfTheMoeLayersOnly) {
  ModelSpec m = alternating();
  m.shared_ffn = 0;
  ModelSpec all = m;
  all.moe_layer_step = 1;
  const Cluster cl = test::cluster(test::dgx_h200(false), 16);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  const CollectiveModel coll(cl.node, eff);
  TrainConfig cfg = megatron(1);
  cfg.tp = 2;
  cfg.dp = 8;
  cfg.ep = 8;
  cfg.sequence_parallel = true;
  const ParallelComm half = parallel_comm(m, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  const ParallelComm full = parallel_comm(all, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  EXPECT_NEAR(half.tp_layer_bwd.v, 1.5 * full.tp_layer_bwd.v, 1e-15);
  EXPECT_NEAR(half.ep_layer_fwd.v, 0.5 * full.ep_layer_fwd.v, 1e-15);
  EXPECT_GT(full.ep_layer_fwd.v, 0.0);
  // The rank's layer parameters: tp 2 splits attention and MLP, ep 8 the 16 experts.
  const StageParams sp = stage_params(m, cfg);
  const ParamCounts c = count_params(m);
  EXPECT_NEAR(sp.layer_expert, 0.5 * c.experts / 8.0, 1e-6);
  EXPECT_NEAR(
      sp.layer,
      (c.attention + 0.5 * c.dense_mlp) / 2.0 + c.layer_norms + 0.5 * c.router + 0.5 * c.experts / 8.0, 1e-6);
}

// Memory: the rank's 16-bit weights are its 48 layers' blend (the router replicated, the
// experts split ep ways) plus the embedding and head split tp ways.
TEST(MoeLayerMix, MemoryHoldsTheBlendedLayers) {
  const ModelSpec m = alternating();
  const Cluster cl = test::cluster(test::dgx_h200(false), 8);
  const MemoryModel mm(m, cl);
  TrainConfig cfg = megatron(1);
  cfg.dp = 8;
  cfg.ep = 8;
  cfg.zero_stage = 1;
  const ParamCounts c = count_params(m);
  const double layer =
      c.attention + c.layer_norms + 0.5 * (c.mlp + c.router + c.experts / 8.0) + 0.5 * c.dense_mlp;
  const double embed = 2.0 * double(padded_vocab(m, 1)) * 1024 + 1024;
  EXPECT_NEAR(mm.estimate(cfg).params.v, 2.0 * (48 * layer + embed), 64.0);
}

// The step: a model whose layers are all MoE, all dense, or alternating prices the
// alternating one's layer passes halfway.
TEST(MoeLayerMix, StepCostsSitBetweenTheKinds) {
  const ModelSpec m = alternating();
  ModelSpec all = m;
  all.moe_layer_step = 1;
  const Cluster cl = test::cluster(test::dgx_h200(false), 8);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  TrainConfig cfg = megatron(1);
  cfg.dp = 8;
  cfg.ep = 8;
  const StepCosts mixed = StepTimeModel(m, cl, eff).costs(cfg);
  const StepCosts moe = StepTimeModel(all, cl, eff).costs(cfg);
  cfg.ep = 1;
  const StepCosts dense = StepTimeModel(dense_layer_view(m), cl, eff).costs(cfg);
  EXPECT_NEAR(mixed.layer.fwd.v, 0.5 * (moe.layer.fwd.v + dense.layer.fwd.v), 1e-12);
  EXPECT_NEAR(mixed.layer.ep_comm_fwd.v, 0.5 * moe.layer.ep_comm_fwd.v, 1e-12);
}

// moe_layers_below counts the MoE layers among the first n in closed form (moe_layer_share
// sums it over each pipeline chunk, so a plan's cost does not grow with the layer count):
// it equals counting is_moe_layer one layer at a time, for leading dense layers, steps and
// both together. E.g. 61 layers, 3 dense first, step 1: 58 below 61, 0 below 3, 7 below 10.
TEST(MoeLayerMix, MoeLayersBelowCountsInClosedForm) {
  ModelSpec m = alternating();
  for (int fd : {0, 1, 3, 7})
    for (int step : {1, 2, 3}) {
      m.first_dense_layers = fd;
      m.moe_layer_step = step;
      int counted = 0;
      for (int n = 0; n <= m.layers; ++n) {
        EXPECT_EQ(moe_layers_below(m, n), counted) << "fd " << fd << " step " << step << " n " << n;
        if (n < m.layers && is_moe_layer(m, n)) ++counted;
      }
    }
  const ModelSpec d = first_dense();
  EXPECT_EQ(moe_layers_below(d, 61), 58);
  EXPECT_EQ(moe_layers_below(d, 3), 0);
  EXPECT_EQ(moe_layers_below(d, 10), 7);
}

}  // namespace
}  // namespace dsplan
