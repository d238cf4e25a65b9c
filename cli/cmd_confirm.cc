// `dsplan confirm`: run the K most promising configurations of a plan for real under the
// DeepSpeed autotuner's protocol, print predicted vs measured, hand over the winner and
// learn a residual model (docs/confirm.md). Exit: 0 when a configuration ran, 1 when none
// did, 2 on bad input, 130 when interrupted (rerun to resume), or the training's status
// with --run.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "confirm/classify.h"
#include "confirm/command.h"
#include "confirm/confirm.h"
#include "confirm/ds_config.h"
#include "confirm/plan.h"
#include "confirm/process.h"
#include "confirm/report.h"

namespace dsplan::cli {
namespace {

std::atomic<bool> g_cancel{false};
extern "C" void on_signal(int) { g_cancel.store(true); }

struct ConfirmFlags {
  EstimateOptions est;
  std::string plan;
  ConfirmOptions run;
  bool launch_best = false;
  std::vector<std::string> arg_map;
  int start_step = 3, end_step = 5;
  std::vector<std::string> command;
};

Expected<Plan> load_plan(ConfirmFlags& f) {
  if (!f.plan.empty()) {
    auto text = read_text_file(f.plan);
    if (!text) return text.errors();
    auto j = parse_json_text(*text, f.plan);
    if (!j) return j.errors();
    return parse_plan(*j, f.plan);
  }
  if (f.est.model.empty() || f.est.gpus == 0)
    return Diagnostic{"", "", "confirm needs a plan", "give --plan FILE (from 'dsplan estimate --json') "
                      "or the estimate options --model and --gpus"};
  EstimateOptions o = f.est;
  o.top = std::max(f.run.top * 4, 20);  // candidates beyond K, for --adaptive re-ranking
  o.all = false;
  auto est = run_estimate(o);
  if (!est) return est.errors();
  if (const Json& c = est->json["configs"]; c.is_array() && c.empty())
    return Diagnostic{"", "", "the estimate options leave no configuration to confirm",
                      "widen the search (--zero, --tp, --pp, --mbs, ...) or give --plan FILE"};
  return parse_plan(est->json, "estimate");
}

Diagnostics check_flags(const ConfirmFlags& f, std::map<std::string, std::string>& arg_map) {
  Diagnostics errs;
  if (f.run.top < 1) errs.push_back({"", "--top", "must be at least 1", "how many configurations to run"});
  if (!(f.run.timeout_s > 0)) errs.push_back({"", "--timeout", "must be positive", "seconds per run"});
  if (f.start_step < 1)
    errs.push_back({"", "--start-profile-step", "must be at least 1, got " + std::to_string(f.start_step),
                    "the first profiled step, 1 <= start <= end; DeepSpeed's defaults are 3 and 5"});
  else if (f.end_step < f.start_step)
    errs.push_back({"", "--end-profile-step",
                    "must be at least --start-profile-step (" + std::to_string(f.start_step) + "), got " +
                        std::to_string(f.end_step),
                    "the last profiled step, 1 <= start <= end; DeepSpeed's defaults are 3 and 5"});
  for (const auto& m : f.arg_map) {
    auto eq = m.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
      errs.push_back({"", "--arg-map", "\"" + m + "\" is not KEY=FLAG",
                      "e.g. train_micro_batch_size_per_gpu=--per_device_train_batch_size"});
    else arg_map[m.substr(0, eq)] = m.substr(eq + 1);
  }
  return errs;
}

// Runs and residual model live beside the calibration profile when one is given.
void place_learning_files(ConfirmFlags& f) {
  if (f.est.profile.empty()) return;
  std::filesystem::path p(f.est.profile);
  const std::string stem = (p.parent_path() / p.stem()).string();
  f.run.residual_path = stem + ".residual.json";
  f.run.runs_db_path = stem + ".runs.json";
}

int report_results(const ConfirmReport& rep, const ConfirmFlags& f) {
  std::cout << "\n" << results_table(rep) << "\n" << autotuner_summary(rep);
  for (const auto& n : rep.notes) std::cout << "note: " << n << "\n";
  if (rep.training_runs > 0) {
    std::cout << "residual model: trained on " << rep.training_runs << " runs, saved to "
              << rep.residual_path << "\n";
    if (!rep.reranked.empty()) std::cout << "candidates not run, corrected ranking:";
    for (size_t i = 0; i < rep.reranked.size() && i < 5; ++i)
      std::cout << (i ? ", " : " ") << rep.reranked[i].first << " (" << rep.reranked[i].second << " samples/s)";
    if (!rep.reranked.empty()) std::cout << "\n";
  }
  if (auto w = write_outputs(rep, f.run.results_dir); !w) return report(w.errors());
  if (rep.interrupted) {
    std::cout << "interrupted after " << rep.runs.size()
              << " experiment(s); run the same command again to resume\n";
    return 130;
  }
  if (rep.best < 0) {
    std::cerr << "dsplan: " << failure_summary(rep);
    return 1;
  }
  const auto& best = rep.runs[rep.best];
  std::cout << "best: " << best.cand.name << " (" << best.result.measured.throughput
            << " samples/s); wrote " << f.run.results_dir << "/{summary.txt, ds_config_optimal.json, cmd_optimal.txt}\n";
  return 0;
}

int launch_best(const ConfirmReport& rep, const ConfirmFlags& f) {
  const auto argv = optimal_command(rep, (std::filesystem::path(f.run.results_dir) / "ds_config_optimal.json").string());
  std::cout << "running: " << shell_join(argv) << "\n" << std::flush;
  ProcessLimits lim{0, f.run.kill_grace_s, &g_cancel};
  ProcessResult pr = run_process(argv, "", "", lim, /*inherit_group=*/true);
  if (!pr.started) {
    std::cerr << "dsplan: error: cannot run the best configuration: " << pr.error << "\n";
    return 1;
  }
  return pr.exited ? pr.exit_code : 128 + pr.signal;
}

// The reference workload is PyTorch + DeepSpeed on CUDA GPUs: check that python3 imports
// torch and sees a GPU before any folder is made or experiment launched, and say which is
// missing (a user's own command after '--' is not checked: it may need something else).
// Plans priced as DeepSpeed also need DeepSpeed itself: without it the workload trains
// the configuration with PyTorch's own equivalents (autocast instead of DeepSpeed's 16-bit
// model, DDP or ZeroRedundancyOptimizer instead of the engine), which is not what was
// predicted, so the comparison and the residuals learned from it would be wrong.
Diagnostics preflight_reference_workload(const std::string& python, bool needs_deepspeed) {
  const CapturedRun run =
      run_captured({python, "-c",
                    "import sys\ntry:\n import torch\nexcept Exception as e:\n print(e); sys.exit(4)\n"
                    "if not torch.cuda.is_available(): sys.exit(3)\n" +
                        std::string(needs_deepspeed ? "try:\n import deepspeed\n"
                                                      "except Exception as e:\n print(e); sys.exit(5)\n"
                                                    : "")},
                   ProcessLimits{120, 3, &g_cancel}, /*merge=*/true);
  const ProcessResult& pr = run.result;
  const std::string why = tail_lines(run.out, 1);
  const std::string hint =
      "run confirm on a machine with CUDA GPUs and PyTorch + DeepSpeed installed, or give "
      "your own training command after '--'";
  if (!pr.started)
    return {{"", "", "cannot run " + python + " for the reference workload: " + pr.error, hint}};
  if (pr.exited && pr.exit_code == 0) return {};
  if (pr.exited && pr.exit_code == 3) return {{"", "", "no usable GPU: PyTorch sees no CUDA device", hint}};
  if (pr.exited && pr.exit_code == 4)
    return {{"", "", "the reference workload needs PyTorch, which " + python + " cannot import (" + why + ")",
             hint}};
  if (pr.exited && pr.exit_code == 5)
    return {{"", "",
             "the plan's configurations are DeepSpeed's, but " + python + " cannot import deepspeed (" + why +
                 "); the reference workload would train them with PyTorch's own equivalents instead, which "
                 "is not what was predicted",
             "install DeepSpeed, or plan for the framework that will run: --framework ddp (or fsdp)"}};
  return {{"", "",
           "checking PyTorch and the GPU failed (" + (pr.timed_out ? std::string("timed out") : why) + ")",
           hint}};
}

int run(ConfirmFlags& f) {
  std::map<std::string, std::string> arg_map;
  Diagnostics errs = check_flags(f, arg_map);
  if (!errs.empty()) return report(errs);
  auto plan = load_plan(f);
  if (!plan) return report(plan.errors());
  if (plan->candidates.empty()) {
    std::cerr << "dsplan: no configuration in the plan fits; nothing to confirm\n";
    return 1;
  }
  auto launch = make_launch_spec(f.command, arg_map, find_reference_workload());
  if (!launch) return report(launch.errors());
  if (const auto gaps = reference_workload_gaps(plan->model); f.command.empty() && !gaps.empty())
    return report(
        {Diagnostic{"", "", "the reference workload cannot train " + plan->model.name + ": " + join(gaps),
                    "give the model's own training command after '--' (it must read the "
                    "--deepspeed_config dsplan passes)"}});
  if (f.command.empty()) {
    const size_t to_run = std::min<size_t>(f.run.top, plan->candidates.size());
    for (size_t i = 0; i < to_run; ++i)  // configurations the workload has no flags for
      if (const auto gaps = reference_workload_gaps(plan->candidates[i].cfg); !gaps.empty())
        return report({Diagnostic{"", "",
                                  "the reference workload cannot run configuration " + std::to_string(i + 1) +
                                      " (" + experiment_name(plan->candidates[i].cfg) + "): " + join(gaps),
                                  "give Megatron-LM's pretrain_gpt.py (or the run's own command) after '--', "
                                  "or --top fewer configurations"}});
    const bool needs_deepspeed =
        std::any_of(plan->candidates.begin(), plan->candidates.begin() + static_cast<std::ptrdiff_t>(to_run),
                    [](const auto& c) { return c.cfg.framework == Framework::deepspeed; });
    if (auto pre = preflight_reference_workload(launch.value().python, needs_deepspeed); !pre.empty())
      return report(pre);
  }
  launch.value().start_profile_step = f.start_step;
  launch.value().end_profile_step = f.end_step;
  place_learning_files(f);
  const std::pair<std::string, std::string> dirs[] = {{"--results-dir", f.run.results_dir},
                                                      {"--exps-dir", f.run.exps_dir}};
  for (const auto& [flag, dir] : dirs) {  // both checked before either is made
    std::error_code ec;
    if (dir.empty()) return report({Diagnostic{"", flag, "needs a folder path", "e.g. autotuning_results"}});
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
      return report({Diagnostic{dir, flag, "exists and is not a folder", "give a folder path"}});
    // Experiments write a folder and files per configuration: not into the filesystem root.
    if (const auto abs = std::filesystem::weakly_canonical(dir, ec); !ec && abs == abs.root_path())
      return report({Diagnostic{dir, flag, "is the filesystem root",
                                "give a folder of its own, e.g. autotuning_results"}});
  }
  for (const auto& [flag, dir] : dirs) {
    // Made here, before the header line, so that an unusable path is an error on an empty
    // stdout (run_confirm would make it first thing anyway).
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return report({Diagnostic{dir, flag, "cannot create the folder: " + ec.message(), "check the path"}});
  }

  g_cancel.store(false);
  struct sigaction sa{}, old_int{}, old_term{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  f.run.cancel = &g_cancel;
  // The header goes out with the first progress line, so that a run that fails before
  // any experiment (a damaged runs database, say) leaves stdout empty.
  std::ostringstream head;
  head << "confirm: " << std::min<size_t>(f.run.top, plan->candidates.size()) << " of "
       << plan->candidates.size() << " candidate(s) for " << plan->model.name << " on " << plan->cluster_key()
       << (f.command.empty() ? " with " + launch->reference_script : "") << "\n";
  if (f.command.empty())  // the reference workload runs the plans
    if (const std::string note = reference_workload_note(*plan, f.run.top); !note.empty())
      head << note << "\n";
  auto header = std::make_shared<std::string>(head.str());
  auto flush_header = [header] {
    std::cout << *header << std::flush;
    header->clear();
  };
  f.run.progress = [flush_header](const std::string& line) {
    flush_header();
    std::cout << line << "\n" << std::flush;
  };
  Expected<ConfirmReport> rep = Diagnostics{};
  try {
    rep = run_confirm(*plan, *launch, f.run);
  } catch (const std::exception& e) {  // a hand-edited or truncated exp.json, metrics.json or runs file
    rep = Diagnostics{{f.run.results_dir, "",
                       "cannot resume from the results folder: " + without_json_library_tag(e.what()),
                       "rerun with --overwrite, or give a new --results-dir"}};
  }
  if (rep) flush_header();
  int code = rep ? report_results(*rep, f) : report(rep.errors());
  if (code == 0 && f.launch_best && !g_cancel.load()) code = launch_best(*rep, f);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return code;
}

}  // namespace

void add_confirm(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "confirm", "Run the top-K predicted configurations for real (DeepSpeed autotuner protocol), "
                 "compare with the prediction and learn from the results");
  auto f = std::make_shared<ConfirmFlags>();
  add_estimate_options(sub, f->est);
  // The estimate options build the plan when there is no --plan; with one they would be
  // silently ignored, so they are refused (--top and --profile keep their confirm meaning).
  std::vector<CLI::Option*> plan_building;
  for (CLI::Option* o : sub->get_options())
    if (o->get_name() != "--top" && o->get_name() != "--profile" && o->get_name() != "--help")
      plan_building.push_back(o);
  sub->get_option("--model")->required(false);
  sub->get_option("--gpus")->required(false);
  sub->get_option("--top")->description("How many configurations to run (default 5)");
  sub->add_option("--plan", f->plan, "Plan from 'dsplan estimate --json' (instead of the estimate options)");
  sub->add_option("--results-dir", f->run.results_dir, "Results folder (default autotuning_results)");
  sub->add_option("--exps-dir", f->run.exps_dir, "Experiment descriptions (default autotuning_exps)");
  sub->add_option("--timeout", f->run.timeout_s, "Seconds per run before it is killed (default 1800)");
  sub->add_flag("--overwrite", f->run.overwrite, "Rerun experiments that already have results");
  sub->add_flag("--adaptive", f->run.adaptive, "Pick each next run from the residual-corrected ranking");
  sub->add_flag("--run", f->launch_best, "Then launch the best configuration for the real training");
  sub->add_option("--arg-map", f->arg_map, "KEY=FLAG: pass a config value to the script as FLAG "
                  "(keys: train_micro_batch_size_per_gpu, gradient_accumulation_steps, tp, pp, ...); repeatable")
      ->allow_extra_args(false);
  sub->add_option("--start-profile-step", f->start_step, "First profiled step (default 3)");
  sub->add_option("--end-profile-step", f->end_step, "Last profiled step (default 5)");
  sub->add_option("command", f->command, "Launch command, after '--' (default: examples/train_gpt.py)");
  sub->callback([f, plan_building, &exit_code] {
    f->run.top = f->est.top;
    if (!f->plan.empty())
      for (const CLI::Option* o : plan_building)
        if (o->count() > 0) {
          exit_code = report({Diagnostic{
              "", "--plan", "cannot be combined with " + o->get_name() + ", an option that builds a plan",
              "give a plan from 'dsplan estimate --json', or the estimate "
              "options, not both"}});
          return;
        }
    exit_code = run(*f);
  });
  f->est.top = 5;
}

}  // namespace dsplan::cli
