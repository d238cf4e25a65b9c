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

// The operator costs of layer_model() without and with `edit`, on the A100 with `k`.
struct Pair {
  OpCosts plain, changed;
};
template <class Edit>
Pair costs_with(Edit edit, const OpKey& k = key()) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  Pair p{operator_costs(m, gpu, eff, k), {}};
  edit(m);
  p.changed = operator_costs(m, gpu, eff, k);
  return p;
}

// Time of `bytes` at the blended HBM rate plus `kernels` launches, in microseconds.
double us_of(double bytes, int kernels) { return bytes / kBlendedBps * 1e6 + 4.0 * kernels; }

// Biases on Q, K and V alone: the backward reduces the fused QKV output gradient over the
// tokens, 2048 x (3 x 4096) x 2 B = 50,331,648 B -> 30.856 us + one kernel (4 us). Nothing
// changes forward (the bias add is in the GEMM epilogue).
TEST(BlockVariants, QkvBiasAddsTheBiasGradientReduction) {
  const Pair p = costs_with([](ModelSpec& m) { m.qkv_bias = true; });
  EXPECT_NEAR(in_us(p.changed.bwd - p.plain.bwd), us_of(50331648, 1), 1e-6);
  EXPECT_EQ(p.changed.fwd.v, p.plain.fwd.v);
}

// Eager RMSNorm over the queries and keys, T x (q + kv) = 2048 x 8192 = 16,777,216 elements:
// forward x.float() (2 + 4), pow, mean, x * rsqrt (20), type_as (4 + 2), * weight (4) =
// 36 B an element, 603,979,776 B -> 370.27 us, and 2 x 6 kernels (48 us); backward the
// chain's 14 kernels (elementwise.cc, eager_rmsnorm: 6 x 2 + 68 + two casts of 6 = 92 B),
// 1,543,503,872 B -> 946.24 us, and 2 x 14 kernels (112 us).
TEST(BlockVariants, QkNormIsTwoEagerRmsNormsOverQueriesAndKeys) {
  const Pair p = costs_with([](ModelSpec& m) { m.qk_norm = true; });
  EXPECT_NEAR(in_us(p.changed.fwd - p.plain.fwd), us_of(603979776, 12), 1e-6);
  EXPECT_NEAR(in_us(p.changed.bwd - p.plain.bwd), us_of(1543503872, 28), 1e-6);
}

// torch.nn.RMSNorm (NormKernel::torch) under torch autocast (framework ddp, bf16): a norm of
// a 16-bit input meets an fp32 weight and runs PyTorch 2.9-2.14's fallback chain, priced
// as the eager chain with its two casts; elsewhere it is the fused kernel. Over the query
// and key heads, n = 2048 x 8192 = 16,777,216 elements: forward eager 36 B in 2 x 6 kernels
// against fused 2 x 2 B in 2 x 1, a difference of 32 n = 536,870,912 B -> 329.13 us and 10
// kernels; backward eager 92 B in 2 x 14 against fused 2 x 4 B in 2 x 2, 84 n =
// 1,409,286,144 B -> 863.96 us and 24 kernels. The GPT layer's LayerNorms do not change.
// Under DeepSpeed (no autocast: input and weight share a dtype) torch is the fused kernel.
TEST(BlockVariants, TorchRmsNormFallsBackOnSixteenBitInputsUnderAutocast) {
  OpKey k = key();
  k.framework = Framework::ddp;
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  ModelSpec m = layer_model();
  m.qk_norm = true;
  const auto costs = [&](NormKernel n, const OpKey& base) {
    OpKey kk = base;
    kk.norm_kernel = n;
    return operator_costs(m, gpu, eff, kk);
  };
  const OpCosts torch = costs(NormKernel::torch, k), fused = costs(NormKernel::fused, k);
  EXPECT_NEAR(in_us(torch.fwd - fused.fwd), us_of(536870912, 10), 1e-6);
  EXPECT_NEAR(in_us(torch.bwd - fused.bwd), us_of(1409286144, 24), 1e-6);
  const OpCosts ds_torch = costs(NormKernel::torch, key()), ds_fused = costs(NormKernel::fused, key());
  EXPECT_EQ(ds_torch.fwd.v, ds_fused.fwd.v);
  EXPECT_EQ(ds_torch.bwd.v, ds_fused.bwd.v);
}

// cap * tanh(logits / cap) over 2048 x 32000 16-bit logits: forward 3 passes of r 2, w 2
// (786,432,000 B -> 482.12 us + 12 us), backward 2 + 3 + 2 bytes (917,504,000 B ->
// 562.47 us + 12 us). The tanh output stays for the backward: 2 B a logit more at the loss.
TEST(BlockVariants, LogitSoftcapAddsThreePassesEachWay) {
  const Pair p = costs_with([](ModelSpec& m) { m.logit_softcap = true; });
  EXPECT_NEAR(in_us(p.changed.head_fwd - p.plain.head_fwd), us_of(786432000, 3), 1e-6);
  EXPECT_NEAR(in_us(p.changed.head_bwd - p.plain.head_bwd), us_of(917504000, 3), 1e-6);
}

// Soft-capped attention scores with standard attention: three passes of r 2, w 2 over the
// b x a x s^2 = 32 x 2048^2 = 134,217,728 scores forward (1,610,612,736 B -> 987.38 us +
// 3 kernels, 12 us), twice the bytes backward (1,974.76 us + 6 kernels, 24 us). FlashAttention
// caps inside the kernel: one tanh on the special-function units per score it computes,
// the causal 17/32 of 16 x 16 blocks: 32 x 2048^2 x 17/32 = 71,303,168 tanh at 16 per SM
// per clock (108 SMs at 1410 MHz: 2.43648e12 /s) = 29.2649 us, forward and backward.
TEST(BlockVariants, AttentionSoftcapIsThreeScorePassesOrATanhPerScoreInFlash) {
  OpKey standard = key();
  standard.flash = false;
  const auto cap = [](ModelSpec& m) { m.attn_softcap = true; };
  const Pair p = costs_with(cap, standard);
  EXPECT_NEAR(in_us(p.changed.fwd - p.plain.fwd), us_of(1610612736, 3), 1e-6);
  EXPECT_NEAR(in_us(p.changed.bwd - p.plain.bwd), us_of(3221225472.0, 6), 1e-6);
  const Pair flash = costs_with(cap);
  EXPECT_NEAR(in_us(flash.changed.fwd - flash.plain.fwd), 29.2649, 1e-3);
  EXPECT_NEAR(in_us(flash.changed.bwd - flash.plain.bwd), 29.2649, 1e-3);
}

}  // namespace
}  // namespace dsplan
