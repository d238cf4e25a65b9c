// Refines the GEMM fit against the step-time model's own GEMM cost (estimator/time/gemm.h:
// per-tile efficiencies and CTAs per SM, split-K, alignment penalty, HBM roofline), so
// that the parameters `estimate --profile` uses reproduce the measurements through the
// very function that will consume them. The linear fit of gemm_model.h seeds it; a
// Nelder-Mead search over (log frac per dtype, |k_half|, |overhead|) minimises the summed
// squared relative error. Each dtype is priced as the model prices it (tf32: Precision::tf32).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "calibrate/fit/fit.h"
#include "estimator/time/gemm.h"

namespace dsplan {
namespace {

constexpr int kDtypes = static_cast<int>(GemmDtype::kCount);

Precision precision_of(GemmDtype d) {
  switch (d) {
    case GemmDtype::bf16: return Precision::bf16;
    case GemmDtype::fp16: return Precision::fp16;
    case GemmDtype::tf32:
      return Precision::tf32;
    default: return Precision::fp32;
  }
}

}  // namespace

Seconds model_gemm_time(const GemmShapeMNK& s, GemmDtype d, const GpuSpec& gpu,
                        const GemmModelParams& p, double hbm_fraction) {
  Efficiency e;
  e.gemm_peak_fraction[static_cast<int>(precision_of(d))] = p.peak_fraction;
  e.gemm_k_half = p.k_half;
  e.kernel_overhead = p.overhead;
  e.hbm_fraction = hbm_fraction;
  const GemmShape shape{static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k), 1};
  return gemm_time(shape, precision_of(d), gpu, e);
}

namespace {

struct Problem {
  const std::vector<GemmRecord>* records;
  const GpuSpec* gpu;
  std::array<int, kDtypes> slot;  // parameter index of each dtype's log fraction, -1 = absent
  int ndt = 0;
  double hbm_fraction = 0.8;

  // x = (log frac_d ..., k_half, overhead_us); signs of the last two are ignored.
  double cost(const std::vector<double>& x) const {
    double s = 0;
    for (const auto& r : *records) {
      const int d = static_cast<int>(r.dtype);
      if (slot[d] < 0) continue;
      const GemmModelParams mp{std::exp(x[slot[d]]), std::abs(x[ndt]), us(std::abs(x[ndt + 1]))};
      const double t = model_gemm_time({r.m, r.n, r.k}, r.dtype, *gpu, mp, hbm_fraction).v;
      const double rel = t / (r.median_us * 1e-6) - 1;
      s += rel * rel;
    }
    return s;
  }
};

// Plain Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2).
std::vector<double> nelder_mead(const Problem& p, std::vector<double> x0,
                                const std::vector<double>& step, int iters) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> v(n + 1, x0);
  for (size_t i = 0; i < n; ++i) v[i + 1][i] += step[i];
  std::vector<double> f(n + 1);
  for (size_t i = 0; i <= n; ++i) f[i] = p.cost(v[i]);
  std::vector<size_t> order(n + 1);
  for (int it = 0; it < iters; ++it) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
    const size_t best = order[0], worst = order[n], second = order[n - 1];
    std::vector<double> c(n, 0.0);
    for (size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (size_t j = 0; j < n; ++j) c[j] += v[i][j] / n;
    auto along = [&](double t) {
      std::vector<double> y(n);
      for (size_t j = 0; j < n; ++j) y[j] = c[j] + t * (v[worst][j] - c[j]);
      return y;
    };
    std::vector<double> r = along(-1);
    const double fr = p.cost(r);
    if (fr < f[best]) {
      std::vector<double> e = along(-2);
      const double fe = p.cost(e);
      if (fe < fr) { v[worst] = e; f[worst] = fe; } else { v[worst] = r; f[worst] = fr; }
    } else if (fr < f[second]) {
      v[worst] = r; f[worst] = fr;
    } else {
      std::vector<double> k = along(0.5);
      const double fk = p.cost(k);
      if (fk < f[worst]) {
        v[worst] = k; f[worst] = fk;
      } else {
        for (size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          for (size_t j = 0; j < n; ++j) v[i][j] = v[best][j] + 0.5 * (v[i][j] - v[best][j]);
          f[i] = p.cost(v[i]);
        }
      }
    }
  }
  return v[std::min_element(f.begin(), f.end()) - f.begin()];
}

}  // namespace

GemmFitResult refine_gemm_fit(const std::vector<GemmRecord>& records, const GpuSpec& gpu,
                              double hbm_fraction, const GemmFitResult& seed) {
  Problem p{&records, &gpu, {}, 0, hbm_fraction};
  p.slot.fill(-1);
  std::vector<double> x;
  for (int d = 0; d < kDtypes; ++d) {
    if (!seed.per_dtype[d]) continue;
    p.slot[d] = p.ndt++;
    x.push_back(std::log(seed.per_dtype[d]->peak_fraction));
  }
  x.push_back(std::max(1.0, seed.k_half));
  x.push_back(std::max(0.5, in_us(seed.overhead)));
  std::vector<double> step(x.size(), 0.1);
  step[p.ndt] = 0.3 * x[p.ndt];
  step[p.ndt + 1] = 0.3 * x[p.ndt + 1];
  // Two restarts from the best point so far get past early simplex collapse.
  for (int round = 0; round < 3; ++round) {
    x = nelder_mead(p, x, step, 400);
    step[p.ndt] = 0.1 * std::max(1.0, std::abs(x[p.ndt]));
    step[p.ndt + 1] = 0.1 * std::max(0.5, std::abs(x[p.ndt + 1]));
  }
  GemmFitResult out = seed;
  for (int d = 0; d < kDtypes; ++d)
    if (p.slot[d] >= 0) out.per_dtype[d]->peak_fraction = std::exp(x[p.slot[d]]);
  out.k_half = std::abs(x[p.ndt]);
  out.overhead = us(std::abs(x[p.ndt + 1]));
  out.rms_rel_error = std::sqrt(p.cost(x) / std::max(1, out.samples));
  return out;
}

}  // namespace dsplan
