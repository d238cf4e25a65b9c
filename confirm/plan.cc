// Reading an estimate --json plan into confirm's candidates (see plan.h).
#include "confirm/plan.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "confirm/ds_config.h"
#include "confirm/plan_check.h"
#include "core/json/model_json.h"
#include "core/names.h"

namespace dsplan {
namespace {

constexpr double kBig = std::numeric_limits<double>::max();

// Reads `keys` (all optional, >= 0) of child object `key` into the doubles they map to.
void read_numbers(JsonObjectReader& parent, const char* key,
                  const std::vector<std::pair<const char*, double*>>& keys,
                  const std::string& file, Diagnostics& errs) {
  const Json* child = parent.child(key, false);
  if (!child) return;
  JsonObjectReader r(*child, file, parent.path_of(key), errs);
  if (!r.is_object()) {
    parent.error(key, "must be an object");
    return;
  }
  for (const auto& [k, out] : keys) r.get(k, *out, false, 0, kBig);
}

template <class E>
void read_enum(JsonObjectReader& r, const char* key, const std::vector<std::string>& names, E& out) {
  int idx = -1;
  if (r.get_choice(key, idx, false, names)) out = static_cast<E>(idx);
}

// "recompute_modules": Megatron-Core's selective recompute modules, an array of their names.
void read_recompute_modules(JsonObjectReader& r, TrainConfig& c) {
  const Json* v = r.child("recompute_modules", false);
  if (!v) return;
  const std::string allowed = "an array of: " + recompute_modules_text(0x7f, ' ');
  if (!v->is_array()) return r.error("recompute_modules", "must be an array of module names", allowed);
  for (const Json& x : *v) {
    const auto m = x.is_string() ? parse_recompute_module(x.get<std::string>()) : std::nullopt;
    if (!m) return r.error("recompute_modules", "holds " + x.dump() + ", not a module name", allowed);
    c.recompute_modules |= module_bit(*m);
  }
}

void read_layout(JsonObjectReader& r, TrainConfig& c) {
  r.get("zero_stage", c.zero_stage, true, 0, 3);
  r.get("tp", c.tp, true, 1, 1 << 20);
  r.get("pp", c.pp, true, 1, 1 << 20);
  r.get("dp", c.dp, true, 1, 1 << 20);
  r.get("vpp", c.vpp, false, 1, 1 << 10);
  r.get("cp", c.cp, false, 1, 64);  // context parallelism, present when > 1
  r.get("ep", c.ep, false, 1, 1 << 20);    // expert parallelism (MoE), present when > 1
  r.get("etp", c.etp, false, 1, 1 << 20);  // expert tensor parallelism, present when > 1
  static const std::vector<std::string> dispatchers = {"alltoall", "deepep"};
  int dispatcher = 0;  // MoE token dispatch, present when DeepEP
  if (r.get_choice("moe_dispatcher", dispatcher, false, dispatchers)) c.moe_deepep = dispatcher == 1;
  r.get("moe_permute_fusion", c.moe_permute_fusion, false);  // present when false
  r.get("mtp", c.mtp_layers, false, 0, 16);  // multi-token prediction modules, present when > 0
  // Megatron's accounted pipeline split, present when the layers do not divide evenly.
  static const std::vector<std::string> splits = {"even", "embedding+loss", "loss", "embedding"};
  int split = 0;
  if (r.get_choice("pp_split", split, false, splits)) {
    c.pp_account_embedding = split == 1 || split == 3;
    c.pp_account_loss = split == 1 || split == 2;
  }
  // Megatron's explicit split, present when the plan chose or was given one.
  const bool first = r.get("pp_first_layers", c.pp_first_layers, false, 0, 1 << 16);
  if (r.get("pp_last_layers", c.pp_last_layers, false, 0, 1 << 16) != first)
    r.error(first ? "pp_last_layers" : "pp_first_layers",
            "missing: an explicit pipeline split names both ends",
            "pp_first_layers and pp_last_layers, or neither");
  r.get("micro_batch", c.micro_batch, true, 1, 1 << 20);
  r.get("grad_accum", c.grad_accum, true, 1, 1 << 20);
  r.get("seq_len", c.seq_len, false, 1, 1 << 24);
  r.get("flash_attention", c.flash_attention, false);
  r.get("sequence_parallel", c.sequence_parallel, false);
  read_enum(r, "checkpointing", checkpointing_names(), c.checkpointing);
  r.get("recompute_layers", c.recompute_layers, c.checkpointing == Checkpointing::block, 1, 1 << 20);
  r.get("cpu_offload_layers", c.cpu_offload_layers, false, 0, 1 << 20);
  r.get("partition_activations", c.ds_partition_activations, false);
  r.get("cpu_checkpointing", c.ds_cpu_checkpointing, false);
  read_recompute_modules(r, c);
  read_enum(r, "offload", offload_names(), c.offload);
  static const std::vector<std::string> overlap_names = {"default", "on", "off"};
  int overlap = -1;
  if (r.get_choice("overlap_comm", overlap, false, overlap_names)) c.zero.overlap_comm = overlap == 0 ? -1 : overlap == 1 ? 1 : 0;
  r.get("logit_metrics", c.logit_metrics, false, 0, 16);
  read_enum(r, "cross_entropy", cross_entropy_names(), c.cross_entropy);
  read_enum(r, "norm_kernel", norm_kernel_names(), c.norm_kernel);
  read_enum(r, "fp8_recipe", fp8_recipe_names(), c.fp8_recipe);
  bool fp32_grads = true;
  const bool grads_given = r.get("grad_reduce_in_fp32", fp32_grads, false);
  static const std::vector<std::string> sharding_names = {"full", "hybrid"};
  int sharding = 0;
  if (r.get_choice("fsdp_sharding", sharding, false, sharding_names)) c.fsdp_hybrid = sharding == 1;
  r.get("fsdp_version", c.fsdp_version, false, 1, 2);
  read_enum(r, "attention_kernel", attention_kernel_names(), c.attention);
  int precision = static_cast<int>(c.precision);
  read_enum(r, "precision", precision_flag_names(), precision);
  c.pure16 = precision == kBf16Pure;
  c.precision = c.pure16 ? Precision::bf16 : static_cast<Precision>(precision);
  if (c.precision == Precision::fp8) c.precision = Precision::bf16, c.fp8 = true;  // bf16 + FP8 linears
  if (c.precision == Precision::nvfp4)                                             // bf16 + NVFP4 linears
    c.precision = Precision::bf16, c.fp8 = true, c.fp8_recipe = Fp8Recipe::nvfp4;
  if (c.precision == Precision::tf32) c.precision = Precision::fp32, c.tf32 = true;  // fp32, TF32 matmuls
  read_enum(r, "framework", framework_names(), c.framework);
  read_enum(r, "optimizer", optimizer_names(), c.optimizer);
  // One key, read by framework: Megatron's fp32 gradient buffer, FSDP's fp32 reduce_dtype.
  if (grads_given && c.framework == Framework::fsdp) c.fsdp_reduce_fp32 = fp32_grads;
  else if (grads_given) c.megatron_fp32_grads = fp32_grads;
}

// A band "measured_over_predicted": [low, high] of an evidence object, when given; false (and
// an error at its path) when it is not two ratios 0 < low <= high.
bool read_band(const Json& ev, const std::string& path, double& low, double& high, const std::string& file,
               Diagnostics& errs) {
  if (!ev.contains("measured_over_predicted")) return true;
  const Json& band = ev["measured_over_predicted"];
  const bool pair = band.is_array() && band.size() == 2 && band[0].is_number() && band[1].is_number();
  const double lo = pair ? band[0].get<double>() : 0, hi = pair ? band[1].get<double>() : 0;
  if (!pair || !(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) {
    errs.push_back({file, path + "/measured_over_predicted", "must be [low, high] with 0 < low <= high",
                    "the measured / predicted range estimate states for the config's regime"});
    return false;
  }
  low = lo;
  high = hi;
  return true;
}

// Optional: the regime and bands estimate states for the config (cli/estimate_evidence.cc),
// the step's and, under "memory", the peak memory's. A regime without runs has none.
void read_evidence(JsonObjectReader& r, Prediction& p, const std::string& file, Diagnostics& errs) {
  const Json* ev = r.child("evidence", false);
  if (!ev) return;
  const std::string path = r.path_of("evidence");
  if (!ev->is_object()) {
    errs.push_back({file, path, "must be an object", "estimate's regime and accuracy band for the config"});
    return;
  }
  if (ev->contains("regime") && (*ev)["regime"].is_string()) p.regime = (*ev)["regime"].get<std::string>();
  read_band(*ev, path, p.band_low, p.band_high, file, errs);
  if (ev->contains("memory") && (*ev)["memory"].is_object())
    read_band((*ev)["memory"], path + "/memory", p.memory_band_low, p.memory_band_high, file, errs);
}

void read_prediction(JsonObjectReader& r, Prediction& p, const std::string& file, Diagnostics& errs) {
  read_numbers(r, "throughput", {{"samples_per_s", &p.samples_per_s}, {"tokens_per_s", &p.tokens_per_s},
                                 {"tflops_per_gpu", &p.tflops_per_gpu}, {"mfu", &p.mfu}}, file, errs);
  read_numbers(r, "time", {{"step_s", &p.step_s}, {"compute_s", &p.compute_s},
                           {"comm_exposed_s", &p.comm_exposed_s}, {"bubble_s", &p.bubble_s},
                           {"optimizer_s", &p.optimizer_s}, {"offload_s", &p.offload_s}}, file, errs);
  read_numbers(r, "memory", {{"allocated_gib", &p.allocated_gib}, {"reserved_gib", &p.reserved_gib},
                             {"device_gib", &p.device_gib}, {"host_gib", &p.host_gib}}, file, errs);
  if (const Json* mem = r.child("memory", false); mem && mem->is_object()) {
    JsonObjectReader m(*mem, file, r.path_of("memory"), errs);
    read_numbers(m, "breakdown", {{"params_gib", &p.params_gib}, {"grads_gib", &p.grads_gib},
                                  {"optimizer_gib", &p.optimizer_gib},
                                  {"activations_gib", &p.activations_gib},
                                  {"buffers_gib", &p.buffers_gib}}, file, errs);
  }
  read_evidence(r, p, file, errs);
  if (!(p.samples_per_s > 0))
    errs.push_back({file, r.path_of("throughput") + "/samples_per_s", "missing or not positive",
                    "confirm compares measured throughput with this prediction"});
  if (!(p.step_s > 0))
    errs.push_back({file, r.path_of("time") + "/step_s", "missing or not positive",
                    "the predicted step time in seconds"});
}

// The prediction's throughput is its global batch over its step time (estimate writes both
// from one step); an edited plan where they disagree would be judged by one and ranked by
// the other. 1% tolerates rounding by hand.
void check_prediction(const Candidate& c, const std::string& file, const std::string& path,
                      Diagnostics& errs) {
  const double batch = static_cast<double>(c.cfg.global_batch());
  if (!(c.pred.step_s > 0) || !(c.pred.samples_per_s > 0) || !(batch > 0)) return;
  const double implied = batch / c.pred.step_s;
  if (std::abs(c.pred.samples_per_s / implied - 1) <= 0.01) return;
  char buf[224];
  std::snprintf(buf, sizeof buf, "%g is not global batch / step_s = %lld / %g = %g", c.pred.samples_per_s,
                static_cast<long long>(batch), c.pred.step_s, implied);
  errs.push_back({file, path + "/throughput/samples_per_s", buf,
                  "give throughput and time from one 'dsplan estimate --json' run"});
}

void read_hardware(const Json& j, Plan& plan, const std::string& file, Diagnostics& errs) {
  JsonObjectReader r(j, file, "/hardware", errs);
  if (!r.is_object()) {
    errs.push_back({file, "/hardware", "must be an object", ""});
    return;
  }
  r.get("name", plan.hardware, false);
  r.get("num_gpus", plan.num_gpus, true, 1, 1 << 24);
  const bool per_node_given = r.get("gpus_per_node", plan.gpus_per_node, false, 1, 1024);
  // nodes is derived (confirm launches ceil(num_gpus / gpus_per_node)); a different value
  // means the file was edited and one of the three is wrong.
  int nodes = 0;
  if (r.get("nodes", nodes, false, 1, 1 << 24) && per_node_given && plan.num_gpus > 0) {
    const int want = (plan.num_gpus + plan.gpus_per_node - 1) / plan.gpus_per_node;
    if (nodes != want)
      errs.push_back({file, "/hardware/nodes",
                      std::to_string(nodes) +
                          " is not num_gpus / gpus_per_node = " + std::to_string(plan.num_gpus) + " / " +
                          std::to_string(plan.gpus_per_node) + " rounded up",
                      "allowed: " + std::to_string(want) + ", or leave nodes out"});
  }
  if (r.get("gpus_per_host", plan.gpus_per_host, false, 1, 1024) && per_node_given &&
      plan.gpus_per_node % plan.gpus_per_host != 0)
    errs.push_back({file, "/hardware/gpus_per_host",
                    std::to_string(plan.gpus_per_host) + " does not divide gpus_per_node " +
                        std::to_string(plan.gpus_per_node),
                    "a divisor of gpus_per_node, or leave gpus_per_host out"});
  const Diagnostics gpu_errs = check_plan_gpu(j, file);
  errs.insert(errs.end(), gpu_errs.begin(), gpu_errs.end());
  if (gpu_errs.empty()) plan.gpu = j["gpu"]["name"].get<std::string>();
}

// Experiment names must be unique: a clash (two configs differing only in a dimension the
// name does not show) gets a numeric suffix.
void name_candidates(std::vector<Candidate>& cands) {
  std::map<std::string, int> seen;
  for (auto& c : cands) {
    std::string base = experiment_name(c.cfg);
    int n = seen[base]++;
    c.name = n == 0 ? base : base + "_" + std::to_string(n + 1);
  }
}

}  // namespace

Expected<Candidate> parse_candidate(const Json& j, const std::string& file, const std::string& path) {
  Diagnostics errs;
  JsonObjectReader r(j, file, path, errs);
  if (!r.is_object()) return Diagnostic{file, path, "must be an object", "one estimate config"};
  Candidate c;
  read_layout(r, c.cfg);
  read_prediction(r, c.pred, file, errs);
  if (!errs.empty()) return errs;
  return c;
}

Expected<Plan> parse_plan(const Json& j, const std::string& file) {
  if (!j.is_object())
    return Diagnostic{file, "", "not an estimate plan", "the output of 'dsplan estimate --json'"};
  Diagnostics errs;
  Plan plan;
  for (const char* key : {"model", "hardware", "configs"})
    if (!j.contains(key))
      errs.push_back({file, std::string("/") + key, "missing", "the output of 'dsplan estimate --json'"});
  if (!errs.empty()) return errs;

  Json model = j["model"];
  if (model.is_object() && model.contains("params")) {
    if (model["params"].is_number()) plan.params = model["params"].get<std::int64_t>();
    model.erase("params");
  }
  plan.model_json = model;
  auto spec = parse_model_json(model, file);
  if (!spec) {
    for (auto e : spec.errors()) errs.push_back({e.file, "/model" + e.json_path, e.message, e.hint});
  } else {
    plan.model = *spec;
  }
  const size_t before_hardware = errs.size();
  read_hardware(j["hardware"], plan, file, errs);
  // Layouts are checked against the model and the GPU count, when both were read.
  const bool check_layouts = spec.ok() && errs.size() == before_hardware;

  const Json& configs = j["configs"];
  if (!configs.is_array()) errs.push_back({file, "/configs", "must be an array", "estimate's configs"});
  else if (configs.empty())
    errs.push_back({file, "/configs", "is empty: the plan has no configuration to confirm",
                    "a plan from 'dsplan estimate --json' lists the configurations it ranked"});
  for (size_t i = 0; configs.is_array() && i < configs.size(); ++i) {
    const Json& cj = configs[i];
    if (cj.is_object() && cj.contains("fits") && cj["fits"].is_boolean() && !cj["fits"].get<bool>())
      continue;  // confirm only runs configurations predicted to fit
    const std::string path = "/configs/" + std::to_string(i);
    auto c = parse_candidate(cj, file, path);
    if (!c) {
      errs.insert(errs.end(), c.errors().begin(), c.errors().end());
      continue;
    }
    if (check_layouts) {
      if (auto bad = check_candidate_layout(*c, cj, plan, file, path); !bad.empty()) {
        errs.insert(errs.end(), bad.begin(), bad.end());
        continue;
      }
    }
    check_prediction(*c, file, path, errs);  // on a layout that holds, so its global batch is right
    Candidate cand = *c;
    // A hand-written plan may leave out pp_split: Megatron then runs the split dsplan derives.
    if (check_layouts && !cand.cfg.pp_account_embedding && !cand.cfg.pp_account_loss && plan.model.layers > 0)
      cand.cfg.set_pipeline_split(plan.model.layers);
    cand.source = cj;
    cand.rank = static_cast<int>(plan.candidates.size());
    plan.candidates.push_back(cand);
  }
  if (!errs.empty()) return errs;
  name_candidates(plan.candidates);
  return plan;
}

}  // namespace dsplan
