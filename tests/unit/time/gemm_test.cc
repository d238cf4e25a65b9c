// GEMM model: hand-derived tile, wave and time arithmetic on A100, V100 and Hopper.
#include "estimator/time/gemm.h"

#include <gtest/gtest.h>

#include <vector>

#include "estimator/time/efficiency_defaults.h"
#include "fixtures.h"

namespace dsplan {
namespace {

using test::a100;
using test::b200;
using test::h200;
using test::v100;

// 4096^3 bf16 on A100-80GB with the default efficiency (0.8 of peak, k_half 64, 4 us):
//   peak = 108 SMs x 2048 FLOP/clk x 1.41 GHz = 311.87 TFLOP/s; F_SM = 311.87e12 x 0.8 / 108
//        = 2.3101e12 FLOP/s per SM.
//   256x128 tiles: 16 x 32 = 512 CTAs on 108 SMs -> ceil(4.74) = 5 waves, eta_wave = 512/540.
//   eta_k = 4096 / (4096 + 64) = 0.98462.
//   one wave = 2 x 256 x 128 x 4096 / (2.3101e12 x 0.98462) = 118.02 us; 5 waves = 590.1 us.
//   (128x128 with 2 CTAs/SM: 1024 CTAs / 216 slots = 5 waves of 124.2 us = 621 us: slower.)
//   HBM: 2 B x 3 x 4096^2 = 100.7 MB / (2039 GB/s x 0.8) = 61.7 us < 590 us: compute-bound.
//   time = 590.1 + 4 = 594.1 us -> 137.4 GFLOP / 594.1 us = 231 TFLOP/s (74% of peak).
TEST(Gemm, A100Bf16Cube4096) {
  const GpuSpec gpu = a100();
  const Efficiency eff = default_efficiency(gpu);
  const GemmEstimate g = estimate_gemm({4096, 4096, 4096, 1}, Precision::bf16, gpu, eff);
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_DOUBLE_EQ(g.tiles, 512);
  EXPECT_DOUBLE_EQ(g.waves, 5);
  EXPECT_NEAR(g.eta_wave, 512.0 / 540.0, 1e-12);
  EXPECT_NEAR(g.eta_k, 4096.0 / 4160.0, 1e-12);
  EXPECT_DOUBLE_EQ(g.eta_tile, 1.0);
  EXPECT_NEAR(in_us(g.t_math), 590.1, 0.2);
  EXPECT_NEAR(in_us(g.t_mem), 61.7, 0.1);
  EXPECT_NEAR(in_us(g.time), 594.1, 0.2);
  EXPECT_NEAR(g.flops.v / g.time.v / 1e12, 231.3, 0.3);
}

// Reference §3: 1792^2 outputs make 7 x 14 = 98 tiles of 256x128, one wave at 98/108 = 91%.
TEST(Gemm, WaveQuantisationOneWave) {
  const GpuSpec gpu = a100();
  const GemmEstimate g = estimate_gemm({1792, 1792, 4096, 1}, Precision::fp16, gpu, default_efficiency(gpu));
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_DOUBLE_EQ(g.waves, 1);
  EXPECT_NEAR(g.eta_wave, 98.0 / 108.0, 1e-12);
  EXPECT_NEAR(in_us(g.t_math), 118.02, 0.05);  // one wave, as above
}

// 2048^2 with 256x128 would be 128 tiles = 2 waves at 59% (236 us). 128x64 tiles (2 per SM,
// 0.85 relative efficiency): 16 x 32 = 512 CTAs / 216 slots = 3 waves of
// 2 x 2 x 128 x 64 x 4096 / (2.3101e12 x 0.85 x 0.98462) = 69.42 us -> 208.3 us, so the
// smaller tile wins, as cuBLAS's heuristics pick it.
TEST(Gemm, SmallerTileBeatsHalfEmptySecondWave) {
  const GpuSpec gpu = a100();
  const GemmEstimate g = estimate_gemm({2048, 2048, 4096, 1}, Precision::fp16, gpu, default_efficiency(gpu));
  EXPECT_EQ(g.tile_m, 128);
  EXPECT_EQ(g.tile_n, 64);
  EXPECT_DOUBLE_EQ(g.waves, 3);
  EXPECT_NEAR(in_us(g.t_math), 208.3, 0.2);
}

// A vocabulary of 50257 is not a multiple of 8: since cuBLAS 11 Volta keeps its tensor
// cores with narrow loads, at half rate. Both shapes take the same tiles and waves
// (ceil(50257/128) = ceil(50304/128) = 393 columns of tiles), so the math time is
// 1/0.5 = 2x the padded vocabulary's, less 47/50304 fewer columns of work.
TEST(Gemm, MisalignedVocabularyIsSlowerOnVolta) {
  const GpuSpec gpu = v100();
  const Efficiency eff = default_efficiency(gpu);
  const GemmEstimate odd = estimate_gemm({8192, 50257, 1024, 1}, Precision::fp16, gpu, eff);
  const GemmEstimate pad = estimate_gemm({8192, 50304, 1024, 1}, Precision::fp16, gpu, eff);
  EXPECT_DOUBLE_EQ(odd.eta_align, 0.5);
  EXPECT_DOUBLE_EQ(pad.eta_align, 1.0);
  EXPECT_EQ(odd.waves, pad.waves);
  EXPECT_NEAR(odd.t_math.v / pad.t_math.v, 2.0, 1e-9);
}

// On Hopper a misaligned 16-bit GEMM runs sm75 align1 kernels: 0.17-0.24 of the aligned
// rate in dsplan's H100 measurements (docs/model.md §4.1), taken as 0.2; Ampere keeps 0.5.
// GPT-2's logits (vocab 50257) under 8192 tokens: the math time is 1/0.2 = 5x the padded
// vocabulary's, less the 47/50304 fewer columns (both use the same tiles and waves).
TEST(Gemm, MisalignedGemmOnHopperRunsAtAFifth) {
  const GpuSpec h = h200();  // same SMs and tensor rate as the H100 SXM
  const Efficiency eff = default_efficiency(h);
  const GemmEstimate odd = estimate_gemm({8192, 50257, 768, 1}, Precision::bf16, h, eff);
  const GemmEstimate pad = estimate_gemm({8192, 50304, 768, 1}, Precision::bf16, h, eff);
  EXPECT_DOUBLE_EQ(odd.eta_align, 0.2);
  EXPECT_DOUBLE_EQ(pad.eta_align, 1.0);
  EXPECT_EQ(odd.waves, pad.waves);
  EXPECT_NEAR(odd.t_math.v / pad.t_math.v, 5.0, 1e-9);
  const GpuSpec a = a100();
  EXPECT_DOUBLE_EQ(estimate_gemm({8192, 50257, 768, 1}, Precision::bf16, a, default_efficiency(a)).eta_align, 0.5);
}

// A linear's token count is no operand's leading dimension (x[T, k], W[n, k] and y[T, n] are
// row-major with leading dimensions k, k and n), so 2047 tokens cost only their work, as
// DeepBench's NN GEMMs with an unpadded n = 9124 ran at the full tensor rate on V100. Forward
// (2047, 4096, 4096) with m free against 2048 tokens: the same 256x128 tiles (ceil(2047/256) =
// 8 rows of them), the same waves, so the same math time; unmarked it pays the half rate.
// The weight gradient (4096, 4096, K = 2047) with k free: a wave's math time goes as
// K / eta(K) = K + k_half, so 2111/2112 = 0.9995 of the aligned time. FP8 keeps the check
// (Transformer Engine requires
// every dimension to be a multiple of 16).
TEST(Gemm, TokenCountOfALinearNeedsNoAlignment) {
  const GpuSpec a = a100();
  const Efficiency eff = default_efficiency(a);
  const GemmEstimate aligned = estimate_gemm({2048, 4096, 4096}, Precision::bf16, a, eff);
  const GemmEstimate free_m =
      estimate_gemm({.m = 2047, .n = 4096, .k = 4096, .m_free = true}, Precision::bf16, a, eff);
  const GemmEstimate unmarked = estimate_gemm({2047, 4096, 4096}, Precision::bf16, a, eff);
  EXPECT_DOUBLE_EQ(free_m.eta_align, 1.0);
  EXPECT_DOUBLE_EQ(free_m.t_math.v, aligned.t_math.v);
  EXPECT_DOUBLE_EQ(unmarked.eta_align, 0.5);
  const GemmEstimate wgrad =
      estimate_gemm({.m = 4096, .n = 4096, .k = 2047, .k_free = true}, Precision::bf16, a, eff);
  EXPECT_DOUBLE_EQ(wgrad.eta_align, 1.0);
  EXPECT_NEAR(wgrad.t_math.v / estimate_gemm({4096, 4096, 2048}, Precision::bf16, a, eff).t_math.v, 0.9995,
              1e-4);
  // The free flag covers only its own dimension: a misaligned width still pays.
  EXPECT_DOUBLE_EQ(
      estimate_gemm({.m = 2048, .n = 4095, .k = 4096, .m_free = true}, Precision::bf16, a, eff).eta_align,
      0.5);
  const GpuSpec h = h200();
  const GemmShape fp8_rows{.m = 2040, .n = 4096, .k = 4096, .m_free = true};  // 2040 = 16 x 127 + 8
  EXPECT_LT(estimate_gemm(fp8_rows, Precision::fp8, h, default_efficiency(h)).eta_align, 1.0);
}

// Per-head attention GEMMs with a head dimension that is not a multiple of 8 start every
// head at a misaligned address; before Hopper they ran without tensor cores, at the fp32
// FMA rate (fp32 accumulation): A100 19.5 / 312 = 0.0625, V100 15.667 / 125.3 = 0.125
// (108 x 1.41 GHz x 128 FP32 FLOP/clk; 80 x 1.53 GHz x 128 vs x 1024). Q K^T of BigScience's
// 128-head, hidden 13824 runs on TP 4: 32 heads x micro-batch 2, s = 2048, head dim 108.
// Hopper keeps tensor cores: 0.45 of the aligned rate for the per-head products (measured on
// an H200 in session 22: 0.50, 0.43, 0.40 for d = 108, 150, 450), 0.2 for a plain misaligned
// GEMM (its align1 kernels). Before Hopper a plain misaligned GEMM keeps 0.5.
TEST(Gemm, MisalignedAttentionGemmsLeaveTensorCoresBeforeHopper) {
  const GpuSpec a = a100();
  const Efficiency eff = default_efficiency(a);
  const GemmEstimate odd = estimate_gemm({2048, 2048, 108, 64, true}, Precision::fp16, a, eff);
  const GemmEstimate even = estimate_gemm({2048, 2048, 112, 64}, Precision::fp16, a, eff);
  EXPECT_NEAR(odd.eta_align, 19.5 / 312.0, 1e-3);
  EXPECT_DOUBLE_EQ(even.eta_align, 1.0);
  EXPECT_GT(odd.time.v, 10.0 * even.time.v);
  // A misaligned sequence length (2047) with an aligned head dimension is the plain case.
  EXPECT_DOUBLE_EQ(estimate_gemm({2047, 2047, 112, 64}, Precision::fp16, a, eff).eta_align, 0.5);
  const GpuSpec v = v100();
  EXPECT_NEAR(estimate_gemm({512, 512, 150, 96, true}, Precision::fp16, v, default_efficiency(v)).eta_align, 0.125,
              1e-3);
  const GpuSpec h = h200();
  EXPECT_DOUBLE_EQ(
      estimate_gemm({2048, 2048, 108, 64, true}, Precision::bf16, h, default_efficiency(h)).eta_align, 0.45);
  EXPECT_DOUBLE_EQ(estimate_gemm({8192, 50257, 768, 1}, Precision::bf16, h, default_efficiency(h)).eta_align,
                   0.2);
}

// The memo returns exactly estimate_gemm's answer, on a miss and on a hit, also when more
// shapes than its slots evict each other (3 x 1500 shapes over 1024 slots, two passes in
// opposite orders), and keeps precisions apart.
TEST(Gemm, MemoReturnsTheEstimateItCaches) {
  const GpuSpec gpu = a100();
  const Efficiency eff = default_efficiency(gpu);
  GemmMemo memo;
  std::vector<GemmShape> shapes;
  for (int i = 1; i <= 1500; ++i) {
    shapes.push_back({2048.0, 128.0 * (i % 40 + 1), 64.0 * (i / 40 + 1), 1});
    shapes.push_back({1024.0 * (i % 7 + 1), 4096.0, 8.0 * i, 1});
    shapes.push_back({2048.0, 2048.0, 64.0 + i % 3, double(i % 50 + 1), i % 2 == 0});
  }
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t j = 0; j < shapes.size(); ++j) {
      const GemmShape& s = shapes[pass == 0 ? j : shapes.size() - 1 - j];
      ASSERT_DOUBLE_EQ(memo.get(s, Precision::bf16, gpu, eff).time.v,
                       estimate_gemm(s, Precision::bf16, gpu, eff).time.v);
    }
  const GemmShape s{4096, 4096, 4096, 1};
  EXPECT_DOUBLE_EQ(memo.get(s, Precision::bf16, gpu, eff).time.v,
                   estimate_gemm(s, Precision::bf16, gpu, eff).time.v);
  EXPECT_DOUBLE_EQ(memo.get(s, Precision::fp32, gpu, eff).time.v,
                   estimate_gemm(s, Precision::fp32, gpu, eff).time.v);
  EXPECT_GT(memo.get(s, Precision::fp32, gpu, eff).time.v,
            4.0 * memo.get(s, Precision::bf16, gpu, eff).time.v);
}

// fp32 on V100 uses the fp32 pipe: 80 x 128 x 1.53 GHz = 15.667 TFLOP/s, x 0.89 default
// (14 of 15.7 TFLOP/s measured), F_SM = 15.667e12 x 0.89 / 80 = 1.742954e11. The pipe runs at 128/1024 = 1/8
// of the fp16 tensor rate, so the per-tile fixed cost is 64/8 = 8 K-steps: eta_k = 4096/4104. 4096^3 with
// 256x128 tiles: 512 CTAs on 80 SMs = ceil(6.4) = 7 waves, each 2 x 256 x 128 x 4096 / (1.742954e11 x
// 0.998051) = 1.54313 ms -> 10.802 ms. The operand penalty of smaller tiles shrinks 8x on this pipe, and a
// SIMT CTA runs at the SM's full rate alone (one CTA per SM at a time, gemm.cc's `simt`):
//   128x128 (1 - 0.05/8 = 0.99375): 32 x 32 = 1024 CTAs / 80 = ceil(12.8) = 13 waves, each
//     2 x 128 x 128 x 4096 / (1.742954e11 x 0.99375 x 0.998051) = 0.77641 ms -> 10.093 ms;
//   128x64 (0.98125): 2048 / 80 = ceil(25.6) = 26 waves of 0.39316 ms = 10.222 ms;
//   64x64 (0.9625): 4096 / 80 = ceil(51.2) = 52 waves of 0.20042 ms = 10.422 ms.
// So 128x128 wins at 10.093 ms.
TEST(Gemm, Fp32UsesVectorPipeOnVolta) {
  const GpuSpec gpu = v100();
  const GemmEstimate g = estimate_gemm({4096, 4096, 4096, 1}, Precision::fp32, gpu, default_efficiency(gpu));
  EXPECT_DOUBLE_EQ(g.eta_align, 1.0);
  EXPECT_EQ(g.tile_m, 128);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_EQ(g.ctas_per_sm, 1);
  EXPECT_DOUBLE_EQ(g.waves, 13);
  EXPECT_NEAR(g.eta_k, 4096.0 / 4104.0, 1e-12);
  EXPECT_NEAR(in_ms(g.t_math), 10.093, 0.01);
}

// A partial wave on the fp32 pipe costs the most CTAs one SM holds, not a full wave of
// co-resident CTAs. BERT-large's attention-output GEMM at 4 x 512 tokens (M 2048, N 1024,
// K 1024) on V100: 128x128 tiles give 16 x 8 = 128 CTAs, at most 2 per SM (48 SMs hold 2,
// 32 hold 1), so 2 CTA-times of 2 x 128 x 128 x 1024 / (1.742954e11 x 0.99375 x 1024/1032)
// = 0.19524 ms each: 0.3905 ms. Priced as a tensor-core wave (2 CTAs per SM sharing its
// rate, 160 slots) the same 128 CTAs would be one wave of 2 x 0.19524 ms as well; the
// difference shows with 64x64 tiles: 512 CTAs are ceil(512/80) = 7 SIMT waves of
// 2 x 64 x 64 x 1024 / (1.742954e11 x 0.9625 x 1024/1032) = 0.0504 ms = 0.353 ms, against
// ceil(512/320) = 2 shared waves of 4 x 0.0504 ms = 0.403 ms. 64x64 wins: 0.353 ms.
TEST(Gemm, Fp32PartialWavesRunAtTheFullSmRate) {
  const GpuSpec gpu = v100();
  const GemmEstimate g = estimate_gemm({2048, 1024, 1024, 1}, Precision::fp32, gpu, default_efficiency(gpu));
  EXPECT_EQ(g.tile_m, 64);
  EXPECT_EQ(g.tile_n, 64);
  EXPECT_DOUBLE_EQ(g.waves, 7);
  EXPECT_NEAR(in_ms(g.t_math), 0.353, 0.002);
}

// BERT-base's FFN GEMM at 220 x 128 tokens (M 28160, N 3072, K 768). On tensor cores the
// per-tile fixed cost is k_half = 64 K-steps: eta_k = 768/832 = 0.9231. On the fp32 pipe
// (1/8 of the tensor rate) the same time is 8 K-steps: eta_k = 768/776 = 0.9897, and the
// small-tile operand penalty shrinks 8x too (128x128: 1 - 0.05/8 = 0.99375).
TEST(Gemm, FixedTileCostsScaleWithThePipeRate) {
  const GpuSpec gpu = v100();
  const Efficiency eff = default_efficiency(gpu);
  const GemmEstimate h = estimate_gemm({28160, 3072, 768, 1}, Precision::fp16, gpu, eff);
  const GemmEstimate f = estimate_gemm({28160, 3072, 768, 1}, Precision::fp32, gpu, eff);
  EXPECT_NEAR(h.eta_k, 768.0 / 832.0, 1e-12);
  EXPECT_NEAR(f.eta_k, 768.0 / 776.0, 1e-12);
  // 256x128: ceil(28160/256) x 24 = 110 x 24 = 2640 CTAs on 80 SMs = 33 waves, no tail.
  EXPECT_DOUBLE_EQ(f.waves, 33);
  // fp32 time = 33 x 2 x 256 x 128 x 768 / (1.742954e11 x 0.98969) = 33 x 291.78 us = 9.629 ms.
  EXPECT_NEAR(in_ms(f.t_math), 9.629, 0.01);
}

// Narrow outputs with a long K (a weight-gradient GEMM) split K to fill the SMs.
TEST(Gemm, SplitKFillsTheMachineForWeightGradients) {
  const GpuSpec gpu = a100();
  const GemmEstimate g = estimate_gemm({768, 768, 65536, 1}, Precision::bf16, gpu, default_efficiency(gpu));
  EXPECT_GT(g.tiles, 3 * 6);  // more CTAs than the 3 x 6 output tiles of 256x128
  EXPECT_GT(g.eta_wave, 18.0 / 108.0);
}

TEST(Gemm, MemoryBoundWhenKIsTiny) {
  const GpuSpec gpu = a100();
  const GemmEstimate g = estimate_gemm({65536, 65536, 8, 1}, Precision::bf16, gpu, default_efficiency(gpu));
  EXPECT_GT(g.t_mem.v, g.t_math.v);
}

// Stream-K on Hopper (docs/model.md §4.1 "Stream-K on Hopper"). 2048 x 2560 x 5120 bf16 on
// an H200 (F_SM = 989.43e12 x 0.7 / 132 = 5.246976e12, k_half 160, 3 us):
//   256x128: 8 x 20 = 160 tiles on 132 SMs, 2 waves of 2 x 256 x 128 x 5120 / (F_SM x
//     5120/5280) = 65.95 us = 131.9 us with waves; 128x64 (2 per SM, 0.85): 640 tiles / 264
//     slots = 3 waves of 38.79 us = 116.38 us, the best with waves (119.38 us in all).
//   Stream-K, 256x128: each SM runs 160 x 5120 / 132 = 6206.06 K steps and meets the
//     per-tile fixed cost (160 K steps) 160/132 + 1 = 2.2121 times: 6206.06 + 353.94 = 6560
//     K steps of 2 x 256 x 128 / F_SM = 12.4902 ns = 81.936 us. HBM: operands and result
//     2 x (2048 x 5120 + 5120 x 2560 + 2048 x 2560) = 57.67 MB plus the fp32 partials of
//     132 tiles written and read, 8 x 132 x 256 x 128 = 34.60 MB, over 3840 GB/s = 24.03 us.
//   time = 81.936 + 3 = 84.94 us. The H200 measured 71.1 us (755 TFLOP/s, h200_gpt-13b
//   records): 1.19x, the level every large GEMM sits at (sustained, not burst, clocks),
//   where the waves made it 1.68x.
TEST(Gemm, StreamKLeavesNoPartialWaveOnHopper) {
  const GpuSpec gpu = h200();
  const GemmEstimate g = estimate_gemm({2048, 2560, 5120, 1}, Precision::bf16, gpu, default_efficiency(gpu));
  EXPECT_TRUE(g.stream_k);
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_DOUBLE_EQ(g.tiles, 160);
  EXPECT_NEAR(g.waves, 160.0 / 132.0, 1e-12);
  EXPECT_DOUBLE_EQ(g.eta_wave, 1.0);
  EXPECT_NEAR(in_us(g.t_math), 81.936, 0.01);
  EXPECT_NEAR(in_us(g.t_mem), 24.03, 0.01);
  EXPECT_NEAR(in_us(g.time), 84.94, 0.01);
}

// Where stream-K does not apply: tiles that fill whole waves, batched products (per-head
// attention), pre-Hopper GPUs, and the fp32 pipe.
TEST(Gemm, StreamKOnlyForPartialWavesOfPlainHopperGemms) {
  const GpuSpec h = h200(), a = a100();
  const Efficiency he = default_efficiency(h), ae = default_efficiency(a);
  // 8448 x 512 with 256x128 tiles: 33 x 4 = 132 tiles, one full wave: no tail to spread.
  const GemmEstimate whole = estimate_gemm({8448, 512, 4096, 1}, Precision::bf16, h, he);
  EXPECT_FALSE(whole.stream_k);
  EXPECT_DOUBLE_EQ(whole.waves, 1);
  // The same 2048 x 2560 x 5120 as 4 batched products keeps its waves (batch 4: 640 tiles).
  EXPECT_FALSE(estimate_gemm({2048, 2560, 5120, 4}, Precision::bf16, h, he).stream_k);
  EXPECT_FALSE(estimate_gemm({2048, 2560, 5120, 1}, Precision::bf16, a, ae).stream_k);
  EXPECT_FALSE(estimate_gemm({2048, 2560, 5120, 1}, Precision::fp32, h, he).stream_k);
  // Too few tiles for one wave: split-K as before, not stream-K (64 tiles of 256x128).
  EXPECT_FALSE(estimate_gemm({2048, 1024, 4096, 1}, Precision::bf16, h, he).stream_k);
}

// Stream-K never costs more than the wave schedule it replaces, and at a whole number of
// waves plus a sliver it removes nearly a whole wave: 2048 x 4224 (8 x 33 = 264 tiles of
// 256x128 = 2 waves exactly) against 2048 x 4352 (8 x 34 = 272 tiles: 3 waves with waves,
// 272/132 = 2.06 under stream-K).
TEST(Gemm, StreamKTurnsATailWaveIntoASliver) {
  const GpuSpec gpu = h200();
  const Efficiency eff = default_efficiency(gpu);
  const double exact = estimate_gemm({2048, 4224, 4096, 1}, Precision::bf16, gpu, eff).t_math.v;
  const GemmEstimate tail = estimate_gemm({2048, 4352, 4096, 1}, Precision::bf16, gpu, eff);
  EXPECT_TRUE(tail.stream_k);
  // Per output column the tail costs at most a few per cent more, not the 50% of a third wave.
  EXPECT_LT(tail.t_math.v / exact, 4352.0 / 4224.0 * 1.05);
}

// B200 (docs/model.md §2 "B200"): Hopper's efficiencies and stream-K on Blackwell's peak.
//   peak = 148 x 8192 x 1.856 GHz = 2250.24 TFLOP/s; F_SM = 2250.24e12 x 0.70 / 148 = 10.6430e12.
//   4096^3 bf16, 256x128 tiles: 16 x 32 = 512 tiles on 148 SMs = 3.46 waves -> stream-K:
//   per K step 2 x 256 x 128 / 10.6430e12 = 6.1577 ns;
//   t_math = 6.1577 ns x (512 x 4096 / 148 + (512/148 + 1) x 160) = 6.1577 x 14883.4 = 91.65 us.
//   (The wave schedule would take 4 waves of 2 x 256 x 128 x 4096 / (10.6430e12 x 4096/4256)
//   = 26.21 us = 104.8 us.) HBM: (2 x 3 x 4096^2 + 8 x 148 x 256 x 128) B / (7700 GB/s x 0.8)
//   = 139.46 MB / 6.16 TB/s = 22.64 us. time = 91.65 + 3 = 94.65 us: 1452 TFLOP/s, 64.5% of peak.
TEST(Gemm, B200Bf16Cube4096RunsStreamKAtHoppersEfficiency) {
  const GpuSpec gpu = b200();
  const Efficiency eff = default_efficiency(gpu);
  const Efficiency hopper = default_efficiency(h200());
  EXPECT_EQ(eff.gemm_peak_fraction, hopper.gemm_peak_fraction);
  EXPECT_EQ(eff.gemm_k_half, hopper.gemm_k_half);
  const GemmEstimate g = estimate_gemm({4096, 4096, 4096, 1}, Precision::bf16, gpu, eff);
  EXPECT_TRUE(g.stream_k);
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_NEAR(in_us(g.t_math), 91.65, 0.02);
  EXPECT_NEAR(in_us(g.t_mem), 22.64, 0.01);
  EXPECT_NEAR(in_us(g.time), 94.65, 0.02);
  // A misaligned GEMM leaves the asynchronous kernels as on Hopper: a fifth of the rate.
  EXPECT_DOUBLE_EQ(misaligned_rate(false, Precision::bf16, gpu), 0.2);
}

}  // namespace
}  // namespace dsplan
