// A calibration profile: the raw measurements of one `dsplan calibrate` pass (with their
// provenance), the datasheet figures they were compared against, and the parameters
// fitted from them. This is what `dsplan estimate --profile FILE` reads: to_efficiency()
// turns the fitted parameters into the Efficiency struct the step-time model consumes, so
// the model never knows whether its fractions came from a datasheet or a measurement.
// Schema: docs/calibration.md.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/records.h"
#include "core/efficiency.h"
#include "core/hardware_spec.h"

namespace dsplan {

// The datasheet figures a fit used (kept in the profile so `calibrate show` needs no hwdb).
struct DatasheetSummary {
  std::string gpu;                            // hwdb name, e.g. "a100-80gb"
  int sm_count = 0;
  std::array<double, 4> peak_TFLOPS{};        // per GemmDtype; 0 = not supported
  double hbm_GBps = 0;
  double pcie_GBps = 0;                       // x16 line rate per direction
};

struct GemmDtypeFit {
  double peak_fraction = 0;  // frac in the GEMM model (calibrate/fit/gemm_model.h)
  double best_TFLOPS = 0;    // fastest measured shape of this dtype
  int samples = 0;
};

struct CollectiveFitEntry {
  Collective collective = Collective::all_reduce;
  CommScope scope = CommScope::intra_node;
  int ranks = 0;             // largest rank count measured
  CollectiveFit fit;         // t(S) = latency + S * bus_factor / busbw
  int samples = 0;
  double rms_rel_error = 0;
};

struct FittedParams {
  std::array<std::optional<GemmDtypeFit>, 4> gemm;  // per GemmDtype
  double gemm_k_half = 0;
  Seconds kernel_overhead;
  double gemm_rms_rel_error = 0;  // RMS of (model - measured) / measured over all shapes
  std::optional<double> hbm_fraction;
  double hbm_GBps = 0;            // best large-buffer HBM bandwidth measured
  std::optional<double> pcie_fraction;
  double pcie_h2d_GBps = 0, pcie_d2h_GBps = 0;
  std::vector<CollectiveFitEntry> collectives;
  std::optional<double> overlap_compute_loss;  // fit_overlap(); Efficiency's field
  std::optional<Seconds> host_op_overhead;     // the host dispatch probe, when host-bound
};

struct CalibrationProfile {
  std::string source;  // file the profile was read from ("" when built in memory)
  DatasheetSummary datasheet;
  FittedParams fitted;
  RawRecords records;
};

// Peak per GemmDtype from a datasheet GpuSpec (bf16/fp16 tensor cores, tf32 tensor cores,
// fp32 on the vector pipe); 0 where the GPU lacks the unit.
std::array<FlopsPerSecond, 4> gemm_peaks(const GpuSpec& gpu);
DatasheetSummary summarize_datasheet(const GpuSpec& gpu);

// Fits every parameter the records support (calibrate/fit/). Errors: no usable records,
// records from a GPU whose SM count differs from the datasheet's, a fit that needs more
// than the datasheet peak (wrong --gpu), too few points to fit a collective.
Expected<CalibrationProfile> fit_records(const RawRecords& records, const GpuSpec& datasheet);

Json profile_to_json(const CalibrationProfile& p);
// Strict load of profile_to_json()'s output; `file` names the input in diagnostics.
Expected<CalibrationProfile> load_profile(std::string_view text, const std::string& file);

// Whether estimate may use the GEMM fit: its RMS error over the measured shapes at most
// kMaxUsableGemmRms, and no dtype's fitted fraction above the datasheet peak. On the lent
// H100 a quick pass fitted bf16 at 1.17 of peak with 29% RMS (cuBLAS 13's Hopper kernels
// are not the A100-era tile list the shape model knows), and applying it made the session-9
// real runs 13.8% off instead of 7.4%; the full pass (0.85, 16%) stays usable.
inline constexpr double kMaxUsableGemmRms = 0.20;
bool gemm_fit_usable(const FittedParams& f);

// Fitted parameters over `base` (fields the profile did not measure keep base's value; an
// unusable GEMM fit keeps base's GEMM fields); `source` names the profile.
Efficiency to_efficiency(const CalibrationProfile& p, const Efficiency& base);
Efficiency to_efficiency(const CalibrationProfile& p);

// A loaded profile's Efficiency over `base`, when it was measured on the GPU the estimate
// targets (same SM count, and the same hwdb name when the profile records one); `file`
// names it in the diagnostic otherwise.
Expected<Efficiency> efficiency_from_profile(const CalibrationProfile& p, const std::string& file,
                                             const GpuSpec& target, const Efficiency& base);

// One call for `dsplan estimate --profile FILE`: loads the profile text and checks that it
// was measured on the GPU the estimate targets (same SM count, and the same hwdb name when
// the profile records one), then returns its Efficiency over `base`.
Expected<Efficiency> efficiency_from_profile_file_text(std::string_view text,
                                                       const std::string& file,
                                                       const GpuSpec& target,
                                                       const Efficiency& base = Efficiency{});

}  // namespace dsplan
