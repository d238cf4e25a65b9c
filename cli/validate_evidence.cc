// `dsplan validate --evidence`: the rows that are evidence for a configuration regime
// (estimator/search/evidence.h), grouped by regime: how many, the median |measured /
// predicted step - 1|, the lowest and highest ratio, and the band `estimate` quotes for that
// regime. Over the development, held-out, evidence and real-run files together the two must
// agree (ctest cli.validate_evidence_bands); over any other set they simply differ.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/validate_report.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {
namespace {

struct Observed {
  int runs = 0;
  double median = 0, low = 0, high = 0;
};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::map<std::string, Observed> observe(const std::vector<RowResult>& rows) {
  std::map<std::string, std::vector<double>> ratios;
  for (const auto& r : rows)
    if (!r.regime.empty()) ratios[r.regime].push_back(r.step_ratio);
  std::map<std::string, Observed> out;
  for (const auto& [regime, v] : ratios) {
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - 1));
    out[regime] = {static_cast<int>(v.size()), median_of(dev), *std::min_element(v.begin(), v.end()),
                   *std::max_element(v.begin(), v.end())};
  }
  return out;
}

// The table rounds the ratios to 0.01 and the median to 0.001.
bool agrees(const Observed& o, const EvidenceBand& b) {
  return o.runs == b.runs && std::fabs(o.median - b.median_abs_error) <= 0.0006 &&
         std::fabs(o.low - b.low) <= 0.006 && std::fabs(o.high - b.high) <= 0.006;
}

struct Line {
  std::string regime;
  std::optional<Observed> observed;
  std::optional<EvidenceBand> band;
  bool agrees() const { return observed && band && cli::agrees(*observed, *band); }
};

std::vector<Line> lines(const std::vector<RowResult>& rows) {
  const auto obs = observe(rows);
  std::vector<Line> out;
  for (const auto& b : evidence_bands()) {
    const auto it = obs.find(b.regime);
    out.push_back({b.regime, it == obs.end() ? std::nullopt : std::optional<Observed>(it->second), b});
  }
  for (const auto& [regime, o] : obs) {
    const bool listed = std::any_of(evidence_bands().begin(), evidence_bands().end(),
                                    [&](const EvidenceBand& b) { return regime == b.regime; });
    if (!listed) out.push_back({regime, o, std::nullopt});
  }
  return out;
}

std::string ratios(double median, double low, double high, int runs) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << runs << " runs, median |error| " << 100 * median
    << "%, measured " << std::setprecision(2) << low << "-" << high << "x the predicted step";
  return s.str();
}

}  // namespace

Json evidence_json(const std::vector<RowResult>& rows) {
  Json regimes = Json::array();
  int agree = 0;
  for (const auto& l : lines(rows)) {
    Json j{{"regime", l.regime}, {"agrees", l.agrees()}};
    if (l.observed)
      j["observed"] = {{"runs", l.observed->runs},
                       {"median_abs_error", l.observed->median},
                       {"measured_over_predicted", {l.observed->low, l.observed->high}}};
    if (l.band)
      j["band"] = {{"runs", l.band->runs},
                   {"median_abs_error", l.band->median_abs_error},
                   {"measured_over_predicted", {l.band->low, l.band->high}},
                   {"sources", l.band->sources}};
    agree += l.agrees();
    regimes.push_back(j);
  }
  Json rows_json = Json::array();
  for (const auto& r : rows)
    if (!r.regime.empty())
      rows_json.push_back(
          {{"id", r.id}, {"kind", r.kind}, {"regime", r.regime}, {"step_ratio", r.step_ratio}});
  return Json{{"regimes", regimes}, {"agreeing", agree}, {"rows", rows_json}};
}

void print_evidence(const std::vector<RowResult>& rows, std::ostream& os, bool md) {
  if (md) {  // the table of docs/accuracy.md, "Accuracy evidence by regime": the bands as measured
    os << "| regime | runs | median \\|error\\| | measured / predicted step | band quoted | runs from |\n"
       << "|---|---:|---:|---|---|---|\n";
    for (const auto& l : lines(rows)) {
      std::ostringstream row;
      row << std::fixed << "| " << l.regime << " | ";
      if (l.observed)
        row << l.observed->runs << " | " << std::setprecision(1) << 100 * l.observed->median << "% | "
            << std::setprecision(2) << l.observed->low << "–" << l.observed->high;
      else
        row << "0 | | ";
      row << " | "
          << (l.agrees() ? "this"
              : l.band   ? "differs"
                         : "none")
          << " | " << (l.band ? l.band->sources : "") << " |";
      os << row.str() << "\n";
    }
    return;
  }
  os << "accuracy by configuration regime (rows that time the step on a GPU their source names):\n";
  int agree = 0;
  const auto all = lines(rows);
  for (const auto& l : all) {
    os << "  " << l.regime << "\n    measured: "
       << (l.observed ? ratios(l.observed->median, l.observed->low, l.observed->high, l.observed->runs)
                      : std::string("no row of this set"))
       << "\n    band:     "
       << (l.band ? ratios(l.band->median_abs_error, l.band->low, l.band->high, l.band->runs)
                  : std::string("none (estimate quotes nothing for this regime)"))
       << (l.agrees() || !l.observed ? "" : "  [differs]") << "\n";
    agree += l.agrees();
  }
  os << agree << " of " << all.size()
     << " regimes agree with the bands estimate quotes (they are measured over the development, held-out, "
        "evidence and real-run files together)\n";
}

}  // namespace dsplan::cli
