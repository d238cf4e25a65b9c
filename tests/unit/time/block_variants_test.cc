// The block variants of the Llama-style families (docs/model.md §4, "Block variants"):
// Qwen2's Q/K/V biases, Qwen3's query and key norms and Gemma 2's soft-capped logits, each
// priced as the passes it adds. One A100 (2039 GB/s at the blended 0.8: 1.6312e12 B/s,
// 4 us per kernel), DeepSpeed bf16 (eager model code, no autocast), one sequence of 2048,
// a GPT layer of hidden 4096 with 32 heads.
#include <gtest/gtest.h>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "fixtures.h"

namespace dsplan {
namespace {

constexpr double kBlendedBps = 2039e9 * 0.8;

OpKey key() {
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 2048;
  k.flash = true;
  k.precision = Precision::bf16;
  k.framework = Framework::deepspeed;
  return k;
}

ModelSpec layer_model() {
  ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 32000, 1);
  m.linear_bias = false;
  return m;
}

// Biases on Q, K and V alone: the backward reduces the fused QKV output gradient over the
// tokens, 2048 x (3 x 4096) x 2 B = 50,331,648 B -> 30.856 us + one kernel (4 us). Nothing
// changes forward (the bias add is in the GEMM epilogue).
TEST(BlockVariants, QkvBiasAddsTheBiasGradientReduction) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  const OpCosts plain = operator_costs(m, gpu, eff, key());
  m.qkv_bias = true;
  const OpCosts biased = operator_costs(m, gpu, eff, key());
  EXPECT_NEAR(in_us(biased.bwd - plain.bwd), 50331648 / kBlendedBps * 1e6 + 4.0, 1e-6);
  EXPECT_EQ(biased.fwd.v, plain.fwd.v);
}

// Eager RMSNorm over the queries and keys, T x (q + kv) = 2048 x 8192 = 16,777,216 elements:
// forward x.float() (2 + 4), pow, mean, x * rsqrt (20), type_as (4 + 2), * weight (4) =
// 36 B an element, 603,979,776 B -> 370.27 us, and 2 x 6 kernels (48 us); backward
// 4 x 2 + 6 + 44 + 6 = 64 B, 1,073,741,824 B -> 658.25 us, and 2 x 10 kernels (80 us).
TEST(BlockVariants, QkNormIsTwoEagerRmsNormsOverQueriesAndKeys) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  const OpCosts plain = operator_costs(m, gpu, eff, key());
  m.qk_norm = true;
  const OpCosts normed = operator_costs(m, gpu, eff, key());
  EXPECT_NEAR(in_us(normed.fwd - plain.fwd), 603979776 / kBlendedBps * 1e6 + 48.0, 1e-6);
  EXPECT_NEAR(in_us(normed.bwd - plain.bwd), 1073741824 / kBlendedBps * 1e6 + 80.0, 1e-6);
}

// cap * tanh(logits / cap) over 2048 x 32000 16-bit logits: forward 3 passes of r 2, w 2
// (786,432,000 B -> 482.12 us + 12 us), backward 2 + 3 + 2 bytes (917,504,000 B ->
// 562.47 us + 12 us). The tanh output stays for the backward: 2 B a logit more at the loss.
TEST(BlockVariants, LogitSoftcapAddsThreePassesEachWay) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  const OpCosts plain = operator_costs(m, gpu, eff, key());
  m.logit_softcap = true;
  const OpCosts capped = operator_costs(m, gpu, eff, key());
  EXPECT_NEAR(in_us(capped.head_fwd - plain.head_fwd), 786432000 / kBlendedBps * 1e6 + 12.0, 1e-6);
  EXPECT_NEAR(in_us(capped.head_bwd - plain.head_bwd), 917504000 / kBlendedBps * 1e6 + 12.0, 1e-6);
}

// Soft-capped attention scores with standard attention: three passes of r 2, w 2 over the
// b x a x s^2 = 32 x 2048^2 = 134,217,728 scores forward (1,610,612,736 B -> 987.38 us +
// 3 kernels, 12 us), twice the bytes backward (1,974.76 us + 6 kernels, 24 us). FlashAttention
// caps inside the kernel: nothing more.
TEST(BlockVariants, AttentionSoftcapIsThreeScorePassesWithoutFlash) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  OpKey k = key();
  k.flash = false;
  const OpCosts plain = operator_costs(m, gpu, eff, k);
  m.attn_softcap = true;
  const OpCosts capped = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR(in_us(capped.fwd - plain.fwd), 1610612736 / kBlendedBps * 1e6 + 12.0, 1e-6);
  EXPECT_NEAR(in_us(capped.bwd - plain.bwd), 3221225472.0 / kBlendedBps * 1e6 + 24.0, 1e-6);
  k.flash = true;
  EXPECT_EQ(operator_costs(m, gpu, eff, k).fwd.v, operator_costs(layer_model(), gpu, eff, k).fwd.v);
}

}  // namespace
}  // namespace dsplan
