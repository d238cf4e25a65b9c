// `dsplan confirm` as a library: run the K most promising configurations of a plan for
// real, one after another, classify each, learn a residual model after every run, and
// report predicted against measured. Selection: the plan's order, or with `adaptive` the
// order corrected by the residual model after each run (configurations that contain an
// OOM'd one at a larger micro-batch go last). Progress lines go to a callback; the caller
// prints them. Cancellation (SIGINT) stops the running experiment and the loop.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "confirm/classify.h"
#include "confirm/experiment.h"
#include "confirm/plan.h"

namespace dsplan {

struct ConfirmOptions {
  int top = 5;
  std::string results_dir = "autotuning_results";
  std::string exps_dir = "autotuning_exps";
  double timeout_s = 1800;
  double kill_grace_s = 3;
  bool overwrite = false;
  bool adaptive = false;
  std::string runs_db_path;    // "" = results_dir/dsplan_runs.json
  std::string residual_path;   // "" = results_dir/residual_model.json
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const std::string&)> progress;  // one line per event
};

struct ExperimentRecord {
  Candidate cand;
  Experiment exp;
  ExperimentOutcome result;
  double corrected_samples_per_s = 0;  // residual-corrected prediction when it was chosen (0: none)
};

struct ConfirmReport {
  std::vector<ExperimentRecord> runs;  // in the order they ran
  int best = -1;                       // index into runs of the best ok run
  bool interrupted = false;
  int training_runs = 0;               // runs the final residual model learned from
  std::string residual_path;           // where it was saved ("" = not trained)
  std::vector<std::string> notes;      // e.g. residual-model problems (not fatal)
  // The candidates not run, re-ranked by the final residual model: (name, corrected samples/s).
  std::vector<std::pair<std::string, double>> reranked;
  double seconds = 0;
};

// Runs the experiments. Diagnostics only for problems with the inputs or the layout
// (unwritable directories, a corrupt runs database); run failures are in the report.
Expected<ConfirmReport> run_confirm(const Plan& plan, const LaunchSpec& launch, const ConfirmOptions& o);

// The reference workload (examples/train_gpt.py): $DSPLAN_TRAIN_SCRIPT, else next to the
// binary (../examples, ../share/dsplan/examples), else in the source tree dsplan was built
// from. "" when none exists.
std::string find_reference_workload();

// A file dsplan ships beside its binary, by its path in the source tree (e.g.
// "calibrate/probes/host_dispatch.py"): BIN/../PATH, BIN/PATH, BIN/../share/dsplan/PATH,
// else the source tree dsplan was built from. "" when none exists.
std::string find_shipped_file(const std::string& relative);

}  // namespace dsplan
