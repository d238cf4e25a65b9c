// `dsplan compare`: the best configuration for each hardware and GPU count of a list
// (--hw dgx-a100,dgx-h100 --gpus 8,16,32), one estimate each with every other flag shared,
// in one table: step, throughput per GPU, MFU, scaling against the smallest count on the
// same hardware, the band of runs like it, and with --train-tokens days and GPU-hours.
// Every combination is searched before anything is printed: a bad flag or hardware name
// exits 2 with no partial output. A combination with no valid or fitting configuration is
// a row with its reason, not an error, unless no combination has any.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "cli/explain.h"
#include "core/names.h"
#include "estimator/params.h"
#include "estimator/search/space.h"

namespace dsplan::cli {
namespace {

constexpr std::size_t kMaxHardware = 8, kMaxCounts = 16;

struct CompareCli {
  EstimateOptions opts;
  std::string gpus, hw = "dgx-a100";
  bool json = false;
};

struct Row {
  std::string hw;
  int gpus = 0;
  EstimatePlan plan;
  const Evaluation* best = nullptr;  // the plan's first configuration when it has a step time
  std::string reason;                // why there is none
  double scaling = 0;                // tokens/s per GPU over the smallest count's, same hardware
};

std::string fmt(double v, int prec) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.push_back("");
  return out;
}

Diagnostics parse_lists(const CompareCli& c, std::vector<std::string>& hws, std::vector<int>& counts) {
  Diagnostics errs;
  const std::string allowed = "comma-separated GPU counts in [1, " + std::to_string(kMaxGpus) +
                              "], at most " + std::to_string(kMaxCounts) + ", e.g. 8,16,32";
  for (const std::string& item : split(c.gpus)) {
    std::size_t used = 0;
    long long n = 0;
    try {
      n = item.empty() ? 0 : std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || n < 1 || n > kMaxGpus) {
      errs.push_back({"", "", "--gpus: invalid value \"" + item + "\"", allowed});
      continue;
    }
    if (std::find(counts.begin(), counts.end(), int(n)) == counts.end()) counts.push_back(int(n));
  }
  std::sort(counts.begin(), counts.end());  // rows and scaling from the smallest count up
  if (c.gpus.empty()) errs.push_back({"", "", "--gpus: an empty value", allowed});
  if (counts.size() > kMaxCounts)
    errs.push_back({"", "", "--gpus: " + std::to_string(counts.size()) + " counts", allowed});
  if (c.hw.empty())
    errs.push_back({"", "", "--hw: an empty value", "e.g. dgx-a100,dgx-h100 ('dsplan hw' lists them)"});
  for (const std::string& item : split(c.hw)) {
    if (item.empty()) {
      errs.push_back(
          {"", "", "--hw: an empty item in \"" + c.hw + "\"",
           "comma-separated GPU or system presets or cluster JSON files ('dsplan hw' lists them)"});
      break;
    }
    if (std::find(hws.begin(), hws.end(), item) == hws.end()) hws.push_back(item);
  }
  if (hws.size() > kMaxHardware)
    errs.push_back({"", "", "--hw: " + std::to_string(hws.size()) + " entries",
                    "at most " + std::to_string(kMaxHardware) + " presets or cluster files"});
  return errs;
}

// Why a searched combination has no best configuration.
std::string no_config_reason(const EstimatePlan& p) {
  if (p.result.evaluated == 0) return "no valid configuration (the flags leave no point on these GPUs)";
  if (!p.result.configs.empty() && p.result.configs.front().fits) return "";
  std::string why;
  for (const auto& [reason, n] : p.result.infeasible)
    why += (why.empty() ? "" : "; ") + std::to_string(n) + " x " + reason;
  return "nothing fits (" + why + ")";
}

void fill_scaling(std::vector<Row>& rows) {
  for (Row& r : rows) {
    if (!r.best) continue;
    for (const Row& base : rows) {  // the smallest count on the same hardware with a result
      if (base.hw != r.hw || !base.best) continue;
      r.scaling = (r.best->tokens_per_s / r.gpus) / (base.best->tokens_per_s / base.gpus);
      break;
    }
  }
}

std::string band_text(const Evaluation& e, GpuArch arch) {
  const auto b = evidence_band(evidence_regime(e, arch));
  return b ? fmt(b->p10, 2) + "-" + fmt(b->p90, 2) + "x" : "unchecked";
}

void print_rows(const std::vector<Row>& rows, double tokens) {
  std::set<std::string> seen;
  const EstimatePlan& first = rows.front().plan;
  const auto& run = first.request.space.run;
  std::cout << "model    " << first.request.model.name << " ("
            << fmt(total_params(first.request.model) / 1e9, 3) << " B params), seq " << run.seq_len << ", "
            << name(run.framework) << ", " << name(run.optimizer) << "\n";
  // Each assumption once; the hardware line once per preset, without its node count.
  for (const Row& r : rows)
    for (std::string a : r.plan.assumptions) {
      if (a.rfind("hardware:", 0) == 0) a = std::regex_replace(a, std::regex(", [0-9]+ node\\(s\\).*$"), "");
      if (seen.insert(a).second) std::cout << "assumed  " << a << "\n";
    }
  std::vector<std::string> labels;  // one per row ("" without a best configuration)
  std::size_t width = 52;           // fits the longest configuration shown
  for (const Row& r : rows) {
    labels.push_back(r.best ? describe_config(*r.best) : std::string());
    width = std::max(width, labels.back().size() + 1);
  }
  std::cout << "\n"
            << std::left << std::setw(16) << "hardware" << std::right << std::setw(6) << "GPUs"
            << "  " << std::left << std::setw(int(width)) << "best configuration" << std::right
            << std::setw(10) << "step" << std::setw(13) << "tokens/s/GPU" << std::setw(6) << "MFU"
            << std::setw(9) << "scaling" << std::setw(13) << "runs like it";
  if (tokens > 0) std::cout << std::setw(10) << "days" << std::setw(12) << "GPU-hours";
  std::cout << "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::cout << std::left << std::setw(16) << r.hw << std::right << std::setw(6) << r.gpus << "  ";
    if (!r.best) {
      std::cout << r.reason << "\n";
      continue;
    }
    const Evaluation& e = *r.best;
    std::string config = labels[i];
    config.resize(width, ' ');
    std::cout << config << std::setw(9) << fmt(e.time.step.v, 3) << "s" << std::setw(13)
              << fmt(e.tokens_per_s / r.gpus, 0) << std::setw(5) << fmt(100 * e.mfu, 0) << "%" << std::setw(9)
              << fmt(r.scaling, 2) << std::setw(13) << band_text(e, r.plan.request.cluster.node.gpu.arch);
    if (const auto t = training_of(e, tokens))
      std::cout << std::setw(10) << fmt(t->days, t->days < 10 ? 2 : 1) << std::setw(12)
                << fmt(t->gpu_hours, 0);
    std::cout << "\n";
  }
  std::cout
      << "\nscaling: tokens/s per GPU over the smallest GPU count's on the same hardware; runs like it: the "
         "middle 80% of measured / predicted steps of published and real runs of the configuration's kind "
         "(docs/accuracy.md)\n";
}

Json rows_json(const std::vector<Row>& rows) {
  Json j;
  j["model"] = rows.front().plan.json["model"];
  j["rows"] = Json::array();
  for (const Row& r : rows) {
    Json row{{"hardware", r.hw}, {"num_gpus", r.gpus}, {"assumptions", r.plan.assumptions}};
    if (r.best) {
      row["best"] = config_entry_json(*r.best, r.plan.request.cluster.node.gpu.arch, r.plan.train_tokens);
      row["tokens_per_s_per_gpu"] = r.best->tokens_per_s / r.gpus;
      row["scaling_efficiency"] = r.scaling;
    } else {
      row["reason"] = r.reason;
    }
    j["rows"].push_back(row);
  }
  return j;
}

int run(const CompareCli& c) {
  std::vector<std::string> hws;
  std::vector<int> counts;
  if (Diagnostics errs = parse_lists(c, hws, counts); !errs.empty()) return report(errs);
  std::vector<Row> rows;
  for (const std::string& hw : hws) {
    for (int n : counts) {
      EstimateOptions o = c.opts;
      o.hw = hw;
      o.gpus = n;
      auto estimated = run_estimate(o);
      if (!estimated) {
        Diagnostics errs = estimated.errors();
        for (auto& e : errs) e.message += " [with --hw " + hw + " --gpus " + std::to_string(n) + "]";
        return report(errs);
      }
      Row row;
      row.hw = hw;
      row.gpus = n;
      row.plan = std::move(estimated).value();
      rows.push_back(std::move(row));
    }
  }
  bool any = false;
  for (Row& r : rows) {
    r.reason = no_config_reason(r.plan);
    if (r.reason.empty() && r.plan.result.configs.front().time.step.v > 0)
      r.best = &r.plan.result.configs.front();
    any = any || r.best;
  }
  if (!any) {
    std::string why;
    for (const Row& r : rows)
      why += (why.empty() ? "" : "; ") + r.hw + " x " + std::to_string(r.gpus) + ": " + r.reason;
    return report({Diagnostic{
        "", "", "no hardware and GPU count of the comparison has a configuration that fits (" + why + ")",
        "try more GPUs, a shorter --seq, checkpointing or offload; 'dsplan estimate --all' "
        "shows what comes closest"}});
  }
  fill_scaling(rows);
  if (c.json)
    std::cout << rows_json(rows).dump(2) << "\n";
  else
    print_rows(rows, rows.front().plan.train_tokens);
  return 0;
}

}  // namespace

void add_compare(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<CompareCli>();
  auto* sub = app.add_subcommand(
      "compare", "The best configuration for each of several GPU counts and hardware presets, side by side");
  add_estimate_options(sub, cli->opts);
  // Lists instead of estimate's single --gpus and --hw.
  sub->remove_option(sub->get_option("--gpus"));
  sub->remove_option(sub->get_option("--hw"));
  sub->add_option("--gpus", cli->gpus, "GPU counts to compare, e.g. 8,16,32 (at most 16)")->required();
  sub->add_option("--hw", cli->hw,
                  "GPU or system presets or cluster JSON files, e.g. dgx-a100,dgx-h100 (default dgx-a100)");
  sub->add_flag("--json", cli->json, "Print the rows as one JSON object");
  sub->callback([cli, sub, &exit_code] {
    // One best configuration a row: estimate's --top and --all do not apply.
    for (const char* flag : {"--top", "--all"})
      if (sub->get_option(flag)->count() > 0) {
        exit_code =
            report({Diagnostic{"", flag, "does not apply to compare",
                               "compare shows the best configuration of each combination; run estimate "
                               "for one hardware and GPU count to see more"}});
        return;
      }
    exit_code = run(*cli);
  });
}

}  // namespace dsplan::cli
