// The split of a layer's forward and backward that --explain reports (OpCosts::fwd_linear,
// bwd_linear, head_fwd_linear, head_bwd_linear; StepTimeModel::operator_split):
// the linear GEMMs are exactly the layer's four linears' GEMMs as estimate_gemm prices them
// (not standard attention's score and context GEMMs, which belong to the attention core),
// and the linears and the core never exceed the pass they are part of.
#include <gtest/gtest.h>

#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// GPT layer, h = 1024, 16 heads, TP 2, micro-batch 2 x 1024 tokens: T = 2048 rows. Megatron
// bf16, standard attention (its QK^T and PV GEMMs are batched GEMMs of the core).
struct Layer {
  GpuSpec gpu = test::a100();
  Efficiency eff = default_efficiency(gpu);
  ModelSpec m = test::gpt("gpt-split", 2, 1024, 16, 1024, 51200, 128);
  OpKey k;
  Layer() {
    k.tp = 2;
    k.micro_batch = 2;
    k.seq_len = 1024;
    k.precision = Precision::bf16;
    k.framework = Framework::megatron;
  }
  Seconds gemm(GemmShape s) const { return estimate_gemm(s, Precision::bf16, gpu, eff).time; }
};

// The four linears on one TP rank, forward y[T, n] = x[T, k] W^T (GemmShape::m_free rows):
// QKV n = 3h/t = 1536, k = h = 1024; projection n = h = 1024, k = h/t = 512;
// FC1 n = 4h/t = 2048, k = 1024; FC2 n = 1024, k = 4h/t = 2048.
// Backward: each linear's data gradient [T, k] = dy[T, n] W (m = T, n = k, k = n) and its
// weight gradient [k, n] = x^T dy (m = k, n = n, k = T, GemmShape::k_free).
TEST(OperatorSplit, LinearTimeIsTheFourLinearsGemms) {
  const Layer l;
  const double T = 2048;
  const double shapes[4][2] = {{1536, 1024}, {1024, 512}, {2048, 1024}, {1024, 2048}};
  Seconds fwd, bwd;
  for (const auto& s : shapes) {
    const double n = s[0], k = s[1];
    fwd += l.gemm({.m = T, .n = n, .k = k, .m_free = true});
    bwd += l.gemm({.m = T, .n = k, .k = n, .m_free = true});
    bwd += l.gemm({.m = k, .n = n, .k = T, .k_free = true});
  }
  const OpCosts o = operator_costs(l.m, l.gpu, l.eff, l.k);
  EXPECT_NEAR(o.fwd_linear.v, fwd.v, 1e-12);
  EXPECT_NEAR(o.bwd_linear.v, bwd.v, 1e-12);
  // The passes hold more than their linears: the core and the memory-bound kernels.
  EXPECT_LT((o.fwd_linear + o.attn_core_fwd).v, o.fwd.v);
  EXPECT_LT((o.bwd_linear + o.attn_core_bwd).v, o.bwd.v);
}

// The head's logits GEMM, vocabulary 51200 over TP 2 (a multiple of 128 x 2: no padding):
// forward [T, 25600] = x[T, 1024] E^T; backward its data and weight gradients. The loss
// kernels over the logits are the rest of the head.
TEST(OperatorSplit, HeadLinearIsTheLogitsGemm) {
  const Layer l;
  const double T = 2048, v = 51200 / 2, h = 1024;
  const OpCosts o = operator_costs(l.m, l.gpu, l.eff, l.k);
  EXPECT_NEAR(o.head_fwd_linear.v, l.gemm({.m = T, .n = v, .k = h, .m_free = true}).v, 1e-12);
  EXPECT_NEAR(
      o.head_bwd_linear.v,
      (l.gemm({.m = T, .n = h, .k = v, .m_free = true}) + l.gemm({.m = h, .n = v, .k = T, .k_free = true})).v,
      1e-12);
  EXPECT_LT(o.head_fwd_linear.v, o.head_fwd.v);
  EXPECT_LT(o.head_bwd_linear.v, o.head_bwd.v);
}

// StepTimeModel::operator_split reports the same split for a configuration's passes: the
// linears and attention core as the operator costs price them, both inside the layer's
// passes of costs() (which add the framework's passes and TP collectives).
TEST(OperatorSplit, StepTimeModelReportsTheSplitOfItsPasses) {
  const Layer l;
  const Cluster c = test::cluster(test::dgx_a100(), 8);
  TrainConfig cfg = test::base_cfg();
  cfg.tp = 2;
  cfg.dp = 4;
  cfg.seq_len = 1024;
  const StepTimeModel model(l.m, c, default_efficiency(c.node.gpu));
  const StepCosts s = model.costs(cfg);
  const OperatorSplit split = model.operator_split(cfg);
  const OpCosts o = operator_costs(l.m, c.node.gpu, default_efficiency(c.node.gpu), l.k);
  EXPECT_NEAR(split.fwd_linear.v, o.fwd_linear.v, 1e-12);
  EXPECT_NEAR(split.bwd_attention.v, o.attn_core_bwd.v, 1e-12);
  EXPECT_LE((split.fwd_linear + split.fwd_attention).v, s.layer.fwd.v);
  EXPECT_LE((split.bwd_linear + split.bwd_attention).v, s.layer.bwd.v);
  EXPECT_NEAR(split.head_fwd_linear.v, o.head_fwd_linear.v, 1e-12);
}

}  // namespace
}  // namespace dsplan
