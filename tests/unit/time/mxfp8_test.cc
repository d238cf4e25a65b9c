// MXFP8 block scaling (Fp8Recipe::mxfp8; estimator/time/fp8.h, docs/model.md §4.1 "FP8
// linears"): each cast quantizes the 16-bit tensor twice, row- and column-wise, with an E8M0
// scale per 32 elements, in one kernel and with no amax pass; the norm's output is cast like
// any activation, and the weights are quantized both ways every step. Only Blackwell has the
// block-scaled tensor cores. Hand-derived numbers below.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/ds_config.h"
#include "estimator/search/space.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/fp8.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// Bytes per cast element, e = 2: delayed 2 + 2 = 4; current scaling 2 x 2 + 2 = 6 (the amax
// read first); MXFP8 2 + 1 + 1 + 2/32 = 4.0625. One kernel a cast, two with current scaling.
TEST(Mxfp8, CastBytesAndKernels) {
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::delayed), 4.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::tensorwise), 6.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::mxfp8), 4.0625);
  EXPECT_EQ(fp8_cast_kernels(Fp8Recipe::mxfp8), 1);
  EXPECT_EQ(fp8_cast_kernels(Fp8Recipe::tensorwise), 2);
  // Weights once per step: a gathered FP8 weight is transposed (r 1, w 1), except in MXFP8,
  // whose column-wise copy is quantized from the 16-bit weight again.
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, true, Fp8Recipe::tensorwise), 2.0);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, true, Fp8Recipe::mxfp8), 4.0625);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, false, Fp8Recipe::mxfp8), 4.0625);
}

// The MoE layer of fp8_test.cc's MoeCastsCoverTheRoutedRows (T 1000, h 100, projection input
// 100, attention outputs 400 in 2 linears, 4000 routed rows, experts 50 wide, outputs 200) at
// 4.0625 B a cast element: forward QKV's norm output 1000 x 100 + the projection's 1000 x 100
// + the experts' 4000 x 150 = 800,000 elements = 3,250,000 B in 4 kernels; backward 1000 x 400
// + 4000 x 200 = 1,200,000 elements = 4,875,000 B in 2 + 2.
TEST(Mxfp8, MoeCasts) {
  const Fp8Casts c = fp8_moe_casts(1000, 1000, 100, 2, 100, 0, 400, 2, 4000, 50, 200, Fp8Recipe::mxfp8);
  EXPECT_DOUBLE_EQ(c.fwd_bytes, 3'250'000.0);
  EXPECT_DOUBLE_EQ(c.bwd_bytes, 4'875'000.0);
  EXPECT_EQ(c.fwd_kernels, 4);
  EXPECT_EQ(c.bwd_kernels, 4);
}

// time_fixtures.h's Megatron key at TP 1, one 2048-token sequence a micro-batch, FP8 linears.
OpKey megatron_fp8(Fp8Recipe r) {
  OpKey k = test::megatron_key(1);
  k.seq_len = 2048;
  k.fp8 = true;
  k.fp8_recipe = r;
  return k;
}

// A GPT layer (T = 2048, h = 4096, FFN 4h, biases, e = 2, TP 1, no SP; Th = 8,388,608) on a
// B200, whose memory passes stream at 7700 GB/s x 0.8 = 6.16e12 B/s with 3 us a kernel.
// Delayed scaling there keeps one FP8 copy (Blackwell's FP8 GEMMs take any layout, fp8.h):
//   forward, delayed: the norm writes FP8 and nothing is transposed, -(e - 1) Th for each
//   of the two norm-fed inputs, and the projection and FC2 inputs T x 5h x 3 = 15 Th: 13 Th
//   in 2 kernels. MXFP8: 2 x Th x 4.0625 + T x 5h x 4.0625 = 28.4375 Th in 4: 15.4375 Th =
//   129,499,136 B = 21.0226 us and 2 kernels (6 us) more, 27.0226 us.
//   backward: T x 9h x (4.0625 - 3) = 9.5625 Th = 80,216,064 B more: 13.0221 us.
//   weights once per step (201,363,456 layer parameters): the cast (4.0625 - 3) B/param
//   more, 213,948,672 B = 34.7319 us; gathered in FP8 a delayed-scaling weight needs
//   nothing, MXFP8's both quantizations 4.0625 B/param = 818,039,040 B = 132.7985 us and 4
//   kernels (12 us): 144.7985 us.
// Current scaling's casts stay dearer than MXFP8's forward: 2 x T x h x 5 + T x 5h x 5 =
// 35 Th and 8 kernels against 28.4375 Th and 4. (The differences above leave out the GEMMs,
// which MXFP8 runs block-scaled.)
TEST(Mxfp8, LayerCastsAgainstDelayedScaling) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::b200();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts delayed = operator_costs(m, gpu, eff, megatron_fp8(Fp8Recipe::delayed));
  const OpCosts mx = operator_costs(m, gpu, eff, megatron_fp8(Fp8Recipe::mxfp8));
  const OpCosts current = operator_costs(m, gpu, eff, megatron_fp8(Fp8Recipe::tensorwise));
  EXPECT_NEAR(in_us(mx.fwd - mx.fwd_linear) - in_us(delayed.fwd - delayed.fwd_linear), 27.0226, 0.001);
  EXPECT_NEAR(in_us(mx.bwd - mx.bwd_linear) - in_us(delayed.bwd - delayed.bwd_linear), 13.0221, 0.001);
  EXPECT_NEAR(in_us(mx.fp8_weight_cast) - in_us(delayed.fp8_weight_cast), 34.7319, 0.001);
  EXPECT_NEAR(in_us(mx.fp8_weight_transpose) - in_us(delayed.fp8_weight_transpose), 144.7985, 0.001);
  EXPECT_DOUBLE_EQ(delayed.fp8_weight_transpose.v, 0.0);
  EXPECT_GT(current.fwd.v - current.fwd_linear.v, mx.fwd.v - mx.fwd_linear.v);
  // The GEMMs are the FP8 GEMMs, block-scaled: at 0.951 of their rate (gemm_blackwell_te_test.cc).
  EXPECT_NEAR(mx.fwd_linear.v * 0.951, delayed.fwd_linear.v, 1e-12);
  EXPECT_NEAR(mx.bwd_linear.v * 0.951, delayed.bwd_linear.v, 1e-12);
  EXPECT_DOUBLE_EQ(current.fwd_linear.v, delayed.fwd_linear.v);
}

// Block-scaled MMA is Blackwell's: on a Hopper node an MXFP8 configuration is no
// configuration, with the reason; on a B200 node it is one.
TEST(Mxfp8, BlackwellOnly) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  SearchSpace s;
  s.run.framework = Framework::megatron;
  s.run.fp8 = true;
  s.run.fp8_recipe = Fp8Recipe::mxfp8;
  TrainConfig cfg;
  const Cluster h200 = test::cluster(test::dgx_h200(true), 8);
  const auto why =
      make_config(s, m, h200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.back().find("MXFP8 block scaling needs Blackwell"), std::string::npos);
  const Cluster b200 =
      test::cluster(test::node(test::b200(), 8, IntraTopology::nvswitch, 900, 8, 400, 716.8), 8);
  EXPECT_TRUE(
      make_config(s, m, b200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg)
          .empty());
}

// Megatron-LM's --fp8-recipe takes the recipe by name; MXFP8 runs E4M3 throughout (no hybrid
// E5M2 gradients) and keeps no amax history.
TEST(Mxfp8, MegatronArgumentsNameTheRecipe) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.precision = Precision::bf16;
  c.fp8 = true;
  c.fp8_recipe = Fp8Recipe::mxfp8;
  c.seq_len = 2048;
  const auto a = megatron_args(c, test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128));
  const auto at = std::find(a.begin(), a.end(), "--fp8-recipe");
  ASSERT_NE(at, a.end());
  ASSERT_NE(at + 1, a.end());
  EXPECT_EQ(*(at + 1), "mxfp8");
  const auto format = std::find(a.begin(), a.end(), "--fp8-format");
  ASSERT_NE(format, a.end());
  EXPECT_EQ(*(format + 1), "e4m3");
  EXPECT_EQ(std::find(a.begin(), a.end(), "--fp8-amax-history-len"), a.end());
}

}  // namespace
}  // namespace dsplan
