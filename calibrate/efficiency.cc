// From a calibration profile to the Efficiency struct of the step-time model: fitted GEMM
// fractions (bf16, fp16, tf32 and fp32), k_half and kernel overhead, HBM and PCIe fractions, the measured
// collective fits and the host time per kernel. Anything the profile did not measure keeps
// the base value. A GEMM fit that does not describe its own measurements (gemm_fit_usable)
// is kept in the profile but not applied: the datasheet GEMM fractions stay.
#include "calibrate/profile.h"

namespace dsplan {
namespace {

void apply_gemm(const FittedParams& f, Efficiency& e) {
  if (!gemm_fit_usable(f)) return;
  bool any = false;
  const std::pair<GemmDtype, Precision> map[] = {{GemmDtype::bf16, Precision::bf16},
                                                 {GemmDtype::fp16, Precision::fp16},
                                                 {GemmDtype::tf32, Precision::tf32},
                                                 {GemmDtype::fp32, Precision::fp32}};
  for (auto [d, p] : map) {
    if (!f.gemm[static_cast<int>(d)]) continue;
    e.gemm_peak_fraction[static_cast<int>(p)] = f.gemm[static_cast<int>(d)]->peak_fraction;
    any = true;
  }
  if (any) {
    e.gemm_k_half = f.gemm_k_half;
    e.kernel_overhead = f.kernel_overhead;
  }
}

}  // namespace

bool gemm_fit_usable(const FittedParams& f) {
  if (f.gemm_rms_rel_error > kMaxUsableGemmRms) return false;
  for (const auto& g : f.gemm)
    if (g && g->peak_fraction > 1.0) return false;
  return true;
}

Efficiency to_efficiency(const CalibrationProfile& p, const Efficiency& base) {
  Efficiency e = base;
  e.source = p.source.empty() ? "calibration profile" : "calibration profile " + p.source;
  const FittedParams& f = p.fitted;
  apply_gemm(f, e);
  if (f.hbm_fraction) {
    // The profile times a copy: it sets the blended fraction, and the stream class keeps
    // its default ratio to the blend (elementwise.h).
    if (e.stream_hbm_fraction > 0 && e.hbm_fraction > 0)
      e.stream_hbm_fraction *= *f.hbm_fraction / e.hbm_fraction;
    e.hbm_fraction = *f.hbm_fraction;
  }
  if (f.pcie_fraction) e.pcie_fraction = *f.pcie_fraction;
  if (f.overlap_compute_loss) e.overlap_compute_loss = *f.overlap_compute_loss;
  if (f.host_op_overhead) e.host_op_overhead = *f.host_op_overhead;
  for (const auto& c : f.collectives)
    e.collectives[static_cast<int>(c.collective)][static_cast<int>(c.scope)] = c.fit;
  return e;
}

Efficiency to_efficiency(const CalibrationProfile& p) { return to_efficiency(p, Efficiency{}); }

Expected<Efficiency> efficiency_from_profile(const CalibrationProfile& p, const std::string& file,
                                             const GpuSpec& target, const Efficiency& base) {
  const DatasheetSummary& d = p.datasheet;
  const bool same_name = d.gpu.empty() || target.name.empty() || d.gpu == target.name;
  if (d.sm_count != target.sm_count || !same_name)
    return Diagnostic{file, "/datasheet",
                      "profile was measured on '" + d.gpu + "' (" + std::to_string(d.sm_count) +
                          " SMs) but the estimate is for '" + target.name + "' (" +
                          std::to_string(target.sm_count) + " SMs)",
                      "use a profile calibrated on this GPU, or choose the matching --hw"};
  return to_efficiency(p, base);
}

Expected<Efficiency> efficiency_from_profile_file_text(std::string_view text, const std::string& file,
                                                       const GpuSpec& target, const Efficiency& base) {
  auto p = load_profile(text, file);
  if (!p) return p.errors();
  return efficiency_from_profile(*p, file, target, base);
}

}  // namespace dsplan
