// fp32 training whose matmuls run on TF32 tensor cores (TrainConfig::tf32, --precision tf32):
// hand-derived GEMM times on an A100, the fallback to the fp32 pipe where there are no TF32
// tensor cores (V100), the alignment rules, and a layer whose GEMMs, and only they, change.
#include <gtest/gtest.h>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "estimator/time/operators.h"
#include "fixtures.h"

namespace dsplan {
namespace {

// TF32's peak: SMs x TF32 FLOP/clk/SM x tensor clock; 108 x 1024 x 1.41 GHz = 155.93 TFLOP/s
// on an A100. Volta has no TF32 tensor cores: its peak is the fp32 pipe's.
TEST(Tf32, PeakIsTheTf32TensorCoresOrTheFp32Pipe) {
  EXPECT_NEAR(test::a100().matmul_peak(Precision::tf32).v / 1e12, 155.93, 0.01);
  EXPECT_DOUBLE_EQ(test::v100().matmul_peak(Precision::tf32).v, test::v100().matmul_peak(Precision::fp32).v);
}

// The default share of the TF32 peak is 0.95 of bf16's: A100 0.95 x 0.80 = 0.76, H200
// 0.95 x 0.70 = 0.665; a V100 takes its fp32 pipe's (0.89).
TEST(Tf32, DefaultFractionIsNearBf16s) {
  EXPECT_DOUBLE_EQ(default_efficiency(test::a100()).gemm_peak_fraction[5], 0.95 * 0.80);
  EXPECT_DOUBLE_EQ(default_efficiency(test::h200()).gemm_peak_fraction[5], 0.95 * 0.70);
  EXPECT_DOUBLE_EQ(default_efficiency(test::v100()).gemm_peak_fraction[5], 0.89);
}

// 4096^3 in TF32 on an A100-80GB with the default efficiency (0.76 of the TF32 peak, k_half
// 64 as bf16's: 4-byte operands at half the rate are bf16's bytes per FLOP, 4 us overhead):
//   F_SM = 155.93e12 x 0.76 / 108 = 1.09728e12 FLOP/s per SM.
//   256x128 tiles: 16 x 32 = 512 CTAs on 108 SMs -> 5 waves; eta_k = 4096 / 4160 = 0.98462.
//   one wave = 2 x 256 x 128 x 4096 / (1.09728e12 x 0.98462) = 248.46 us; 5 waves = 1242.3 us.
//   (128x128, 2 CTAs/SM at 0.95: 1024 CTAs / 216 slots = 5 waves of 261.5 us: slower.)
//   HBM: 4 B x 3 x 4096^2 = 201.3 MB / (2039 GB/s x 0.8) = 123.4 us < 1242 us.
//   time = 1242.3 + 4 = 1246.3 us: 110.3 TFLOP/s, 0.71 of the TF32 peak and 5.7x the fp32
//   pipe's 19.5 TFLOP/s.
TEST(Tf32, A100Cube4096) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const GemmEstimate g = estimate_gemm({4096, 4096, 4096, 1}, Precision::tf32, gpu, eff);
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_DOUBLE_EQ(g.waves, 5);
  EXPECT_NEAR(in_us(g.time), 1246.3, 0.5);
  EXPECT_GT(in_us(estimate_gemm({4096, 4096, 4096, 1}, Precision::fp32, gpu, eff).time), 5.0 * in_us(g.time));
}

// On a GPU without TF32 tensor cores a TF32 GEMM is the fp32 GEMM, to the bit.
TEST(Tf32, VoltaRunsTheFp32Gemm) {
  const GpuSpec gpu = test::v100();
  const Efficiency eff = default_efficiency(gpu);
  for (const GemmShape s : {GemmShape{4096, 4096, 4096, 1}, GemmShape{2047, 768, 50257, 1}})
    EXPECT_DOUBLE_EQ(estimate_gemm(s, Precision::tf32, gpu, eff).time.v,
                     estimate_gemm(s, Precision::fp32, gpu, eff).time.v);
}

// TF32 operands want 16 bytes: multiples of 4. 4100 is one (and no multiple of 8, which
// 16-bit operands need). Misaligned TF32 keeps half the rate on an A100 (Ampere's 16-bit
// rule) and 0.3 on Hopper, where dsplan's H100 and H200 records measured 0.28-0.36.
TEST(Tf32, AlignedAtFourElements) {
  const GpuSpec a = test::a100(), h = test::h200();
  const Efficiency ea = default_efficiency(a), eh = default_efficiency(h);
  EXPECT_DOUBLE_EQ(estimate_gemm({4100, 4096, 4096, 1}, Precision::tf32, a, ea).eta_align, 1.0);
  EXPECT_DOUBLE_EQ(estimate_gemm({4100, 4096, 4096, 1}, Precision::bf16, a, ea).eta_align, 0.5);
  EXPECT_DOUBLE_EQ(estimate_gemm({2047, 2047, 2047, 1}, Precision::tf32, a, ea).eta_align, 0.5);
  EXPECT_DOUBLE_EQ(estimate_gemm({2047, 2047, 2047, 1}, Precision::tf32, h, eh).eta_align, 0.3);
  EXPECT_DOUBLE_EQ(estimate_gemm({2047, 2047, 2047, 1}, Precision::bf16, h, eh).eta_align, 0.2);
}

// Only fp32 has TF32 matmuls: the flag leaves 16-bit configurations alone.
TEST(Tf32, GemmPrecisionOnlyForFp32) {
  TrainConfig c;
  c.tf32 = true;
  c.precision = Precision::bf16;
  EXPECT_EQ(c.gemm_precision(), Precision::bf16);
  EXPECT_EQ(c.linear_precision(), Precision::bf16);
  c.precision = Precision::fp32;
  EXPECT_EQ(c.gemm_precision(), Precision::tf32);
  EXPECT_EQ(c.linear_precision(), Precision::tf32);
  c.tf32 = false;
  EXPECT_EQ(c.gemm_precision(), Precision::fp32);
}

// A GPT layer (h 2048, 2048 tokens, standard attention) on an A100 in fp32 and in TF32: every
// GEMM, the linears' and the attention's, is priced in TF32, and nothing else changes. The
// layer's forward GEMM time is the sum of its GEMMs at the TF32 price: QKV (T, 3h, h),
// projection (T, h, h), FC1 (T, 4h, h), FC2 (T, h, 4h).
TEST(Tf32, EveryGemmOfALayerAndNothingElse) {
  const ModelSpec m = test::gpt("gpt-2048", 24, 2048, 16, 2048, 50304, 128);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k;
  k.seq_len = 2048;
  k.precision = Precision::fp32;
  k.framework = Framework::megatron;  // fused QKV: four linears
  const OpCosts fp32 = operator_costs(m, gpu, eff, k);
  k.tf32 = true;
  const OpCosts tf32 = operator_costs(m, gpu, eff, k);
  const double h = 2048, T = 2048;
  double linears = 0;
  for (const GemmShape s : {GemmShape{T, 3 * h, h, 1}, GemmShape{T, h, h, 1}, GemmShape{T, 4 * h, h, 1},
                            GemmShape{T, h, 4 * h, 1}})
    linears += gemm_time(GemmShape{s.m, s.n, s.k, 1, false, true}, Precision::tf32, gpu, eff).v;
  EXPECT_NEAR(in_us(tf32.fwd_linear), linears * 1e6, 1e-6);
  EXPECT_LT(tf32.attn_core_fwd.v, fp32.attn_core_fwd.v);  // its QK^T and PV
  EXPECT_LT(tf32.head_fwd.v, fp32.head_fwd.v);            // the logits GEMM
  // The non-GEMM remainder of the forward is the same kernels either way.
  EXPECT_NEAR(in_us(tf32.fwd - tf32.fwd_linear - tf32.attn_core_fwd),
              in_us(fp32.fwd - fp32.fwd_linear - fp32.attn_core_fwd), 0.1);
  EXPECT_LT(5.0 * tf32.fwd_linear.v, fp32.fwd_linear.v);
}

}  // namespace
}  // namespace dsplan
