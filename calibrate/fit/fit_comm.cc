// Alpha-beta fit of collective timings per (collective, scope):
//   t(S) = latency + S * bus_factor(p) / busbw
// (nccl-tests' bus bandwidth, hardware-and-comm.md §2), by least squares on relative error
// (rows divided by the measured time) with latency >= 0. Also the HBM and PCIe rates.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <Eigen/Dense>

#include "calibrate/fit/fit.h"

namespace dsplan {
namespace {

struct LineFit {
  double a = 0, b = 0, cost = 0;
};

// Least squares of 1 = a/t + b*x/t (or b only when a would be negative).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& t) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd m(n, 2);
  Eigen::VectorXd one = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    m(i, 0) = 1.0 / t[i];
    m(i, 1) = x[i] / t[i];
  }
  Eigen::Vector2d ab = m.colPivHouseholderQr().solve(one);
  LineFit f{ab(0), ab(1), 0};
  if (f.a < 0) {
    Eigen::VectorXd col = m.col(1);
    f.a = 0;
    f.b = col.dot(one) / col.squaredNorm();
  }
  Eigen::Vector2d sol(f.a, f.b);
  f.cost = (m * sol - one).squaredNorm();
  return f;
}

}  // namespace

Expected<std::vector<CollectiveFitEntry>> fit_collectives(
    const std::vector<CollectiveRecord>& records) {
  std::map<std::pair<int, int>, std::vector<const CollectiveRecord*>> groups;
  for (const auto& r : records)
    groups[{static_cast<int>(r.collective), static_cast<int>(r.scope)}].push_back(&r);
  std::vector<CollectiveFitEntry> out;
  Diagnostics errs;
  for (const auto& [key, recs] : groups) {
    std::vector<double> x, t;
    std::set<double> sizes;
    CollectiveFitEntry e{Collective(key.first), CommScope(key.second), 0, {}, 0, 0};
    for (const auto* r : recs) {
      x.push_back(r->bytes * bus_factor(r->collective, r->ranks));
      t.push_back(r->time_us * 1e-6);
      sizes.insert(r->bytes);
      e.ranks = std::max(e.ranks, r->ranks);
    }
    const std::string what = std::string(name(e.collective)) + " (" + name(e.scope) + ")";
    if (sizes.size() < 2) {
      errs.push_back({"", "/collectives", "cannot fit " + what + ": needs at least two message sizes",
                      "record a sweep of sizes"});
      continue;
    }
    LineFit f = fit_line(x, t);
    if (f.b <= 0) {
      errs.push_back({"", "/collectives", "cannot fit " + what + ": time does not grow with size",
                      "check the records"});
      continue;
    }
    e.fit = CollectiveFit{Seconds(f.a), BytesPerSecond(1.0 / f.b)};
    e.samples = static_cast<int>(x.size());
    e.rms_rel_error = std::sqrt(f.cost / static_cast<double>(x.size()));
    out.push_back(e);
  }
  if (!errs.empty()) return errs;
  return out;
}

void fit_bandwidth(const std::vector<BandwidthRecord>& records, const GpuSpec& gpu,
                   FittedParams& out) {
  const double min_hbm_bytes = 4.0 * gpu.l2.v;
  double hbm = 0, h2d = 0, d2h = 0;
  for (const auto& r : records) {
    switch (r.kind) {
      case BandwidthKind::hbm_copy:
      case BandwidthKind::hbm_triad:
        if (r.bytes >= min_hbm_bytes) hbm = std::max(hbm, r.GBps);
        break;
      case BandwidthKind::pcie_h2d: h2d = std::max(h2d, r.GBps); break;
      case BandwidthKind::pcie_d2h: d2h = std::max(d2h, r.GBps); break;
      default: break;
    }
  }
  out.hbm_GBps = hbm;
  out.pcie_h2d_GBps = h2d;
  out.pcie_d2h_GBps = d2h;
  if (hbm > 0 && gpu.hbm_bw.v > 0) out.hbm_fraction = hbm / in_GBps(gpu.hbm_bw);
  // One fraction serves both directions in the step model: the mean of those measured.
  const int dirs = (h2d > 0) + (d2h > 0);
  if (dirs > 0 && gpu.pcie_bw.v > 0)
    out.pcie_fraction = (h2d + d2h) / dirs / in_GBps(gpu.pcie_bw);
}

}  // namespace dsplan
