// Least-squares fits of the calibration models to raw records (Eigen). Each returns the
// fitted parameters or diagnostics saying why the records cannot support the fit.
//   GEMM:        gemm_model.h, one overhead and k_half shared by all dtypes and a peak
//                fraction per dtype; relative-error least squares, k_half by 1-D search.
//   Collectives: t(S) = latency + S*bus_factor(p)/busbw per (collective, scope),
//                relative-error least squares with latency >= 0.
//   Bandwidth:   best large-buffer HBM copy/triad and pinned PCIe rates over datasheet.
#pragma once

#include <array>
#include <vector>

#include "calibrate/profile.h"
#include "calibrate/records.h"

namespace dsplan {

struct GemmFitResult {
  std::array<std::optional<GemmDtypeFit>, 4> per_dtype;
  double k_half = 0;
  Seconds overhead;
  double rms_rel_error = 0;
  int samples = 0;
};

// `peaks` per GemmDtype (records of a dtype with peak 0 are ignored).
Expected<GemmFitResult> fit_gemm(const std::vector<GemmRecord>& records,
                                 const std::array<FlopsPerSecond, 4>& peaks, int sm_count);

// One entry per (collective, scope) present in the records.
Expected<std::vector<CollectiveFitEntry>> fit_collectives(
    const std::vector<CollectiveRecord>& records);

// Fills hbm_* and pcie_* of `out`. HBM uses only buffers of at least 4x the L2 size (when
// the datasheet gives one) so that cache hits do not inflate the figure.
void fit_bandwidth(const std::vector<BandwidthRecord>& records, const GpuSpec& gpu,
                   FittedParams& out);

}  // namespace dsplan
