// What `estimate` says about how far to trust a configuration's predicted step: the regime
// it belongs to and what the published and real runs of that regime measured
// (estimator/search/evidence.h; docs/accuracy.md, "Accuracy evidence by regime").
#include <sstream>

#include "cli/estimate_options.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {

Json config_evidence_json(const Evaluation& e, GpuArch arch) {
  const EvidenceRegime r = evidence_regime(e, arch);
  Json j{{"regime", regime_name(r)}};
  if (const auto b = evidence_band(r)) {
    j["runs"] = b->runs;
    j["median_abs_error"] = b->median_abs_error;
    j["measured_over_predicted"] = {b->low, b->high};
    j["sources"] = b->sources;
  } else {
    j["runs"] = 0;
  }
  return j;
}

std::string config_evidence_text(const Evaluation& e, GpuArch arch, bool profiled) {
  const EvidenceRegime r = evidence_regime(e, arch);
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s << "(" << regime_name(r) << "): ";
  const auto b = evidence_band(r);
  if (!b)
    return s.str() +
           "no published or real run of this kind has been checked against dsplan; treat the step as "
           "unvalidated ('dsplan confirm' measures the top plans)";
  s.precision(2);
  s << b->runs << " published and real runs of this kind measured " << b->low << "-" << b->high
    << "x the predicted step, median |error| ";
  s.precision(1);
  s << 100 * b->median_abs_error << "% (" << b->sources << "; docs/accuracy.md)";
  if (profiled) s << "; measured with the datasheet efficiencies, this plan uses a calibration profile";
  return s.str();
}

}  // namespace dsplan::cli
