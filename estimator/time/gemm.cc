// GEMM cost model (docs/model.md §4 Step time, "GEMMs"). For each candidate CTA tile and split-K
// factor: tiles = ceil(M/Tm) ceil(N/Tn) batch splitK; waves = ceil(tiles/(SMs x o));
// one wave costs o x 2 Tm Tn (K/splitK) FLOP at the per-SM rate F_SM x peak_fraction x
// tile_efficiency x eta(K/splitK) x eta_align. The cheapest candidate wins (cuBLAS picks
// its kernel by heuristics tuned to finish first). HBM time = operand + result bytes
// (+ fp32 partials for split-K) over the achievable bandwidth; the GEMM costs the max of
// the two plus a kernel overhead.
// On Hopper a plain GEMM whose tiles overfill a whole number of waves may instead run
// stream-K (cuBLAS 12/13's Hopper kernels): no partial last wave, each SM paying the per-tile
// fixed cost once per tile segment it touches (docs/model.md §4.1 "Stream-K on Hopper").
// The per-tile fixed costs behind eta(K) (prologue, epilogue writing C) and the
// operand-bandwidth penalty of small tiles are time costs set by the memory system; on a
// slower math pipe (fp32 SIMT, or bf16 on Volta) they are smaller relative to the main
// loop, so both scale with the pipe's rate relative to the 16-bit tensor-core rate. FP8's
// main loop is twice as fast per K step (see k_half below).
#include "estimator/time/gemm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace dsplan {

namespace {

struct Tile {
  int m, n, ctas_per_sm;
  double efficiency;  // per-SM throughput relative to the largest tile (operand reuse)
};

// Typical cuBLAS/CUTLASS tensor-core tiles (reference §3). Smaller tiles re-read operands
// more often from shared memory/L2, so they sustain a lower fraction of the SM's peak.
constexpr std::array<Tile, 5> kTiles{{
    {256, 128, 1, 1.00}, {128, 256, 1, 1.00}, {128, 128, 2, 0.95},
    {128, 64, 2, 0.85},  {64, 64, 4, 0.70},
}};
constexpr std::array<int, 4> kSplitK{1, 2, 3, 4};
constexpr double kMinKPerSplit = 256;

bool aligned(double x, double mult) { return std::fmod(x, mult) == 0.0; }

// Tensor cores want 16-byte-aligned dimensions: multiples of 8 in 16-bit (§3). Since
// cuBLAS 11 a misaligned GEMM keeps the tensor cores with narrow loads on Volta and Ampere,
// taken as half rate: the DeepSpeed autotuner's GPT-2 runs (vocabulary 50257) and
// BigScience's 104B on V100 (per-TP widths 8700 and 2900) bear it out on Volta, where
// cuBLAS 10 had fallen back to the half pipe (1/4; no row of ours ran it). On Hopper the
// misaligned GEMM leaves the wgmma/TMA kernels for sm75-era mma.sync kernels with 2-byte loads
// (cutlass_75_*_align1): 0.17-0.24 of the aligned rate in dsplan's own H100 measurements
// (cuBLAS 13.1, docs/model.md §4.1 "Misaligned GEMMs on Hopper"), taken as 0.2; the
// batched per-head products below keep more of it (0.45, measured in session 22).
// Per-head attention products whose head dimension is not a multiple of 8
// (GemmShape::heads_misaligned) start every head's operands at a misaligned address. A
// misaligned sequence length is not that case (the plain rate). Before Hopper they ran without
// tensor cores: with fp32 accumulation (PyTorch's compute type for 16-bit GEMMs) that is
// the fp32 FMA rate. BigScience's A100 runs with head dimensions 108 and 150 took 1.3-1.4x
// the step of their aligned twins, which that rate reproduces (docs/model.md §4.1,
// "Misaligned attention GEMMs").
// FP8 operands want the same 16 bytes: multiples of 16 (Transformer Engine requires them).
double alignment_penalty(const GemmShape& s, Precision p, const GpuSpec& gpu) {
  const double q = p == Precision::fp8 ? 16 : 8;
  if (aligned(s.m, q) && aligned(s.n, q) && aligned(s.k, q)) return 1.0;
  return misaligned_rate(s.heads_misaligned, p, gpu);
}

}  // namespace

double misaligned_rate(bool heads, Precision p, const GpuSpec& gpu) {
  if (p == Precision::fp32) return 1.0;
  // Hopper, per-head attention products: 0.40-0.50 of the aligned rate, measured on an
  // H200 (scripts/attention_align.py, d = 108, 150, 450 against 112, 144, 448).
  if (gpu.arch == GpuArch::hopper) return heads ? 0.45 : 0.2;
  if (heads) {
    const double tc = gpu.matmul_peak(p).v;
    return tc > 0 ? std::min(1.0, gpu.matmul_peak(Precision::fp32).v / tc) : 1.0;
  }
  return 0.5;
}

GemmEstimate estimate_gemm(const GemmShape& s, Precision p, const GpuSpec& gpu,
                           const Efficiency& eff) {
  GemmEstimate best;
  best.flops = Flops(2.0 * s.m * s.n * s.k * s.batch);
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return best;
  const double sms = std::max(1, gpu.sm_count);
  const double peak_fraction = eff.gemm_peak_fraction[static_cast<std::size_t>(p)];
  const double f_sm = gpu.matmul_peak(p).v * peak_fraction / sms;
  const double e = element_bytes(p);
  const double bw = gpu.hbm_bw.v * eff.hbm_fraction;
  const double align = alignment_penalty(s, p, gpu);
  const double tc = gpu.matmul_peak(Precision::fp16).v;
  const double rate_ratio = tc > 0 ? std::min(1.0, gpu.matmul_peak(p).v / tc) : 1.0;
  // FP8: the main loop runs twice as fast per K step on half the operand bytes. The
  // operand streams (tile_eff) are as busy as in 16-bit, but the epilogue writes the same
  // 16-bit C tile (and applies the scales), so the per-tile fixed cost is worth more K
  // steps: 2.5x bf16's, measured (FP8/bf16 GEMM rates over K on an H100 and an H200,
  // docs/model.md §4.1 "FP8 linears"; twice, the bare main-loop argument, over-stated the
  // speed-up at K <= 2048).
  const double k_half = eff.gemm_k_half * (p == Precision::fp8 ? 2.5 : rate_ratio);
  const double base_bytes = e * s.batch * (s.m * s.k + s.k * s.n + s.m * s.n);
  const bool stream_k = gpu.arch == GpuArch::hopper && p != Precision::fp32 && s.batch == 1;

  double best_t = -1;
  for (const Tile& t : kTiles) {
    const double tm = std::ceil(s.m / t.m), tn = std::ceil(s.n / t.n);
    for (int split : kSplitK) {
      // cuBLAS splits K only when the output tiles do not fill one wave.
      if (split > 1 && (s.k / split < kMinKPerSplit || tm * tn * s.batch >= sms * t.ctas_per_sm)) break;
      const double k_split = s.k / split;
      const double tiles = tm * tn * s.batch * split;
      const double slots = sms * t.ctas_per_sm;
      const double waves = std::ceil(tiles / slots);
      const double eta_k = k_split / (k_split + k_half);
      const double tile_eff = 1.0 - (1.0 - t.efficiency) * rate_ratio;
      const double wave_s = t.ctas_per_sm * 2.0 * t.m * t.n * k_split / (f_sm * tile_eff * eta_k * align);
      const double t_math = waves * wave_s;
      const double partial_bytes = split > 1 ? 2.0 * 4.0 * split * s.m * s.n * s.batch : 0.0;
      const double t_mem = (base_bytes + partial_bytes) / bw;
      const double extra = split > 1 ? eff.kernel_overhead.v : 0.0;  // reduction kernel
      const double total = std::max(t_math, t_mem) + eff.kernel_overhead.v + extra;
      if (best_t >= 0 && total >= best_t) continue;
      best_t = total;
      best.tile_m = t.m;
      best.tile_n = t.n;
      best.ctas_per_sm = t.ctas_per_sm;
      best.tiles = tiles;
      best.waves = waves;
      best.eta_tile = s.m * s.n / (tm * t.m * tn * t.n);
      best.eta_wave = tiles / (waves * slots);
      best.stream_k = false;
      best.eta_k = eta_k;
      best.eta_align = align;
      best.t_math = Seconds(t_math);
      best.t_mem = Seconds(t_mem);
      best.time = Seconds(total);
    }
    // Hopper's cuBLAS kernels leave no partial last wave (stream-K): each SM takes an equal
    // share of all tiles' K iterations, and pays the per-tile fixed cost once per tile
    // segment it touches, about tiles/slots + 1. The split tiles' fp32 partials are written
    // and read once (fixup). Only plain GEMMs: batched products keep their waves.
    const double tiles = tm * tn;
    const double slots = sms * t.ctas_per_sm;
    if (!stream_k || tiles <= slots || std::fmod(tiles, slots) == 0.0) continue;
    const double tile_eff = 1.0 - (1.0 - t.efficiency) * rate_ratio;
    const double per_k = t.ctas_per_sm * 2.0 * t.m * t.n / (f_sm * tile_eff * align);
    const double t_math = per_k * (tiles * s.k / slots + (tiles / slots + 1.0) * k_half);
    const double t_mem = (base_bytes + 2.0 * 4.0 * slots * t.m * t.n) / bw;
    const double total = std::max(t_math, t_mem) + eff.kernel_overhead.v;
    if (total >= best_t) continue;
    best_t = total;
    best.tile_m = t.m;
    best.tile_n = t.n;
    best.ctas_per_sm = t.ctas_per_sm;
    best.tiles = tiles;
    best.waves = tiles / slots;
    best.eta_tile = s.m * s.n / (tm * t.m * tn * t.n);
    best.eta_wave = 1.0;
    best.stream_k = true;
    best.eta_k = s.k / (s.k + k_half);
    best.eta_align = align;
    best.t_math = Seconds(t_math);
    best.t_mem = Seconds(t_mem);
    best.time = Seconds(total);
  }
  return best;
}

namespace {

std::uint64_t bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

}  // namespace

const GemmEstimate& GemmMemo::get(const GemmShape& s, Precision p, const GpuSpec& gpu,
                                  const Efficiency& eff) {
  std::uint64_t h = static_cast<std::uint64_t>(p) + (s.heads_misaligned ? 8 : 0);
  // Round dimensions have all-zero low mantissa bits: mix each fully before the next.
  for (double x : {s.m, s.n, s.k, s.batch}) h = hash_finish(h ^ bits(x));
  return table_.get(Key{s, p}, h, [&] { return estimate_gemm(s, p, gpu, eff); });
}

}  // namespace dsplan
