// `dsplan validate FILE`: predicts every row of a published-measurements file (the
// format of shared/validation/published.json) and prints predicted vs measured, the
// error, and aggregates per kind; nccl-tests rows through the collective model;
// orderings pair by pair (measured ties allowed). --json for machines, --markdown for
// docs/accuracy.md. Rows that cannot be mapped are listed as skipped with the reason.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "calibrate/profile.h"
#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "cli/explain.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "validation/validation_rows.h"

namespace dsplan::cli {
namespace {

using namespace dsplan::validation;

struct ValidateCli {
  std::string file;
  bool json = false;
  bool markdown = false;
  std::string explain;  // rows whose id contains this: mapping and breakdown
  std::string profile;  // calibration profile applied to the rows on its GPU
};

// Replaces a request's efficiencies with a calibration profile's where the request's GPU is
// the one the profile measured; false (request unchanged) elsewhere.
using ProfileFn = std::function<bool(PlanRequest&)>;

struct RowResult {
  std::string id, kind, label, note;
  std::string source;  // the row's source, shortened (group key of the by-source table)
  double predicted = 0, measured = 0, error = 0;  // error: (pred - meas) / meas
  bool pass = true;       // for checks (oom, max micro-batch)
  bool inconsistent = false;
  bool unpredicted = false;  // no valid configuration: listed, counted apart
  bool check() const { return kind == "max_mbs" || kind == "oom"; }
};

const char* kind_name(MeasureKind k) {
  switch (k) {
    case MeasureKind::memory: return "memory_MiB";
    case MeasureKind::step_time: return "step_s";
    case MeasureKind::samples_per_s: return "samples/s";
    case MeasureKind::tokens_per_s:
      return "tokens/s";
    case MeasureKind::tflops_per_gpu: return "TFLOP/s/GPU";
    case MeasureKind::max_micro_batch: return "max_mbs";
    case MeasureKind::oom: return "oom";
  }
  return "";
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

std::string no_config_reason(const PlanResult& res) {
  std::string why = "no valid configuration";
  for (const auto& [reason, n] : res.rejections) return why + ": " + reason;
  for (const auto& [reason, n] : res.infeasible) return "no configuration fits: " + reason;
  return why;
}

// A source's short name: its text up to the first " (" or ",", at most 48 characters.
std::string short_source(const std::string& s) {
  const std::size_t cut = std::min({s.find(" ("), s.find(','), std::size_t{48}});
  return s.substr(0, std::min(cut, s.size()));
}

RowResult predict(const ValidationCase& c, const Measurement& m, const PlanRequest& req, const Evaluation& best) {
  RowResult r{c.id, kind_name(m.kind), m.label, "", short_source(c.source), 0, m.value, 0, true, c.inconsistent};
  switch (m.kind) {
    case MeasureKind::memory:
      r.predicted = predicted_memory(best.memory, m.figure);
      r.note = memory_figure_name(m.figure);
      break;
    case MeasureKind::step_time:
    case MeasureKind::samples_per_s:
      r.predicted = predicted_throughput(c, m, best);
      break;
    case MeasureKind::tokens_per_s:
      r.predicted = predicted_throughput(c, m, best);
      if (m.per_gpu) r.kind = "tokens/s/GPU";
      break;
    case MeasureKind::tflops_per_gpu:
      r.predicted = predicted_throughput(c, m, best);
      r.note = c.flops_note;
      break;
    case MeasureKind::max_micro_batch: {
      const MemoryModel mem(req.model, req.cluster, req.memory_options);
      r.predicted = largest_fitting_micro_batch(best.cfg, mem, req.cluster);
      r.pass = r.predicted >= m.value && r.predicted <= 3 * m.value;
      r.note = r.pass ? "ok: >= ran, <= 3x" : r.predicted < m.value ? "FAIL: ran but predicted not to fit" : "FAIL: > 3x";
      break;
    }
    case MeasureKind::oom:
      r.predicted = best.fits ? 0 : 1;
      r.pass = !best.fits;
      r.note = r.pass ? "predicted OOM" : "FAIL: predicted to fit";
      break;
  }
  if (!r.check() && m.value != 0) r.error = (r.predicted - m.value) / m.value;
  if (!r.check() && !best.fits) r.note += std::string(r.note.empty() ? "" : "; ") + "predicted not to fit";
  return r;
}

// The planner returned a timed configuration (not only structurally invalid points).
bool has_prediction(const PlanResult& res) {
  return !res.configs.empty() && res.configs.front().time.step.v > 0;
}

void explain_case(const ValidationCase& c, const PlanResult& res) {
  std::cout << c.id << "\n";
  for (const auto& a : c.assumptions) std::cout << "  assumed " << a << "\n";
  if (!has_prediction(res)) {
    std::cout << "  " << no_config_reason(res) << "\n\n";
    return;
  }
  const Evaluation& e = res.configs.front();
  std::cout << "  predicted: " << describe_config(e) << (e.fits ? "" : " (predicted not to fit)") << ", "
            << std::fixed << std::setprecision(1) << e.samples_per_s << " samples/s\n";
  print_breakdown(std::cout, e, "  ");
  std::cout << "\n";
}

// The plan of a row's or an ordering entry's request, with the profile's efficiencies where
// the request is on its GPU (`profiled` says whether it was).
PlanResult plan_request(PlanRequest req, const ProfileFn& profile, bool* profiled = nullptr) {
  const bool applied = profile && profile(req);
  if (profiled) *profiled = applied;
  req.refine = make_refiner(req);
  return plan(req);
}

std::vector<RowResult> run_case(const ValidationCase& c, const ProfileFn& profile) {
  std::vector<RowResult> out;
  const PlanResult res = plan_request(c.request, profile);
  for (const auto& m : c.measured) {
    if (!has_prediction(res)) {
      RowResult r{c.id, kind_name(m.kind), m.label, no_config_reason(res), short_source(c.source), 0, m.value, -1, false,
                  c.inconsistent};
      r.unpredicted = true;
      out.push_back(r);
      continue;
    }
    out.push_back(predict(c, m, c.request, res.configs.front()));
  }
  return out;
}

RowResult run_collective(const CollectiveCase& c) {
  const CollectiveModel model(c.node, default_efficiency(c.node.gpu));
  const CollectiveCost cost = model.estimate(c.collective, Bytes(c.bytes), CommGroup{c.ranks, c.ranks});
  static const char* algos[] = {"ring", "tree", "NVLS", "p2p", "fit"};
  RowResult r{c.id, "busbw_GB/s", "busbw_GBps", "", "", in_GBps(cost.busbw), c.measured_GBps, 0, true, false};
  r.error = (r.predicted - r.measured) / r.measured;
  r.note = std::string("model picks ") + algos[static_cast<int>(cost.algo)] + ", measured " + c.measured_algo;
  return r;
}

struct OrderResult {
  std::string id, note;
  std::vector<std::string> labels;
  std::vector<double> measured, predicted;
  int concordant = 0, pairs = 0;
  bool matches() const { return concordant == pairs; }
};

OrderResult run_ordering(const OrderingCase& o, const ProfileFn& profile) {
  OrderResult r{o.id, o.note, o.labels, o.measured, {}, 0, 0};
  for (const auto& g : o.groups) {
    const PlanResult res = plan_request(g, profile);
    // A pinned group is a configuration that ran: its predicted throughput counts even if
    // the memory model says it would not fit (that error is reported with the row).
    const bool usable = !res.configs.empty() && (res.configs.front().fits || g.space.pinned());
    r.predicted.push_back(usable ? res.configs.front().samples_per_s : 0);
  }
  for (std::size_t i = 0; i < r.predicted.size(); ++i)
    for (std::size_t j = i + 1; j < r.predicted.size(); ++j) {
      ++r.pairs;
      const double mi = i < o.measured.size() ? o.measured[i] : 0, mj = j < o.measured.size() ? o.measured[j] : 0;
      const bool tie = o.tie > 0 && std::fabs(mi - mj) < o.tie * std::max(mi, mj);
      if (tie || r.predicted[i] >= r.predicted[j]) ++r.concordant;
    }
  return r;
}

struct Summary {
  std::vector<double> mem, time, comm;
  int checks = 0, checks_pass = 0, over40 = 0, orders_ok = 0, orders = 0, unpredicted = 0;
  double mape() const {
    double s = 0;
    for (double e : time) s += e;
    return time.empty() ? 0 : s / static_cast<double>(time.size());
  }
};

Summary summarise(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                  const std::vector<OrderResult>& orders) {
  Summary s;
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
    if (r.check() || r.inconsistent || r.unpredicted || r.kind == "memory_MiB") continue;
    auto it = std::find_if(g.begin(), g.end(), [&](const SourceGroup& x) { return x.source == r.source && x.key == r.label; });
    if (it == g.end()) it = g.insert(g.end(), SourceGroup{r.source, r.label, {}, {}});
    it->errors.push_back(r.error);
    it->ids.push_back(r.id);
  }
  return g;
}

Json to_json(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
             const std::vector<OrderResult>& orders, const Summary& s, const ValidationSet& set) {
  Json j;
  auto row_json = [](const RowResult& r) {
    return Json{{"id", r.id},         {"kind", r.kind},   {"measured_key", r.label}, {"predicted", r.predicted},
                {"measured", r.measured}, {"error", r.error}, {"pass", r.pass}, {"note", r.note},
                {"inconsistent", r.inconsistent}};
  };
  j["rows"] = Json::array();
  for (const auto& r : rows) j["rows"].push_back(row_json(r));
  j["collectives"] = Json::array();
  for (const auto& r : comm) j["collectives"].push_back(row_json(r));
  j["assumptions"] = Json::object();
  for (const auto& c : set.cases) j["assumptions"][c.id] = c.assumptions;
  j["orderings"] = Json::array();
  for (const auto& o : orders)
    j["orderings"].push_back({{"id", o.id}, {"labels_best_first", o.labels}, {"measured", o.measured},
                              {"predicted_samples_per_s", o.predicted}, {"concordant_pairs", o.concordant},
                              {"pairs", o.pairs}, {"matches", o.matches()}, {"note", o.note}});
  j["by_source"] = Json::array();
  for (const auto& g : by_source(rows))
    j["by_source"].push_back(
        {{"source", g.source}, {"measured_key", g.key}, {"rows", g.errors.size()}, {"mape", g.mape()}});
  j["skipped"] = Json::array();
  for (const auto& d : set.skipped) j["skipped"].push_back({{"row", d.json_path}, {"reason", d.message}});
  j["summary"] = {{"memory_rows", s.mem.size()},      {"memory_median_abs_error", percentile(s.mem, 0.5)},
                  {"memory_p90_abs_error", percentile(s.mem, 0.9)}, {"time_rows", s.time.size()},
                  {"time_mape", s.mape()},            {"time_median_abs_error", percentile(s.time, 0.5)},
                  {"time_p90_abs_error", percentile(s.time, 0.9)}, {"time_rows_over_40pct", s.over40},
                  {"collective_rows", s.comm.size()}, {"collective_max_abs_error", percentile(s.comm, 1.0)},
                  {"checks", s.checks},               {"checks_passed", s.checks_pass},
                  {"unpredicted_rows", s.unpredicted},
                  {"orderings", s.orders},            {"orderings_matched", s.orders_ok}};
  return j;
}

void print_by_source(const std::vector<RowResult>& rows, bool md) {
  std::cout << (md ? "\n**Time error by source**\n\n| source | measured key | rows | MAPE | worst |\n|---|---|---:|---:|---|\n"
                   : "\ntime error by source (source; measured key: rows, MAPE, worst):\n");
  for (const auto& grp : by_source(rows)) {
    std::size_t worst = 0;
    for (std::size_t i = 0; i < grp.errors.size(); ++i)
      if (std::fabs(grp.errors[i]) > std::fabs(grp.errors[worst])) worst = i;
    std::ostringstream w;
    w << std::showpos << std::fixed << std::setprecision(1) << 100 * grp.errors[worst] << "% (" << grp.ids[worst] << ")";
    std::ostringstream mape;
    mape << std::fixed << std::setprecision(1) << 100 * grp.mape() << "%";
    if (md)
      std::cout << "| " << grp.source << " | " << grp.key << " | " << grp.errors.size() << " | " << mape.str() << " | "
                << w.str() << " |\n";
    else
      std::cout << "  " << grp.source << "; " << grp.key << ": " << grp.errors.size() << " rows, MAPE " << mape.str()
                << ", worst " << w.str() << "\n";
  }
}

std::string error_text(const RowResult& r) {
  std::ostringstream err;
  if (r.check()) err << (r.pass ? "pass" : "FAIL");
  else err << std::showpos << std::fixed << std::setprecision(1) << 100 * r.error << "%";
  return err.str();
}

void print_table(const std::vector<RowResult>& rows, bool md) {
  if (md) std::cout << "| row | kind | predicted | measured | error | note |\n|---|---|---:|---:|---:|---|\n";
  else
    std::cout << std::left << std::setw(42) << "row" << std::setw(13) << "kind" << std::right << std::setw(12)
              << "predicted" << std::setw(12) << "measured" << std::setw(9) << "error" << "  note\n";
  for (const auto& r : rows) {
    const int prec = r.kind == "step_s" ? 3 : 1;
    const std::string note = r.note + (r.inconsistent ? " (row marked inconsistent; not aggregated)" : "");
    std::ostringstream p, m;
    p << std::fixed << std::setprecision(prec) << r.predicted;
    m << std::fixed << std::setprecision(prec) << r.measured;
    if (md)
      std::cout << "| " << r.id << " | " << r.kind << " | " << p.str() << " | " << m.str() << " | " << error_text(r)
                << " | " << note << " |\n";
    else
      std::cout << std::left << std::setw(42) << r.id << std::setw(13) << r.kind << std::right << std::setw(12)
                << p.str() << std::setw(12) << m.str() << std::setw(9) << error_text(r) << "  " << note << "\n";
  }
}

void print_text(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                const std::vector<OrderResult>& orders, const Summary& s, const ValidationSet& set, bool md) {
  print_table(rows, md);
  print_by_source(rows, md);
  std::cout << (md ? "\n**Collectives (nccl-tests bus bandwidth, GB/s)**\n\n" : "\ncollectives (nccl-tests busbw, GB/s):\n");
  print_table(comm, md);
  std::cout << (md ? "\n**Orderings** (published best first; [predicted samples/s])\n\n"
                   : "\norderings (published best first; predicted samples/s):\n");
  for (const auto& o : orders) {
    std::cout << (md ? "- " : "  ") << o.id << ": " << (o.matches() ? "matches" : "DIFFERS") << " (" << o.concordant
              << "/" << o.pairs << " pairs; " << o.note << ")\n" << (md ? "  " : "    ");
    for (std::size_t i = 0; i < o.labels.size(); ++i) {
      std::cout << (i ? "  >  " : "") << o.labels[i];
      if (i < o.measured.size() && o.measured[i] > 0) std::cout << " (" << std::fixed << std::setprecision(1) << o.measured[i] << ")";
      std::cout << " [" << std::fixed << std::setprecision(1) << o.predicted[i] << "]";
    }
    std::cout << "\n";
  }
  std::cout << (md ? "\n**Skipped rows**\n\n" : "\n");
  for (const auto& d : set.skipped) std::cout << (md ? "- " : "skipped: ") << d.json_path << ": " << d.message << "\n";
  std::cout << std::fixed << std::setprecision(1) << (md ? "\n**Summary**\n\n" : "\nsummary\n") << (md ? "- " : "  ")
            << "memory rows " << s.mem.size() << ": median |error| " << 100 * percentile(s.mem, 0.5) << "%, p90 "
            << 100 * percentile(s.mem, 0.9) << "%\n" << (md ? "- " : "  ") << "time/throughput rows " << s.time.size()
            << ": MAPE " << 100 * s.mape() << "%, median " << 100 * percentile(s.time, 0.5) << "%, p90 "
            << 100 * percentile(s.time, 0.9) << "%, worse than 40%: " << s.over40 << "\n" << (md ? "- " : "  ")
            << "collective rows " << s.comm.size() << ": max |error| " << 100 * percentile(s.comm, 1.0) << "%\n"
            << (md ? "- " : "  ") << "memory checks (OOM, largest micro-batch): " << s.checks_pass << "/" << s.checks
            << " pass\n" << (md ? "- " : "  ") << "orderings matched: " << s.orders_ok << "/" << s.orders << "\n"
            << (md ? "- " : "  ") << "rows without a valid configuration (not marked inconsistent): " << s.unpredicted
            << "\n";
}

int run(const ValidateCli& v) {
  auto text = read_text_file(v.file);
  if (!text) return report(text.errors());
  auto json = parse_json_text(*text, v.file);
  if (!json) return report(json.errors());
  auto set = load_validation(*json, v.file);
  if (!set) return report(set.errors());
  if (set->cases.empty() && set->collectives.empty() && set->orderings.empty())
    return report({Diagnostic{v.file, set->skipped.empty() ? "" : set->skipped.front().json_path,
                              "no row dsplan can compare" +
                                  (set->skipped.empty() ? std::string(" (the file holds no rows)")
                                                        : " (" + std::to_string(set->skipped.size()) +
                                                              " skipped; the first: " +
                                                              set->skipped.front().message + ")"),
                              "rows in the format of shared/validation/published.json (docs/manual.md)"}});

  // --profile: loaded and checked once, then applied to every request on its GPU.
  CalibrationProfile loaded;
  ProfileFn profile;
  int profiled = 0;
  if (!v.profile.empty()) {
    auto ptext = read_text_file(v.profile);
    if (!ptext) return report(ptext.errors());
    auto parsed = load_profile(*ptext, v.profile);
    if (!parsed) return report(parsed.errors());
    loaded = std::move(parsed).value();
    profile = [&](PlanRequest& req) {
      auto eff = efficiency_from_profile(loaded, v.profile, req.cluster.node.gpu, req.efficiency);
      if (!eff) return false;
      req.efficiency = *eff;
      ++profiled;
      return true;
    };
  }
  std::vector<RowResult> rows, comm;
  if (!v.explain.empty()) {  // --explain prints the matching rows' breakdowns only
    int matched = 0;
    auto explain_request = [&profile](const ValidationCase& c, const PlanRequest& req) {
      bool profiled = false;
      const PlanResult res = plan_request(req, profile, &profiled);
      if (profiled) std::cout << "  (efficiencies from the calibration profile)\n";
      explain_case(c, res);
    };
    for (const auto& c : set->cases) {
      if (c.id.find(v.explain) == std::string::npos) continue;
      ++matched;
      explain_request(c, c.request);
    }
    // An ordering: each entry's best configuration and its breakdown, in the published order.
    for (const auto& o : set->orderings) {
      if (o.id.find(v.explain) == std::string::npos) continue;
      ++matched;
      std::cout << o.id << " (" << o.note << ")\n";
      for (std::size_t i = 0; i < o.groups.size(); ++i) {
        ValidationCase entry;
        entry.id = "  " + std::to_string(i + 1) + ". " + (i < o.labels.size() ? o.labels[i] : std::string());
        explain_request(entry, o.groups[i]);
      }
    }
    if (matched == 0)
      return report({Diagnostic{
          v.file, "", "--explain: no memory, time or ordering row id contains \"" + v.explain + "\"",
          "ids are in the tables validate prints; collective rows have no breakdown"}});
    return 0;
  }
  for (const auto& c : set->cases)
    for (auto& r : run_case(c, profile)) rows.push_back(std::move(r));
  for (const auto& c : set->collectives) comm.push_back(run_collective(c));
  std::vector<OrderResult> orders;
  for (const auto& o : set->orderings) orders.push_back(run_ordering(o, profile));
  if (profile && profiled == 0)
    return report({Diagnostic{v.profile, "/datasheet",
                              "--profile: the profile's GPU is not the GPU of any row in " + v.file,
                              "give a profile measured on the rows' GPU (dsplan calibrate show names it)"}});
  if (profile && !v.json)
    std::cout << "efficiencies of the " << profiled << " case(s) on the profile's GPU from " << v.profile
              << "; the others keep the datasheet defaults; collectives keep the datasheet model\n\n";
  const Summary s = summarise(rows, comm, orders);
  if (v.json) {
    Json doc = to_json(rows, comm, orders, s, *set);
    if (profile) doc["profile"] = {{"file", v.profile}, {"cases", profiled}};
    std::cout << doc.dump(2) << "\n";
  } else
    print_text(rows, comm, orders, s, *set, v.markdown);
  return 0;
}

}  // namespace

void add_validate(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<ValidateCli>();
  auto* sub = app.add_subcommand("validate", "Compare predictions with published measurements");
  sub->add_option("file", cli->file, "Measurements JSON (format of shared/validation/published.json)")->required();
  auto* json = sub->add_flag("--json", cli->json, "Print results as JSON");
  sub->add_flag("--markdown", cli->markdown, "Print the tables as Markdown (docs/accuracy.md)")
      ->excludes(json);
  sub->add_option(
      "--profile", cli->profile,
      "Calibration profile: its efficiencies replace the datasheet defaults for the rows on its GPU");
  sub->add_option("--explain", cli->explain,
                  "Show the mapping, predicted configuration and step breakdown of the rows whose id "
                  "contains this text")
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.empty() ? std::string("needs part of a row id, e.g. megatron_t1") : "";
          },
          "", "non-empty"));
  sub->callback([cli, &exit_code] { exit_code = run(*cli); });
}

}  // namespace dsplan::cli
