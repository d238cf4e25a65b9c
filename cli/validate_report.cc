// Printing what `dsplan validate` found (validate_report.h): the row table, the error by
// source, collectives, orderings, skipped rows and the summary, as text or Markdown, or JSON.
#include "cli/validate_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace dsplan::cli {
namespace {

using namespace dsplan::validation;

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

// Time/throughput error per (source, measured key), in first-seen order: which sources
// the aggregate MAPE comes from. Inconsistent and unpredicted rows are left out.
struct SourceGroup {
  std::string source, key;
  std::vector<double> errors;  // signed
  std::vector<std::string> ids;
  double mape() const {
    double sum = 0;
    for (double e : errors) sum += std::fabs(e);
    return sum / static_cast<double>(errors.size());
  }
};

std::vector<SourceGroup> by_source(const std::vector<RowResult>& rows) {
  std::vector<SourceGroup> g;
  for (const auto& r : rows) {
    if (!r.timed()) continue;
    auto it = std::find_if(g.begin(), g.end(),
                           [&](const SourceGroup& x) { return x.source == r.source && x.key == r.label; });
    if (it == g.end()) it = g.insert(g.end(), SourceGroup{r.source, r.label, {}, {}});
    it->errors.push_back(r.error);
    it->ids.push_back(r.id);
  }
  return g;
}

void print_by_source(const std::vector<RowResult>& rows, bool md) {
  std::cout << (md ? "\n**Time error by source**\n\n| source | measured key | rows | MAPE | worst "
                     "|\n|---|---|---:|---:|---|\n"
                   : "\ntime error by source (source; measured key: rows, MAPE, worst):\n");
  for (const auto& grp : by_source(rows)) {
    std::size_t worst = 0;
    for (std::size_t i = 0; i < grp.errors.size(); ++i)
      if (std::fabs(grp.errors[i]) > std::fabs(grp.errors[worst])) worst = i;
    std::ostringstream w;
    w << std::showpos << std::fixed << std::setprecision(1) << 100 * grp.errors[worst] << "% ("
      << grp.ids[worst] << ")";
    std::ostringstream mape;
    mape << std::fixed << std::setprecision(1) << 100 * grp.mape() << "%";
    if (md)
      std::cout << "| " << grp.source << " | " << grp.key << " | " << grp.errors.size() << " | " << mape.str()
                << " | " << w.str() << " |\n";
    else
      std::cout << "  " << grp.source << "; " << grp.key << ": " << grp.errors.size() << " rows, MAPE "
                << mape.str() << ", worst " << w.str() << "\n";
  }
}

std::string error_text(const RowResult& r) {
  std::ostringstream err;
  if (r.check())
    err << (r.pass ? "pass" : "FAIL");
  else
    err << std::showpos << std::fixed << std::setprecision(1) << 100 * r.error << "%";
  return err.str();
}

void print_table(const std::vector<RowResult>& rows, bool md) {
  if (md)
    std::cout << "| row | kind | predicted | measured | error | note |\n|---|---|---:|---:|---:|---|\n";
  else
    std::cout << std::left << std::setw(42) << "row" << std::setw(13) << "kind" << std::right << std::setw(12)
              << "predicted" << std::setw(12) << "measured" << std::setw(9) << "error"
              << "  note\n";
  for (const auto& r : rows) {
    const int prec = r.kind == "step_s" ? 3 : 1;
    const std::string note = r.note + (r.inconsistent ? " (row marked inconsistent; not aggregated)" : "");
    std::ostringstream p, m;
    p << std::fixed << std::setprecision(prec) << r.predicted;
    m << std::fixed << std::setprecision(prec) << r.measured;
    if (md)
      std::cout << "| " << r.id << " | " << r.kind << " | " << p.str() << " | " << m.str() << " | "
                << error_text(r) << " | " << note << " |\n";
    else
      std::cout << std::left << std::setw(42) << r.id << std::setw(13) << r.kind << std::right
                << std::setw(12) << p.str() << std::setw(12) << m.str() << std::setw(9) << error_text(r)
                << "  " << note << "\n";
  }
}

// Pairs of runs in one group timed by the same key whose measurements differ by more than
// 2% (the autotuner orderings' run-to-run noise): concordant when the prediction orders
// them the same way. Rows marked inconsistent or left unpredicted are not paired.
void count_pairs(const std::vector<RowResult>& rows, Summary& s) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowResult& a = rows[i];
    if (!a.timed() || a.group.empty()) continue;
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      const RowResult& b = rows[j];
      if (!b.timed() || b.group != a.group || b.label != a.label) continue;
      if (std::fabs(a.measured - b.measured) <= 0.02 * std::max(a.measured, b.measured)) continue;
      ++s.pairs;
      s.pairs_concordant += (a.measured > b.measured) == (a.predicted > b.predicted);
    }
  }
}

}  // namespace

double Summary::mape() const {
  double s = 0;
  for (double e : time) s += e;
  return time.empty() ? 0 : s / static_cast<double>(time.size());
}

Summary summarise(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                  const std::vector<OrderResult>& orders) {
  Summary s;
  count_pairs(rows, s);
  for (const auto& r : rows) {
    if (r.unpredicted && !r.inconsistent) {
      ++s.unpredicted;
    } else if (r.check()) {
      ++s.checks;
      s.checks_pass += r.pass;
    } else if (r.inconsistent) {
      continue;  // listed, not aggregated: the row says it is inconsistent as published
    } else if (r.kind == "memory_MiB") {
      s.mem.push_back(std::fabs(r.error));
    } else {
      s.time.push_back(std::fabs(r.error));
      s.over40 += std::fabs(r.error) > 0.4;
    }
  }
  for (const auto& r : comm) s.comm.push_back(std::fabs(r.error));
  for (const auto& o : orders) s.orders_ok += o.matches();
  s.orders = static_cast<int>(orders.size());
  return s;
}

Json to_json(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
             const std::vector<OrderResult>& orders, const Summary& s, const ValidationSet& set) {
  Json j;
  auto row_json = [](const RowResult& r) {
    return Json{{"id", r.id},
                {"kind", r.kind},
                {"measured_key", r.label},
                {"predicted", r.predicted},
                {"measured", r.measured},
                {"error", r.error},
                {"pass", r.pass},
                {"note", r.note},
                {"inconsistent", r.inconsistent},
                {"config", r.config}};
  };
  j["rows"] = Json::array();
  for (const auto& r : rows) j["rows"].push_back(row_json(r));
  j["collectives"] = Json::array();
  for (const auto& r : comm) j["collectives"].push_back(row_json(r));
  j["assumptions"] = Json::object();
  for (const auto& c : set.cases) j["assumptions"][c.id] = c.assumptions;
  j["orderings"] = Json::array();
  for (const auto& o : orders)
    j["orderings"].push_back({{"id", o.id},
                              {"labels_best_first", o.labels},
                              {"measured", o.measured},
                              {"predicted_samples_per_s", o.predicted},
                              {"concordant_pairs", o.concordant},
                              {"pairs", o.pairs},
                              {"matches", o.matches()},
                              {"note", o.note}});
  j["by_source"] = Json::array();
  for (const auto& g : by_source(rows))
    j["by_source"].push_back(
        {{"source", g.source}, {"measured_key", g.key}, {"rows", g.errors.size()}, {"mape", g.mape()}});
  j["skipped"] = Json::array();
  for (const auto& d : set.skipped) j["skipped"].push_back({{"row", d.json_path}, {"reason", d.message}});
  j["summary"] = {{"memory_rows", s.mem.size()},
                  {"memory_median_abs_error", percentile(s.mem, 0.5)},
                  {"memory_p90_abs_error", percentile(s.mem, 0.9)},
                  {"time_rows", s.time.size()},
                  {"time_mape", s.mape()},
                  {"time_median_abs_error", percentile(s.time, 0.5)},
                  {"time_p90_abs_error", percentile(s.time, 0.9)},
                  {"time_rows_over_40pct", s.over40},
                  {"collective_rows", s.comm.size()},
                  {"collective_max_abs_error", percentile(s.comm, 1.0)},
                  {"checks", s.checks},
                  {"checks_passed", s.checks_pass},
                  {"unpredicted_rows", s.unpredicted},
                  {"orderings", s.orders},
                  {"orderings_matched", s.orders_ok},
                  {"pairs", s.pairs},
                  {"pairs_concordant", s.pairs_concordant}};
  return j;
}

void print_text(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                const std::vector<OrderResult>& orders, const Summary& s, const ValidationSet& set, bool md) {
  print_table(rows, md);
  print_by_source(rows, md);
  std::cout << (md ? "\n**Collectives (nccl-tests bus bandwidth, GB/s)**\n\n"
                   : "\ncollectives (nccl-tests busbw, GB/s):\n");
  print_table(comm, md);
  std::cout << (md ? "\n**Orderings** (published best first; [predicted samples/s])\n\n"
                   : "\norderings (published best first; predicted samples/s):\n");
  for (const auto& o : orders) {
    std::cout << (md ? "- " : "  ") << o.id << ": " << (o.matches() ? "matches" : "DIFFERS") << " ("
              << o.concordant << "/" << o.pairs << " pairs; " << o.note << ")\n"
              << (md ? "  " : "    ");
    for (std::size_t i = 0; i < o.labels.size(); ++i) {
      std::cout << (i ? "  >  " : "") << o.labels[i];
      if (i < o.measured.size() && o.measured[i] > 0)
        std::cout << " (" << std::fixed << std::setprecision(1) << o.measured[i] << ")";
      std::cout << " [" << std::fixed << std::setprecision(1) << o.predicted[i] << "]";
    }
    std::cout << "\n";
  }
  std::cout << (md ? "\n**Skipped rows**\n\n" : "\n");
  for (const auto& d : set.skipped)
    std::cout << (md ? "- " : "skipped: ") << d.json_path << ": " << d.message << "\n";
  std::cout << std::fixed << std::setprecision(1) << (md ? "\n**Summary**\n\n" : "\nsummary\n")
            << (md ? "- " : "  ") << "memory rows " << s.mem.size() << ": median |error| "
            << 100 * percentile(s.mem, 0.5) << "%, p90 " << 100 * percentile(s.mem, 0.9) << "%\n"
            << (md ? "- " : "  ") << "time/throughput rows " << s.time.size() << ": MAPE " << 100 * s.mape()
            << "%, median " << 100 * percentile(s.time, 0.5) << "%, p90 " << 100 * percentile(s.time, 0.9)
            << "%, worse than 40%: " << s.over40 << "\n"
            << (md ? "- " : "  ") << "collective rows " << s.comm.size() << ": max |error| "
            << 100 * percentile(s.comm, 1.0) << "%\n"
            << (md ? "- " : "  ") << "memory checks (OOM, largest micro-batch): " << s.checks_pass << "/"
            << s.checks << " pass\n"
            << (md ? "- " : "  ") << "orderings matched: " << s.orders_ok << "/" << s.orders << "\n"
            << (md ? "- " : "  ")
            << "pairs of one source's runs of a workload on the same GPUs in the measured order: "
            << s.pairs_concordant << "/" << s.pairs << " (measured within 2% left out)\n"
            << (md ? "- " : "  ")
            << "rows without a valid configuration (not marked inconsistent): " << s.unpredicted << "\n";
}

}  // namespace dsplan::cli
