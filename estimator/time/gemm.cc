// GEMM cost model (docs/model.md §4 Step time, "GEMMs"). For each candidate CTA tile and split-K
// factor: tiles = ceil(M/Tm) ceil(N/Tn) batch splitK; waves = ceil(tiles/(SMs x o));
// one wave costs o x 2 Tm Tn (K/splitK) FLOP at the per-SM rate F_SM x peak_fraction x
// tile_efficiency x eta(K/splitK) x eta_align, where o is the tile's CTAs per SM on tensor
// cores and 1 on the fp32 pipe (see `simt` below). The cheapest candidate wins (cuBLAS picks
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

// Tensor cores want 16-byte-aligned dimensions: multiples of 8 in 16-bit (§3), 4 in TF32. Since
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
// FP8 operands want the same 16 bytes: multiples of 16 (Transformer Engine requires them);
// NVFP4 operands multiples of 32 (16 bytes of 4-bit values; Megatron's get_fp4_align_size).
double alignment_penalty(const GemmShape& s, Precision p, const GpuSpec& gpu) {
  const double q = p == Precision::nvfp4 ? 32 : p == Precision::fp8 ? 16 : p == Precision::tf32 ? 4 : 8;
  const bool fp8 = p == Precision::fp8 || p == Precision::nvfp4;
  const bool m_ok = aligned(s.m, q) || (s.m_free && !fp8);
  const bool k_ok = aligned(s.k, q) || (s.k_free && !fp8);
  if (m_ok && aligned(s.n, q) && k_ok) return 1.0;
  return misaligned_rate(s.heads_misaligned, p, gpu);
}

}  // namespace

double misaligned_rate(bool heads, Precision p, const GpuSpec& gpu) {
  if (p == Precision::fp32) return 1.0;
  // Hopper, per-head attention products: 0.40-0.50 of the aligned rate, measured on an
  // H200 (scripts/attention_align.py, d = 108, 150, 450 against 112, 144, 448).
  // TF32 keeps more: 0.28-0.36 of the aligned rate (2047^3, 4095^3, 4097^3 on an H100 and
  // an H200, tests/data/calibrate), taken as 0.3.
  if (hopper_or_newer(gpu.arch))
    return heads ? 0.45 : p == Precision::tf32 ? 0.3 : 0.2;  // Blackwell: as Hopper
  if (heads) {
    const double tc = gpu.matmul_peak(p).v;
    return tc > 0 ? std::min(1.0, gpu.matmul_peak(Precision::fp32).v / tc) : 1.0;
  }
  return 0.5;
}

GemmEstimate estimate_gemm(const GemmShape& s, Precision p, const GpuSpec& gpu,
                           const Efficiency& eff) {
  if (p == Precision::tf32 && !(gpu.tf32_tc_flop_per_clk_sm > 0)) p = Precision::fp32;  // Volta
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
  // TF32 tensor cores run at half the 16-bit rate on operands twice as wide: bytes per FLOP,
  // and so the fixed per-tile costs and operand streams, are the 16-bit kernels' (ratio 1).
  const double rate_ratio = p == Precision::tf32 ? 1.0
                            : tc > 0             ? std::min(1.0, gpu.matmul_peak(p).v / tc)
                                                 : 1.0;
  // FP8: the main loop runs twice as fast per K step on half the operand bytes. The
  // operand streams (tile_eff) are as busy as in 16-bit, but the epilogue writes the same
  // 16-bit C tile (and applies the scales), so the per-tile fixed cost is worth more K
  // steps: 2.5x bf16's, measured (FP8/bf16 GEMM rates over K on an H100 and an H200,
  // docs/model.md §4.1 "FP8 linears"; twice, the bare main-loop argument, over-stated the
  // speed-up at K <= 2048). NVFP4's main loop is twice FP8's again (four times bf16's) and
  // its epilogue the same: 5x, FP8's measured 2.5 doubled (not measured; docs/model.md §4.1 "NVFP4 linears").
  const double k_half = eff.gemm_k_half * (p == Precision::nvfp4 ? 5.0
                                           : p == Precision::fp8 ? 2.5
                                                                 : rate_ratio);
  const double base_bytes = e * s.batch * (s.m * s.k + s.k * s.n + s.m * s.n);
  const bool stream_k = hopper_or_newer(gpu.arch) && p != Precision::fp32 && s.batch == 1;

  double best_t = -1;
  // The cheapest schedule wins; `c` carries the tile's fields, each schedule sets the rest.
  auto keep = [&](const GemmEstimate& c) {
    if (best_t >= 0 && c.time.v >= best_t) return;
    best_t = c.time.v;
    best = c;
  };
  // On the fp32 pipe (SIMT kernels: fp32, and bf16 on Volta) one resident CTA keeps an SM's
  // FMA units busy, its register tile giving each thread dozens of independent FMAs: the SM
  // runs the CTAs it holds one after another at full rate instead of sharing it among
  // co-resident ones. So a partial wave costs the most CTAs any SM holds, ceil(tiles/SMs),
  // not ctas_per_sm of them. DeepBench's sustained V100 SGEMMs bear it out: over its 55
  // shapes with every dimension >= 64 the mean |log(predicted/measured)| falls from 12.8%
  // to 7.0% (2048 x 64 x 2048: +74% -> -5%; docs/model.md §4.1 "DeepBench on V100").
  // Tensor-core kernels need several resident warps per SM sub-partition to feed the
  // tensor cores, and keep the co-resident share.
  const bool simt = rate_ratio < 1.0;
  for (const Tile& t : kTiles) {
    const double tm = std::ceil(s.m / t.m), tn = std::ceil(s.n / t.n);
    const int co = simt ? 1 : t.ctas_per_sm;  // CTAs that share an SM's rate
    const double slots = sms * co;
    const double tile_eff = 1.0 - (1.0 - t.efficiency) * rate_ratio;
    GemmEstimate c;
    c.flops = best.flops;
    c.tile_m = t.m;
    c.tile_n = t.n;
    c.ctas_per_sm = co;
    c.eta_tile = s.m * s.n / (tm * t.m * tn * t.n);
    c.eta_align = align;
    for (int split : kSplitK) {
      // cuBLAS splits K only when the output tiles do not fill one wave.
      if (split > 1 && (s.k / split < kMinKPerSplit || tm * tn * s.batch >= slots)) break;
      const double k_split = s.k / split;
      c.tiles = tm * tn * s.batch * split;
      c.waves = std::ceil(c.tiles / slots);
      c.eta_wave = c.tiles / (c.waves * slots);
      c.eta_k = k_split / (k_split + k_half);
      const double wave_s = co * 2.0 * t.m * t.n * k_split / (f_sm * tile_eff * c.eta_k * align);
      const double partial_bytes = split > 1 ? 2.0 * 4.0 * split * s.m * s.n * s.batch : 0.0;
      c.t_math = Seconds(c.waves * wave_s);
      c.t_mem = Seconds((base_bytes + partial_bytes) / bw);
      const double extra = split > 1 ? eff.kernel_overhead.v : 0.0;  // reduction kernel
      c.time = Seconds(std::max(c.t_math.v, c.t_mem.v) + eff.kernel_overhead.v + extra);
      keep(c);
    }
    // Hopper's cuBLAS kernels leave no partial last wave (stream-K): each SM takes an equal
    // share of all tiles' K iterations, and pays the per-tile fixed cost once per tile
    // segment it touches, about tiles/slots + 1. The split tiles' fp32 partials are written
    // and read once (fixup). Only plain GEMMs: batched products keep their waves.
    c.tiles = tm * tn;
    if (!stream_k || c.tiles <= slots || std::fmod(c.tiles, slots) == 0.0) continue;
    const double per_k = co * 2.0 * t.m * t.n / (f_sm * tile_eff * align);
    c.stream_k = true;
    c.waves = c.tiles / slots;
    c.eta_wave = 1.0;
    c.eta_k = s.k / (s.k + k_half);
    c.t_math = Seconds(per_k * (c.tiles * s.k / slots + (c.waves + 1.0) * k_half));
    c.t_mem = Seconds((base_bytes + 2.0 * 4.0 * slots * t.m * t.n) / bw);
    c.time = Seconds(std::max(c.t_math.v, c.t_mem.v) + eff.kernel_overhead.v);
    keep(c);
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
  std::uint64_t h = static_cast<std::uint64_t>(p) + (s.heads_misaligned ? 8 : 0) + (s.m_free ? 16 : 0) +
                    (s.k_free ? 32 : 0);
  // Round dimensions have all-zero low mantissa bits: mix each fully before the next.
  for (double x : {s.m, s.n, s.k, s.batch}) h = hash_finish(h ^ bits(x));
  return table_.get(Key{s, p}, h, [&] { return estimate_gemm(s, p, gpu, eff); });
}

}  // namespace dsplan
