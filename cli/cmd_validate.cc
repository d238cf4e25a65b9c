// `dsplan validate FILE`: predicts every row of a published-measurements file (the
// format of shared/validation/published.json) and prints predicted vs measured, the
// error, and aggregates per kind; orderings are checked pair by pair. --json too.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "cli/validation_rows.h"

namespace dsplan::cli {
namespace {

struct ValidateCli {
  std::string file;
  bool json = false;
};

struct RowResult {
  std::string id, kind, label, note;
  double predicted = 0, measured = 0, error = 0;  // error: (pred - meas) / meas
  bool pass = true;       // for checks (oom, max micro-batch)
  bool inconsistent = false;
};

const char* kind_name(MeasureKind k) {
  switch (k) {
    case MeasureKind::memory: return "memory_MiB";
    case MeasureKind::step_time: return "step_s";
    case MeasureKind::samples_per_s: return "samples/s";
    case MeasureKind::tflops_per_gpu: return "TFLOP/s/GPU";
    case MeasureKind::max_micro_batch: return "max_mbs";
    case MeasureKind::oom: return "oom";
  }
  return "";
}

double figure(const MemoryBreakdown& m, MemoryFigure f) {
  switch (f) {
    case MemoryFigure::allocated: return in_MiB(m.allocated);
    case MemoryFigure::reserved: return in_MiB(m.reserved);
    case MemoryFigure::device: return in_MiB(m.device);
  }
  return 0;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t i = static_cast<size_t>(pos);
  double frac = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

std::vector<RowResult> run_case(const ValidationCase& c) {
  std::vector<RowResult> out;
  PlanRequest req = c.request;
  req.refine = make_refiner(req);
  PlanResult res = plan(req);
  const Evaluation* best = res.configs.empty() ? nullptr : &res.configs.front();
  for (const auto& m : c.measured) {
    RowResult r{c.id, kind_name(m.kind), m.label, "", 0, m.value, 0, true, c.inconsistent};
    if (!best) {
      r.note = "no configuration evaluated";
      r.pass = false;
      out.push_back(r);
      continue;
    }
    switch (m.kind) {
      case MeasureKind::memory: r.predicted = figure(best->memory, m.figure);
        r.note = m.figure == MemoryFigure::device ? "device" : m.figure == MemoryFigure::allocated ? "allocated" : "reserved";
        break;
      case MeasureKind::step_time: r.predicted = best->time.step.v; break;
      case MeasureKind::samples_per_s: r.predicted = best->samples_per_s; break;
      case MeasureKind::tflops_per_gpu:
        r.predicted = c.source_flops_per_step.value_or(0) / best->time.step.v / req.cluster.num_gpus / 1e12;
        r.note = "source FLOP formula";
        break;
      case MeasureKind::max_micro_batch: {
        MemoryModel mem(req.model, req.cluster);
        r.predicted = largest_fitting_micro_batch(best->cfg, mem, req.cluster);
        r.pass = r.predicted >= m.value && r.predicted <= 3 * m.value;
        r.note = r.pass ? "ok: ran and fits, not over 3x" : "FAIL";
        break;
      }
      case MeasureKind::oom:
        r.predicted = best->fits ? 0 : 1;
        r.pass = !best->fits;
        r.note = r.pass ? "predicted OOM" : "FAIL: predicted to fit";
        break;
    }
    if (m.kind != MeasureKind::oom && m.kind != MeasureKind::max_micro_batch && m.value != 0)
      r.error = (r.predicted - m.value) / m.value;
    out.push_back(r);
  }
  return out;
}

struct OrderResult {
  std::string id;
  std::vector<std::string> labels;
  std::vector<double> predicted;
  int concordant = 0, pairs = 0;
};

OrderResult run_ordering(const OrderingCase& o) {
  OrderResult r{o.id, o.labels, {}, 0, 0};
  for (const auto& g : o.groups) {
    PlanRequest req = g;
    req.refine = make_refiner(req);
    PlanResult res = plan(req);
    r.predicted.push_back(res.configs.empty() || !res.configs.front().fits ? 0 : res.configs.front().samples_per_s);
  }
  for (size_t i = 0; i < r.predicted.size(); ++i)
    for (size_t j = i + 1; j < r.predicted.size(); ++j) {
      ++r.pairs;
      if (r.predicted[i] >= r.predicted[j]) ++r.concordant;
    }
  return r;
}

int run(const ValidateCli& v) {
  auto text = read_text_file(v.file);
  if (!text) return report(text.errors());
  auto json = parse_json_text(*text, v.file);
  if (!json) return report(json.errors());
  auto set = load_validation(*json, v.file);
  if (!set) return report(set.errors());

  std::vector<RowResult> rows;
  for (const auto& c : set->cases)
    for (auto& r : run_case(c)) rows.push_back(std::move(r));
  std::vector<OrderResult> orders;
  for (const auto& o : set->orderings) orders.push_back(run_ordering(o));

  std::vector<double> mem_err, time_err;
  int checks = 0, checks_pass = 0, over40 = 0;
  for (const auto& r : rows) {
    if (r.kind == std::string("memory_MiB")) mem_err.push_back(std::fabs(r.error));
    else if (r.kind == std::string("max_mbs") || r.kind == std::string("oom")) { ++checks; checks_pass += r.pass; }
    else if (!r.inconsistent) {
      time_err.push_back(std::fabs(r.error));
      over40 += std::fabs(r.error) > 0.4;
    }
  }
  int orders_ok = 0;
  for (const auto& o : orders) orders_ok += o.concordant == o.pairs;
  double mape = 0;
  for (double e : time_err) mape += e;
  mape = time_err.empty() ? 0 : mape / time_err.size();

  if (v.json) {
    Json j;
    j["rows"] = Json::array();
    for (const auto& r : rows)
      j["rows"].push_back({{"id", r.id}, {"kind", r.kind}, {"measured_key", r.label}, {"predicted", r.predicted},
                           {"measured", r.measured}, {"error", r.error}, {"pass", r.pass}, {"note", r.note},
                           {"inconsistent", r.inconsistent}});
    j["orderings"] = Json::array();
    for (const auto& o : orders)
      j["orderings"].push_back({{"id", o.id}, {"labels_best_first", o.labels}, {"predicted_samples_per_s", o.predicted},
                                {"concordant_pairs", o.concordant}, {"pairs", o.pairs}, {"matches", o.concordant == o.pairs}});
    j["summary"] = {{"memory_rows", mem_err.size()}, {"memory_median_abs_error", percentile(mem_err, 0.5)},
                    {"memory_p90_abs_error", percentile(mem_err, 0.9)}, {"time_rows", time_err.size()},
                    {"time_mape", mape}, {"time_median_abs_error", percentile(time_err, 0.5)},
                    {"time_p90_abs_error", percentile(time_err, 0.9)}, {"time_rows_over_40pct", over40},
                    {"checks", checks}, {"checks_passed", checks_pass}, {"orderings", orders.size()},
                    {"orderings_matched", orders_ok}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(42) << "row" << std::setw(13) << "kind" << std::right << std::setw(12)
            << "predicted" << std::setw(12) << "measured" << std::setw(9) << "error" << "  note\n";
  for (const auto& r : rows) {
    std::ostringstream err;
    if (r.kind == std::string("max_mbs") || r.kind == std::string("oom")) err << (r.pass ? "pass" : "FAIL");
    else err << std::showpos << std::fixed << std::setprecision(1) << 100 * r.error << "%";
    std::cout << std::left << std::setw(42) << r.id << std::setw(13) << r.kind << std::right << std::fixed
              << std::setprecision(r.kind == std::string("step_s") ? 3 : 1) << std::setw(12) << r.predicted
              << std::setw(12) << r.measured << std::setw(9) << err.str() << "  " << r.note
              << (r.inconsistent ? " (row marked inconsistent)" : "") << "\n";
  }
  std::cout << "\norderings (published best first; predicted samples/s):\n";
  for (const auto& o : orders) {
    std::cout << "  " << o.id << ": " << (o.concordant == o.pairs ? "matches" : "DIFFERS") << " (" << o.concordant
              << "/" << o.pairs << " pairs)\n    ";
    for (size_t i = 0; i < o.labels.size(); ++i)
      std::cout << (i ? "  >  " : "") << o.labels[i] << " [" << std::setprecision(1) << o.predicted[i] << "]";
    std::cout << "\n";
  }
  for (const auto& d : set->skipped) std::cout << "skipped: " << d.to_string() << "\n";
  std::cout << std::fixed << std::setprecision(1) << "\nsummary\n"
            << "  memory rows " << mem_err.size() << ": median |error| " << 100 * percentile(mem_err, 0.5)
            << "%, p90 " << 100 * percentile(mem_err, 0.9) << "%\n"
            << "  time/throughput rows " << time_err.size() << ": MAPE " << 100 * mape << "%, median "
            << 100 * percentile(time_err, 0.5) << "%, p90 " << 100 * percentile(time_err, 0.9) << "%, worse than 40%: "
            << over40 << "\n"
            << "  memory checks (OOM, largest micro-batch): " << checks_pass << "/" << checks << " pass\n"
            << "  orderings matched: " << orders_ok << "/" << orders.size() << "\n";
  return 0;
}

}  // namespace

void add_validate(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<ValidateCli>();
  auto* sub = app.add_subcommand("validate", "Compare predictions with published measurements");
  sub->add_option("file", cli->file, "Measurements JSON (format of shared/validation/published.json)")->required();
  sub->add_flag("--json", cli->json, "Print results as JSON");
  sub->callback([cli, &exit_code] { exit_code = run(*cli); });
}

}  // namespace dsplan::cli
