// `dsplan validate --evidence`: the rows that are evidence for a configuration regime
// (estimator/search/evidence.h), grouped by regime, for the step and for peak memory: how
// many, the median |measured / predicted - 1|, the lowest and highest ratio, and the band
// `estimate` quotes for that regime. Over the development, held-out, evidence and real-run
// files together the two must agree (ctest cli.validate_evidence_bands); over any other set
// they simply differ.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/estimate_options.h"
#include "cli/validate_report.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {
namespace {

// Each regime's rows of one kind, as the band they measure (estimator/search/evidence.h).
std::map<std::string, EvidenceBand> observe(const std::vector<RowResult>& rows, EvidenceKind kind) {
  std::map<std::string, std::vector<double>> ratios;
  for (const auto& r : rows)
    if (!r.regime.empty() && r.memory() == (kind == EvidenceKind::memory))
      ratios[r.regime].push_back(r.ratio);
  std::map<std::string, EvidenceBand> out;
  for (const auto& [regime, v] : ratios) out[regime] = evidence_band_of(v);
  return out;
}

struct Line {
  std::string regime;
  std::optional<EvidenceBand> observed;
  std::optional<EvidenceBand> band;
  bool agrees() const { return observed && band && same_band(*observed, *band); }
};

std::vector<Line> lines(const std::vector<RowResult>& rows, EvidenceKind kind) {
  const auto obs = observe(rows, kind);
  const auto bands = evidence_bands(kind);
  std::vector<Line> out;
  for (const auto& b : bands) {
    const auto it = obs.find(b.regime);
    out.push_back({b.regime, it == obs.end() ? std::nullopt : std::optional<EvidenceBand>(it->second), b});
  }
  for (const auto& [regime, o] : obs) {
    const bool listed =
        std::any_of(bands.begin(), bands.end(), [&](const EvidenceBand& b) { return regime == b.regime; });
    if (!listed) out.push_back({regime, o, std::nullopt});
  }
  return out;
}

const char* what(EvidenceKind kind) { return kind == EvidenceKind::memory ? "peak memory" : "step"; }

std::string ratios(const EvidenceBand& b, EvidenceKind kind) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << b.runs << " runs, median |error| " << 100 * b.median_abs_error
    << "%, measured " << std::setprecision(2) << b.low << "-" << b.high << "x the predicted " << what(kind)
    << " (middle 80% " << b.p10 << "-" << b.p90 << "x)";
  return s.str();
}

Json regimes_json(const std::vector<Line>& all, int& agree) {
  Json out = Json::array();
  for (const auto& l : all) {
    Json j{{"regime", l.regime}, {"agrees", l.agrees()}};
    if (l.observed) j["observed"] = evidence_band_json(*l.observed);
    if (l.band) j["band"] = evidence_band_json(*l.band);
    agree += l.agrees();
    out.push_back(j);
  }
  return out;
}

// The tables of docs/accuracy.md, "Accuracy evidence by regime": the bands as measured.
void print_markdown(const std::vector<Line>& all, std::ostream& os) {
  os << "| regime | runs | median \\|error\\| | measured / predicted | middle 80% | band quoted | runs from "
        "|\n"
     << "|---|---:|---:|---|---|---|---|\n";
  for (const auto& l : all) {
    std::ostringstream row;
    row << std::fixed << "| " << l.regime << " | ";
    if (l.observed)
      row << l.observed->runs << " | " << std::setprecision(1) << 100 * l.observed->median_abs_error << "% | "
          << std::setprecision(2) << l.observed->low << "–" << l.observed->high << " | " << l.observed->p10
          << "–" << l.observed->p90;
    else
      row << "0 | | | ";
    row << " | "
        << (l.agrees() ? "this"
            : l.band   ? "differs"
                       : "none")
        << " | " << (l.band ? l.band->sources : "") << " |";
    os << row.str() << "\n";
  }
}

}  // namespace

Json evidence_json(const std::vector<RowResult>& rows) {
  int agree = 0;
  Json step = regimes_json(lines(rows, EvidenceKind::step), agree);
  Json memory = regimes_json(lines(rows, EvidenceKind::memory), agree);
  Json rows_json = Json::array();
  for (const auto& r : rows)
    if (!r.regime.empty())
      rows_json.push_back({{"id", r.id}, {"kind", r.kind}, {"regime", r.regime}, {"ratio", r.ratio}});
  return Json{{"regimes", step}, {"memory_regimes", memory}, {"agreeing", agree}, {"rows", rows_json}};
}

void print_evidence(const std::vector<RowResult>& rows, std::ostream& os, bool md) {
  int agree = 0, count = 0;
  for (EvidenceKind kind : {EvidenceKind::step, EvidenceKind::memory}) {
    const auto all = lines(rows, kind);
    if (md) {
      os << (kind == EvidenceKind::step ? "Step time:\n\n"
                                        : "\nPeak memory (the figure each source measured):\n\n");
      print_markdown(all, os);
      continue;
    }
    os << "accuracy of the " << what(kind) << " by configuration regime (rows "
       << (kind == EvidenceKind::step ? "that time the step" : "that measured peak memory")
       << " on a GPU their source names):\n";
    for (const auto& l : all) {
      os << "  " << l.regime
         << "\n    measured: " << (l.observed ? ratios(*l.observed, kind) : std::string("no row of this set"))
         << "\n    band:     "
         << (l.band ? ratios(*l.band, kind) : std::string("none (estimate quotes nothing for this regime)"))
         << (l.agrees() || !l.observed ? "" : "  [differs]") << "\n";
      agree += l.agrees();
      ++count;
    }
  }
  if (!md)
    os << agree << " of " << count
       << " regimes agree with the bands estimate quotes (they are measured over the development, held-out, "
          "evidence and real-run files together)\n";
}

}  // namespace dsplan::cli
