// Fit of the GEMM model (gemm_model.h) to measured GEMM timings. For a fixed k_half,
//   t_i = overhead + (1/frac_d) * q_i * 2 * (K_i + k_half) / F_SM,d
// is linear in x = (overhead, 1/frac_bf16, 1/frac_fp16, 1/frac_tf32, 1/frac_fp32); each row
// is divided by the measured t_i so that small and large GEMMs weigh alike (relative
// error). k_half is found by a log-spaced grid (1/4 octave, 0.5 .. 16384) refined by golden
// section. A negative overhead is clamped to 0 and the rest refitted.
#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "calibrate/fit/fit.h"
#include "calibrate/fit/gemm_model.h"

namespace dsplan {
namespace {

constexpr int kDtypes = static_cast<int>(GemmDtype::kCount);

struct Row {
  double t;        // measured seconds
  int dtype;
  double work;     // q * 2 / F_SM: seconds per unit of (K + k_half) at frac = 1
  double k;
};

struct Solve {
  double cost = std::numeric_limits<double>::infinity();
  double overhead = 0;
  std::array<double, kDtypes> inv_frac{};
};

// Columns: 0 = overhead (when `with_overhead`), then one per dtype present.
Solve solve_linear(const std::vector<Row>& rows, const std::array<int, kDtypes>& col_of,
                   int ndt, double k_half, bool with_overhead) {
  const int off = with_overhead ? 1 : 0;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), off + ndt);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const auto ii = static_cast<Eigen::Index>(i);
    if (with_overhead) a(ii, 0) = 1.0 / r.t;
    a(ii, off + col_of[r.dtype]) = r.work * (r.k + k_half) / r.t;
  }
  Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);
  Solve s;
  s.cost = (a * x - b).squaredNorm();
  s.overhead = with_overhead ? x(0) : 0.0;
  for (int d = 0; d < kDtypes; ++d)
    if (col_of[d] >= 0) s.inv_frac[d] = x(off + col_of[d]);
  return s;
}

Solve solve_at(const std::vector<Row>& rows, const std::array<int, kDtypes>& col_of, int ndt,
               double k_half) {
  Solve s = solve_linear(rows, col_of, ndt, k_half, true);
  if (s.overhead < 0) s = solve_linear(rows, col_of, ndt, k_half, false);
  return s;
}

// Minimises cost over log(k_half): coarse grid, then golden section around the best point.
double search_k_half(const std::vector<Row>& rows, const std::array<int, kDtypes>& col_of,
                     int ndt) {
  auto cost = [&](double lk) { return solve_at(rows, col_of, ndt, std::exp2(lk)).cost; };
  double best_lk = -1, best = std::numeric_limits<double>::infinity();
  for (double lk = -1; lk <= 14; lk += 0.25) {
    double c = cost(lk);
    if (c < best) { best = c; best_lk = lk; }
  }
  double lo = best_lk - 0.25, hi = best_lk + 0.25;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = cost(x1), f2 = cost(x2);
  for (int it = 0; it < 40; ++it) {
    if (f1 < f2) { hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = cost(x1); }
    else { lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = cost(x2); }
  }
  return std::exp2((lo + hi) / 2);
}

}  // namespace

Expected<GemmFitResult> fit_gemm(const std::vector<GemmRecord>& records,
                                 const std::array<FlopsPerSecond, 4>& peaks, int sm_count) {
  std::vector<Row> rows;
  std::array<int, kDtypes> col_of;
  col_of.fill(-1);
  std::array<double, kDtypes> best_tflops{};
  std::array<int, kDtypes> count{};
  int ndt = 0;
  for (const auto& g : records) {
    const int d = static_cast<int>(g.dtype);
    if (peaks[d].v <= 0 || g.median_us <= 0) continue;
    if (col_of[d] < 0) col_of[d] = ndt++;
    const double f_sm = peaks[d].v / sm_count;
    rows.push_back({g.median_us * 1e-6, d, quantised_mn(g.m, g.n, sm_count) * 2.0 / f_sm,
                    static_cast<double>(g.k)});
    best_tflops[d] = std::max(best_tflops[d], g.tflops);
    ++count[d];
  }
  if (rows.empty()) return Diagnostic{"", "/gemm", "no GEMM records to fit", ""};
  if (static_cast<int>(rows.size()) < ndt + 3)
    return Diagnostic{"", "/gemm",
                      "too few GEMM records (" + std::to_string(rows.size()) +
                          ") to fit overhead, k_half and " + std::to_string(ndt) +
                          " peak fraction(s)",
                      "record a grid with several K and M x N sizes per dtype"};
  GemmFitResult out;
  out.k_half = search_k_half(rows, col_of, ndt);
  Solve s = solve_at(rows, col_of, ndt, out.k_half);
  out.overhead = Seconds(s.overhead);
  out.rms_rel_error = std::sqrt(s.cost / static_cast<double>(rows.size()));
  out.samples = static_cast<int>(rows.size());
  for (int d = 0; d < kDtypes; ++d) {
    if (col_of[d] < 0) continue;
    if (s.inv_frac[d] <= 0)
      return Diagnostic{"", "/gemm", std::string("GEMM fit for ") + name(GemmDtype(d)) +
                                         " gave a non-positive rate", "check the records"};
    out.per_dtype[d] = GemmDtypeFit{1.0 / s.inv_frac[d], best_tflops[d], count[d]};
  }
  return out;
}

}  // namespace dsplan
