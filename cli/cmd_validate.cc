// `dsplan validate FILE...`: predicts every row of published-measurements files (the
// format of shared/validation/published.json) and prints predicted vs measured, the
// error, and aggregates per kind; nccl-tests rows through the collective model;
// orderings pair by pair (measured ties allowed). --json for machines, --markdown for
// docs/accuracy.md. Rows that cannot be mapped are listed as skipped with the reason.
// Several files are one set; --evidence prints the accuracy of each configuration regime
// over that set instead (cli/validate_evidence.cc).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "calibrate/profile.h"
#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "cli/explain.h"
#include "cli/validate_report.h"
#include "estimator/search/evidence.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "validation/validation_rows.h"

namespace dsplan::cli {
namespace {

using namespace dsplan::validation;

struct ValidateCli {
  std::vector<std::string> files;
  bool json = false;
  bool markdown = false;
  std::string explain;  // rows whose id contains this: mapping and breakdown
  std::string profile;  // calibration profile applied to the rows on its GPU
  bool evidence = false;  // print the accuracy of each configuration regime instead
};

// Replaces a request's efficiencies with a calibration profile's where the request's GPU is
// the one the profile measured; false (request unchanged) elsewhere.
using ProfileFn = std::function<bool(PlanRequest&)>;

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
  r.group = m.kind == MeasureKind::step_time ? c.step_group : c.group;
  r.config = describe_config(best);  // what was searched (micro-batch, unpublished options) is visible
  switch (m.kind) {
    case MeasureKind::memory:
      r.predicted = predicted_memory(best.memory, m.figure);
      r.note = memory_figure_name(m.figure);
      break;
    case MeasureKind::step_time:
    case MeasureKind::samples_per_s:
    case MeasureKind::tokens_per_s:
    case MeasureKind::tflops_per_gpu:
      r.predicted = predicted_throughput(c, m, best);
      if (m.kind == MeasureKind::tokens_per_s && m.per_gpu) r.kind = "tokens/s/GPU";
      if (m.kind == MeasureKind::tflops_per_gpu) r.note = c.flops_note;
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

void explain_case(const ValidationCase& c, const PlanResult& res, const PlanRequest& req) {
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
  print_micro_batch(std::cout, StepTimeModel(req.model, req.cluster, req.efficiency), e.cfg, "  ");
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

// A time or throughput row that times the training step itself (not an end-to-end loop),
// or a memory row, on a GPU its source names and predicted with the datasheet defaults, is
// evidence for the regime of the predicted configuration: measured / predicted. Rows of
// Megatron code older than its fused kernels (2019, v1.0) are not: estimate plans today's.
void mark_evidence(const ValidationCase& c, const Measurement& m, const Evaluation& best, bool profiled,
                   RowResult& r) {
  if (profiled || !c.gpu_stated || r.inconsistent || r.unpredicted || r.check()) return;
  if (best.cfg.megatron_unfused_elementwise()) return;
  if (!(r.predicted > 0) || !(r.measured > 0) || r.label.find("end_to_end") != std::string::npos) return;
  const EvidenceKind kind = r.memory() ? EvidenceKind::memory : EvidenceKind::step;
  r.regime = regime_name(evidence_regime(best, c.request.cluster.node.gpu.arch), kind);
  r.ratio =
      m.kind == MeasureKind::step_time || r.memory() ? r.measured / r.predicted : r.predicted / r.measured;
}

std::vector<RowResult> run_case(const ValidationCase& c, const ProfileFn& profile) {
  std::vector<RowResult> out;
  bool profiled = false;
  const PlanResult res = plan_request(c.request, profile, &profiled);
  for (const auto& m : c.measured) {
    if (!has_prediction(res)) {
      RowResult r{c.id, kind_name(m.kind), m.label, no_config_reason(res), short_source(c.source), 0, m.value, -1, false,
                  c.inconsistent};
      r.unpredicted = true;
      out.push_back(r);
      continue;
    }
    out.push_back(predict(c, m, c.request, res.configs.front()));
    mark_evidence(c, m, res.configs.front(), profiled, out.back());
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

// One file's rows, checked (run() refuses a set without a row dsplan can compare).
Expected<ValidationSet> load_file(const std::string& file) {
  auto text = read_text_file(file);
  if (!text) return text.errors();
  auto json = parse_json_text(*text, file);
  if (!json) return json.errors();
  return load_validation(*json, file);
}

int run(const ValidateCli& v) {
  // Several files are one set: their rows, checks and orderings together.
  ValidationSet merged;
  Diagnostics errors;
  std::set<std::string> seen;  // a file given twice would count its rows twice
  for (const auto& file : v.files) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(file, ec);
    if (!seen.insert(ec ? file : canonical.string()).second) {
      errors.push_back(Diagnostic{file, "", "file given twice", "name each measurements file once"});
      continue;
    }
    auto one = load_file(file);
    if (!one) {
      for (auto& d : one.errors()) errors.push_back(d);
      continue;
    }
    for (auto& c : one->cases) merged.cases.push_back(std::move(c));
    for (auto& c : one->collectives) merged.collectives.push_back(std::move(c));
    for (auto& o : one->orderings) merged.orderings.push_back(std::move(o));
    for (auto& d : one->skipped) merged.skipped.push_back(std::move(d));
  }
  // A file whose every row is skipped (a model feature dsplan lacks) may be validated
  // beside others; a set with no row dsplan can compare is an error.
  if (errors.empty() && merged.cases.empty() && merged.collectives.empty() && merged.orderings.empty())
    errors.push_back(Diagnostic{
        v.files.size() == 1 ? v.files.front() : std::string(),
        merged.skipped.empty() ? "" : merged.skipped.front().json_path,
        "no row dsplan can compare" +
            (merged.skipped.empty() ? std::string(" (the file holds no rows)")
                                    : " (" + std::to_string(merged.skipped.size()) +
                                          " skipped; the first: " + merged.skipped.front().message + ")"),
        "rows in the format of shared/validation/published.json (docs/manual.md)"});
  if (!errors.empty()) return report(errors);
  const ValidationSet* set = &merged;
  const std::string files = v.files.size() == 1 ? v.files.front() : std::to_string(v.files.size()) + " files";

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
    auto explain_request = [&profile](const ValidationCase& c, PlanRequest req) {
      if (profile && profile(req)) std::cout << "  (efficiencies from the calibration profile)\n";
      const PlanResult res = plan_request(req, nullptr);
      explain_case(c, res, req);
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
          files, "", "--explain: no memory, time or ordering row id contains \"" + v.explain + "\"",
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
                              "--profile: the profile's GPU is not the GPU of any row in " + files,
                              "give a profile measured on the rows' GPU (dsplan calibrate show names it)"}});
  if (profile && !v.json)
    std::cout << "efficiencies of the " << profiled << " case(s) on the profile's GPU from " << v.profile
              << "; the others keep the datasheet defaults; collectives keep the datasheet model\n\n";
  if (v.evidence) {
    if (v.json)
      std::cout << evidence_json(rows).dump(2) << "\n";
    else
      print_evidence(rows, std::cout, v.markdown);
    return 0;
  }
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
  sub->add_option("file", cli->files,
                  "Measurements JSON (format of shared/validation/published.json); several files are "
                  "validated as one set")
      ->required();
  auto* json = sub->add_flag("--json", cli->json, "Print results as JSON");
  sub->add_flag("--markdown", cli->markdown, "Print the tables as Markdown (docs/accuracy.md)")
      ->excludes(json);
  sub->add_flag("--evidence", cli->evidence,
                "Print, per configuration regime (GPU generation, framework, pipeline, long sequence, "
                "host-sensitive), how "
                "far the measured steps came out from the predicted ones, next to the bands 'estimate' "
                "quotes (docs/accuracy.md)");
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
