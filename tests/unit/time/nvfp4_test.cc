// NVFP4 linears (Fp8Recipe::nvfp4, Precision::nvfp4; estimator/time/fp8.h, docs/model.md §4.1
// "NVFP4"): E2M1 operands with an E4M3 scale per 16 elements (9/16 B an element) at the FP4
// tensor peak; every activation and gradient cast is an amax pass plus a row-wise and a
// Hadamard column-wise quantization (3e + 9/8 B in three kernels), the weights an amax pass
// plus one 16 x 16 quantization, or a transpose when gathered in NVFP4. Blackwell only.
// Hand-derived numbers below.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/ds_config.h"
#include "estimator/memory.h"
#include "estimator/memory/activations.h"
#include "estimator/search/space.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/fp8.h"
#include "estimator/time/gemm.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// e = 2: a cast reads 2 (amax) + 2 (row-wise) + 2 (column-wise) and writes 2 x 9/16:
// 7.125 B in 3 kernels. Weights: 2 + 2 + 2 x 9/16 = 5.125 B in 2 kernels, or gathered in
// NVFP4 a transpose, 9/16 + 9/16 = 1.125 B.
TEST(Nvfp4, CastBytesAndKernels) {
  EXPECT_DOUBLE_EQ(kNvfp4Bytes, 0.5625);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::nvfp4), 7.125);
  EXPECT_EQ(fp8_cast_kernels(Fp8Recipe::nvfp4), 3);
  EXPECT_EQ(fp8_weight_cast_kernels(Fp8Recipe::nvfp4), 2);
  EXPECT_EQ(fp8_weight_cast_kernels(Fp8Recipe::tensorwise), 2);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, false, Fp8Recipe::nvfp4), 5.125);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, true, Fp8Recipe::nvfp4), 1.125);
  EXPECT_DOUBLE_EQ(linear_operand_bytes(Fp8Recipe::nvfp4), 0.5625);
  EXPECT_DOUBLE_EQ(linear_operand_bytes(Fp8Recipe::mxfp8), 1.0);
  EXPECT_DOUBLE_EQ(element_bytes(Precision::nvfp4), 0.5625);
}

// B200: 148 SMs x 32768 FLOP/clk x 1856 MHz = 9.0010e15 FLOP/s, four times bf16's 2.2502e15.
// A Hopper GPU has no FP4 peak.
TEST(Nvfp4, PeakIsFourTimesBf16OnB200) {
  EXPECT_NEAR(test::b200().matmul_peak(Precision::nvfp4).v, 148.0 * 32768 * 1856e6, 1e6);
  EXPECT_DOUBLE_EQ(test::b200().matmul_peak(Precision::nvfp4).v,
                   4.0 * test::b200().matmul_peak(Precision::bf16).v);
  EXPECT_DOUBLE_EQ(test::h200().matmul_peak(Precision::nvfp4).v, 0.0);
}

// A large square GEMM runs faster in NVFP4 than in FP8, but not twice as fast: at the same
// share of a peak twice as high its main loop takes twice the K steps to reach half rate
// (k_half 5x bf16's against FP8's 2.5x). K = 16,400 is a multiple of 16, not of 32: aligned
// for FP8, misaligned for NVFP4 (0.2 of the rate), so it costs more than K = 16,384.
TEST(Nvfp4, GemmFasterThanFp8ButNotTwice) {
  const GpuSpec gpu = test::b200();
  const Efficiency eff = default_efficiency(gpu);
  const GemmShape sq{8192, 8192, 8192};
  const double fp8 = estimate_gemm(sq, Precision::fp8, gpu, eff).time.v;
  const double fp4 = estimate_gemm(sq, Precision::nvfp4, gpu, eff).time.v;
  EXPECT_LT(fp4, fp8);
  EXPECT_GT(fp4, 0.5 * fp8);
  const GemmShape odd{8192, 8192, 16400}, even{8192, 8192, 16384};
  EXPECT_GT(estimate_gemm(odd, Precision::nvfp4, gpu, eff).time.v,
            2.0 * estimate_gemm(even, Precision::nvfp4, gpu, eff).time.v);
  EXPECT_LT(estimate_gemm(odd, Precision::fp8, gpu, eff).time.v,
            1.01 * 16400.0 / 16384.0 * estimate_gemm(even, Precision::fp8, gpu, eff).time.v);
}

OpKey megatron_low_precision(Fp8Recipe r) {
  OpKey k = test::megatron_key(1);
  k.seq_len = 2048;
  k.fp8 = true;
  k.fp8_recipe = r;
  return k;
}

// The GPT layer of mxfp8_test.cc (T = 2048, h = 4096, FFN 4h, biases, e = 2, TP 1, no SP;
// Th = 8,388,608; 4 linears; 201,363,456 layer parameters) on a B200, whose memory passes
// stream at 7700 GB/s x 0.8 = 6.16e12 B/s with 3 us a kernel; delayed scaling keeps one
// FP8 copy there (mxfp8_test.cc):
//   forward casts, delayed: 13 Th in 2 kernels; NVFP4: (2 + 5) Th x 7.125 = 49.875 Th in 12:
//   36.875 Th = 309,329,920 B = 50.2159 us and 10 kernels (30 us) more, 80.2159 us.
//   backward casts: T x 9h x (7.125 - 3) = 37.125 Th = 311,427,072 B = 50.5563 us, and 12
//   kernels against 4: 74.5563 us more.
//   weights once per step, cast: (5.125 - 3) x 201,363,456 = 427,897,344 B = 69.4639 us and
//   8 kernels against 4: 81.4639 us more; gathered: NVFP4's transpose 1.125 B/param =
//   226,533,888 B = 36.7750 us in 4 kernels against delayed scaling's nothing: 48.7750 us more.
// The layer's linear GEMMs run on NVFP4 operands: less time than FP8's, more than half.
TEST(Nvfp4, LayerCastsAgainstDelayedScaling) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::b200();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts delayed = operator_costs(m, gpu, eff, megatron_low_precision(Fp8Recipe::delayed));
  const OpCosts fp4 = operator_costs(m, gpu, eff, megatron_low_precision(Fp8Recipe::nvfp4));
  auto non_gemm_fwd = [](const OpCosts& o) { return in_us(o.fwd) - in_us(o.fwd_linear); };
  auto non_gemm_bwd = [](const OpCosts& o) { return in_us(o.bwd) - in_us(o.bwd_linear); };
  EXPECT_NEAR(non_gemm_fwd(fp4) - non_gemm_fwd(delayed), 80.2159, 0.001);
  EXPECT_NEAR(non_gemm_bwd(fp4) - non_gemm_bwd(delayed), 74.5563, 0.001);
  EXPECT_NEAR(in_us(fp4.fp8_weight_cast) - in_us(delayed.fp8_weight_cast), 81.4639, 0.001);
  EXPECT_NEAR(in_us(fp4.fp8_weight_transpose) - in_us(delayed.fp8_weight_transpose), 48.7750, 0.001);
  EXPECT_LT(fp4.fwd_linear.v, delayed.fwd_linear.v);
  EXPECT_GT(fp4.fwd_linear.v, 0.5 * delayed.fwd_linear.v);
  EXPECT_LT(fp4.bwd_linear.v, delayed.bwd_linear.v);
}

// Each linear saves its input as the column-wise NVFP4 copy, 9/16 B instead of FP8's 1: the
// QKV and FC1 inputs (2 x h), the projection's (q) and FC2's (f) for 2048 tokens: 0.4375 x
// 2048 x (8192 + 4096 + 16384) = 25,690,112 B less.
TEST(Nvfp4, SavedLinearInputsAreNineSixteenthsOfAByte) {
  LayerShape x;
  x.b = 1, x.s = 2048, x.h = 4096, x.heads = 32, x.q = 4096, x.kv = 4096, x.f = 16384, x.norms = 2;
  x.fp8 = true;
  const LayerActivation fp8 = layer_activation(x);
  x.nvfp4 = true;
  const LayerActivation fp4 = layer_activation(x);
  EXPECT_DOUBLE_EQ((fp8.replicated + fp8.sharded) - (fp4.replicated + fp4.sharded), 25'690'112.0);
}

// NVFP4's weight copies: without the distributed optimizer the two cached NVFP4 copies add
// 9/16 + 9/16 B per layer parameter beside the bf16 weight: 4 layers of 12 h^2 + 13 h =
// 201,379,840 x 4 x 1.125 B = 906,209,280 B more buffers. With ZeRO-1 the parameters are
// the NVFP4 tensors (NVFP4 parameter gather): 2 - 1.125 = 0.875 B a layer parameter less
// than the bf16 weights, 704,829,440 B fewer parameter bytes, and no extra buffers.
TEST(Nvfp4, WeightCopiesAndParametersGatheredInNvfp4) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  const MemoryModel mm(m, test::b200_node());
  TrainConfig cfg = test::megatron_dp8();
  const MemoryBreakdown bf16 = mm.estimate(cfg);
  cfg.fp8 = true;
  cfg.fp8_recipe = Fp8Recipe::nvfp4;
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).buffers.v - bf16.buffers.v, 906209280.0);
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).params.v, bf16.params.v);
  cfg.zero_stage = 1;
  const MemoryBreakdown fp4_z1 = mm.estimate(cfg);
  cfg.fp8 = false;
  const MemoryBreakdown bf16_z1 = mm.estimate(cfg);
  EXPECT_DOUBLE_EQ(bf16_z1.params.v - fp4_z1.params.v, 704829440.0);
  EXPECT_DOUBLE_EQ(fp4_z1.buffers.v, bf16_z1.buffers.v);
  // Megatron-FSDP keeps a 1/8 shard: 704,829,440 / 8 = 88,103,680 B less.
  cfg.zero_stage = 3;
  const MemoryBreakdown bf16_z3 = mm.estimate(cfg);
  cfg.fp8 = true;
  EXPECT_DOUBLE_EQ(bf16_z3.params.v - mm.estimate(cfg).params.v, 88103680.0);
}

// FP4 tensor cores are Blackwell's: on a Hopper node an NVFP4 configuration is no
// configuration, with the reason; on a B200 node it is one.
TEST(Nvfp4, BlackwellOnly) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  SearchSpace s;
  s.run.framework = Framework::megatron;
  s.run.fp8 = true;
  s.run.fp8_recipe = Fp8Recipe::nvfp4;
  EXPECT_TRUE(s.run.nvfp4());
  EXPECT_EQ(s.run.linear_precision(), Precision::nvfp4);
  TrainConfig cfg;
  const Cluster h200 = test::cluster(test::dgx_h200(true), 8);
  const auto why =
      make_config(s, m, h200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.front().find("has no FP4 tensor cores"), std::string::npos);
  const Cluster b200 =
      test::cluster(test::node(test::b200(), 8, IntraTopology::nvswitch, 900, 8, 400, 716.8), 8);
  EXPECT_TRUE(
      make_config(s, m, b200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg)
          .empty());
}

// Megatron-LM takes NVFP4 as --fp4-format e2m1 --fp4-recipe nvfp4 (never with --fp8-format)
// and, with the distributed optimizer, --fp4-param-gather.
TEST(Nvfp4, MegatronArgumentsUseTheFp4Flags) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.precision = Precision::bf16;
  c.fp8 = true;
  c.fp8_recipe = Fp8Recipe::nvfp4;
  c.zero_stage = 1;
  c.seq_len = 2048;
  const auto a = megatron_args(c, test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128));
  auto after = [&](const std::string& flag) {
    const auto at = std::find(a.begin(), a.end(), flag);
    return at == a.end() || at + 1 == a.end() ? std::string("(absent)") : *(at + 1);
  };
  EXPECT_EQ(after("--fp4-format"), "e2m1");
  EXPECT_EQ(after("--fp4-recipe"), "nvfp4");
  EXPECT_NE(std::find(a.begin(), a.end(), "--fp4-param-gather"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--fp8-format"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--fp8-param-gather"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--fp8-recipe"), a.end());
}

}  // namespace
}  // namespace dsplan
