// Mapping of published.json rows to dsplan requests; see validation_rows.h. The choices
// per source (documented in docs/accuracy.md):
//  - Megatron Table 1 (Narayanan et al. 2021): Selene = dgx-a100, Megatron fp16, full
//    recompute; micro-batch and interleaving not published, so they are searched (the
//    paper reports its tuned best); TFLOP/s use the paper's F = 96Bslh^2(1+s/6h+V/16lh).
//  - DLPerf Megatron: DGX-1 V100 16GB, Megatron fp16, full recompute; memory is nvidia-smi
//    (`device`); iteration time compared directly.
//  - HF Trainer BERT-large (model_memory_anatomy): one V100-SXM2 16GB, plain PyTorch
//    (framework ddp), AMP keeps fp32 weights; NVML memory -> `device`.
//  - DeepSpeed autotuning examples: one 16-GPU V100 node = dgx2 (32 GB), HF Trainer; the
//    autotuner metric sums forward, backward and step only, as dsplan's step time does.
//  - PAI (seed 004): 4 GPUs of 32 GB taken as V100-32GB on an NVLink node; Megatron for
//    mixed precision and 3D rows, DeepSpeed for ZeRO rows, fairscale OSS as ZeRO-1 and
//    OSS+ShardedDDP as ZeRO-2; peak memory compared to `allocated` (Megatron's report).
#include "cli/validation_rows.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/json/model_json.h"
#include "core/names.h"
#include "estimator/time/efficiency_defaults.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {
namespace {

bool has(const std::string& s, const std::string& sub) {
  std::string a = s, b = sub;
  for (auto& ch : a) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (auto& ch : b) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return a.find(b) != std::string::npos;
}

double num(const Json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A model for the row's shape: a preset when the name says which, else a GPT-2-style
// decoder (learned positions, LayerNorm, GeLU, biases, tied embeddings).
Expected<ModelSpec> row_model(const Json& m, const std::string& id) {
  const std::string n = str(m, "name");
  std::optional<std::string> preset;
  if (has(n, "distilbert")) preset = "distilbert";
  else if (has(n, "bert-large")) preset = "bert-large";
  else if (has(n, "bert")) preset = "bert-base";
  else if (has(n, "gpt2-medium")) preset = "gpt2-medium";
  else if (has(n, "gpt2-large")) preset = "gpt2-large";
  ModelSpec spec;
  if (preset) {
    auto p = model_preset(*preset);
    if (!p) return p.errors();
    spec = *p;
    if (num(m, "vocab") > 0) spec.vocab = static_cast<std::int64_t>(num(m, "vocab"));
  } else {
    spec.name = n.empty() ? id : n;
    spec.layers = static_cast<int>(num(m, "layers"));
    spec.hidden = static_cast<int>(num(m, "hidden"));
    spec.heads = static_cast<int>(num(m, "heads"));
    spec.kv_heads = spec.heads;
    spec.head_dim = spec.heads > 0 ? spec.hidden / spec.heads : 0;
    spec.ffn_hidden = 4 * spec.hidden;
    spec.vocab = num(m, "vocab") > 0 ? static_cast<std::int64_t>(num(m, "vocab")) : 50257;
    spec.max_positions = static_cast<int>(num(m, "seq_len", 2048));
    spec.vocab_pad_multiple = 128;
    if (spec.layers <= 0 || spec.hidden <= 0 || spec.heads <= 0)
      return Diagnostic{"", "/" + id + "/model", "row has no usable model shape", ""};
  }
  return spec;
}

struct RowHw {
  std::string name;
  std::optional<int> gpn;
};

RowHw row_hardware(const std::string& id, const Json& hw) {
  const std::string g = str(hw, "gpu");
  if (has(g, "A100") && has(str(hw, "interconnect"), "Polaris")) return {"polaris", {}};
  if (has(g, "A100") && has(g, "80")) return {"dgx-a100", {}};
  if (has(g, "A100")) return {"dgx-a100-40gb", {}};
  if (has(id, "ds_autotune") || has(id, "seed000")) return {"dgx2", {}};
  if (has(g, "32") || has(id, "pai_")) return {"v100-32gb", 4};
  if (has(g, "V100")) return {"dgx1-v100", {}};
  return {"dgx-a100", {}};
}

Checkpointing row_ckpt(const std::string& r) {
  if (has(r, "selective")) return Checkpointing::selective;
  if (has(r, "full") || has(r, "checkpoint")) return Checkpointing::full;
  return Checkpointing::none;
}

Precision row_precision(const std::string& p) {
  if (has(p, "bf16")) return Precision::bf16;
  if (has(p, "fp16")) return Precision::fp16;
  return Precision::fp32;
}

Framework row_framework(const std::string& id, const std::string& other) {
  if (has(id, "megatron") || has(id, "pai_gpt1.3b_3d") || has(id, "pai_gpt1.3b_mixed")) return Framework::megatron;
  if (has(id, "hf_bertlarge") || has(id, "baseline_DDP") || has(id, "no_accel") || has(id, "pai_bert")) return Framework::ddp;
  if (has(other, "no DeepSpeed")) return Framework::ddp;
  return Framework::deepspeed;
}

// The request for one row with everything the row states pinned.
Expected<PlanRequest> row_request(const Json& row, std::vector<std::string>& assumptions) {
  const std::string id = str(row, "id");
  const Json& m = row["model"];
  const Json& hw = row["hardware"];
  const Json& p = row["parallel"];
  auto model = row_model(m, id);
  if (!model) return model.errors();
  RowHw h = row_hardware(id, hw);
  auto sys = resolve_hardware(h.name, h.gpn, std::nullopt,
                              [](const std::string& f) -> Expected<std::string> { return Diagnostic{f, "", "no files", ""}; });
  if (!sys) return sys.errors();
  PlanRequest req;
  req.model = *model;
  req.cluster = Cluster{*sys, static_cast<int>(num(hw, "num_gpus", 1))};
  req.efficiency = default_efficiency(sys->gpu);
  req.top = 1;
  SearchSpace& s = req.space;
  s.seq_len = static_cast<int>(num(m, "seq_len", 128));
  if (s.seq_len <= 0) s.seq_len = 128;
  s.precision = row_precision(str(p, "precision"));
  s.framework = row_framework(id, str(p, "other"));
  if (has(str(p, "other"), "OSS")) s.framework = Framework::deepspeed;
  int zero = static_cast<int>(num(p, "zero_stage", 0));
  if (has(str(p, "other"), "ShardedDDP")) zero = 2;
  else if (has(str(p, "other"), "OSS")) zero = 1;
  s.zero = {zero};
  s.tp = {static_cast<int>(num(p, "tp", 1))};
  s.pp = {static_cast<int>(num(p, "pp", 1))};
  s.checkpointing = {row_ckpt(str(p, "recompute"))};
  s.flash = {p.value("flash_attention", false) == true};
  s.sequence_parallel = {false};
  s.offload = {Offload::none};
  s.vpp = {1};
  const double mbs = num(p, "micro_batch"), gb = num(p, "global_batch"), gas = num(p, "grad_accum");
  if (mbs > 0) s.micro_batch = {static_cast<int>(mbs)};
  if (gb > 0 && mbs > 0) {
    s.grad_accum = {std::max(1, static_cast<int>(gas > 0 ? gas : gb / (mbs * std::max(1.0, num(p, "dp", 1)))))};
  } else if (gb > 0) {
    s.global_batch = static_cast<std::int64_t>(gb);
    s.micro_batch = {1, 2, 4, 8};
    s.vpp = {1, 2, 4};
    assumptions.push_back("micro-batch and interleaving not published: best of mbs 1-8, vpp 1-4");
  } else {
    s.grad_accum = {1};
  }
  assumptions.push_back("hardware " + h.name + ", framework " + std::string(name(s.framework)));
  return req;
}

void add_orderings(const Json& rows, ValidationSet& set);

}  // namespace

Expected<ValidationSet> load_validation(const Json& rows, const std::string& file) {
  if (!rows.is_array()) return Diagnostic{file, "", "expected a JSON list of measurement rows", ""};
  ValidationSet set;
  for (const Json& row : rows) {
    const std::string id = str(row, "id");
    if (!row.contains("measured") || !row["model"].is_object() || !row["parallel"].is_object()) continue;
    const Json& meas = row["measured"];
    if (meas.contains("ranking_best_first") || row.contains("collective")) continue;
    ValidationCase c;
    c.id = id;
    c.source = str(row, "source");
    c.inconsistent = has(str(row, "notes"), "inconsistent");
    auto req = row_request(row, c.assumptions);
    if (!req) {
      for (auto d : req.errors()) { d.file = file; set.skipped.push_back(d); }
      continue;
    }
    c.request = *req;
    auto add = [&](MeasureKind k, const char* key, double scale, MemoryFigure fig = MemoryFigure::device) {
      double v = num(meas, key, -1);
      if (v > 0) c.measured.push_back({k, v * scale, fig, key});
    };
    add(MeasureKind::memory, "peak_mem_MiB", 1, MemoryFigure::device);
    add(MeasureKind::memory, "gpu_mem_used_MB_nvml", 1, MemoryFigure::device);
    add(MeasureKind::memory, "peak_memory_MB", 1, MemoryFigure::allocated);
    add(MeasureKind::step_time, "iteration_time_ms", 1e-3);
    if (num(meas, "iteration_time_ms", -1) <= 0) {
      add(MeasureKind::samples_per_s, "samples_per_s", 1);
      add(MeasureKind::samples_per_s, "samples_per_s_end_to_end", 1);
      add(MeasureKind::samples_per_s, "ds_autotuner_metric_samples_per_s", 1);
    }
    if (has(id, "megatron_t1")) {
      add(MeasureKind::tflops_per_gpu, "tflops_per_gpu", 1);
      const ModelSpec& m = c.request.model;
      const double B = *c.request.space.global_batch, s = c.request.space.seq_len, l = m.layers, h = m.hidden,
                   V = static_cast<double>(m.vocab);
      c.source_flops_per_step = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    }
    if (meas.contains("oom") && meas["oom"] == true) c.measured.push_back({MeasureKind::oom, 1, MemoryFigure::device, "oom"});
    if (has(id, "ds_autotune_space") && num(meas, "ds_autotuner_metric_samples_per_s", 0) > 0)
      c.measured.push_back({MeasureKind::max_micro_batch, num(row["parallel"], "micro_batch"), MemoryFigure::device,
                            "micro_batch the autotuner ran"});
    if (!c.measured.empty()) set.cases.push_back(std::move(c));
  }
  add_orderings(rows, set);
  return set;
}

namespace {

void add_orderings(const Json& rows, ValidationSet& set) {
  // DeepSpeed autotuner: per model, stages ordered by their best metric (0 = no result).
  std::map<std::string, std::vector<std::pair<double, const Json*>>> per_model;
  for (const Json& row : rows) {
    const std::string id = str(row, "id");
    if (!has(id, "ds_autotune_space")) continue;
    double v = num(row["measured"], "ds_autotuner_metric_samples_per_s", 0);
    if (v > 0) per_model[str(row["model"], "name")].push_back({v, &row});
  }
  for (auto& [model, runs] : per_model) {
    std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.first > b.first; });
    OrderingCase o;
    o.id = "ds_autotune stage order " + model;
    for (auto& [v, row] : runs) {
      std::vector<std::string> ignored;
      auto req = row_request(*row, ignored);
      if (!req) continue;
      PlanRequest r = *req;
      r.space.micro_batch = {};  // the autotuner searched the micro-batch
      r.space.grad_accum = {1};
      o.labels.push_back("z" + std::to_string(r.space.zero[0]) + " (" + std::to_string(v) + ")");
      o.groups.push_back(r);
    }
    if (o.groups.size() > 1) set.orderings.push_back(std::move(o));
  }
  // PAI 3D parallel (consistent rows only).
  OrderingCase pai;
  pai.id = "PAI 3D-parallel order (GPT 1.3B, 4 GPUs)";
  std::vector<std::pair<double, const Json*>> runs;
  for (const Json& row : rows)
    if (has(str(row, "id"), "pai_gpt1.3b_3d") && !has(str(row, "notes"), "inconsistent"))
      runs.push_back({num(row["measured"], "samples_per_s"), &row});
  std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (auto& [v, row] : runs) {
    std::vector<std::string> ignored;
    auto req = row_request(*row, ignored);
    if (!req) continue;
    pai.labels.push_back("tp" + std::to_string(req->space.tp[0]) + " pp" + std::to_string(req->space.pp[0]));
    pai.groups.push_back(*req);
  }
  if (pai.groups.size() > 1) set.orderings.push_back(std::move(pai));
  // Seed 001: Polaris, GPT 2.7B on 16 A100-40GB.
  for (const Json& row : rows) {
    if (!has(str(row, "id"), "seed001_polaris")) continue;
    auto model = row_model(row["model"], "seed001");
    auto sys = resolve_hardware("polaris", std::nullopt, std::nullopt,
                                [](const std::string& f) -> Expected<std::string> { return Diagnostic{f, "", "no files", ""}; });
    if (!model || !sys) continue;
    OrderingCase o;
    o.id = "seed 001 Polaris GPT-2.7B order";
    auto base = [&]() {
      PlanRequest r;
      r.model = *model;
      r.cluster = Cluster{*sys, 16};
      r.efficiency = default_efficiency(sys->gpu);
      r.top = 1;
      r.space.seq_len = 2048;
      r.space.precision = Precision::fp16;
      r.space.tp = {1};
      r.space.sequence_parallel = {false};
      r.space.offload = {Offload::none};
      r.space.checkpointing = {Checkpointing::none, Checkpointing::full};
      r.space.vpp = {1};
      return r;
    };
    auto add = [&](const std::string& label, std::vector<int> zero, std::vector<int> pp, std::vector<bool> flash) {
      PlanRequest r = base();
      r.space.zero = std::move(zero);
      r.space.pp = std::move(pp);
      r.space.flash = std::move(flash);
      o.labels.push_back(label);
      o.groups.push_back(r);
    };
    add("pp1 zero1 flash", {1}, {1}, {true});
    add("pp1 zero1 noflash", {1}, {1}, {false});
    add("pp1 zero2", {2}, {1}, {false, true});
    add("pp1 zero3", {3}, {1}, {false, true});
    add("pp>1", {0, 1}, {2, 4, 8, 16}, {false, true});
    set.orderings.push_back(std::move(o));
  }
}

}  // namespace
}  // namespace dsplan::cli
