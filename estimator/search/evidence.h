// How far published and real runs of a configuration's kind came out from dsplan's predicted
// step (docs/accuracy.md, "Accuracy evidence by regime"). A regime is what decides which
// parts of the model a prediction leans on: the GPU generation, the framework, whether
// the layout is a pipeline, and whether the host issuing kernels is within a factor of four
// of setting the step (its default rate is an assumption, docs/model.md §4 "Host dispatch
// floor"). The bands are measurements, not model inputs: `dsplan validate --evidence` over
// the development, held-out and real-run files recomputes them, and a ctest fails when a
// band no longer matches what the model predicts for its rows. Rows whose GPU the source
// does not state, and end-to-end loop throughputs (which time more than the step), are not
// evidence for any regime.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "estimator/search/planner.h"

namespace dsplan {

struct EvidenceRegime {
  GpuArch arch = GpuArch::ampere;
  Framework framework = Framework::deepspeed;
  bool pipelined = false;       // pp > 1
  bool host_sensitive = false;  // the host's issuing time is at least 1/4 of the GPU's work
};

// The regime of an evaluated configuration on a GPU of architecture `arch`.
EvidenceRegime evidence_regime(const Evaluation& e, GpuArch arch);
// Its name, e.g. "hopper megatron pipeline" or "hopper ddp host-sensitive".
std::string regime_name(const EvidenceRegime& r);

// What the runs of one regime measured: `runs` step times (or throughputs read as step
// times), the median |error| of the prediction, and the range of measured / predicted step.
struct EvidenceBand {
  const char* regime;  // regime_name()
  int runs;
  double median_abs_error;  // fraction, e.g. 0.042
  double low, high;         // measured step / predicted step, lowest and highest
  const char* sources;      // which files and sources the runs come from
};

// All bands, in a fixed order; the one for a regime, when runs of that kind were checked.
std::span<const EvidenceBand> evidence_bands();
std::optional<EvidenceBand> evidence_band(const EvidenceRegime& r);

}  // namespace dsplan
