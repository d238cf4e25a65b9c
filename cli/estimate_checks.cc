// Checks of the estimate flags against the model and cluster (estimate_checks.h).
#include "cli/estimate_checks.h"

#include <algorithm>
#include <sstream>

#include "core/names.h"

namespace dsplan::cli {

// --pp-first-layers and --pp-last-layers: Megatron's explicit split, both ends or neither.
void set_explicit_split(const EstimateOptions& o, const Expected<ModelSpec>& model, TrainConfig& run,
                        Diagnostics& errs) {
  if (o.pp_first_layers < 0 && o.pp_last_layers < 0) return;
  if (o.pp_first_layers < 0 || o.pp_last_layers < 0)
    errs.push_back(flag_error(o.pp_first_layers < 0 ? "pp-first-layers" : "pp-last-layers",
                              "missing: an explicit pipeline split names both ends",
                              "give --pp-first-layers and --pp-last-layers together"));
  else if (run.framework != Framework::megatron)
    errs.push_back(flag_error("pp-first-layers", "an explicit pipeline split is Megatron's",
                              "--framework megatron, or leave --pp-first-layers and --pp-last-layers out"));
  else if (model && o.pp_first_layers + o.pp_last_layers > model->layers)
    errs.push_back(
        flag_error("pp-first-layers",
                   "the two ends hold more than the model's " + std::to_string(model->layers) + " layers",
                   "at most " + std::to_string(model->layers) + " together"));
  run.pp_first_layers = o.pp_first_layers;
  run.pp_last_layers = o.pp_last_layers;
}

// Checks user-given TP/PP values against the model and cluster; lists the allowed ones.
void check_degrees(const std::vector<int>& tps, const std::vector<int>& pps, const ModelSpec& m,
                   const Cluster& c, const TrainConfig& run, Diagnostics& errs) {
  // Why `p` cannot run the model here, under the run's framework and any pinned split.
  const auto pp_why = [&](int p) {
    return pp_problem(p, m, c, run.framework, 0, run.pp_first_layers, run.pp_last_layers);
  };
  for (int t : tps) {
    std::string why = tp_problem(t, m, c, true);
    if (why.empty()) continue;
    std::vector<std::string> ok;
    for (int v = 1; v <= c.num_gpus; ++v)
      if (tp_problem(v, m, c, true).empty()) ok.push_back(std::to_string(v));
    errs.push_back(flag_error("tp", "tensor-parallel degree " + std::to_string(t) + " " + why,
                              "allowed for " + m.name + " on this cluster: " + join(ok)));
  }
  std::vector<std::string> ok;
  for (int v = 1; v <= std::min(c.num_gpus, m.layers); ++v)
    if (pp_why(v).empty()) ok.push_back(std::to_string(v));
  const std::string allowed = ok.empty()
                                  ? "none on " + std::to_string(c.num_gpus) +
                                        " GPUs: the layers between the split's ends must divide evenly "
                                        "over pp - 2 stages; change --pp-first-layers or --pp-last-layers"
                                  : "allowed: " + join(ok);
  for (int p : pps) {
    const std::string why = pp_why(p);
    if (!why.empty())
      errs.push_back(flag_error("pp", "pipeline-parallel degree " + std::to_string(p) + " " + why, allowed));
  }
  // A pinned split that no searched degree takes leaves nothing to search.
  if (pps.empty() && run.explicit_split() && ok.empty())
    errs.push_back(flag_error("pp-first-layers",
                              "no pipeline degree takes the split of " + std::to_string(m.layers) +
                                  " layers with " + std::to_string(run.pp_first_layers) + " first and " +
                                  std::to_string(run.pp_last_layers) + " last",
                              allowed));
}

// A search over more points than this would keep the user waiting (the search visits
// about two million points a second on one core): refuse it and name the widest flag.
constexpr double kMaxSearchPoints = 1e7;

void check_space_size(const SearchSpace& given, const ModelSpec& m, const Cluster& c, Diagnostics& errs) {
  const SearchSpace s = with_defaults(given, m, c);
  const std::vector<std::pair<std::string, size_t>> dims{{"zero", s.zero.size()},
                                                         {"tp", s.tp.size()},
                                                         {"pp", s.pp.size()},
                                                         {"vpp", s.vpp.size()},
                                                         {"mbs", s.micro_batch.size()},
                                                         {"gas", s.global_batch ? 1 : s.grad_accum.size()},
                                                         {"ckpt", s.checkpointing.size()},
                                                         {"flash", s.flash.size()},
                                                         {"sp", s.sequence_parallel.size()},
                                                         {"offload", s.offload.size()},
                                                         {"cp", s.cp.size()},
                                                         {"ep", s.ep.size()}};
  double points = 1;
  std::string product;
  for (const auto& [flag, n] : dims) {
    points *= static_cast<double>(n);
    product += (product.empty() ? "" : " x ") + flag + " " + std::to_string(n);
  }
  if (points <= kMaxSearchPoints) return;
  auto widest = std::max_element(dims.begin(), dims.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
  std::ostringstream msg;
  msg << "the search space has " << static_cast<long long>(points) << " points (" << product
      << "), more than the " << static_cast<long long>(kMaxSearchPoints) << " searched at once";
  errs.push_back(
      flag_error(widest->first, msg.str(),
                 "narrow --" + widest->first + " (e.g. powers of two: 1,2,4,...) or pin more dimensions"));
}

// --cpu-offload-layers: Megatron-Core's --cpu-offloading-num-layers, which it refuses for
// the model's every layer; pipeline parallelism and recompute are left to the search's
// rules (their points are removed, each with the reason).
void set_cpu_offload(const EstimateOptions& o, const Expected<ModelSpec>& model, TrainConfig& run,
                     Diagnostics& errs) {
  if (o.cpu_offload_layers <= 0) return;
  if (run.framework != Framework::megatron)
    errs.push_back(flag_error("cpu-offload-layers", "CPU activation offloading is modelled for Megatron only",
                              "add --framework megatron, or leave --cpu-offload-layers out"));
  else if (model && o.cpu_offload_layers >= model->layers)
    errs.push_back(flag_error("cpu-offload-layers",
                              std::to_string(o.cpu_offload_layers) + " is not fewer than the model's " +
                                  std::to_string(model->layers) + " layers",
                              "at most " + std::to_string(model->layers - 1)));
  run.cpu_offload_layers = o.cpu_offload_layers;
}

// DeepSpeed's activation checkpointing options (deepspeed.checkpointing): each a single on or
// off, priced only where layers are recomputed (TrainConfig::ds_partitions_checkpoints,
// ds_checkpoints_on_host).
void set_ds_checkpointing(const EstimateOptions& o, const std::vector<Checkpointing>& ckpt, TrainConfig& run,
                          Diagnostics& errs) {
  auto one = [&](const char* flag, const std::string& v, bool& out) {
    if (v.empty()) return;
    if (v != "on" && v != "off") {
      errs.push_back(flag_error(flag, "'" + v + "' is not on or off", "on or off"));
      return;
    }
    out = v == "on";
    if (!out) return;
    if (run.framework != Framework::deepspeed)
      errs.push_back(
          flag_error(flag, "DeepSpeed's activation checkpointing is modelled for --framework deepspeed only",
                     "leave --" + std::string(flag) + " out, or use --framework deepspeed"));
    else if (!ckpt.empty() &&
             std::none_of(ckpt.begin(), ckpt.end(), [](Checkpointing c) { return recomputes_layers(c); }))
      errs.push_back(flag_error(flag, "acts on recomputed layers, and --ckpt searches none of them",
                                "add full or block to --ckpt"));
  };
  one("partition-activations", o.partition_activations, run.ds_partition_activations);
  one("cpu-checkpointing", o.cpu_checkpointing, run.ds_cpu_checkpointing);
}

// --precision tf32: fp32 with TF32 tensor-core matmuls, refused where there are none (Volta).
void tf32_matmuls(SearchSpace& s, const GpuSpec& gpu, Diagnostics& errs) {
  s.run.precision = Precision::fp32;
  s.run.tf32 = true;
  if (!(gpu.tf32_tc_flop_per_clk_sm > 0))
    errs.push_back(flag_error("precision", gpu.name + " has no TF32 tensor cores",
                              "tf32 needs Ampere or newer; fp32, fp16 here"));
}

// --precision bf16-pure: a bf16 model with bf16 optimizer states and no fp32 master, which only
// plain PyTorch runs (DeepSpeed and Megatron keep master weights).
void pure_bf16(SearchSpace& s, Diagnostics& errs) {
  s.run.pure16 = true;
  if (s.run.framework != Framework::ddp && s.run.framework != Framework::fsdp)
    errs.push_back(flag_error("precision", "bf16-pure is modelled for PyTorch DDP and FSDP only",
                              "add --framework ddp or fsdp, or use bf16 (fp32 master weights)"));
}

}  // namespace dsplan::cli
