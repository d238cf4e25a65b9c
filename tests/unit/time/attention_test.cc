// The FlashAttention core's price (estimator/time/operators.cc, docs/model.md §4 "Operator
// costs"): its FLOPs at the kernel's rate, with the K/V re-reads of each query block served
// from L2, the causal kernel's rate, and Transformer Engine's cuDNN attention for Megatron
// on Hopper. Hand-derived numbers below.
#include <gtest/gtest.h>

#include <array>

#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "fixtures.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

OpKey flash_key(Framework f, int seq) {
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = seq;
  k.flash = true;
  k.precision = Precision::bf16;
  k.framework = f;
  return k;
}

// GPT layer with 32 heads of 128 (h 4096), causal, one sequence of 2048, bf16, on an A100:
//   causal blocks: n = 2048/128 = 16, (n+1)/(2n) = 17/32 = 0.53125.
//   FLOPs = 4 x 32 x 2048^2 x 128 x 0.53125 = 36,507,222,016.
//   rate = 311.8848e12 (108 SMs x 2048 x 1.41 GHz) x 0.8 (GEMM) x 0.8 (FA2 on Ampere)
//          x 0.9 (causal) = 179.6456e12 FLOP/s  ->  203.22 us, + 4 us kernel overhead.
//   K/V of one head: 2 x 2048 x 128 x 2 B = 1 MiB; heads in flight ceil(108/16) = 7 -> 7 MiB,
//   inside the 40 MiB L2, so HBM sees Q, K, V, O once: 2 x 32 x 2048 x 128 x 4 = 64 MiB,
//   41.1 us at 2039 GB/s x 0.8: compute-bound. (Were every query block's K/V re-read from
//   HBM, 2 x 32 x 2048 x 128 x (2 + 2 x 0.53125 x 16) = 364 MB would take 223 us and the
//   kernel would look memory-bound, which FA2's measured causal rates contradict.)
TEST(FlashAttention, A100CausalIsComputeBound) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts c = operator_costs(m, gpu, eff, flash_key(Framework::deepspeed, 2048));
  EXPECT_NEAR(in_us(c.attn_core_fwd), 203.22 + 4.0, 0.05);
}

// The backward: 2.5x the forward FLOPs at 0.85 of its rate, 2x its bytes (still L2-served):
// 36,507,222,016 x 2.5 / (179.6456e12 x 0.85) = 597.70 us (+ 4 us). The backward of the
// whole layer contains it; recompute with selective checkpointing redoes the forward core.
TEST(FlashAttention, BackwardIsTwoAndAHalfForwards) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k = flash_key(Framework::deepspeed, 2048);
  const OpCosts flash = operator_costs(m, gpu, eff, k);
  k.flash = false;
  const OpCosts standard = operator_costs(m, gpu, eff, k);
  // Only the attention core differs between the two, in each pass.
  const double core_bwd_flash = 597.70e-6 + 4e-6;
  EXPECT_LT(flash.bwd.v, standard.bwd.v);
  EXPECT_GT(flash.bwd.v, core_bwd_flash);
}

// Non-causal (a BERT-style encoder) runs all n x n blocks at the full rate: the same layer
// has 32/17 x the causal FLOPs at 1/0.9 x the causal rate, so its core takes
// (32/17) x 0.9 = 1.694 x the causal core's compute time.
TEST(FlashAttention, NonCausalRunsEveryBlockAtTheFullRate) {
  ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const OpKey k = flash_key(Framework::deepspeed, 2048);
  const double causal = operator_costs(m, gpu, eff, k).attn_core_fwd.v - eff.kernel_overhead.v;
  m.causal = false;
  const double full = operator_costs(m, gpu, eff, k).attn_core_fwd.v - eff.kernel_overhead.v;
  EXPECT_NEAR(full / causal, 32.0 / 17.0 * 0.9, 1e-9);
}

// Megatron on Hopper runs Transformer Engine, which picks cuDNN's fused attention over FA2
// there; it is priced at 0.8 of the GEMM rate against FA2's 0.5 (FlashAttention-3 paper,
// Fig. 5: cuDNN 1.6-1.7x FA2 on an H100). So the compute-bound core is 1.6x faster. On
// Ampere both run FA2-class kernels at the same rate.
TEST(FlashAttention, MegatronOnHopperRunsCudnnAttention) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 4096, 50257, 128);
  for (const bool hopper : {true, false}) {
    const GpuSpec gpu = hopper ? test::h200() : test::a100();
    const Efficiency eff = default_efficiency(gpu);
    const double te =
        operator_costs(m, gpu, eff, flash_key(Framework::megatron, 4096)).attn_core_fwd.v -
        eff.kernel_overhead.v;
    const double fa2 =
        operator_costs(m, gpu, eff, flash_key(Framework::fsdp, 4096)).attn_core_fwd.v -
        eff.kernel_overhead.v;
    EXPECT_NEAR(fa2 / te, hopper ? 1.6 : 1.0, 1e-9) << (hopper ? "hopper" : "ampere");
  }
}

// --attention pins the kernel. On Hopper, relative to FA2's 0.5 of the GEMM rate: cuDNN
// 0.8 (1.6x) and FA3 0.875 (1.75x; FlashAttention-3 paper, Fig. 5, FA3 at 1.73-1.81x FA2),
// for any framework; auto is cuDNN for Megatron and FA2 otherwise (previous test). On
// Ampere every choice runs at FA2's rate (no FA3 there, no published cuDNN advantage).
// Those are the rates at 2048 tokens; at 4096 (n = 32 rows, E = 32 x 33/2 = 528 causal
// blocks) FA3's larger fixed work per row (c = 1 against FA2's and cuDNN's 0.6) gains more:
//   FA2:  (528/(528 + 0.6 x 32)) / (136/(136 + 0.6 x 16)) = 0.964912/0.934066 = 1.033024
//   FA3:  (528/(528 + 32)) / (136/(136 + 16))             = 0.942857/0.894737 = 1.053782
// so FA3 is 1.75 x 1.053782/1.033024 = 1.785165x FA2 there, and cuDNN still 1.6x.
TEST(FlashAttention, PinnedKernel) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 4096, 50257, 128);
  for (const bool hopper : {true, false}) {
    const GpuSpec gpu = hopper ? test::h200() : test::a100();
    const Efficiency eff = default_efficiency(gpu);
    auto core = [&](AttentionKernel kernel) {
      OpKey k = flash_key(Framework::fsdp, 4096);
      k.attention = kernel;
      return operator_costs(m, gpu, eff, k).attn_core_fwd.v - eff.kernel_overhead.v;
    };
    const double fa2 = core(AttentionKernel::fa2);
    EXPECT_DOUBLE_EQ(core(AttentionKernel::auto_), fa2);
    EXPECT_NEAR(fa2 / core(AttentionKernel::cudnn), hopper ? 1.6 : 1.0, 1e-9);
    EXPECT_NEAR(fa2 / core(AttentionKernel::fa3), hopper ? 1.785165 : 1.0, 1e-6);
  }
}

// The FlashAttention-3 paper's H100 curves (Shah et al. 2024, Figs. 5-6: bf16, head dim
// 128, 16 heads, batch x sequence = 16k tokens; its TFLOP/s count a causal kernel's FLOPs
// as half the full square's), which the fixed work per row of blocks was read from. Causal
// forward at 2k/4k/8k/16k: FA2 298/319/333/335, cuDNN 484/518/529/539, FA3 521/579/602/616;
// non-causal backward (2.5x the forward's FLOPs): FA2 291/310/318/322, cuDNN 465/499/518/516,
// FA3 501/542/559/561. dsplan's cores reproduce every point within 6%. With the rates held at
// their 2048-token values, FA3's causal forward at 16k would be 12% slow (541 against 616).
TEST(FlashAttention, RatesFollowTheFlashAttention3PapersCurves) {
  struct Curve {
    AttentionKernel kernel;
    std::array<double, 4> causal_fwd, noncausal_bwd;
  };
  const std::array<Curve, 3> curves{{
      {AttentionKernel::fa2, {298, 319, 333, 335}, {291, 310, 318, 322}},
      {AttentionKernel::cudnn, {484, 518, 529, 539}, {465, 499, 518, 516}},
      {AttentionKernel::fa3, {521, 579, 602, 616}, {501, 542, 559, 561}},
  }};
  const GpuSpec gpu = test::h200();  // the H100's SMs and clocks
  const Efficiency eff = default_efficiency(gpu);
  const std::array<int, 4> seqs{2048, 4096, 8192, 16384};
  for (const Curve& c : curves) {
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      const int s = seqs[i];
      ModelSpec m = test::gpt("fa3-paper", 1, 2048, 16, s, 50257, 128);
      OpKey k = flash_key(Framework::fsdp, s);
      k.micro_batch = 16384 / s;
      k.attention = c.kernel;
      const double full = 4.0 * k.micro_batch * 16 * double(s) * s * 128;  // one forward, every score
      const double fwd = operator_costs(m, gpu, eff, k).attn_core_fwd.v - eff.kernel_overhead.v;
      EXPECT_NEAR(full / 2 / fwd / 1e12 / c.causal_fwd[i], 1.0, 0.06) << int(c.kernel) << " fwd " << s;
      m.causal = false;
      const double bwd = operator_costs(m, gpu, eff, k).attn_core_bwd.v - eff.kernel_overhead.v;
      EXPECT_NEAR(2.5 * full / bwd / 1e12 / c.noncausal_bwd[i], 1.0, 0.06) << int(c.kernel) << " bwd " << s;
    }
  }
}

// flash-attn's Triton kernel (FlashAttention-2 paper §4.1: FA2 1.3-1.5x faster forward, ~2x
// backward) on the A100 layer of A100CausalIsComputeBound:
//   forward: 36,507,222,016 FLOPs at 179.6456e12 / 1.4 = 128.318e12 FLOP/s -> 284.51 us
//            (FA2: 203.22 us), + 4 us kernel overhead.
//   backward: 2.5 x 36,507,222,016 = 91.268e9 FLOPs; FA2 at 179.6456e12 x 0.85 = 152.699e12
//             -> 597.70 us; Triton at half that rate -> 1195.40 us, 597.70 us more. Both
//             compute-bound (2 x 64 MiB of HBM traffic takes 82 us).
TEST(FlashAttention, TritonKernel) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k = flash_key(Framework::fsdp, 2048);
  k.attention = AttentionKernel::fa2;
  const OpCosts fa2 = operator_costs(m, gpu, eff, k);
  k.attention = AttentionKernel::triton;
  const OpCosts triton = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR(in_us(triton.attn_core_fwd), 284.51 + 4.0, 0.05);
  EXPECT_NEAR(in_us(triton.bwd) - in_us(fa2.bwd), 597.70, 0.05);
  EXPECT_DOUBLE_EQ(triton.fwd_flops_hw.v, fa2.fwd_flops_hw.v);  // same work, slower
}

// A sliding window of 512 keys on the layer of A100CausalIsComputeBound (n = 16 blocks of
// 128): query block q needs min(q, m) + 1 key blocks with m = ceil(511/128) = 4, so
// 16 + 4 x 3/2 + (16 - 4) x 4 = 70 of the 256 blocks run instead of 17 x 16 / 2 = 136.
// Its rows are short, so their fixed work (0.6 blocks each for FA2's forward) weighs more:
// the rate is (70/(70 + 0.6 x 16)) / (136/(136 + 0.6 x 16)) = 0.879397/0.934066 = 0.941472
// of the causal 2048-token one.
//   FLOPs = 4 x 32 x 2048^2 x 128 x 70/256 = 18,790,481,920 at 179.6456e12 x 0.941472
//   FLOP/s -> 111.10 us (+ 4 us); still compute-bound (HBM sees Q, K, V, O once: 41.1 us).
// With the window on half the layers the priced layer averages the blocks (the fixed work
// per row is the same in both kinds of layer): (70 + 136)/2 = 103 of 256 ->
// 27,648,851,968 FLOPs at 179.6456e12 x (103/112.6)/0.934066 = x 0.979313 -> 157.16 us.
// A window as long as the sequence changes nothing (m = 16 >= n).
TEST(FlashAttention, SlidingWindowSkipsTheBlocksOutsideIt) {
  ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const OpKey k = flash_key(Framework::deepspeed, 2048);
  m.attention_window = 512;
  EXPECT_NEAR(in_us(operator_costs(m, gpu, eff, k).attn_core_fwd), 111.10 + 4.0, 0.05);
  m.window_layers = 16;  // of 32
  EXPECT_NEAR(in_us(operator_costs(m, gpu, eff, k).attn_core_fwd), 157.16 + 4.0, 0.05);
  m.attention_window = 2048;
  m.window_layers = 0;
  EXPECT_NEAR(in_us(operator_costs(m, gpu, eff, k).attn_core_fwd), 203.22 + 4.0, 0.05);
  // Standard attention materialises every score whatever the window: no saving.
  OpKey standard = k;
  standard.flash = false;
  ModelSpec full = m;
  full.attention_window = 0;
  m.attention_window = 512;
  EXPECT_EQ(operator_costs(m, gpu, eff, standard).fwd.v, operator_costs(full, gpu, eff, standard).fwd.v);
}

// A sliding window of w keys: a query at position i attends to min(i + 1, w) keys, so a
// windowed layer's attention FLOPs are (w(w+1)/2 + (s - w)w) / (s(s+1)/2) of a causal one's.
// s = 2048, w = 512: (131,328 + 786,432) / 2,098,176 = 0.437408; the attention term of
// ModelFlopsFollowMegatron (the s/(12h) in its bracket) shrinks by that factor, or by
// (1 + 0.437408)/2 with the window on half the layers.
TEST(SlidingWindow, ModelFlopsCountTheKeysAttended) {
  ModelSpec m = test::gpt_1b();
  m.vocab_pad_multiple = 1;
  const TrainConfig cfg = test::base_cfg();
  const double B = 2 * 4, s = 2048, L = 24, h = 2048, V = 51200;
  auto flops = [&](double attention_share) {
    return 72 * B * s * L * h * h * (1 + attention_share * s / (12 * h) + V / (12 * L * h));
  };
  const double windowed = (512.0 * 513 / 2 + (2048.0 - 512) * 512) / (2048.0 * 2049 / 2);
  m.attention_window = 512;
  EXPECT_NEAR(test::a100_model(m, 8).estimate(cfg).model_flops.v / flops(windowed), 1.0, 1e-9);
  m.window_layers = 12;
  EXPECT_NEAR(test::a100_model(m, 8).estimate(cfg).model_flops.v / flops((1 + windowed) / 2), 1.0, 1e-9);
}

}  // namespace
}  // namespace dsplan
