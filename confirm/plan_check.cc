// Structural checks of a plan's GPU and configurations (see plan_check.h). The rules are
// the search space's (estimator/search/space.cc: tp_problem, pp_problem, make_config),
// restated over what a plan holds, so that confirm needs no estimator.
#include "confirm/plan_check.h"

#include <cstdint>
#include <functional>
#include <vector>

#include "core/names.h"
#include "hwdb/hwdb.h"

namespace dsplan {
namespace {

// The values in [1, hi] that `ok` accepts, as "1, 2, 4".
std::string allowed_values(int hi, const std::function<bool(int)>& ok) {
  std::vector<std::string> v;
  for (int x = 1; x <= hi; ++x)
    if (ok(x)) v.push_back(std::to_string(x));
  return v.empty() ? "none" : join(v);
}

std::string tp_problem(int tp, int heads, int kv_heads, int gpus) {
  if (heads % tp != 0) return "does not divide the " + std::to_string(heads) + " attention heads";
  if (kv_heads % tp != 0) return "does not divide the " + std::to_string(kv_heads) + " key/value heads";
  if (gpus % tp != 0) return "does not divide the plan's " + std::to_string(gpus) + " GPUs";
  return "";
}

// `gpus_left` = the plan's GPUs / tp.
// `run` supplies the framework and release (set_pipeline_split: Megatron may count the
// embedding and loss as layers).
std::string pp_problem(int pp, int layers, int gpus_left, const TrainConfig& run) {
  if (pp > layers) return "exceeds the " + std::to_string(layers) + " layers";
  if (gpus_left % pp != 0) return "does not divide the " + std::to_string(gpus_left) + " GPUs left by tp";
  TrainConfig t = run;
  t.pp = pp;
  t.vpp = 1;
  const bool pinned = t.explicit_split();  // before set_pipeline_split, which may derive one
  if (t.set_pipeline_split(layers)) return "";
  if (pinned)
    return "does not take the plan's split of the " + std::to_string(layers) + " layers (pp_first_layers " +
           std::to_string(t.pp_first_layers) + ", pp_last_layers " + std::to_string(t.pp_last_layers) +
           ", the rest even over pp - 2 stages)";
  return "does not divide the " + std::to_string(layers) + " layers (" + name(run.framework) +
         (t.megatron_accounted_split()
              ? " splits layers evenly, or layers + 1 or + 2 with the loss and embedding counted)"
              : " splits layers evenly)");
}

// The plan's split (pp_split) must fit its degrees; none given is the one dsplan derives.
bool split_fits(const TrainConfig& c, int layers, int vpp) {
  TrainConfig t = c;
  t.vpp = vpp;
  return t.pp_account_embedding || t.pp_account_loss ? t.pipeline_split_fits(layers)
                                                     : t.set_pipeline_split(layers);
}

}  // namespace

Diagnostics check_plan_gpu(const Json& hw, const std::string& file) {
  const std::string at = "/hardware/gpu";
  const std::string what =
      "the GPU the plan is for: a GPU preset by name, e.g. {\"name\": \"a100-80gb\"}, "
      "or the whole GPU object 'dsplan estimate' writes";
  if (!hw.is_object()) return {};  // read_hardware reports it
  if (!hw.contains("gpu")) return {{file, at, "missing", what}};
  const Json& g = hw["gpu"];
  if (!g.is_object()) return {{file, at, "must be an object", what}};
  if (!g.contains("name") || !g["name"].is_string())
    return {{file, at + "/name", "missing or not a string", what}};
  auto preset = gpu_preset(g["name"].get<std::string>());
  if (preset) return {};
  if (g.size() > 1) {  // a cluster file's own GPU, written whole by estimate
    auto own = parse_gpu_json(g, file, at);
    return own ? Diagnostics{} : own.errors();
  }
  const Diagnostic& unknown = preset.errors().front();
  return {{file, at + "/name", unknown.message,
           unknown.hint + "; or the whole GPU object 'dsplan estimate' writes for a cluster file's own GPU"}};
}

Diagnostics check_candidate_layout(const Candidate& cand, const Json& cj, const Plan& plan,
                                   const std::string& file, const std::string& path) {
  const TrainConfig& c = cand.cfg;
  const ModelSpec& m = plan.model;
  const int gpus = plan.num_gpus, heads = m.heads, kv = kv_heads_of(m), layers = m.layers;
  if (gpus < 1 || heads < 1 || kv < 1 || layers < 1) return {};  // reported where they were read
  auto at = [&](const char* key) { return path + "/" + key; };

  if (auto why = tp_problem(c.tp, heads, kv, gpus); !why.empty())
    return {
        {file, at("tp"), "tp " + std::to_string(c.tp) + " " + why,
         "allowed: " + allowed_values(gpus, [&](int t) { return tp_problem(t, heads, kv, gpus).empty(); }) +
             ", the divisors of the " + std::to_string(heads) + " heads, " + std::to_string(kv) +
             " key/value heads and " + std::to_string(gpus) + " GPUs"}};
  const int cp = std::max(1, c.cp);  // context parallelism: tp x cp x pp x dp GPUs
  if ((gpus / c.tp) % cp != 0)
    return {{file, at("cp"),
             "cp " + std::to_string(cp) + " with tp " + std::to_string(c.tp) +
                 " does not divide the plan's " + std::to_string(gpus) + " GPUs",
             "a cp that divides " + std::to_string(gpus / c.tp)}};
  const int left = gpus / c.tp / cp;
  if (auto why = pp_problem(c.pp, layers, left, c); !why.empty())
    return {{file, at("pp"), "pp " + std::to_string(c.pp) + " " + why,
             "allowed with tp " + std::to_string(c.tp) + ": " +
                 allowed_values(left, [&](int p) { return pp_problem(p, layers, left, c).empty(); })}};
  const int dp = left / c.pp;
  if (c.dp != dp)
    return {{file, at("dp"),
             "dp " + std::to_string(c.dp) + " with tp " + std::to_string(c.tp) + " and pp " +
                 std::to_string(c.pp) + " needs " +
                 std::to_string(static_cast<std::int64_t>(c.dp) * c.tp * c.pp * cp) +
                 " GPUs, but the plan is for " + std::to_string(gpus) + " (/hardware/num_gpus)",
             "allowed: " + std::to_string(dp) + ", so that tp x pp x " + (cp > 1 ? "cp x " : "") +
                 "dp = the plan's " + std::to_string(gpus) + " GPUs"}};
  if ((c.vpp > 1 && c.pp < 2) || (c.pp > 1 && !split_fits(c, layers, c.vpp)))
    return {{file, at(c.vpp > 1 ? "vpp" : "pp_split"),
             c.vpp > 1 && c.pp < 2
                 ? "vpp " + std::to_string(c.vpp) + " needs pp >= 2"
                 : "vpp " + std::to_string(c.vpp) + " with pp " + std::to_string(c.pp) +
                       " does not split the " + std::to_string(layers) + " layers (with the plan's pp_split)",
             "allowed with pp " + std::to_string(c.pp) + ": " + allowed_values(layers, [&](int v) {
               return v == 1 || (c.pp >= 2 && split_fits(c, layers, v));
             })}};
  if (const int ep = std::max(1, c.ep); ep > 1 || is_moe(m)) {
    // Expert parallelism: an MoE model's experts split over ranks taken from tp x cp x dp.
    const int ranks = c.tp * cp * c.dp;
    if (!is_moe(m))
      return {{file, at("ep"), "ep " + std::to_string(ep) + " for a dense model", "leave ep out (1)"}};
    if (m.experts % ep != 0 || ranks % ep != 0)
      return {{file, at("ep"),
               "ep " + std::to_string(ep) + " does not divide both the " + std::to_string(m.experts) +
                   " experts and tp x cp x dp = " + std::to_string(ranks),
               "allowed: " + allowed_values(std::min(m.experts, ranks),
                                            [&](int e) { return m.experts % e == 0 && ranks % e == 0; })}};
    const int etp = std::max(1, c.etp);  // expert TP: the expert grid is etp x ep of those ranks
    if (ranks % (ep * etp) != 0 || m.moe_ffn % etp != 0)
      return {{file, at("etp"),
               "etp " + std::to_string(etp) + " with ep " + std::to_string(ep) +
                   " does not divide tp x cp x dp = " + std::to_string(ranks) + " or the expert width " +
                   std::to_string(m.moe_ffn),
               "an etp that divides " + std::to_string(ranks / ep) + " and " + std::to_string(m.moe_ffn)}};
  }
  if (cj.is_object() && cj.contains("global_batch")) {
    const Json& gb = cj["global_batch"];
    const std::int64_t want = c.global_batch();
    const std::string product = "micro_batch x dp x grad_accum = " + std::to_string(c.micro_batch) + " x " +
                                std::to_string(c.dp) + " x " + std::to_string(c.grad_accum) + " = " +
                                std::to_string(want);
    if (!gb.is_number())
      return {{file, at("global_batch"), "expected an integer, got " + gb.dump(),
               "allowed: " + std::to_string(want) + " (" + product + "), or leave global_batch out"}};
    if (gb.get<double>() != static_cast<double>(want))
      return {{file, at("global_batch"), gb.dump() + " is not " + product,
               "allowed: " + std::to_string(want) + ", or leave global_batch out"}};
  }
  return {};
}

}  // namespace dsplan
