// The GEMM time model the calibration fits (hardware-and-comm.md §3, NVIDIA "Matrix
// Multiplication Background" tile and wave quantisation):
//
//   t(M,N,K) = overhead + waves * 2*Tm*Tn*K / (F_SM * frac * eta(K)),  eta(K) = K/(K+k_half)
//   tiles = ceil(M/Tm)*ceil(N/Tn),  waves = ceil(tiles / S),  F_SM = peak / S
//
// with one CTA per SM and the CTA tile Tm x Tn taken from a fixed candidate list as the
// one that minimises waves*Tm*Tn (the work the GPU actually issues); the choice does not
// depend on frac, k_half or overhead, so for a fixed k_half the model is linear in
// (overhead, 1/frac) and is fitted by least squares. Memory-bound (tiny-K) shapes are not
// modelled separately: their cost lands in overhead and k_half.
#pragma once

#include <cstdint>

#include "core/units.h"

namespace dsplan {

struct GemmShapeMNK {
  std::int64_t m = 0, n = 0, k = 0;
};

struct GemmModelParams {
  double peak_fraction = 0.8;  // frac: achieved fraction of the datasheet peak
  double k_half = 64;          // K at which the main loop runs at half its asymptotic rate
  Seconds overhead = us(4);    // launch + epilogue cost per kernel
};

struct TileChoice {
  int tm = 0, tn = 0;
  std::int64_t tiles = 0, waves = 0;
};

// The tile the model assumes cuBLAS picks for an M x N output on `sm_count` SMs.
TileChoice choose_tile(std::int64_t m, std::int64_t n, int sm_count);

// waves * Tm * Tn: the output elements the GPU computes, padding and idle SMs included,
// measured in units of one SM's share (so time ~ quantised_mn * 2 * (K + k_half) / F_SM).
double quantised_mn(std::int64_t m, std::int64_t n, int sm_count);

// Model time of one GEMM on a GPU with `sm_count` SMs and datasheet `peak` for its dtype.
Seconds gemm_time(const GemmShapeMNK& s, FlopsPerSecond peak, int sm_count,
                  const GemmModelParams& p);

}  // namespace dsplan
