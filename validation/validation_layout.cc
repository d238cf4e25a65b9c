// A row's parallel layout and batch as published (validation_rows.h, rows::layout_and_batch):
// the checks that the numbers are what the format says (whole degrees, a ZeRO stage,
// switches, positive batch counts dsplan can take, dp consistent with tp, pp and the GPUs),
// and the micro-batch, accumulation or global batch of the pinned request.
// What the row does not publish is searched (rows::search_unpublished): a benchmark table
// reports a configuration that ran, and its authors chose what they left out, so dsplan
// predicts the fastest configuration that fits among the choices left open, as it does
// for an unpublished micro-batch (docs/accuracy.md, "Mapping decisions", session 32).
#include <algorithm>
#include <cmath>
#include <regex>

#include "core/names.h"
#include "validation/validation_rows.h"

namespace dsplan::validation::rows {

std::optional<Offload> offload_kind(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? Offload::optimizer : Offload::none;
  if (!v.is_string()) return std::nullopt;
  const std::string t = ascii_lower(v.get<std::string>());
  if (t == "none" || t == "off" || t == "false" || t == "no") return Offload::none;
  if (t == "cpu" || t == "optimizer" || t == "true" || t == "on" || t == "yes") return Offload::optimizer;
  if (t == "all" || t == "param" || t == "params" || t == "parameters") return Offload::all;
  return std::nullopt;
}

void recompute_modules(const Json& p, SearchSpace& s, std::vector<std::string>& notes) {
  s.recompute_modules = {0};
  const bool selective = s.checkpointing.size() == 1 && s.checkpointing[0] == Checkpointing::selective;
  static const std::regex list(R"(recompute_modules\s*\[([^\]]*)\])");
  const std::string r = at(p, "recompute").is_string() ? at(p, "recompute").get<std::string>() : "";
  std::smatch mm;
  if (!selective || !std::regex_search(r, mm, list)) return;
  std::uint8_t bits = 0;
  const std::string names = mm[1].str();
  static const std::regex word(R"([A-Za-z_]+)");
  for (auto it = std::sregex_iterator(names.begin(), names.end(), word); it != std::sregex_iterator(); ++it) {
    if (auto m = parse_recompute_module(it->str())) {
      bits |= module_bit(*m);
    } else {
      notes.push_back("recompute module '" + it->str() + "' is not one dsplan prices: left out");
    }
  }
  if (bits != 0) notes.push_back("selective recompute of " + recompute_modules_text(bits, ' '));
  s.run.recompute_modules = bits;
  s.recompute_modules = {bits};
}

void moe_kernels(const Json& p, const ModelSpec& m, SearchSpace& s, std::vector<std::string>& notes) {
  if (s.run.framework != Framework::megatron || !is_moe(m)) return;
  const std::string other = ascii_lower(at(p, "other").is_string() ? at(p, "other").get<std::string>() : "");
  s.run.moe_deepep = other.find("deepep") != std::string::npos;
  if (s.run.moe_deepep)
    notes.push_back(
        "DeepEP token dispatch (flex dispatcher): a token crosses once per node and GPU, not per expert");
  s.run.moe_permute_fusion = other.find("moe_permute_fusion") != std::string::npos;
  if (!s.run.moe_permute_fusion)
    notes.push_back(
        "no moe_permute_fusion named: Megatron-Core's unfused permutation (atomic row additions)");
}

std::optional<Diagnostic> layout_and_batch(const Json& p, int gpus, SearchSpace& s,
                                           std::vector<std::string>& notes) {
  for (const char* key : {"micro_batch", "global_batch", "grad_accum"}) {
    const Json& v = at(p, key);
    if (!v.is_null() && !(v.is_number() && v.get<double>() >= 1))
      return Diagnostic{"", std::string("/parallel/") + key,
                        std::string(key) + " must be a positive number, or null when not published", ""};
  }
  // The layout, where given: whole degrees, a ZeRO stage, switches; dp consistent with them.
  auto whole = [](const Json& v, double lo, double hi) {
    return v.is_number() && v.get<double>() >= lo && v.get<double>() <= hi &&
           v.get<double>() == std::floor(v.get<double>());
  };
  for (const char* key : {"tp", "pp", "cp", "dp", "zero_stage"}) {
    const Json& v = at(p, key);
    const bool stage = std::string(key) == "zero_stage";
    if (!v.is_null() && !whole(v, stage ? 0 : 1, stage ? 3 : 1e6))
      return Diagnostic{"", std::string("/parallel/") + key,
                        std::string(key) +
                            (stage ? " must be 0, 1, 2 or 3" : " must be a whole number >= 1") +
                            ", or null when not published",
                        ""};
  }
  for (const char* key : {"flash_attention", "sequence_parallel"}) {
    const Json& v = at(p, key);
    if (!v.is_null() && !v.is_boolean())
      return Diagnostic{"", std::string("/parallel/") + key,
                        std::string(key) + " must be true, false or null", ""};
  }
  if (const Json& v = at(p, "offload"); !v.is_null() && !v.is_boolean() && !offload_kind(v))
    return Diagnostic{
        "", "/parallel/offload",
        "offload must be true, false, null or one of \"none\", \"cpu\", \"optimizer\", \"all\", "
        "\"param\"",
        ""};
  // Context parallelism (parallel.cp) is a run-wide degree: the model ranks are tp x pp x cp.
  const int cp = s.cp.empty() ? 1 : std::max(1, s.cp[0]);
  const int model_ranks = s.tp[0] * s.pp[0] * cp;
  if (at(p, "dp").is_number() && num(p, "dp") * model_ranks != gpus)
    return Diagnostic{"", "/parallel/dp",
                      std::string(cp > 1 ? "dp x tp x pp x cp = " : "dp x tp x pp = ") +
                          std::to_string(static_cast<long long>(num(p, "dp")) * model_ranks) +
                          " is not the row's " + std::to_string(gpus) + " GPUs",
                      ""};
  const double mbs = num(p, "micro_batch"), gb = num(p, "global_batch"), gas = num(p, "grad_accum");
  const int dp = std::max(1, gpus / std::max(1, model_ranks));
  const double steps = gas > 0 ? gas : mbs > 0 && gb > 0 ? gb / (mbs * dp) : 1;
  if (mbs > kMaxMicroBatch || gb > kMaxGlobalBatch || steps > kMaxGradAccum)
    return Diagnostic{"", "/parallel",
                      "batch out of range: micro_batch at most " + std::to_string(kMaxMicroBatch) +
                          ", global_batch at most 1e12, at most " + std::to_string(kMaxGradAccum) +
                          " micro-batches accumulated per step",
                      ""};
  if (mbs > 0) {
    s.micro_batch = {static_cast<int>(mbs)};
    const double derived = gb > 0 ? gb / (mbs * dp) : 1;
    s.grad_accum = {std::max(1, static_cast<int>(gas > 0 ? gas : derived))};
    if (gas <= 0 && gb > 0)
      notes.push_back("grad_accum = global / (micro x dp) = " + std::to_string(s.grad_accum[0]));
  } else if (gb > 0) {
    s.global_batch = static_cast<std::int64_t>(gb);
    s.micro_batch = {1, 2, 4, 8};
    if (at(p, "vpp").is_number()) {  // a stated interleaving is kept
      notes.push_back("micro-batch not published: best predicted of mbs 1-8");
    } else {
      s.vpp = {1, 2, 4};
      notes.push_back("micro-batch and interleaving not published: best predicted of mbs 1-8, vpp 1-4");
    }
  } else {
    s.micro_batch = {1};
    s.grad_accum = {1};
    notes.push_back("no batch published: micro-batch 1");
  }
  return std::nullopt;
}

void search_unpublished(const Json& row, bool stage_stated, bool pre_2022, SearchSpace& s,
                        std::vector<std::string>& notes) {
  if (at(at(row, "measured"), "oom").is_boolean() && at(at(row, "measured"), "oom").get<bool>()) return;
  const Json& p = at(row, "parallel");
  std::vector<std::string> open;
  if (at(p, "flash_attention").is_null() && !pre_2022) {
    s.flash.clear();  // with a flash-class kernel only where the GPU, precision and head size allow
    open.push_back("attention kernel");
  }
  // Sequence parallelism is Megatron's (it needs tp > 1; make_config rejects it otherwise).
  const bool megatron = s.run.framework == Framework::megatron;
  if (at(p, "sequence_parallel").is_null() && megatron && !pre_2022 && s.tp[0] > 1) {
    s.sequence_parallel.clear();
    open.push_back("sequence parallelism");
  }
  if (!stage_stated && !(megatron && pre_2022)) {
    s.zero.clear();  // the framework's valid stages (make_config)
    open.push_back("ZeRO stage");
  }
  if (open.empty()) return;
  std::string list;
  for (const auto& o : open) list += (list.empty() ? "" : ", ") + o;
  notes.push_back(list + " not published: searched, the fastest configuration that fits is predicted");
}

}  // namespace dsplan::validation::rows
