// Forward GEMM model with tile and wave quantisation; see gemm_model.h for the formula.
// Candidate CTA tiles are the common cuBLAS/CUTLASS ones (hardware-and-comm.md §3).
#include "calibrate/fit/gemm_model.h"

#include <array>
#include <utility>

namespace dsplan {
namespace {

constexpr std::array<std::pair<int, int>, 5> kTiles{
    {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 64}}};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

TileChoice choose_tile(std::int64_t m, std::int64_t n, int sm_count) {
  TileChoice best;
  double best_work = 0;
  for (auto [tm, tn] : kTiles) {
    TileChoice c{tm, tn, ceil_div(m, tm) * ceil_div(n, tn), 0};
    c.waves = ceil_div(c.tiles, sm_count);
    double work = static_cast<double>(c.waves) * tm * tn;
    // Strictly smaller issued work wins; ties keep the earlier (larger) tile.
    if (best.tm == 0 || work < best_work) {
      best = c;
      best_work = work;
    }
  }
  return best;
}

double quantised_mn(std::int64_t m, std::int64_t n, int sm_count) {
  TileChoice t = choose_tile(m, n, sm_count);
  return static_cast<double>(t.waves) * t.tm * t.tn;
}

Seconds gemm_time(const GemmShapeMNK& s, FlopsPerSecond peak, int sm_count,
                  const GemmModelParams& p) {
  const double f_sm = peak.v / sm_count;
  const double k = static_cast<double>(s.k);
  // waves*2*Tm*Tn*K / (F_SM*frac*eta(K)) with eta(K) = K/(K+k_half).
  const double t_math = quantised_mn(s.m, s.n, sm_count) * 2.0 * (k + p.k_half) /
                        (f_sm * p.peak_fraction);
  return p.overhead + Seconds(t_math);
}

}  // namespace dsplan
