// How far published and real runs of a configuration's kind came out from dsplan's predicted
// step (docs/accuracy.md, "Accuracy evidence by regime"). A regime is what decides which
// parts of the model a prediction leans on: the GPU generation, the framework, whether
// the layout is a pipeline, whether the optimizer step runs on the host (ZeRO-Offload: its
// CPU optimizer, PCIe copies and host software are the least validated part of the model,
// session 48), and whether the host issuing kernels is within a factor of four of setting
// the step (its default rate is an assumption, docs/model.md §4 "Host dispatch
// floor"). The bands are measurements, not model inputs: `dsplan validate --evidence` over
// the development, held-out and real-run files recomputes them, and a ctest fails when a
// band no longer matches what the model predicts for its rows. Rows whose GPU the source
// does not state, and end-to-end loop throughputs (which time more than the step), are not
// evidence for any regime. Peak memory has bands of its own, over the rows that measured it
// (the matching figure: allocated, reserved or device), by the same regime without the host
// (issuing kernels moves no memory).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "estimator/search/planner.h"

namespace dsplan {

struct EvidenceRegime {
  GpuArch arch = GpuArch::ampere;
  Framework framework = Framework::deepspeed;
  bool pipelined = false;       // pp > 1
  bool host_sensitive = false;  // the host's issuing time is at least 1/4 of the GPU's work
  bool moe = false;             // a mixture-of-experts model (Evaluation::moe)
  bool offload = false;         // ZeRO-Offload: the optimizer (and with stage 3 the params) on the host
  // Sequences of kLongSequence tokens or more: the attention dominates the step, priced
  // from kernel curves measured up to 16k (docs/model.md §4, "FlashAttention").
  bool long_sequence = false;
};
inline constexpr int kLongSequence = 16384;

// What a band is about: the step time, or the peak memory.
enum class EvidenceKind { step, memory };

// The regime of an evaluated configuration on a GPU of architecture `arch`.
EvidenceRegime evidence_regime(const Evaluation& e, GpuArch arch);
// Its name, e.g. "hopper megatron pipeline", "hopper megatron moe", "volta deepspeed offload",
// "hopper megatron long-sequence" or "hopper ddp host-sensitive"; for memory without
// "long-sequence" and "host-sensitive".
std::string regime_name(const EvidenceRegime& r, EvidenceKind k = EvidenceKind::step);

// What the runs of one regime measured: `runs` step times (or throughputs read as step
// times) or peak memories, the median |measured / predicted - 1|, and the range of measured
// / predicted, whole and its middle 80% (one odd run sets the whole range of a regime).
struct EvidenceBand {
  const char* regime = "";  // regime_name()
  int runs = 0;
  double median_abs_error = 0;  // fraction, e.g. 0.042
  double low = 0, high = 0;     // measured / predicted, lowest and highest
  double p10 = 0, p90 = 0;      // its 10th and 90th percentiles (linear between ranks): the middle 80%
  const char* sources = "";     // which files and sources the runs come from
};

// The band of one regime's measured / predicted ratios (regime and sources left empty).
EvidenceBand evidence_band_of(std::vector<double> ratios);
// Whether two bands agree to the table's rounding (ratios to 0.01, the median to 0.001).
bool same_band(const EvidenceBand& a, const EvidenceBand& b);

// All bands of a kind, in a fixed order; the one for a regime, when runs of that kind were
// checked.
std::span<const EvidenceBand> evidence_bands(EvidenceKind k = EvidenceKind::step);
std::optional<EvidenceBand> evidence_band(const EvidenceRegime& r, EvidenceKind k = EvidenceKind::step);

}  // namespace dsplan
