// Experiment setup, execution and result records in the autotuner's layout (see
// experiment.h).
#include "confirm/experiment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "confirm/command.h"
#include "confirm/ds_config.h"
#include "core/names.h"
#include "estimator/params.h"

namespace fs = std::filesystem;

namespace dsplan {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The ds_config path the command names, or "".
std::string ds_config_in(const std::vector<std::string>& argv) {
  std::vector<std::string> probe = argv;
  const std::string marker = "\x01dsplan-probe\x01";
  if (replace_ds_config_path(probe, marker) == 0) return "";
  for (size_t i = 0; i < argv.size(); ++i) {
    if (probe[i] == marker) return argv[i];
    auto eq = probe[i].find("=" + marker);
    if (eq != std::string::npos) return argv[i].substr(eq + 1);
  }
  return "";
}

// "auto" values (Hugging Face) are dropped: dsplan sets every key it tunes.
void drop_auto(Json& j) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end();) {
    if (it->is_string() && it->get<std::string>() == "auto") it = j.erase(it);
    else { drop_auto(*it); ++it; }
  }
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

const std::vector<std::string>& arg_mapping_keys() {
  static const std::vector<std::string> keys = {"train_micro_batch_size_per_gpu",
                                                "gradient_accumulation_steps",
                                                "train_batch_size",
                                                "tp",
                                                "pp",
                                                "vpp",
                                                "zero_stage",
                                                "checkpointing",
                                                "checkpointing_granularity",
                                                "recompute_layers",
                                                "recompute_modules",
                                                "flash_attention",
                                                "sequence_parallel",
                                                "seq_len"};
  return keys;
}

std::map<std::string, std::string> arg_mapping_values(const TrainConfig& c) {
  auto s = [](auto v) { return std::to_string(v); };
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  std::map<std::string, std::string> v = {
      {"train_micro_batch_size_per_gpu", s(c.micro_batch)}, {"gradient_accumulation_steps", s(c.grad_accum)},
      {"train_batch_size", s(c.global_batch())}, {"tp", s(c.tp)}, {"pp", s(c.pp)}, {"vpp", s(c.vpp)},
      {"zero_stage", s(c.zero_stage)}, {"checkpointing", b(c.checkpointing != Checkpointing::none)},
      {"flash_attention", b(c.flash_attention)}, {"sequence_parallel", b(c.sequence_parallel)},
      {"seq_len", s(c.seq_len)}};
  if (c.checkpointing != Checkpointing::none) v["checkpointing_granularity"] = name(c.checkpointing);
  if (c.checkpointing == Checkpointing::block) v["recompute_layers"] = s(c.recompute_layers);
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules != 0)
    v["recompute_modules"] = recompute_modules_text(c.recompute_modules, ' ');
  return v;
}

Expected<LaunchSpec> make_launch_spec(const std::vector<std::string>& command,
                                      const std::map<std::string, std::string>& cli_arg_map,
                                      const std::string& reference_script) {
  LaunchSpec spec;
  spec.command = command;
  spec.reference_script = reference_script;
  Diagnostics errs;
  if (!command.empty()) {
    const std::string path = ds_config_in(command);
    if (path.empty()) {
      errs.push_back({"", "", "the launch command names no DeepSpeed config",
                      "add '--deepspeed_config ds_config.json' (or '--deepspeed ds_config.json'): "
                      "each experiment replaces that path with its own config"});
    } else if (fs::exists(path)) {
      auto text = read_text_file(path);
      auto j = text ? parse_json_text(*text, path) : Expected<Json>(text.errors());
      if (!j) errs.insert(errs.end(), j.errors().begin(), j.errors().end());
      else if (!j->is_object()) errs.push_back({path, "", "a ds_config must be a JSON object", ""});
      else spec.base_ds_config = *j;
    }  // a path that does not exist yet is fine: dsplan's config replaces it anyway
  } else if (reference_script.empty() || !fs::exists(reference_script)) {
    errs.push_back({"", "", "no launch command and the reference workload was not found",
                    "give a command after '--', or set DSPLAN_TRAIN_SCRIPT to examples/train_gpt.py"});
  }
  const Json* maps = nullptr;
  if (spec.base_ds_config.contains("autotuning") && spec.base_ds_config["autotuning"].is_object() &&
      spec.base_ds_config["autotuning"].contains("arg_mappings"))
    maps = &spec.base_ds_config["autotuning"]["arg_mappings"];
  if (maps && maps->is_object()) {
    for (const auto& [k, v] : maps->items())
      if (v.is_string()) spec.arg_mappings[trim(k)] = trim(v.get<std::string>());
  }
  for (const auto& [k, v] : cli_arg_map) spec.arg_mappings[trim(k)] = trim(v);
  for (const auto& [k, v] : spec.arg_mappings) {
    const auto& keys = arg_mapping_keys();
    if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
    auto near = closest_match(k, keys);
    errs.push_back({"", "/autotuning/arg_mappings/" + k, "unknown arg_mappings key \"" + k + "\"",
                    (near ? "did you mean \"" + *near + "\"? " : std::string()) + "allowed: " + join(keys)});
  }
  if (!errs.empty()) return errs;
  drop_auto(spec.base_ds_config);
  return spec;
}

static Json experiment_ds_config(const Candidate& c, const ModelSpec& m, const LaunchSpec& l,
                                 const std::string& metrics_path) {
  Json ds = l.base_ds_config;
  const Json ours = make_ds_config(c.cfg, m);
  for (const char* key : {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"})
    ds[key] = ours[key];
  for (const char* key : {"fp16", "bf16"}) {
    if (ours.contains(key)) ds[key].update(ours[key]);  // keeps the user's loss-scale settings
    else if (ds.contains(key) && ds[key].is_object()) ds[key]["enabled"] = false;
  }
  Json zero = ds.value("zero_optimization", Json::object());
  zero.erase("offload_optimizer");  // the plan decides what is offloaded
  zero.erase("offload_param");
  zero.update(ours["zero_optimization"]);
  ds["zero_optimization"] = zero;
  if (ours.contains("activation_checkpointing")) ds["activation_checkpointing"] = ours["activation_checkpointing"];
  for (const char* key : {"optimizer", "gradient_clipping", "wall_clock_breakdown", "steps_per_print"})
    if (!ds.contains(key) && ours.contains(key)) ds[key] = ours[key];
  Json at = {{"enabled", true}, {"metric_path", metrics_path}, {"metric", "throughput"},
             {"start_profile_step", l.start_profile_step}, {"end_profile_step", l.end_profile_step}};
  if (!l.arg_mappings.empty()) at["arg_mappings"] = l.arg_mappings;
  ds["autotuning"] = at;
  return ds;
}

Experiment make_experiment(const Candidate& c, const Plan& plan, const LaunchSpec& l,
                           const std::string& results_dir) {
  Experiment e;
  e.name = c.name;
  e.dir = (fs::path(results_dir) / c.name).string();
  e.ds_config_path = (fs::path(e.dir) / "ds_config.json").string();
  e.metrics_path = fs::absolute(fs::path(e.dir) / "metrics.json").lexically_normal().string();
  e.ds_config = experiment_ds_config(c, plan.model, l, e.metrics_path);
  // A launcher starts processes per host (a GB200 NVL72 node is 18 trays of 4 GPUs).
  const LaunchLayout hosts =
      launch_layout(c.cfg.gpus(), plan.gpus_per_host > 0 ? plan.gpus_per_host : plan.gpus_per_node);
  e.num_nodes = hosts.nodes;
  e.num_gpus = hosts.gpus_per_node;
  e.global_batch = c.cfg.global_batch();
  if (c.pred.mfu > 0) e.peak_samples_per_s = c.pred.samples_per_s / c.pred.mfu;
  if (l.command.empty()) {
    e.argv = {l.python, l.reference_script};
    auto margs = megatron_args(c.cfg, plan.model);
    e.argv.insert(e.argv.end(), margs.begin(), margs.end());
    e.argv.insert(e.argv.end(), {"--deepspeed_config", e.ds_config_path});
    // Hugging Face GPT-2's gelu_new (separate kernels) has no Megatron flag: the
    // reference workload's own, so the run does what the plan priced.
    if (plan.model.activation_unfused) e.argv.push_back("--unfused-gelu");
    // RMSNorm as the plan priced it: torch.nn.RMSNorm when fused or torch (one kernel from
    // PyTorch 2.9 where its input has its weight's dtype; a `fused` plan's query/key and
    // post-norms then run torch's fallback chain under autocast, which only `torch` prices),
    // Hugging Face's chain of eager ops otherwise.
    if (plan.model.norm == NormKind::rmsnorm && !c.cfg.rmsnorm_fused()) e.argv.push_back("--eager-rmsnorm");
    if (c.cfg.gemm_precision() == Precision::tf32) e.argv.push_back("--tf32");  // fp32 on TF32 tensor cores
    if (c.cfg.pure16_model()) e.argv.push_back("--pure-16bit");  // model.to(dtype), no autocast
    // Gemma-style blocks, which Megatron-LM has no flags for: the workload's own.
    const ModelSpec& m = plan.model;
    if (m.gated_mlp && m.activation == Activation::gelu) e.argv.push_back("--gated-gelu");
    if (m.norms_per_layer == 4) e.argv.push_back("--post-norms");
    if (m.qk_norm && m.qk_norm_full_width) e.argv.push_back("--qk-norm-full-width");
    // Megatron-LM's Qwen flags, which a DeepSpeed plan's (Megatron-DeepSpeed's) arguments
    // lack: the workload takes them either way.
    if (c.cfg.framework == Framework::deepspeed) {
      if (!m.linear_bias && m.qkv_bias) e.argv.push_back("--add-qkv-bias");
      if (m.qk_norm) e.argv.push_back("--qk-layernorm");
    }
    if (const int w = windowed_layers_of(m); w > 0)
      e.argv.insert(e.argv.end(), {"--sliding-window", std::to_string(m.attention_window), "--window-layers",
                                   std::to_string(w)});
    // The caps' values do not change the cost; Gemma 2's are 30 (logits) and 50 (scores).
    if (m.logit_softcap) e.argv.insert(e.argv.end(), {"--logit-softcap", "30"});
    if (m.attn_softcap) e.argv.insert(e.argv.end(), {"--attn-softcap", "50"});
    // Separate Q, K and V (and gate and up) linears as Hugging Face's BERT and Llama run
    // them (ModelSpec::fused_qkv): the workload's own flags too. Megatron's layers fuse them.
    const LayerLinears lin = layer_linears(plan.model, c.cfg.megatron_layers());
    if (lin.qkv > 1) e.argv.push_back("--separate-qkv");
    if (lin.up_gate > 1) e.argv.push_back("--separate-gate-up");
    // Plans priced as PyTorch FSDP or DDP run the workload's PyTorch path, not DeepSpeed.
    if (c.cfg.framework == Framework::fsdp)
      e.argv.insert(e.argv.end(), {"--no-deepspeed", "--fsdp-plan", "--fsdp-sharding",
                                   c.cfg.fsdp_hybrid ? "hybrid" : "full", "--fsdp-reduce-dtype",
                                   c.cfg.fsdp_reduce_fp32 ? "fp32" : "compute", "--fsdp-version",
                                   c.cfg.fsdp_version == 2 ? "2" : "1"});
    if (c.cfg.framework == Framework::ddp) e.argv.push_back("--no-deepspeed");
  } else {
    e.argv = l.command;
    replace_ds_config_path(e.argv, e.ds_config_path);
  }
  apply_arg_mappings(e.argv, l.arg_mappings, arg_mapping_values(c.cfg));
  return e;
}

std::vector<std::string> reference_workload_gaps(const ModelSpec& m) {
  std::vector<std::string> gaps;
  if (!m.causal) gaps.push_back("an encoder (the workload trains a causal decoder)");
  if (m.parallel_residual) gaps.push_back("parallel attention and MLP branches");
  if (m.position == PositionKind::alibi) gaps.push_back("ALiBi positions");
  if (m.gated_mlp && m.activation == Activation::relu) gaps.push_back("a gated ReLU MLP");
  if (is_mla(m)) gaps.push_back("multi-head latent attention");
  // gpt-oss's block (model_spec.h): the workload's attention has no sink logits, its experts
  // and router no biases, its SwiGLU no clamp.
  if (m.attention_sinks) gaps.push_back("attention sinks");
  if (m.moe_bias) gaps.push_back("biased experts and router");
  if (m.activation_clamp) gaps.push_back("a clamped SwiGLU");
  return gaps;
}

std::vector<std::string> reference_workload_gaps(const TrainConfig& c) {
  std::vector<std::string> gaps;
  if (c.cp > 1) gaps.push_back("context parallelism (cp " + std::to_string(c.cp) + ")");
  if (c.fp8) gaps.push_back(c.nvfp4() ? "NVFP4 linears" : "FP8 linears (Transformer Engine)");
  if (c.mtp_layers > 0) gaps.push_back("multi-token prediction");
  return gaps;
}

std::string reference_workload_note(const Plan& plan, std::size_t to_run) {
  const auto end =
      plan.candidates.begin() + static_cast<std::ptrdiff_t>(std::min(to_run, plan.candidates.size()));
  const bool megatron = std::any_of(plan.candidates.begin(), end, [](const Candidate& c) {
    return c.cfg.framework == Framework::megatron;
  });
  if (!megatron) return "";
  return std::string(
             "note: the reference workload stands in for Megatron-LM here: it trains the Megatron plans "
             "with PyTorch's autocast and kernels, not Megatron's fused ones, and measures that step") +
         (is_moe(plan.model) ? " (on an H200 eager MoE layers ran 1.1-1.7x the Megatron price)" : "") +
         "; give Megatron-LM's pretrain_gpt.py after '--' to confirm the plan itself";
}

Expected<bool> write_json_file(const std::string& path, const Json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) return Diagnostic{path, "", "cannot write", "check the directory is writable"};
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Diagnostic{path, "", "cannot write: " + ec.message(), ""};
  return true;
}

static Json exp_description(const Experiment& e) {
  return {{"name", e.name}, {"ds_config", e.ds_config}, {"num_gpus", e.num_gpus}, {"num_nodes", e.num_nodes}};
}

std::optional<ExperimentOutcome> load_result(const Experiment& e) {
  auto text = read_file((fs::path(e.dir) / "exp.json").string());
  if (!text) return std::nullopt;
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("result") || !j.contains("dsplan")) return std::nullopt;
  if (j.value("ds_config", Json()) != e.ds_config || j["dsplan"].value("argv", Json()) != Json(e.argv))
    return std::nullopt;  // a different experiment under the same name: run it again
  auto outcome = parse_outcome(j["result"].value("outcome", ""));
  ExperimentOutcome r;
  r.reused = true;
  r.seconds = j["result"].value("seconds", 0.0);
  r.cls.reason = j["result"].value("reason", "");
  if (outcome == Outcome::oom) {
    r.cls.outcome = Outcome::oom;
    return r;
  }
  if (outcome != Outcome::ok) return std::nullopt;  // failures and timeouts are retried
  auto metrics = read_file(e.metrics_path);
  auto m = metrics ? parse_metrics(*metrics) : std::nullopt;
  if (!m || !measurement_problem(*m, e.global_batch, e.peak_samples_per_s).empty())
    return std::nullopt;  // rerun it
  r.cls.outcome = Outcome::ok;
  r.cls.overflow_skips = j["result"].value("fp16_overflow_skips", 0);
  r.measured = *m;
  return r;
}

Expected<ExperimentOutcome> run_experiment(const Experiment& e, const Candidate& c,
                                           const std::string& exps_dir, const ProcessLimits& limits) {
  std::error_code ec;
  fs::create_directories(e.dir, ec);
  fs::create_directories(exps_dir, ec);
  fs::remove(e.metrics_path, ec);  // a stale file must not count for this run
  Json exp = exp_description(e);
  exp["dsplan"] = {{"rank", c.rank}, {"argv", e.argv}, {"config", c.source}};
  for (auto w : {write_json_file((fs::path(exps_dir) / (e.name + ".json")).string(), exp_description(e)),
                 write_json_file(e.ds_config_path, e.ds_config),
                 write_json_file((fs::path(e.dir) / "exp.json").string(), exp)})
    if (!w) return w.errors();
  std::ofstream((fs::path(e.dir) / "cmd.txt").string()) << shell_join(e.argv) << "\n";

  const std::string out_log = (fs::path(e.dir) / "stdout.log").string();
  const std::string err_log = (fs::path(e.dir) / "stderr.log").string();
  ProcessResult pr = run_process(e.argv, out_log, err_log, limits);
  ExperimentOutcome r;
  r.seconds = pr.seconds;
  r.cls = classify(pr, read_file(e.metrics_path), read_log_tail(err_log), read_log_tail(out_log),
                   e.global_batch, e.peak_samples_per_s);
  if (r.cls.outcome == Outcome::ok) r.measured = *parse_metrics(*read_file(e.metrics_path));
  exp["result"] = {{"outcome", outcome_name(r.cls.outcome)}, {"reason", r.cls.reason},
                   {"seconds", pr.seconds}, {"exit_code", pr.exited ? Json(pr.exit_code) : Json(nullptr)},
                   {"signal", pr.exited ? Json(nullptr) : Json(pr.signal)},
                   {"fp16_overflow_skips", r.cls.overflow_skips}};
  auto w = write_json_file((fs::path(e.dir) / "exp.json").string(), exp);
  if (!w) return w.errors();
  return r;
}

}  // namespace dsplan
