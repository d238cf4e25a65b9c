// The forward GEMM model: tile choice, wave quantisation and time, with hand-derived numbers.
#include <gtest/gtest.h>

#include "calibrate/fit/gemm_model.h"

namespace dsplan {
namespace {

TEST(GemmModel, OneWaveOf256x128TilesOnA100) {
  // 1792 x 1792 with 256x128 tiles: 7 x 14 = 98 tiles <= 108 SMs, one wave
  // (hardware-and-comm.md §3). Every candidate tile issues 32768 elements per SM here
  // (e.g. 128x128: 196 tiles, 2 waves, 2*16384), so the first (256x128) is kept.
  TileChoice t = choose_tile(1792, 1792, 108);
  EXPECT_EQ(t.tm, 256);
  EXPECT_EQ(t.tn, 128);
  EXPECT_EQ(t.tiles, 98);
  EXPECT_EQ(t.waves, 1);
  EXPECT_DOUBLE_EQ(quantised_mn(1792, 1792, 108), 32768);
}

TEST(GemmModel, WaveQuantisationPicksTheLeastIssuedWork) {
  // 2048 x 2048 on 108 SMs: 256x128 -> 128 tiles, 2 waves, 65536; 128x128 -> 256 tiles,
  // 3 waves, 49152; 128x64 -> 512 tiles, 5 waves, 40960; 64x64 -> 1024 tiles, 10 waves,
  // 40960. The least is 40960, first reached by 128x64.
  TileChoice t = choose_tile(2048, 2048, 108);
  EXPECT_EQ(t.tm, 128);
  EXPECT_EQ(t.tn, 64);
  EXPECT_EQ(t.waves, 5);
  EXPECT_DOUBLE_EQ(quantised_mn(2048, 2048, 108), 40960);
}

TEST(GemmModel, TimeFollowsTheFormula) {
  // 1792^2 x 4096 at 312 TF peak, frac 0.8, k_half 64, overhead 4 us on 108 SMs:
  // F_SM = 312e12/108; t = 4e-6 + 32768 * 2 * (4096 + 64) / (F_SM * 0.8)
  //   = 4e-6 + 272629760 / 2.31111e12 = 4e-6 + 1.17965e-4 s.
  GemmModelParams p{0.8, 64, us(4)};
  Seconds t = gemm_time({1792, 1792, 4096}, TFLOPS(312), 108, p);
  EXPECT_NEAR(t.v, 4e-6 + 272629760.0 / (312e12 / 108 * 0.8), 1e-12);
  EXPECT_NEAR(t.v, 1.21965e-4, 1e-8);
}

TEST(GemmModel, SmallKRunsBelowPeak) {
  // eta(K) = K/(K+k_half): at K = k_half the main loop takes twice its asymptotic time.
  GemmModelParams p{1.0, 128, us(0)};
  const double t128 = gemm_time({4096, 4096, 128}, TFLOPS(100), 100, p).v;
  const double t_inf = quantised_mn(4096, 4096, 100) * 2 * 128 / (100e12 / 100);
  EXPECT_NEAR(t128 / t_inf, 2.0, 1e-12);
}

}  // namespace
}  // namespace dsplan
