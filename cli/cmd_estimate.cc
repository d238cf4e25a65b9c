// `dsplan estimate`: rank the configuration space for a model on a cluster and print a
// table (default), the JSON contract (--json), the best config's breakdown (--explain),
// and write ready-to-run configs for the top K (--out DIR).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "cli/explain.h"
#include "cli/out_writer.h"
#include "core/names.h"
#include "estimator/params.h"

namespace dsplan::cli {
namespace {

struct EstimateCli {
  EstimateOptions opts;
  bool json = false;
  bool explain = false;
  std::string out_dir;
  bool out_given = false;  // --out was on the command line (an empty path is an error)
};

std::string fmt(double v, int prec) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

// A table cell right-aligned in `width` columns, with at least one blank before it, so a
// value wider than its column (a step of hours, a long configuration) never runs into the
// cell before it.
std::string cell(const std::string& text, std::size_t width) {
  return std::string(text.size() < width ? width - text.size() : 1, ' ') + text;
}

void print_table(const EstimatePlan& p) {
  const auto& r = p.request;
  std::cout << "model    " << r.model.name << " (" << fmt(total_params(r.model) / 1e9, 3)
            << " B params), seq " << r.space.run.seq_len << ", "
            << (r.space.run.nvfp4() ? "nvfp4 (bf16 + NVFP4 linears)"
                : r.space.run.fp8   ? "fp8 (bf16 + FP8 linears)"
                                    : precision_flag(r.space.run))
            << ", " << name(r.space.run.framework) << ", " << name(r.space.run.optimizer) << "\n";
  for (const auto& a : p.assumptions) std::cout << "assumed  " << a << "\n";
  std::cout << "searched " << p.result.evaluated << " configurations in " << fmt(p.seconds, 3) << " s: "
            << p.result.feasible << " fit in " << fmt(in_GiB(r.cluster.node.gpu.memory), 1) << " GiB; "
            << p.result.invalid << " structurally invalid points skipped";
  if (p.result.dominated > 0)
    std::cout << "; " << p.result.dominated
              << " finalists hidden (same layout with checkpointing that saves no memory and costs time)";
  std::cout << "\n";
  std::cout << "ranked by " << p.json["search"]["ranked_by"].get<std::string>() << ", metric "
            << p.json["search"]["metric"].get<std::string>() << "; efficiencies: " << r.efficiency.source << "\n";
  std::cout << "largest fitting micro-batch:";
  for (const auto& [stage, b] : p.result.max_micro_batch)
    std::cout << "  z" << stage << "=" << (b ? std::to_string(*b) : std::string("n/a"));
  std::cout << "\n\n";
  // The configuration column fits the longest shown (selective recompute modules run long).
  std::vector<std::string> labels;
  std::size_t width = 58;
  for (const auto& e : p.result.configs) {
    labels.push_back(describe_config(e));
    width = std::max(width, labels.back().size() + 1);
  }
  std::cout << std::left << std::setw(4) << "#" << std::setw(int(width)) << "configuration" << std::right
            << std::setw(9) << "device" << std::setw(10) << "host/node" << std::setw(10) << "step"
            << std::setw(11) << "samples/s" << std::setw(8) << "TFLOP/s" << std::setw(6) << "MFU"
            << "  fits\n";
  int i = 0;
  for (const auto& e : p.result.configs) {
    std::string config = labels[i];
    config.resize(width, ' ');
    std::cout << std::left << std::setw(4) << ++i << config << cell(fmt(in_GiB(e.memory.device), 1), 6)
              << "GiB" << cell(fmt(in_GiB(e.memory.host), 0), 6) << "GiB " << cell(fmt(e.time.step.v, 3), 9)
              << "s" << cell(fmt(e.samples_per_s, 1), 11) << cell(fmt(e.tflops_per_gpu, 0), 8)
              << cell(fmt(100 * e.mfu, 0), 6) << "%  " << (e.fits && e.reasons.empty() ? "yes" : "no");
    if (!e.reasons.empty()) std::cout << " (" << join(e.reasons, "; ") << ")";
    std::cout << "\n";
  }
  if (!p.result.configs.empty() && p.result.configs.front().time.step.v > 0)
    std::cout << "\nevidence for #1 "
              << config_evidence_text(p.result.configs.front(), r.cluster.node.gpu.arch,
                                      r.efficiency.source != Efficiency{}.source)
              << "\n";
  if (!p.result.configs.empty()) {
    const std::string t = training_text(p.result.configs.front(), p.train_tokens, r.cluster.node.gpu.arch);
    if (!t.empty())
      std::cout << "training " << token_label(p.train_tokens) << " tokens with #1: " << t << "\n";
  }
  if (p.result.configs.empty()) {
    std::cout << "No configuration fits";
    if (p.result.evaluated > 0) std::cout << " (" << p.result.evaluated << " evaluated)";
    std::cout << ". Why the evaluated ones do not fit:\n";
    for (const auto& [why, n] : p.result.infeasible) std::cout << "  " << n << " x " << why << "\n";
    std::cout << "Use --all to see the configurations closest to fitting, with their memory.\n";
    // Long-context presets (Llama 3.x: 131072) default to their whole context, which is
    // rarely the training sequence: say so when that is what was searched.
    const int seq = p.request.space.run.seq_len;
    if (p.seq_is_model_max && seq > 8192)
      std::cout
          << "The sequence length is the model's maximum context, " << seq
          << " tokens (no --seq given); training usually runs shorter sequences: try e.g. --seq 4096.\n";
  }
}

void print_explain(const EstimatePlan& p) {
  if (p.result.configs.empty()) return;
  const Evaluation& e = p.result.configs.front();
  std::cout << "\nbest: " << describe_config(e) << "\n";
  print_breakdown(std::cout, e);
  if (e.time.step.v > 0) {
    print_micro_batch(std::cout, StepTimeModel(p.request.model, p.request.cluster, p.request.efficiency),
                      e.cfg);
  }
}

// Flags that leave no structurally valid point (e.g. --vpp 2 with --pp 1, --zero 3 with
// Megatron) are contradictory input, not a result: one message with the rules that removed
// the points, most first, and exit 2 before anything is written. A pinned point that breaks
// a rule is the same input (the planner returns it with its reasons; it has no step time).
std::optional<Diagnostic> no_valid_point(const EstimatePlan& p) {
  if (p.result.evaluated > 0) return std::nullopt;
  std::vector<std::pair<std::int64_t, std::string>> why;
  for (const auto& [reason, n] : p.result.rejections) why.push_back({n, reason});
  std::sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string rules;
  for (const auto& [n, reason] : why) rules += (rules.empty() ? "" : "; ") + std::to_string(n) + " x " + reason;
  return Diagnostic{
      "", "",
      "no valid configuration: every point of the search space breaks a rule (points removed: " + rules + ")",
      "widen the search (--zero, --tp, --pp, --vpp, --mbs, --global-batch or --gas, --ckpt, "
      "--recompute-layers, --offload, --framework); docs/manual.md lists the rules"};
}

// When the best configuration's step is set by the host issuing kernels rather than by the
// GPU (docs/model.md §4, "Host dispatch floor"), its time depends on the CPU and PyTorch
// version, which the model only assumes: say so, with both times. The step without the
// GPU's wait for the host (its breakdown's host_stall) is the GPU's work; a gap over 10%
// is reported.
//
// A step that is not host-bound at the default rate may be on the user's host: the lent
// H100 and H200 VMs issued a kernel every 25-40 us, against the default 10. Where the rate
// at which the host's issuing would equal the GPU's work (default x GPU work / host issue
// time, about: the order of the passes can stall the GPU a little sooner) is at most 40 us,
// the plan says so.
void note_host_bound(EstimatePlan& p) {
  if (p.result.configs.empty() || !p.result.configs.front().fits) return;
  const StepTimeBreakdown& t = p.result.configs.front().time;
  const double with_host = in_ms(t.step), gpu_only = in_ms(t.step - t.host_stall);
  const bool measured = p.request.efficiency.source != Efficiency{}.source;
  const double rate_us = in_us(p.request.efficiency.host_op_overhead), issue = in_ms(t.host_issue);
  if (!(with_host > 1.1 * gpu_only)) {
    constexpr double kSlowHostUs = 40;  // the slowest lent VM measured (docs/model.md §4)
    const double even_us = issue > 0 ? rate_us * gpu_only / issue : 0;
    if (measured || issue <= 0 || even_us > kSlowHostUs) return;
    const std::string note = "near host-bound: the best configuration's kernels take " + fmt(issue, 1) +
                             " ms to issue at " + fmt(rate_us, 1) + " us each (the default), against " +
                             fmt(gpu_only, 1) + " ms of GPU work; on a host slower than about " +
                             fmt(even_us, 0) +
                             " us a kernel (25-40 us measured on H100 and H200 VMs) the host sets "
                             "the step; 'dsplan calibrate' measures this host";
    p.assumptions.push_back(note);
    p.json["assumptions"].push_back(note);
    return;
  }
  const std::string note = "host-bound: the best configuration's step is " + fmt(with_host, 1) +
                           " ms with the host issuing kernels at " + fmt(rate_us, 1) + " us each (" +
                           (measured ? "from " + p.request.efficiency.source
                                     : std::string("the default; 25-40 us measured on H100 and H200 VMs")) +
                           "), against " + fmt(gpu_only, 1) +
                           " ms of GPU work; a larger micro-batch amortises it" +
                           (measured ? "" : ", and 'dsplan calibrate' measures this host");
  p.assumptions.push_back(note);
  p.json["assumptions"].push_back(note);
}

// A DeepSpeed pipeline as the best plan: its engine moves tensors unlike Megatron's
// (docs/model.md §5, "DeepSpeed's pipeline schedule"); how far its published runs came out
// from their predictions is the evidence line under the table.
void note_deepspeed_pipeline(EstimatePlan& p) {
  if (p.result.configs.empty() || !p.result.configs.front().fits) return;
  const TrainConfig& cfg = p.result.configs.front().cfg;
  if (cfg.framework != Framework::deepspeed || cfg.pp <= 1) return;
  const std::string note =
      "DeepSpeed's pipeline engine: each step opens with blocking send/recv pairs between neighbouring "
      "stages " +
      std::string(cfg.tp > 1 ? "(1/tp slices, all-gathered over the TP group) " : "") +
      "and the stages advance in lockstep (docs/model.md, \"DeepSpeed's pipeline schedule\")";
  p.assumptions.push_back(note);
  p.json["assumptions"].push_back(note);
}

// Interleaving's per-chunk costs beyond its sends are not priced, and published runs of
// Megatron at larger V came out slower than predicted (docs/accuracy.md, "Session 36"): when
// the best plan interleaves and the same layout with fewer chunks is within 1% of it in the
// list, say that the margin is below what the model resolves and name the smaller V.
void note_interleaving(EstimatePlan& p) {
  if (p.result.configs.empty() || !p.result.configs.front().fits) return;
  const Evaluation& best = p.result.configs.front();
  if (best.cfg.vpp <= 1 || !(best.time.step.v > 0)) return;
  const Evaluation* fewer = nullptr;
  for (const Evaluation& e : p.result.configs) {
    TrainConfig same = e.cfg;
    same.vpp = best.cfg.vpp;
    if (!e.fits || e.cfg.vpp >= best.cfg.vpp || !(same == best.cfg) ||
        e.time.step.v > 1.01 * best.time.step.v)
      continue;
    if (!fewer || e.cfg.vpp < fewer->cfg.vpp) fewer = &e;
  }
  if (!fewer) return;
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << "interleaving: vpp " << best.cfg.vpp << " is predicted "
    << 100.0 * (fewer->time.step.v / best.time.step.v - 1.0) << "% faster than vpp " << fewer->cfg.vpp
    << " of the same layout, less than the model resolves: each chunk's costs beyond its sends are not "
       "priced "
       "(NVIDIA's GPT-3 175B recipe measured 7% slower at vpp 12 than at vpp 6, in two NeMo releases, where "
       "dsplan prices them within 1%; docs/accuracy.md, \"Session 36\"); prefer vpp "
    << fewer->cfg.vpp << " at such a margin";
  p.assumptions.push_back(s.str());
  p.json["assumptions"].push_back(s.str());
}

int run(const EstimateCli& c) {
  auto estimated = run_estimate(c.opts);
  if (!estimated) return report(estimated.errors());
  EstimatePlan p = std::move(estimated).value();
  if (auto d = no_valid_point(p)) return report(Diagnostics{*d});
  note_host_bound(p);
  note_deepspeed_pipeline(p);
  note_interleaving(p);
  if (c.out_given) {
    auto written = write_out_dir(c.out_dir, p);
    if (!written) return report(written.errors());
  }
  if (c.json) {
    // --explain: the best configuration's per-micro-batch costs join its JSON.
    if (c.explain && !p.result.configs.empty() && p.result.configs.front().time.step.v > 0) {
      const StepTimeModel m(p.request.model, p.request.cluster, p.request.efficiency);
      p.json["configs"][0]["per_micro_batch"] = micro_batch_json(m, p.result.configs.front().cfg);
    }
    std::cout << p.json.dump(2) << "\n";
  } else {
    print_table(p);
    if (c.explain) print_explain(p);
    if (!c.out_dir.empty()) std::cout << "\nwrote configurations to " << c.out_dir << "\n";
  }
  return 0;
}

}  // namespace

void add_estimate(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<EstimateCli>();
  auto* sub = app.add_subcommand("estimate", "Predict memory and step time of every configuration and rank them");
  add_estimate_options(sub, cli->opts);
  sub->add_flag("--json", cli->json, "Print the plan as one JSON object");
  sub->add_flag(
      "--explain", cli->explain,
      "Show the best configuration's breakdown, critical path and per-micro-batch costs (with --json: its "
      "per_micro_batch object)");
  auto* out =
      sub->add_option("--out", cli->out_dir,
                      "Write ds_config.json, launch command and Megatron args for the top K into this folder "
                      "(new, empty, or an earlier --out folder, which is replaced)");
  sub->callback([cli, out, &exit_code] {
    cli->out_given = out->count() > 0;
    exit_code = run(*cli);
  });
}

}  // namespace dsplan::cli
