// FP8 linears (TrainConfig::fp8; docs/model.md §4.1 "FP8 linears"): the FP8 GEMM rate, the
// casts Transformer Engine adds, the once-per-step weight cast, the smaller saved inputs,
// and where FP8 is not available. Hand-derived numbers below.
#include "estimator/time/fp8.h"

#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/memory/activations.h"
#include "estimator/search/space.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "estimator/time/operators.h"
#include "estimator/time/parallel_comm.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// 8192^3 on an H200 (H100 SXM compute), default Hopper efficiency (0.7, k_half 160, 3 us):
//   bf16: peak 132 x 4096 x 1.83 GHz = 989.43 TFLOP/s, F_SM = 989.43e12 x 0.7 / 132
//         = 5.246976e12; 256x128 tiles: 32 x 64 = 2048 CTAs / 132 SMs = 15.52 waves, run
//         stream-K (no 16th partial wave): each SM does 2048 x 8192 / 132 = 127100.12 K steps
//         and meets the per-tile fixed cost 2048/132 + 1 = 16.515 times, 160 K steps each:
//         129742.55 K steps of 2 x 256 x 128 / F_SM = 12.4902 ns = 1620.52 us.
//   fp8:  twice the FLOP/clk (8192), 1978.86 TFLOP/s, at 0.95 of bf16's fraction (0.665:
//         measured FP8/bf16 rates, docs/model.md §4.1 "FP8 linears"), F_SM = 1978.86e12 x
//         0.665 / 132 = 9.969254e12; k_half 2.5 x 160 = 400: 127100.12 + 16.515 x 400 =
//         133706.18 K steps of 65536 / F_SM = 6.5738 ns = 878.96 us (1.84x faster than
//         bf16). Operands are 1 B: 3 x 8192^2 B = 201.3 MB plus the fp32 partials of 132
//         tiles written and read, 8 x 132 x 256 x 128 = 34.6 MB, over 4800 GB/s x 0.8 =
//         61.44 us: compute-bound.
TEST(Fp8, GemmRunsAtTwiceTheRateLessTheLongerFixedCost) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  const GemmEstimate b = estimate_gemm({8192, 8192, 8192, 1}, Precision::bf16, gpu, eff);
  const GemmEstimate f = estimate_gemm({8192, 8192, 8192, 1}, Precision::fp8, gpu, eff);
  EXPECT_TRUE(b.stream_k);
  EXPECT_TRUE(f.stream_k);
  EXPECT_NEAR(b.waves, 2048.0 / 132.0, 1e-12);
  EXPECT_NEAR(in_us(b.t_math), 1620.52, 0.05);
  EXPECT_NEAR(in_us(f.t_math), 878.96, 0.05);
  EXPECT_NEAR(in_us(f.t_mem), 61.44, 0.01);
  EXPECT_NEAR(in_us(f.time), 878.96 + 3.0, 0.05);
}

// FP8 operands need 16-byte (16-element) alignment: 8200 is a multiple of 8, not of 16.
TEST(Fp8, SixteenElementAlignment) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  EXPECT_DOUBLE_EQ(estimate_gemm({8192, 8200, 4096, 1}, Precision::bf16, gpu, eff).eta_align, 1.0);
  EXPECT_DOUBLE_EQ(estimate_gemm({8192, 8200, 4096, 1}, Precision::fp8, gpu, eff).eta_align, 0.2);
}

OpKey megatron_key(bool fp8) {
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 2048;
  k.flash = true;
  k.precision = Precision::bf16;
  k.framework = Framework::megatron;
  k.fp8 = fp8;
  return k;
}

// GPT layer h = 4096 (32 heads, FFN 4h, biases), TP 1, on an H200:
//   weights of the layer: 12 h^2 + 9 h (QKV 3h^2 + 3h, projection h^2 + h, FC1 4h^2 + 4h,
//   FC2 4h^2 + h) = 201,363,456; cast + transpose reads 2 B and writes 1 + 1 B per weight:
//   805,453,824 B / (4800 GB/s x 0.8) = 209.75 us, + 4 kernels x 3 us = 221.75 us, once per step.
// The attention core stays bf16 (same time as without FP8) and the linears get faster.
TEST(Fp8, WeightCastOncePerStepAndAttentionStaysBf16) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts bf = operator_costs(m, gpu, eff, megatron_key(false));
  const OpCosts f8 = operator_costs(m, gpu, eff, megatron_key(true));
  EXPECT_NEAR(in_us(f8.fp8_weight_cast), 221.75, 0.01);
  EXPECT_DOUBLE_EQ(in_us(bf.fp8_weight_cast), 0.0);
  EXPECT_DOUBLE_EQ(in_us(f8.attn_core_fwd), in_us(bf.attn_core_fwd));
  EXPECT_DOUBLE_EQ(in_us(f8.head_fwd), in_us(bf.head_fwd));  // the logits GEMM stays bf16
  EXPECT_LT(f8.fwd.v, bf.fwd.v);
  EXPECT_LT(f8.bwd.v, bf.bwd.v);
}

// The backward's casts: each linear's output gradient is cast and transposed (r 2, w 1 + 1
// B per element): T x (3h + h + 4h + h) x 4 B = 2048 x 36864 x 4 = 301,989,888 B / 3.84e12
// = 78.64 us + 4 x 3 us = 90.64 us. The weight-gradient GEMM of QKV (M = h, N = 3h, K = T)
// is priced at FP8, so the backward minus its FP8 GEMMs and casts is the bf16 backward
// minus its bf16 GEMMs: checked through the QKV wgrad, which is the FP8 GEMM's time. Without
// FlashAttention the attention GEMMs after the linears' in the backward stay bf16.
class Fp8Backward : public ::testing::TestWithParam<bool> {};
TEST_P(Fp8Backward, CastsAndFp8WeightGradients) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k8 = megatron_key(true), kb = megatron_key(false);
  k8.flash = kb.flash = GetParam();
  const OpCosts f8 = operator_costs(m, gpu, eff, k8);
  const Seconds wgrad = gemm_time({4096, 3 * 4096, 2048, 1}, Precision::fp8, gpu, eff);
  EXPECT_DOUBLE_EQ(in_us(f8.wgrad_qkv), in_us(wgrad));
  const OpCosts bf = operator_costs(m, gpu, eff, kb);
  const Seconds wgrad_bf = gemm_time({4096, 3 * 4096, 2048, 1}, Precision::bf16, gpu, eff);
  EXPECT_DOUBLE_EQ(in_us(bf.wgrad_qkv), in_us(wgrad_bf));
  // Every backward GEMM of the layer, FP8 minus bf16, plus the casts, is the difference.
  double gemms = 0;
  const double h = 4096, T = 2048;
  const double shapes[4][3] = {{T, 3 * h, h}, {T, h, h}, {T, 4 * h, h}, {T, h, 4 * h}};
  for (const auto& s : shapes) {
    for (const GemmShape g : {GemmShape{s[0], s[2], s[1], 1}, GemmShape{s[2], s[1], s[0], 1}})
      gemms += gemm_time(g, Precision::fp8, gpu, eff).v - gemm_time(g, Precision::bf16, gpu, eff).v;
  }
  EXPECT_NEAR(in_us(f8.bwd) - in_us(bf.bwd), gemms * 1e6 + 90.64, 0.01);
}
INSTANTIATE_TEST_SUITE_P(Flash, Fp8Backward, ::testing::Bool());

// Per-tensor current scaling reads every tensor for its amax before the cast (r e, one more
// kernel each). Same layer (T = 2048, h = 4096, e = 2, TP 1, no SP; Th = 8,388,608):
//   forward, delayed: 2 x (T h x 2 - T h x 1) + T x 5h x 4 = 22 Th; current: 2 x T h x 6
//   + T x 5h x 6 = 42 Th. 20 Th = 167,772,160 B / 3.84e12 = 43.69 us + 4 kernels x 3 us
//   = 55.69 us more.
//   backward: T x 9h x (6 - 4) = 18 Th = 150,994,944 B: 39.32 us + 4 x 3 us = 51.32 us more.
//   weights once per step: (6 - 4) x 201,363,456 = 402,726,912 B: 104.88 us + 4 x 3 us
//   = 116.88 us more.
TEST(Fp8, CurrentScalingAddsAnAmaxPassPerCast) {
  const ModelSpec m = test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128);
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k = megatron_key(true);
  const OpCosts delayed = operator_costs(m, gpu, eff, k);
  k.fp8_recipe = Fp8Recipe::tensorwise;
  const OpCosts current = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR(in_us(current.fwd) - in_us(delayed.fwd), 55.69, 0.01);
  EXPECT_NEAR(in_us(current.bwd) - in_us(delayed.bwd), 51.32, 0.01);
  EXPECT_NEAR(in_us(current.fp8_weight_cast) - in_us(delayed.fp8_weight_cast), 116.88, 0.01);
}

// Saved linear inputs in FP8 (Korthikanti's GPT-3 layer, s = 2048, h = 12288, a = 96, t = 1):
// sbh (34 + 5as/h) = 114 sbh in 16-bit. FP8 saves the QKV and FC1 inputs (2 sbh each), the
// projection input (2 sbh) and the FC2 input (8 sbh) at half the bytes: 34 - 7 = 27, so
// 107 sbh.
TEST(Fp8, LinearInputsSavedInOneByte) {
  LayerShape x;
  x.b = 1, x.s = 2048, x.h = 12288, x.heads = 96, x.q = 12288, x.kv = 12288, x.f = 4 * 12288, x.t = 1;
  const double sbh = x.s * x.b * x.h;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), 114 * sbh);
  x.fp8 = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), 107 * sbh);
}

// The FP8 weight cache: without the distributed optimizer TE keeps each layer weight's FP8
// copy and its transpose beside the bf16 weight (2 B per layer parameter): 4 layers of
// 12 h^2 + 13 h (linears with biases, two LayerNorms) = 201,379,840 x 4 x 2 B =
// 1,611,038,720 B more buffers. With ZeRO-1 (the distributed optimizer) the FP8 weights and
// their transposes replace the bf16 weights (FP8 parameter gather): nothing extra.
TEST(Fp8, WeightCacheUnlessParametersGatherInFp8) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  const MemoryModel mm(m, test::cluster(test::dgx_h200(true), 8));
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.seq_len = 2048;
  cfg.flash_attention = true;
  const double bf16 = mm.estimate(cfg).buffers.v;
  cfg.fp8 = true;
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).buffers.v - bf16, 1611038720.0);
  cfg.zero_stage = 1;
  const double fp8_z1 = mm.estimate(cfg).buffers.v;
  cfg.fp8 = false;
  EXPECT_DOUBLE_EQ(fp8_z1, mm.estimate(cfg).buffers.v);
}

// Blackwell's FP8 GEMMs take any operand layout, so Transformer Engine keeps per-tensor FP8
// (delayed or current scaling) as one copy there, with no transposes
// (nvte_is_non_tn_fp8_gemm_supported): a cast writes 1 B, not 1 + 1 (delayed e + 1 = 3,
// current 2e + 1 = 5 at e = 2); a weight gathered in FP8 needs nothing; block-scaled
// recipes keep both copies. Memory on a B200 node, the model above: the weight cache holds
// 201,379,840 x 4 x 1 B = 805,519,360 B (half Hopper's), and gathered FP8 parameters hold
// 1 B of the 16-bit weight's 2: 805,519,360 B less.
TEST(Fp8, BlackwellKeepsOneCopyOfPerTensorFp8) {
  EXPECT_TRUE(fp8_single_copy(true, Fp8Recipe::delayed));
  EXPECT_TRUE(fp8_single_copy(true, Fp8Recipe::tensorwise));
  EXPECT_FALSE(fp8_single_copy(true, Fp8Recipe::mxfp8));
  EXPECT_FALSE(fp8_single_copy(true, Fp8Recipe::nvfp4));
  EXPECT_FALSE(fp8_single_copy(false, Fp8Recipe::delayed));
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::delayed, true), 3.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::tensorwise, true), 5.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes(2, Fp8Recipe::mxfp8, true), 4.0625);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, true, Fp8Recipe::delayed, true), 0.0);
  EXPECT_DOUBLE_EQ(fp8_weight_bytes_per_param(2, false, Fp8Recipe::delayed, true), 3.0);
  // Delayed scaling's norm-fed input: the norm writes FP8 (saving e - 1 on Ts x h), no transpose.
  EXPECT_DOUBLE_EQ(fp8_norm_fed_bytes(1000, 1000, 100, 2, Fp8Recipe::delayed, true), -100000.0);
  EXPECT_DOUBLE_EQ(fp8_norm_fed_bytes(1000, 1000, 100, 2, Fp8Recipe::delayed, false), 100000.0);

  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  const MemoryModel mm(m, test::b200_node());
  TrainConfig cfg = test::megatron_dp8();
  const MemoryBreakdown bf16 = mm.estimate(cfg);
  cfg.fp8 = true;
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).buffers.v - bf16.buffers.v, 805519360.0);
  cfg.zero_stage = 1;
  cfg.fp8 = false;
  const double params16 = mm.estimate(cfg).params.v;
  cfg.fp8 = true;
  EXPECT_DOUBLE_EQ(params16 - mm.estimate(cfg).params.v, 805519360.0);
}

// With sequence parallelism Transformer Engine all-gathers the QKV and FC1 inputs as its
// fused norm wrote them, in FP8: a layer's forward moves 2 all-gathers of b s h x 1 B
// instead of x 2 B, and 2 reduce-scatters of 16-bit outputs as before. TP 8 on one H200
// node, b s h = 1 x 4096 x 4096 = 16.8 M elements. The backward's collectives (output
// gradients, input gradients) keep 16 bits, and without SP (all-reduces of GEMM outputs)
// nothing changes.
TEST(Fp8, SequenceParallelGathersTheNormOutputInFp8) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 4096, 50257, 128);
  const SystemSpec node = test::dgx_h200(true);
  const Efficiency eff = default_efficiency(node.gpu);
  const CollectiveModel coll(node, eff);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.tp = 8;
  cfg.seq_len = 4096;
  cfg.sequence_parallel = true;
  const ParallelComm bf = parallel_comm(m, cfg, node, node.gpu, eff, coll, CommParts::tp_only);
  cfg.fp8 = true;
  const ParallelComm f8 = parallel_comm(m, cfg, node, node.gpu, eff, coll, CommParts::tp_only);
  const CommGroup tp = place(cfg, node).tp;
  const double elems = 1.0 * 4096 * 4096;
  const Seconds saved = (coll.time(Collective::all_gather, Bytes(2 * elems), tp) -
                         coll.time(Collective::all_gather, Bytes(elems), tp)) *
                        2.0;
  EXPECT_GT(saved.v, 0.0);
  EXPECT_NEAR(in_us(bf.tp_layer_fwd - f8.tp_layer_fwd), in_us(saved), 1e-6);
  EXPECT_DOUBLE_EQ(f8.tp_layer_bwd.v, bf.tp_layer_bwd.v);
  cfg.sequence_parallel = false;
  const ParallelComm ar8 = parallel_comm(m, cfg, node, node.gpu, eff, coll, CommParts::tp_only);
  cfg.fp8 = false;
  const ParallelComm ar16 = parallel_comm(m, cfg, node, node.gpu, eff, coll, CommParts::tp_only);
  EXPECT_DOUBLE_EQ(ar8.tp_layer_fwd.v, ar16.tp_layer_fwd.v);
}

// FP8 needs FP8 tensor cores and Megatron (Transformer Engine): a result with reasons.
// An MoE layer's FP8 casts (fp8.h, fp8_moe_casts): T 1000 tokens (no sequence parallelism),
// h 100, e 2, the projection's input 100 wide, attention outputs 400 wide in 2 linears, and
// 4000 routed rows (top-4) through experts 50 wide (gated: outputs 2 x 50 + 100 = 200).
// Delayed scaling, 4 B a cast element: forward, QKV's norm-fed input 1000 x 100 x 2 - 1000 x
// 100 x 1 = 100,000, the projection's 1000 x 100 x 4 = 400,000 and the experts' 4000 x (100
// + 50) x 4 = 2,400,000: 2,900,000 in 4 kernels; backward 1000 x 400 x 4 + 4000 x 200 x 4
// = 4,800,000 in 2 + 2. Current scaling, 6 B: forward 1000 x 100 x 6 + 600,000 + 3,600,000
// = 4,800,000, backward 7,200,000, kernels doubled. A shared expert 30 wide adds its up
// input 1000 x 100 and down input 1000 x 30, cast: 1000 x 130 x 4 = 520,000 and 2 kernels.
TEST(Fp8, MoeCastsCoverTheRoutedRows) {
  Fp8Casts c = fp8_moe_casts(1000, 1000, 100, 2, 100, 0, 400, 2, 4000, 50, 200, Fp8Recipe::delayed);
  EXPECT_DOUBLE_EQ(c.fwd_bytes, 2'900'000.0);
  EXPECT_DOUBLE_EQ(c.bwd_bytes, 4'800'000.0);
  EXPECT_EQ(c.fwd_kernels, 4);
  EXPECT_EQ(c.bwd_kernels, 4);
  c = fp8_moe_casts(1000, 1000, 100, 2, 100, 0, 400, 2, 4000, 50, 200, Fp8Recipe::tensorwise);
  EXPECT_DOUBLE_EQ(c.fwd_bytes, 4'800'000.0);
  EXPECT_DOUBLE_EQ(c.bwd_bytes, 7'200'000.0);
  EXPECT_EQ(c.fwd_kernels, 8);
  EXPECT_EQ(c.bwd_kernels, 8);
  c = fp8_moe_casts(1000, 1000, 100, 2, 100, 30, 400, 2, 4000, 50, 200, Fp8Recipe::delayed);
  EXPECT_DOUBLE_EQ(c.fwd_bytes, 2'900'000.0 + 520'000.0);
  EXPECT_EQ(c.fwd_kernels, 6);
}

TEST(Fp8, InfeasibleWithoutFp8TensorCoresOrOutsideMegatron) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  SearchSpace s;
  s.run.framework = Framework::megatron;
  s.run.fp8 = true;
  TrainConfig cfg;
  const Cluster a100 = test::cluster(test::dgx_a100(), 8);
  const auto why =
      make_config(s, m, a100, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.back().find("no FP8 tensor cores"), std::string::npos);
  const Cluster h200 = test::cluster(test::dgx_h200(true), 8);
  EXPECT_TRUE(
      make_config(s, m, h200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg)
          .empty());
  s.run.framework = Framework::deepspeed;
  const auto ds =
      make_config(s, m, h200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg);
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds.back().find("Megatron"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
