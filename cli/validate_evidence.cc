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

#include "cli/validate_report.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {
namespace {

struct Observed {
  int runs = 0;
  double median = 0, low = 0, high = 0, p10 = 0, p90 = 0;
};

// The q-quantile, linear between ranks (q = 0.5: the median).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

std::map<std::string, Observed> observe(const std::vector<RowResult>& rows, EvidenceKind kind) {
  std::map<std::string, std::vector<double>> ratios;
  for (const auto& r : rows)
    if (!r.regime.empty() && r.memory() == (kind == EvidenceKind::memory))
      ratios[r.regime].push_back(r.ratio);
  std::map<std::string, Observed> out;
  for (const auto& [regime, v] : ratios) {
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - 1));
    out[regime] = {static_cast<int>(v.size()),
                   quantile(dev, 0.5),
                   *std::min_element(v.begin(), v.end()),
                   *std::max_element(v.begin(), v.end()),
                   quantile(v, 0.1),
                   quantile(v, 0.9)};
  }
  return out;
}

// The table rounds the ratios to 0.01 and the median to 0.001.
bool agrees(const Observed& o, const EvidenceBand& b) {
  auto near = [](double x, double y) { return std::fabs(x - y) <= 0.006; };
  return o.runs == b.runs && std::fabs(o.median - b.median_abs_error) <= 0.0006 && near(o.low, b.low) &&
         near(o.high, b.high) && near(o.p10, b.p10) && near(o.p90, b.p90);
}

struct Line {
  std::string regime;
  std::optional<Observed> observed;
  std::optional<EvidenceBand> band;
  bool agrees() const { return observed && band && cli::agrees(*observed, *band); }
};

std::vector<Line> lines(const std::vector<RowResult>& rows, EvidenceKind kind) {
  const auto obs = observe(rows, kind);
  const auto bands = evidence_bands(kind);
  std::vector<Line> out;
  for (const auto& b : bands) {
    const auto it = obs.find(b.regime);
    out.push_back({b.regime, it == obs.end() ? std::nullopt : std::optional<Observed>(it->second), b});
  }
  for (const auto& [regime, o] : obs) {
    const bool listed =
        std::any_of(bands.begin(), bands.end(), [&](const EvidenceBand& b) { return regime == b.regime; });
    if (!listed) out.push_back({regime, o, std::nullopt});
  }
  return out;
}

const char* what(EvidenceKind kind) { return kind == EvidenceKind::memory ? "peak memory" : "step"; }

std::string ratios(double median, double low, double high, double p10, double p90, int runs,
                   EvidenceKind kind) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << runs << " runs, median |error| " << 100 * median
    << "%, measured " << std::setprecision(2) << low << "-" << high << "x the predicted " << what(kind)
    << " (middle 80% " << p10 << "-" << p90 << "x)";
  return s.str();
}

Json regimes_json(const std::vector<Line>& all, int& agree) {
  Json out = Json::array();
  for (const auto& l : all) {
    Json j{{"regime", l.regime}, {"agrees", l.agrees()}};
    if (l.observed)
      j["observed"] = {{"runs", l.observed->runs},
                       {"median_abs_error", l.observed->median},
                       {"measured_over_predicted", {l.observed->low, l.observed->high}},
                       {"middle_80", {l.observed->p10, l.observed->p90}}};
    if (l.band)
      j["band"] = {{"runs", l.band->runs},
                   {"median_abs_error", l.band->median_abs_error},
                   {"measured_over_predicted", {l.band->low, l.band->high}},
                   {"middle_80", {l.band->p10, l.band->p90}},
                   {"sources", l.band->sources}};
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
      row << l.observed->runs << " | " << std::setprecision(1) << 100 * l.observed->median << "% | "
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
      os << "  " << l.regime << "\n    measured: "
         << (l.observed ? ratios(l.observed->median, l.observed->low, l.observed->high, l.observed->p10,
                                 l.observed->p90, l.observed->runs, kind)
                        : std::string("no row of this set"))
         << "\n    band:     "
         << (l.band ? ratios(l.band->median_abs_error, l.band->low, l.band->high, l.band->p10, l.band->p90,
                             l.band->runs, kind)
                    : std::string("none (estimate quotes nothing for this regime)"))
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
