// The estimate options shared by `dsplan estimate` and `dsplan confirm`: flag
// registration, parsing of lists and ranges into a PlanRequest (all problems reported
// together, each naming the flag and the allowed values), running the plan, and the
// JSON contract that other tools read (docs/manual.md, "estimate --json").
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_reader.h"
#include "estimator/search/evidence.h"
#include "estimator/search/planner.h"

namespace dsplan::cli {

struct EstimateOptions {
  std::string model;
  int gpus = 0;
  std::string hw = "dgx-a100";
  std::optional<int> gpus_per_node;
  std::optional<double> inter_node_gbps;
  std::string framework;  // empty: deepspeed, or megatron for a mixture-of-experts model
  std::string precision;  // empty: bf16 where supported, else fp16
  std::string optimizer = "adam";
  int seq = 0;            // 0: the model's maximum context (max_positions)
  std::optional<long long> global_batch;
  std::string zero, tp, pp, vpp, mbs, gas, ckpt, flash, sp, offload;  // search dimensions
  int recompute_layers = 0;  // block recompute: layers per stage (0: half the stage)
  int cpu_offload_layers = 0;     // Megatron's CPU activation offloading: layers (0: none)
  std::string partition_activations, cpu_checkpointing;  // DeepSpeed's checkpoint options: on, off
  std::string recompute_modules;  // Megatron's selective recompute modules, comma-separated
  std::string metric = "throughput";
  int top = 10;
  bool all = false;
  int simulate_top = 100;
  std::string profile;    // calibration profile JSON
  std::string residual;   // residual model learned by confirm
  double cuda_context_gib = 0.5;  // CUDA >= 11.7 lazy module loading; ~1.25 eager (< 11.7)
  double fragmentation = 0.10;    // caching-allocator slack: reserved = allocated x (1 + f)
  std::string overlap_comm = "default";  // DeepSpeed overlap_comm / Megatron-Core overlap flags
  int logit_metrics = 0;  // train metrics over the logits per micro-batch (Composer + llm-foundry: 2)
  std::string cp;         // context-parallel degrees (Megatron-Core); empty: 1
  std::string ep;         // expert-parallel degrees (MoE models); empty: the default range
  int etp = 1;            // expert tensor parallelism (MoE models)
  std::string moe_dispatcher = "alltoall";  // alltoall or deepep (MoE models)
  std::string moe_permute_fusion = "on";    // Megatron-Core's --moe-permute-fusion (MoE models)
  int mtp = 0;            // multi-token prediction modules (Megatron's --mtp-num-layers)
  int pp_first_layers = -1;  // Megatron's explicit pipeline split (both or neither); -1 not given
  int pp_last_layers = -1;
  std::string cross_entropy = "eager";  // the loss kernel: eager or fused
  std::string norm_kernel = "auto";     // RMSNorm: auto, eager, fused or torch
  std::string fp8_recipe;               // FP8 scaling: delayed (default) or tensorwise
  // Gradient reduction in fp32: "default" (Megatron: on; FSDP: off), on, off.
  std::string grad_reduce_in_fp32 = "default";
  std::string fsdp_sharding = "full";      // FSDP: full (FULL_SHARD / SHARD_GRAD_OP) or hybrid
  std::string fsdp_version = "1";          // FSDP: 1 FullyShardedDataParallel, 2 fully_shard
  std::string train_tokens;                // tokens to train on (e.g. 300B): steps and days per config
  std::string attention = "auto";          // flash kernel: auto, fa2, cudnn, fa3
};

void add_estimate_options(CLI::App* sub, EstimateOptions& o);

struct EstimatePlan {
  PlanRequest request;
  PlanResult result;
  std::vector<std::string> assumptions;  // what was assumed (hardware, precision, seq...)
  double seconds = 0;                    // wall time of the search
  bool seq_is_model_max = false;         // no --seq: the model's maximum context was searched
  double train_tokens = 0;               // --train-tokens (0: not given)
  Json json;                             // the --json document
};

// Resolves model/hardware/profile and validates every flag: the request, not yet searched
// (estimate_options.cc).
Expected<EstimatePlan> prepare_estimate(const EstimateOptions& o);
// What --precision fp8, nvfp4 and tf32 price, one line (estimate_assumptions.cc).
void low_precision_assumptions(const TrainConfig& run, std::vector<std::string>& out);
// The lines prepare_estimate states about the searched run settings (estimate_assumptions.cc).
std::vector<std::string> run_assumptions(const SearchSpace& s, const ModelSpec& model, const Cluster& cluster,
                                         const SystemSpec& system);
// prepare_estimate, then the search, the JSON view and any residual model (estimate_run.cc).
Expected<EstimatePlan> run_estimate(const EstimateOptions& o);

// The exact evaluator for finalists: the step simulator over the cost model's StepCosts.
std::function<StepTimeBreakdown(const TrainConfig&)> make_refiner(const PlanRequest& req);

// JSON of one evaluated configuration (the element of "configs").
Json config_to_json(const Evaluation& e);
// How far runs of a configuration's regime came out from their predicted steps
// (estimate_evidence.cc; estimator/search/evidence.h): the "evidence" object of a config,
// and the line printed for the best one.
Json config_evidence_json(const Evaluation& e, GpuArch arch);
// One band's fields (runs, median_abs_error, measured_over_predicted, middle_80, and sources
// when it names them), as estimate and validate --evidence print them.
Json evidence_band_json(const EvidenceBand& b);
std::string config_evidence_text(const Evaluation& e, GpuArch arch, bool profiled);
// --train-tokens (estimate_training.cc): a token count such as 300B, 1.5T, 5e11 or 20000000,
// from 1 to kMaxTrainTokens; nothing when the text is not one. For a configuration with a
// step time, the run's steps, days and GPU-hours at its predicted tokens/s, and the days at
// the middle 80% of its regime's measured / predicted steps: the "training" object of a
// config and the line printed for the best one (empty without a step time).
inline constexpr double kMaxTrainTokens = 1e16;
std::optional<double> parse_token_count(const std::string& text);
Json training_json(const Evaluation& e, double tokens, GpuArch arch);
std::string training_text(const Evaluation& e, double tokens, GpuArch arch);
std::string token_label(double tokens);  // 3e11 -> "300B", 1.5e12 -> "1.5T", 2e7 -> "20M"
struct Training {
  double steps = 0, days = 0, gpu_hours = 0;
  int gpus = 0;
};
std::optional<Training> training_of(const Evaluation& e, double tokens);  // what both build on
// A config of the plan as --json, --out's prediction.json and compare give it:
// config_to_json with its evidence (when it has a step time) and training (with tokens).
Json config_entry_json(const Evaluation& e, GpuArch arch, double train_tokens);
// The --json document of a finished estimate (estimate_json.cc).
Json plan_to_json(const EstimatePlan& p);

}  // namespace dsplan::cli
