// What `estimate` says about how far to trust a configuration's predicted step and peak
// memory: the regime it belongs to and what the published and real runs of that regime
// measured (estimator/search/evidence.h; docs/accuracy.md, "Accuracy evidence by regime").
#include <sstream>

#include "cli/estimate_options.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {

namespace {

Json band_json(const EvidenceRegime& r, EvidenceKind kind) {
  Json j{{"regime", regime_name(r, kind)}, {"runs", 0}};
  if (const auto b = evidence_band(r, kind)) j.update(evidence_band_json(*b));
  return j;
}

}  // namespace

Json evidence_band_json(const EvidenceBand& b) {
  Json j{{"runs", b.runs},
         {"median_abs_error", b.median_abs_error},
         {"measured_over_predicted", {b.low, b.high}},
         {"middle_80", {b.p10, b.p90}}};
  if (b.sources && *b.sources) j["sources"] = b.sources;
  return j;
}

Json config_evidence_json(const Evaluation& e, GpuArch arch) {
  const EvidenceRegime r = evidence_regime(e, arch);
  Json j = band_json(r, EvidenceKind::step);
  j["memory"] = band_json(r, EvidenceKind::memory);
  return j;
}

std::string config_evidence_text(const Evaluation& e, GpuArch arch, bool profiled) {
  const EvidenceRegime r = evidence_regime(e, arch);
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s << "(" << regime_name(r) << "): ";
  const auto b = evidence_band(r);
  if (!b) {
    s << "no published or real run of this kind has been checked against dsplan; treat the step as "
         "unvalidated ('dsplan confirm' measures the top plans)";
  } else {
    s.precision(2);
    s << b->runs << " published and real runs of this kind measured " << b->low << "-" << b->high
      << "x the predicted step (the middle 80% " << b->p10 << "-" << b->p90 << "x), median |error| ";
    s.precision(1);
    s << 100 * b->median_abs_error << "% (" << b->sources << ")";
    if (profiled) s << "; measured with the datasheet efficiencies, this plan uses a calibration profile";
  }
  if (const auto m = evidence_band(r, EvidenceKind::memory)) {
    s.precision(2);
    s << "; peak memory of " << m->runs << " runs of its kind measured " << m->low << "-" << m->high
      << "x predicted";
  }
  s << " (docs/accuracy.md)";
  return s.str();
}

}  // namespace dsplan::cli
