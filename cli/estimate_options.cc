// Flag validation for `dsplan estimate` (and `confirm`): the flags are declared in
// estimate_flags.cc, the search runs in estimate_run.cc, the plan's JSON view is
// estimate_json.cc. Every bad flag is reported, each naming the flag and the allowed values.
#include "cli/estimate_options.h"

#include <algorithm>
#include <sstream>

#include "calibrate/profile.h"
#include "cli/commands.h"
#include "cli/estimate_checks.h"
#include "core/json/model_json.h"
#include "core/names.h"
#include "estimator/params.h"
#include "estimator/search/space.h"
#include "estimator/time/alignment.h"
#include "estimator/time/efficiency_defaults.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {
namespace {

// "1,2,4" or (when ranges are allowed) "1-64" or a mix "1-4,8".
// getline drops a trailing empty item, so "1,2," would read as "1,2": refuse it.
bool trailing_comma(const std::string& flag, const std::string& text, const std::string& allowed,
                    Diagnostics& errs) {
  if (text.empty() || text.back() != ',') return false;
  errs.push_back(flag_error(flag, "empty item after the last comma in \"" + text + "\"", allowed));
  return true;
}

std::vector<int> parse_ints(const std::string& flag, const std::string& text, bool ranges,
                            int lo, int hi, Diagnostics& errs) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  const std::string allowed = "integers in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                              "], comma-separated" + (ranges ? " or a range like 1-64" : "");
  if (trailing_comma(flag, text, allowed, errs)) return {};
  while (std::getline(ss, item, ',')) {
    // Digits (and a range's dash) only: stoi would also take " 4" and "+2".
    if (item.empty() || item.find_first_not_of(ranges ? "0123456789-" : "0123456789") != std::string::npos) {
      errs.push_back(flag_error(flag, "invalid value \"" + item + "\"", allowed));
      return {};
    }
    size_t dash = ranges ? item.find('-', 1) : std::string::npos;
    try {
      size_t used = 0;
      if (dash != std::string::npos) {
        int a = std::stoi(item.substr(0, dash), &used);
        size_t used_b = 0;
        std::string tail = item.substr(dash + 1);
        int b = std::stoi(tail, &used_b);
        if (used != dash || used_b != tail.size() || a > b || a < lo || b > hi) throw std::invalid_argument("range");
        for (int v = a; v <= b; ++v) out.push_back(v);
      } else {
        int v = std::stoi(item, &used);
        if (used != item.size() || v < lo || v > hi) throw std::invalid_argument("value");
        out.push_back(v);
      }
    } catch (const std::exception&) {
      errs.push_back(flag_error(flag, "invalid value \"" + item + "\"", allowed));
      return {};
    }
  }
  if (out.empty()) errs.push_back(flag_error(flag, "no value given", allowed));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

template <class E>
std::vector<E> parse_names(const std::string& flag, const std::string& text,
                           const std::vector<std::string>& names, Diagnostics& errs, bool list = true) {
  std::vector<E> out;
  std::stringstream ss(text);
  std::string item;
  if (trailing_comma(flag, text, "allowed: " + join(names) + (list ? " (comma-separated)" : ""), errs))
    return {};
  while (std::getline(ss, item, ',')) {
    auto it = std::find(names.begin(), names.end(), item);
    if (it == names.end()) {
      auto near = closest_match(item, names);
      errs.push_back(flag_error(flag, "unknown value \"" + item + "\"",
                                (near ? "did you mean \"" + *near + "\"? " : std::string()) +
                                    "allowed: " + join(names) + (list ? " (comma-separated)" : "")));
      return {};
    }
    E e = static_cast<E>(it - names.begin());
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

std::vector<bool> parse_on_off(const std::string& flag, const std::string& text, Diagnostics& errs) {
  std::vector<bool> out;
  for (int v : parse_names<int>(flag, text, {"off", "on"}, errs))
    if (std::find(out.begin(), out.end(), v == 1) == out.end()) out.push_back(v == 1);
  return out;
}

template <class E>
E parse_one(const std::string& flag, const std::string& text, const std::vector<std::string>& names,
            E fallback, Diagnostics& errs) {
  auto v = parse_names<E>(flag, text, names, errs, false);
  if (v.size() > 1) errs.push_back(flag_error(flag, "takes one value", "allowed: " + join(names)));
  return v.empty() ? fallback : v[0];
}

// --precision fp8 or nvfp4: bf16 mixed precision with FP8 (recipe from --fp8-recipe) or
// NVFP4 linears, each refused where the GPU lacks the tensor cores or the framework is not
// Megatron. `--precision fp8 --fp8-recipe nvfp4` reads as --precision nvfp4.
void low_precision_linears(SearchSpace& s, const EstimateOptions& o, const GpuSpec& gpu, bool nvfp4,
                           Diagnostics& errs) {
  s.run.precision = Precision::bf16;
  s.run.fp8 = true;
  const std::string given = o.fp8_recipe.empty() ? (nvfp4 ? "nvfp4" : "delayed") : o.fp8_recipe;
  s.run.fp8_recipe = parse_one<Fp8Recipe>("fp8-recipe", given, fp8_recipe_names(), Fp8Recipe::delayed, errs);
  if (nvfp4 && s.run.fp8_recipe != Fp8Recipe::nvfp4)
    errs.push_back(flag_error("fp8-recipe", "--precision nvfp4 is its own recipe, not " + given,
                              "leave --fp8-recipe out, or use --precision fp8 --fp8-recipe " + given));
  const bool fp4 = s.run.nvfp4(), mx = s.run.fp8_recipe == Fp8Recipe::mxfp8;
  const std::string what = fp4 ? "nvfp4" : "fp8";
  const char* blackwell = "b200-180gb, b300-288gb, gb200-186gb or gb300-288gb";
  if (fp4 && !(gpu.fp4_tc_flop_per_clk_sm > 0))
    errs.push_back(flag_error("precision", gpu.name + " has no FP4 tensor cores",
                              std::string("nvfp4 needs Blackwell (") + blackwell + "); fp8 or bf16 here"));
  else if (!fp4 && !(gpu.fp8_tc_flop_per_clk_sm > 0))
    errs.push_back(flag_error("precision", gpu.name + " has no FP8 tensor cores",
                              "fp8 needs Hopper or Blackwell (h100-80gb, h200-141gb, b200-180gb, "
                              "b300-288gb, gb200-186gb, gb300-288gb); fp32, fp16 or bf16 here"));
  else if (mx && gpu.arch != GpuArch::blackwell)
    errs.push_back(
        flag_error("fp8-recipe",
                   "mxfp8 needs Blackwell's block-scaled tensor cores; " + gpu.name + " is " + name(gpu.arch),
                   std::string("delayed or tensorwise here; mxfp8 on ") + blackwell));
  else if (s.run.framework != Framework::megatron)  // one error for --precision at a time
    errs.push_back(flag_error("precision", what + " is modelled for Megatron with Transformer Engine only",
                              "add --framework megatron, or use bf16"));
}

// --recompute-modules: Megatron-Core's modules (TrainConfig::recompute_modules), each one the
// model has, under selective checkpointing (what the flag pins when --ckpt is not given).
void recompute_modules(const EstimateOptions& o, const ModelSpec* model, SearchSpace& s, Diagnostics& errs) {
  const std::string flag = "recompute-modules";
  for (RecomputeModule r :
       parse_names<RecomputeModule>(flag, o.recompute_modules, recompute_module_names(), errs))
    s.run.recompute_modules |= module_bit(r);
  const std::uint8_t bits = s.run.recompute_modules;
  if (bits == 0) return;
  s.recompute_modules = {bits};
  if (s.run.framework != Framework::megatron)
    errs.push_back(
        flag_error(flag, "names Megatron-Core's modules, not " + std::string(name(s.run.framework)) + "'s",
                   "add --framework megatron, or use --ckpt"));
  auto needs = [&](RecomputeModule r, bool has, const std::string& what) {
    if ((bits & module_bit(r)) && model && !has)
      errs.push_back(flag_error(flag,
                                std::string(name(r)) + " needs " + what + "; " + model->name + " has none",
                                "leave " + std::string(name(r)) + " out"));
  };
  if (model) {
    needs(RecomputeModule::mla_up_proj, is_mla(*model), "multi-head latent attention");
    needs(RecomputeModule::moe_act, is_moe(*model), "mixture-of-experts layers");
    needs(RecomputeModule::moe, is_moe(*model), "mixture-of-experts layers");
    needs(RecomputeModule::shared_experts, is_moe(*model) && model->shared_ffn > 0, "shared experts");
    needs(RecomputeModule::mlp, !is_moe(*model) || has_dense_layers(*model), "dense MLP layers");
    needs(RecomputeModule::layernorm, is_moe(*model) || is_mla(*model),
          "a norm that is a module of its own (MLA's input norm or an MoE layer's; the others are fused)");
  }
  if (o.ckpt.empty()) {
    s.checkpointing = {Checkpointing::selective};
  } else if (std::find(s.checkpointing.begin(), s.checkpointing.end(), Checkpointing::selective) ==
             s.checkpointing.end()) {
    errs.push_back(flag_error(flag, "applies to selective checkpointing only", "add selective to --ckpt"));
  }
}

// A two-valued flag only one framework has: true when `value` is the non-default `alt`.
// Reports an unknown value, or the flag given for another framework.
bool framework_choice(const std::string& flag, const std::string& value, const std::string& dflt,
                      const std::string& alt, Framework only, Framework given, Diagnostics& errs) {
  if (value == dflt) return false;
  if (value != alt) {
    errs.push_back(flag_error(flag, "unknown value \"" + value + "\"", "one of: " + dflt + ", " + alt));
    return false;
  }
  if (given != only)
    errs.push_back(flag_error(flag, std::string("applies to --framework ") + name(only) + " only",
                              std::string("leave it out, or add --framework ") + name(only)));
  return true;
}

// --grad-reduce-in-fp32: Megatron's fp32 gradient buffer (default on) or FSDP's fp32
// reduce_dtype (default off); other frameworks have no such choice.
void grad_reduce_choice(const std::string& value, SearchSpace& s, Diagnostics& errs) {
  if (value == "default") return;
  if (value != "on" && value != "off") {
    errs.push_back(flag_error("grad-reduce-in-fp32", "unknown value \"" + value + "\"", "one of: default, on, off"));
    return;
  }
  if (s.run.framework == Framework::megatron) s.run.megatron_fp32_grads = value == "on";
  else if (s.run.framework == Framework::fsdp) s.run.fsdp_reduce_fp32 = value == "on";
  else
    errs.push_back(flag_error("grad-reduce-in-fp32", "applies to --framework megatron and fsdp only",
                              "leave it out, or add --framework megatron or fsdp"));
}

}  // namespace

Expected<EstimatePlan> prepare_estimate(const EstimateOptions& o) {
  Diagnostics errs;
  EstimatePlan plan;
  PlanRequest& req = plan.request;

  auto model = resolve_model(o.model, read_text_file);
  if (!model) for (const auto& e : model.errors()) errs.push_back(e);
  if (o.gpus < 1 || o.gpus > kMaxGpus)
    errs.push_back(flag_error("gpus", "must be a positive number of GPUs",
                              "an integer in [1, " + std::to_string(kMaxGpus) + "]"));
  if (o.gpus_per_node && (*o.gpus_per_node < 1 || *o.gpus_per_node > kMaxGpusPerNode))
    errs.push_back(flag_error("gpus-per-node", "out of range",
                              "an integer in [1, " + std::to_string(kMaxGpusPerNode) + "]"));
  auto system = resolve_hardware(o.hw, o.gpus_per_node, o.inter_node_gbps, read_text_file);
  if (!system) for (const auto& e : system.errors()) errs.push_back(e);
  if (o.top < 1) errs.push_back(flag_error("top", "must be at least 1", "a positive integer"));
  if (o.simulate_top < 0) errs.push_back(flag_error("simulate-top", "must be >= 0", "a non-negative integer"));
  if (o.global_batch && *o.global_batch < 1)
    errs.push_back(flag_error("global-batch", "must be positive", "a positive integer"));
  if (!(o.cuda_context_gib > 0 && o.cuda_context_gib < 16))
    errs.push_back(flag_error("cuda-context-gib", "out of range",
                              "a number of GiB > 0 and < 16 (0.5 with CUDA >= 11.7 lazy loading, ~1.25 eager)"));
  req.memory_options.cuda_context = GiB(o.cuda_context_gib);
  if (!(o.fragmentation >= 0 && o.fragmentation <= 1))
    errs.push_back(flag_error("fragmentation", "out of range", "a fraction in [0, 1], e.g. 0.10"));
  req.memory_options.fragmentation = o.fragmentation;

  SearchSpace& s = req.space;
  // Mixture-of-experts models are planned for Megatron-Core only: it is their default.
  const bool moe = model && is_moe(*model);
  s.run.framework = parse_one<Framework>("framework", o.framework, framework_names(),
                                         moe ? Framework::megatron : Framework::deepspeed, errs);
  if (moe && s.run.framework != Framework::megatron)
    errs.push_back(flag_error("framework", "a mixture-of-experts model is planned for Megatron-Core only",
                              "--framework megatron, or leave --framework out"));
  s.run.etp = o.etp;
  s.run.moe_deepep = parse_one<int>("moe-dispatcher", o.moe_dispatcher, {"alltoall", "deepep"}, 0, errs) == 1;
  if (s.run.moe_deepep && model && !is_moe(*model))
    errs.push_back(flag_error("moe-dispatcher", "deepep dispatches the tokens of a mixture-of-experts model",
                              "leave --moe-dispatcher out for " + model->name));
  s.run.moe_permute_fusion =
      parse_one<int>("moe-permute-fusion", o.moe_permute_fusion, {"off", "on"}, 1, errs) == 1;
  if (!s.run.moe_permute_fusion && model && !is_moe(*model))
    errs.push_back(flag_error("moe-permute-fusion", "the permutation is a mixture-of-experts model's",
                              "leave --moe-permute-fusion out for " + model->name));
  if (moe && o.framework.empty())
    plan.assumptions.push_back("mixture of experts: Megatron-Core (--framework megatron) with the " +
                               std::string(s.run.moe_deepep ? "DeepEP" : "all-to-all") +
                               " dispatcher, grouped expert GEMMs, " +
                               (s.run.moe_permute_fusion ? "the fused permutation (--moe-permute-fusion)"
                                                         : "the unfused permutation (atomic row additions)") +
                               ", expert tensor parallelism " + std::to_string(std::max(1, o.etp)) +
                               ", dropless routing priced as balanced across the experts");
  // The host side of an MoE layer is priced as every layer's (10 us a kernel, the host
  // running ahead); Megatron-Core's eager MoE layers issue more from Python and wait once a
  // layer for the dispatcher's token counts, which is what NVIDIA's partial CUDA graphs
  // remove (docs/accuracy.md "Session 43" and "Session 44").
  if (moe)
    plan.assumptions.push_back(
        "MoE host time priced per kernel (10 us, or --profile's rate) with the host running ahead: "
        "Megatron-Core's "
        "eager MoE layers also wait for the dispatcher's token counts once a layer; NVIDIA measured "
        "Transformer "
        "Engine CUDA graphs of attention, router and dispatch preprocessing 15-25% faster on gpt-oss-20b and "
        "Qwen3-30B-A3B at TP 2 on 2 H100 nodes, and neutral on a Qwen3-30B-A3B all-to-all H100 run "
        "(Megatron-Bridge's CUDA graphs card), and fused, sync-free MoE kernels that allow a full-iteration "
        "graph 93% faster on gpt-oss pre-training (NVIDIA's 2026 MoE fusion-kernels blog): small, launch-bound "
        "MoE layers may run much slower than priced");
  s.run.mtp_layers = o.mtp;
  set_explicit_split(o, model, s.run, errs);
  set_cpu_offload(o, model, s.run, errs);
  if (o.mtp > 0 && s.run.framework != Framework::megatron)
    errs.push_back(flag_error("mtp", "multi-token prediction is planned for Megatron-Core only",
                              "--framework megatron, or leave --mtp out"));
  if (o.etp > 1 && model && !is_moe(*model))
    errs.push_back(flag_error("etp", "expert tensor parallelism needs a mixture-of-experts model",
                              "leave --etp out for " + model->name));
  if (!o.ep.empty()) {
    s.ep = parse_ints("ep", o.ep, false, 1, 1 << 16, errs);
    if (model && !is_moe(*model) && std::any_of(s.ep.begin(), s.ep.end(), [](int e) { return e > 1; }))
      errs.push_back(flag_error("ep", "expert parallelism needs a mixture-of-experts model",
                                "leave --ep out for " + model->name));
    if (model && is_moe(*model))
      for (int e : s.ep)
        if (model->experts % e != 0)
          errs.push_back(flag_error("ep",
                                    "--ep " + std::to_string(e) + " does not divide the " +
                                        std::to_string(model->experts) + " experts",
                                    "degrees that divide " + std::to_string(model->experts)));
  }
  s.run.optimizer = parse_one<Optimizer>("optimizer", o.optimizer, optimizer_names(), Optimizer::adam, errs);
  req.metric = parse_one<Metric>("metric", o.metric, {"throughput", "latency", "flops"}, Metric::throughput, errs);
  if (!o.zero.empty()) s.zero = parse_ints("zero", o.zero, false, 0, 3, errs);
  if (!o.tp.empty()) s.tp = parse_ints("tp", o.tp, false, 1, 1024, errs);
  if (!o.pp.empty()) s.pp = parse_ints("pp", o.pp, false, 1, 1024, errs);
  if (!o.vpp.empty()) s.vpp = parse_ints("vpp", o.vpp, false, 1, 64, errs);
  if (!o.mbs.empty()) s.micro_batch = parse_ints("mbs", o.mbs, true, 1, kMaxMicroBatch, errs);
  if (!o.gas.empty()) s.grad_accum = parse_ints("gas", o.gas, true, 1, kMaxGradAccum, errs);
  if (!o.ckpt.empty()) s.checkpointing = parse_names<Checkpointing>("ckpt", o.ckpt, checkpointing_names(), errs);
  set_ds_checkpointing(o, s.checkpointing, s.run, errs);
  s.recompute_layers = o.recompute_layers;
  if (o.recompute_layers > 0 && model && o.recompute_layers >= model->layers)
    errs.push_back(flag_error("recompute-layers",
                              std::to_string(o.recompute_layers) + " is not fewer than the model's " +
                                  std::to_string(model->layers) + " layers",
                              "at most " + std::to_string(model->layers - 1) + "; --ckpt full recomputes every layer"));
  if (o.recompute_layers > 0 && !o.ckpt.empty() &&
      std::find(s.checkpointing.begin(), s.checkpointing.end(), Checkpointing::block) == s.checkpointing.end())
    errs.push_back(flag_error("recompute-layers", "applies to block checkpointing only",
                              "add block to --ckpt, e.g. --ckpt block"));
  if (!o.recompute_modules.empty()) recompute_modules(o, model ? &*model : nullptr, s, errs);
  if (!o.flash.empty()) s.flash = parse_on_off("flash", o.flash, errs);
  s.run.attention = parse_one<AttentionKernel>("attention", o.attention, attention_kernel_names(),
                                              AttentionKernel::auto_, errs);
  if (s.run.attention != AttentionKernel::auto_ && o.flash == "off")
    errs.push_back(
        flag_error("attention", std::string(name(s.run.attention)) + " is a fused attention kernel",
                   "with --flash off attention is materialised: drop --attention or use --flash on"));
  if (s.run.attention == AttentionKernel::fa3 && system && system->gpu.arch != GpuArch::hopper)
    errs.push_back(flag_error("attention", "fa3 runs on Hopper GPUs only, not on " + std::string(name(system->gpu.arch)),
                              "use fa2 or cudnn on this GPU"));
  if (o.overlap_comm == "on") s.run.zero.overlap_comm = 1;
  else if (o.overlap_comm == "off") s.run.zero.overlap_comm = 0;
  else if (o.overlap_comm == "default") s.run.zero.overlap_comm = -1;
  else errs.push_back(flag_error("overlap-comm", "unknown value \"" + o.overlap_comm + "\"", "one of: default, on, off"));
  if (o.logit_metrics < 0 || o.logit_metrics > 16)
    errs.push_back(flag_error("logit-metrics", "out of range", "an integer in [0, 16]"));
  s.run.logit_metrics = o.logit_metrics;
  s.run.cross_entropy = parse_one<CrossEntropy>("cross-entropy", o.cross_entropy, cross_entropy_names(),
                                                CrossEntropy::eager, errs);
  s.run.norm_kernel =
      parse_one<NormKernel>("norm-kernel", o.norm_kernel, norm_kernel_names(), NormKernel::auto_, errs);
  if (s.run.cross_entropy == CrossEntropy::jit_fused && s.run.framework != Framework::megatron)
    errs.push_back(flag_error("cross-entropy", "jit-fused applies to --framework megatron only",
                              "eager or fused, or add --framework megatron"));
  s.run.fsdp_hybrid = framework_choice("fsdp-sharding", o.fsdp_sharding, "full", "hybrid", Framework::fsdp,
                                       s.run.framework, errs);
  s.run.fsdp_version = framework_choice("fsdp-version", o.fsdp_version, "1", "2", Framework::fsdp,
                                        s.run.framework, errs)
                           ? 2
                           : 1;
  grad_reduce_choice(o.grad_reduce_in_fp32, s, errs);
  if (!o.sp.empty()) s.sequence_parallel = parse_on_off("sp", o.sp, errs);
  if (!o.offload.empty()) s.offload = parse_names<Offload>("offload", o.offload, offload_names(), errs);
  if (o.global_batch && !o.gas.empty())
    errs.push_back(flag_error("gas", "cannot be combined with --global-batch",
                              "give one: gas is derived from the global batch"));
  if (!model || !system || !errs.empty()) return errs;

  req.model = *model;
  req.cluster = Cluster{*system, o.gpus};
  if (req.cluster.nodes() > 1 && (system->nics_per_node < 1 || !(system->nic_bw.v > 0)))
    errs.push_back(Diagnostic{
        o.hw, "/nics_per_node",
        std::to_string(o.gpus) + " GPUs span " + std::to_string(req.cluster.nodes()) + " nodes of " +
            std::to_string(system->gpus_per_node) + ", but the system has no network (nics_per_node 0)",
        "set nics_per_node and nic_Gbps in the cluster JSON, give --inter-node-gbps, or "
        "use at most " +
            std::to_string(system->gpus_per_node) + " GPUs"});
  const GpuSpec& gpu = req.cluster.node.gpu;
  if (o.precision.empty()) {
    s.run.precision = gpu.bf16_tc_flop_per_clk_sm > 0 ? Precision::bf16 : Precision::fp16;
    plan.assumptions.push_back(std::string("precision ") + name(s.run.precision) + " (mixed) for " + gpu.name);
  } else {
    const int p =
        parse_one<int>("precision", o.precision, precision_flag_names(), int(Precision::bf16), errs);
    s.run.precision = p == kBf16Pure ? Precision::bf16 : static_cast<Precision>(p);
    if (p == kBf16Pure) pure_bf16(s, errs);
    if (s.run.precision == Precision::fp8 || s.run.precision == Precision::nvfp4)
      low_precision_linears(s, o, gpu, s.run.precision == Precision::nvfp4, errs);
    if (s.run.precision == Precision::tf32) tf32_matmuls(s, gpu, errs);
    low_precision_assumptions(s.run, plan.assumptions);
    if (s.run.precision == Precision::bf16 && !(gpu.bf16_tc_flop_per_clk_sm > 0))
      errs.push_back(
          flag_error("precision", gpu.name + " has no bf16 tensor cores", "fp16 or fp32 on this GPU"));
  }
  if (!s.run.fp8 && !o.fp8_recipe.empty())
    errs.push_back(flag_error("fp8-recipe", "applies to --precision fp8 only",
                              "leave it out, or add --precision fp8 (nvfp4: --precision nvfp4)"));
  const bool pretrain = o.seq <= 0 && req.model.pretrain_seq > 0;
  s.run.seq_len = o.seq > 0 ? o.seq : pretrain ? req.model.pretrain_seq : req.model.max_positions;
  plan.seq_is_model_max = o.seq <= 0 && !pretrain;
  if (!o.train_tokens.empty()) {
    if (const auto tokens = parse_token_count(o.train_tokens)) {
      plan.train_tokens = *tokens;
    } else {
      errs.push_back(
          flag_error("train-tokens", "invalid value \"" + o.train_tokens + "\"",
                     "a token count from 1 to 1e16: digits or a decimal with an optional K, M, B or T "
                     "suffix, e.g. 300B, 1.5T, 3e11"));
    }
  }
  if (o.seq <= 0)
    plan.assumptions.push_back("sequence length " + std::to_string(s.run.seq_len) +
                               (pretrain ? " (the model's pre-training context, later extended to " +
                                               std::to_string(req.model.max_positions) +
                                               ": --seq for long-context runs)"
                                         : " (model maximum)"));
  if (o.seq < 0 || s.run.seq_len < 1)
    errs.push_back(flag_error("seq", "must be a positive sequence length", "e.g. 2048"));
  if (o.seq > 0 && req.model.position == PositionKind::learned && o.seq > req.model.max_positions)
    errs.push_back(flag_error("seq", "longer than the model's " + std::to_string(req.model.max_positions) +
                                         " learned positions", "at most " + std::to_string(req.model.max_positions)));
  if (!o.cp.empty()) s.cp = parse_ints("cp", o.cp, false, 1, 64, errs);
  const int top_cp = s.cp.empty() ? 1 : *std::max_element(s.cp.begin(), s.cp.end());
  if (top_cp > 1) {
    if (s.run.framework != Framework::megatron)
      errs.push_back(flag_error("cp", "context parallelism is modelled for Megatron-Core only",
                                "add --framework megatron, or leave --cp at 1"));
    if (o.flash == "off")
      errs.push_back(flag_error("cp", "context parallelism runs a fused attention kernel", "--flash on"));
    for (int cp : s.cp)
      if (cp > 1 && s.run.seq_len > 0 && s.run.seq_len % (2 * cp) != 0)
        errs.push_back(flag_error("cp",
                                  "--cp " + std::to_string(cp) + " cuts each sequence into " +
                                      std::to_string(2 * cp) + " chunks; the sequence length " +
                                      std::to_string(s.run.seq_len) + " is not a multiple of it",
                                  "degrees whose 2 x cp divides the sequence length"));
    if (o.flash.empty() && *std::min_element(s.cp.begin(), s.cp.end()) > 1) s.flash = {true};
  }
  s.global_batch = o.global_batch ? std::optional<std::int64_t>(*o.global_batch) : std::nullopt;
  check_degrees(s.tp, s.pp, req.model, req.cluster, s.run, errs);
  if (errs.empty()) check_space_size(s, req.model, req.cluster, errs);
  if (!errs.empty()) return errs;

  const int last_node = req.cluster.num_gpus % req.cluster.node.gpus_per_node;
  plan.assumptions.insert(
      plan.assumptions.begin(),
      "hardware: " + describe(req.cluster.node) + ", " + std::to_string(req.cluster.nodes()) + " node(s)" +
          (req.cluster.nodes() > 1 && last_node > 0
               ? " (the last with " + std::to_string(last_node) + (last_node == 1 ? " GPU)" : " GPUs)")
               : ""));
  // Framework behaviour the prediction rests on (docs/model.md §4.4), said once.
  if (s.run.framework == Framework::megatron)
    plan.assumptions.push_back(std::string("current Megatron-LM: backward TP collectives run under the weight-gradient "
                                           "GEMMs; interleaved pipeline sends overlap compute, other sends block; ") +
                               (s.run.zero.overlap_comm == 1 ? "gradient reduction and parameter gather overlapped "
                                                                 "(--overlap-grad-reduce, --overlap-param-gather)"
                                                               : "gradient reduction after the backward "
                                                                 "(--overlap-comm on for Megatron-Core's overlap)"));
  if (s.run.framework == Framework::megatron && std::find(s.zero.begin(), s.zero.end(), 3) != s.zero.end())
    plan.assumptions.push_back(
        "stage 3 under Megatron is Megatron-FSDP (optim_grads_params): each layer gathered "
        "ahead of its forward and backward, its gradients reduce-scattered, overlapped");
  TrainConfig z0;  // a ZeRO-0 point of this space
  z0.framework = s.run.framework;
  z0.precision = s.run.precision;
  if (z0.framework == Framework::deepspeed && z0.precision == Precision::bf16 &&
      (s.zero.empty() || std::find(s.zero.begin(), s.zero.end(), 0) != s.zero.end()))
    plan.assumptions.push_back(
        "DeepSpeed >= 0.17.6 bf16 without ZeRO: fp16's wrapper (DDP_BFLOAT16, fp32 master and "
        "optimizer states replicated) outside a pipeline, BF16_Optimizer in one");
  if (!s.global_batch && o.gas.empty())
    plan.assumptions.push_back("no --global-batch or --gas: one micro-batch per optimizer step (gas 1) for every "
                               "configuration, so pipeline bubbles and gradient reductions are not amortised; give "
                               "--global-batch (samples) to rank for a training run's batch");
  for (std::string& a : run_assumptions(s, req.model, req.cluster, *system))
    plan.assumptions.push_back(std::move(a));
  req.efficiency = default_efficiency(gpu);
  if (!o.profile.empty()) {
    auto text = read_text_file(o.profile);
    if (!text) return text.errors();
    auto eff = efficiency_from_profile_file_text(*text, o.profile, gpu, req.efficiency);
    if (!eff) return eff.errors();
    req.efficiency = *eff;
    plan.assumptions.push_back("measured efficiencies from " + req.efficiency.source);
  }
  req.top = o.top;
  req.include_infeasible = o.all;
  req.refine_top = o.simulate_top;
  return plan;
}

}  // namespace dsplan::cli
