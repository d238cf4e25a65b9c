// Least-squares fits of the calibration models to raw records (Eigen). Each returns the
// fitted parameters or diagnostics saying why the records cannot support the fit.
//   GEMM:        one overhead and k_half shared by all dtypes and a peak fraction per
//                dtype: seeded by relative-error least squares on gemm_model.h (k_half by
//                1-D search), then refined on the step-time model's own estimate_gemm().
//   Collectives: t(S) = latency + S*bus_factor(p)/busbw per (collective, scope),
//                relative-error least squares with latency >= 0.
//   Bandwidth:   best large-buffer HBM copy/triad and pinned PCIe rates over datasheet.
//   Overlap:     median compute loss beside a collective over the records whose
//                collectives outlasted the GEMM batch.
#pragma once

#include <array>
#include <vector>

#include "calibrate/fit/gemm_model.h"
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

// Seed fit with the simplified linear model of gemm_model.h. `peaks` per GemmDtype
// (records of a dtype with peak 0 are ignored).
Expected<GemmFitResult> fit_gemm(const std::vector<GemmRecord>& records,
                                 const std::array<FlopsPerSecond, 4>& peaks, int sm_count);

// The final GEMM fit: `seed` refined against the step-time model's estimate_gemm()
// (estimator/time/gemm.h) so that fit and model agree; `hbm_fraction` prices the HBM
// roofline as the model will (the measured one when the records have it).
// One GEMM priced by the step-time model with these parameters: the forward model the final
// fit minimises against.
Seconds model_gemm_time(const GemmShapeMNK& s, GemmDtype d, const GpuSpec& gpu,
                        const GemmModelParams& p, double hbm_fraction);

GemmFitResult refine_gemm_fit(const std::vector<GemmRecord>& records, const GpuSpec& gpu,
                              double hbm_fraction, const GemmFitResult& seed);

// One entry per (collective, scope) present in the records.
Expected<std::vector<CollectiveFitEntry>> fit_collectives(
    const std::vector<CollectiveRecord>& records);

// Fills hbm_* and pcie_* of `out`. HBM uses only buffers of at least 4x the L2 size (when
// the datasheet gives one) so that cache hits do not inflate the figure.
// The median `loss` of the records with comm_us >= gemm_beside_us, clamped to [0, 0.9];
// nothing when no record qualifies.
std::optional<double> fit_overlap(const std::vector<OverlapRecord>& records);

void fit_bandwidth(const std::vector<BandwidthRecord>& records, const GpuSpec& gpu,
                   FittedParams& out);

}  // namespace dsplan
