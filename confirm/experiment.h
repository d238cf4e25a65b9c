// One confirm experiment in the DeepSpeed autotuner's layout and protocol:
//   exps_dir/<name>.json                      {name, ds_config, num_gpus, num_nodes}
//   results_dir/<name>/ds_config.json         the experiment's DeepSpeed config
//   results_dir/<name>/exp.json               description + dsplan prediction + result
//   results_dir/<name>/cmd.txt                the command, shell-quoted
//   results_dir/<name>/stdout.log, stderr.log the run's output
//   results_dir/<name>/metrics.json           written by the workload (DeepSpeed engine)
// The ds_config is the user's (from the command's --deepspeed_config/--deepspeed file) with
// dsplan's batch, precision, ZeRO and checkpointing keys laid over it, and an autotuning
// section {enabled, metric_path, start_profile_step, end_profile_step} that makes the
// DeepSpeed engine write metrics.json and exit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "confirm/classify.h"
#include "confirm/plan.h"
#include "confirm/process.h"
#include "core/diagnostic.h"
#include "core/json_reader.h"

namespace dsplan {

// Keys an arg mapping may name: DeepSpeed's two plus dsplan's dimensions.
const std::vector<std::string>& arg_mapping_keys();

struct LaunchSpec {
  std::vector<std::string> command;  // the user's argv; empty = the reference workload
  std::string reference_script;      // examples/train_gpt.py, used when command is empty
  std::string python = "python3";
  Json base_ds_config = Json::object();  // the user's ds_config ({} when none)
  std::map<std::string, std::string> arg_mappings;
  int start_profile_step = 3;
  int end_profile_step = 5;
};

// Reads the ds_config the command names (if any) and its autotuning.arg_mappings (keys
// trimmed), lays `cli_arg_map` over them and validates the keys. A user command must name
// a ds_config (--deepspeed_config PATH or --deepspeed PATH) so experiments can replace it.
Expected<LaunchSpec> make_launch_spec(const std::vector<std::string>& command,
                                      const std::map<std::string, std::string>& cli_arg_map,
                                      const std::string& reference_script);

struct Experiment {
  std::string name;
  std::string dir;             // results_dir/<name>
  std::string ds_config_path;  // dir/ds_config.json
  std::string metrics_path;    // dir/metrics.json (absolute)
  Json ds_config;
  std::vector<std::string> argv;
  int num_gpus = 1;   // per node, as the autotuner records it
  int num_nodes = 1;
  std::int64_t global_batch = 1;  // samples per step: the measured step is this / throughput
  double peak_samples_per_s = 0;  // at the GPUs' dense peak in model FLOPs (0: unknown)
};

Experiment make_experiment(const Candidate& c, const Plan& plan, const LaunchSpec& launch,
                           const std::string& results_dir);

// The flag values arg mappings can carry for `cfg` (see arg_mapping_keys()).
std::map<std::string, std::string> arg_mapping_values(const TrainConfig& cfg);

struct ExperimentOutcome {
  Classification cls;
  Measured measured;  // valid when cls.outcome == ok
  bool reused = false;
  double seconds = 0;
};

// A finished result in exp.json that may be reused: ok (with metrics.json) or oom, for the
// same ds_config and command. nullopt when there is none or it is stale.
std::optional<ExperimentOutcome> load_result(const Experiment& e);

// Writes the description files, runs the command, classifies it and records the result in
// exp.json. Diagnostics only for I/O problems with the layout itself.
Expected<ExperimentOutcome> run_experiment(const Experiment& e, const Candidate& c,
                                           const std::string& exps_dir, const ProcessLimits& limits);

// What the reference workload (examples/train_gpt.py) cannot build of a model, one phrase
// each; empty when it trains the model the plan priced. Confirm refuses to run it then.
std::vector<std::string> reference_workload_gaps(const ModelSpec& m);
// The same for a configuration: what of its run the workload has no flags for (context
// parallelism, FP8 and NVFP4 linears, multi-token prediction). Empty when it can run it.
std::vector<std::string> reference_workload_gaps(const TrainConfig& c);

// What confirm says before running the first `to_run` candidates through the reference
// workload when some are Megatron plans: the workload trains them with PyTorch's autocast
// and kernels, not Megatron-LM's, so it does not measure the step that was priced (MoE
// layers ran 1.1-1.7x their price eagerly, docs/accuracy.md "Session 42"). Empty otherwise.
std::string reference_workload_note(const Plan& plan, std::size_t to_run);

// Writes `j` to `path` (pretty JSON) via a temporary file and a rename.
Expected<bool> write_json_file(const std::string& path, const Json& j);

}  // namespace dsplan
