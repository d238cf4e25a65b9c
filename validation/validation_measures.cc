// Which measured figures of a published row dsplan compares, and the predicted figure for
// each (docs/accuracy.md, "Mapping decisions", Measured keys). Keys carry their unit in
// their name, as the rows of shared/validation/published.json do:
//  - memory: nvidia-smi / NVML readings (peak_mem_MiB, gpu_mem_used_MB_nvml) -> `device`;
//    PAI-style peak_memory_MB ("allocator not stated") -> a PyTorch peak, `allocated`,
//    except under the Megatron trainer, whose report_memory line prints the allocated
//    memory after the first optimizer step: the model states (`states`); any other key
//    naming memory with a unit (..._MB/_MiB/_GB/_GiB) by the figure its name says:
//    "reserved" -> `reserved`, "nvml"/"smi"/"device" -> `device`, else `allocated`;
//  - one time figure per row, the first of: a step time (iteration_time_ms/_s,
//    step_time_ms/_s, Megatron's elapsed_time_per_iteration_ms); Megatron Table 1's
//    TFLOP/s under the paper's own formula (notes "F=96"); samples/s (HF Trainer,
//    DeepSpeed end-to-end and autotuner metric, PAI); tokens/s, global or per GPU;
//    TFLOP/s per GPU (or aggregate PFLOP/s) under the FLOP convention the row's text names:
//      "F=96" / "F=72": 96 (72) B s l h^2 (1 + s/6h + V/16lh) (Narayanan et al. 2021 eq. 3,
//        with and without the recompute pass),
//      "6N" / "6ND" / "6 x params": 6 N per token, N the row's params_B (else dsplan's count),
//      hardware FLOPs ("hardware FLOP", "HFU", recompute counted): dsplan's hw_tflops,
//      anything else, unstated included: model FLOPs as PaLM's MFU and Megatron's
//        num_floating_point_operations count them (3 passes, every s x s attention score,
//        not halved for the causal mask as dsplan's own tflops_per_gpu is);
//  - DeepSpeed autotuner micro-batches that produced a metric: the predicted largest
//    fitting micro-batch must be >= it (it ran) and <= 3x; "oom": true must be predicted.
#include <cmath>
#include <regex>

#include "estimator/params.h"
#include "validation/validation_rows.h"

namespace dsplan::validation {

using rows::at;
using rows::has;
using rows::num;
using rows::str;

namespace {

struct Key {
  const char* name;
  double scale;  // to seconds, samples/s, tokens/s or TFLOP/s
};

// The first key of `keys` that holds a positive number, or nullptr.
const Key* first_present(const Json& meas, std::initializer_list<Key> keys, double& value) {
  for (const Key& k : keys)
    if (num(meas, k.name, -1) > 0) {
      value = num(meas, k.name) * k.scale;
      return &k;
    }
  return nullptr;
}

// The FLOP convention the row's text names for its TFLOP/s (see the header comment).
void flop_convention(const Json& row, ValidationCase& c) {
  const std::string text = str(row, "notes") + " " + str(row, "source") + " " +
                           str(at(row, "parallel"), "other") + " " + rows::joined(at(row, "inferred"));
  const ModelSpec& m = c.request.model;
  const double s = c.request.space.run.seq_len, l = m.layers, h = m.hidden, V = static_cast<double>(m.vocab);
  static const std::regex six_n(
      R"((^|[^0-9.])6\s*(?:\*|x|\xC3\x97|\xC2\xB7)?\s*(?:N|P)D?\b|6\s*(?:\*|x|\xC3\x97)\s*param)");
  static const std::regex hardware(
      R"(hardware[ -]flop|\bHFU\b|(count\w*|includ\w*|incl\.?)\s+(the\s+)?recomput|recomput\w*\s+(flops\s+)?(is\s+|are\s+)?counted)",
      std::regex::icase);
  for (const double factor : {96.0, 72.0})
    if (has(text, "F=" + std::to_string(static_cast<int>(factor)))) {
      c.source_flops_per_sample = factor * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
      c.flops_note = "source FLOP formula F=" + std::to_string(static_cast<int>(factor));
      return;
    }
  if (std::regex_search(text, six_n)) {
    const double params_B = num(at(row, "model"), "params_B");
    const double n = params_B > 0 ? params_B * 1e9 : static_cast<double>(total_params(m));
    c.source_flops_per_sample = 6 * n * s;
    c.flops_note = params_B > 0 ? "source FLOPs 6N per token (N = params_B)"
                                : "source FLOPs 6N per token (N = dsplan's count)";
  } else if (std::regex_search(text, hardware)) {
    c.flops = FlopConvention::hardware;
    c.flops_note = "hardware FLOPs (recompute counted)";
  } else {
    // PaLM's MFU count (Chowdhery et al. 2022, App. B: 6N + 12 L H Q T a token) as
    // Megatron's num_floating_point_operations writes it: the linears and the logits over 3
    // passes, and every s x s attention score, not halved for the causal mask (dsplan's own
    // model FLOPs halve it: they would read 4% low at 8K tokens on a 405B, 30% at 128K).
    const double aw = m.heads * 0.5 * (qk_head_dim_of(m) + v_head_dim_of(m));
    const double logits = m.vocab_logits ? 6 * h * V : 0;
    c.source_flops_per_sample = s * (6 * matmul_params_per_layer(m) * l + logits + 12 * l * s * aw);
    c.flops_note =
        "model FLOPs as PaLM's MFU and Megatron count them (convention not named: 3 passes, "
        "every attention score)";
  }
}

}  // namespace

void rows::add_measurements(const Json& meas, const Json& row, ValidationCase& c) {
  auto add = [&](MeasureKind k, const char* key, double scale, MemoryFigure fig = MemoryFigure::device) {
    const double v = num(meas, key, -1);
    if (v > 0) c.measured.push_back({k, v * scale, fig, key});
  };
  add(MeasureKind::memory, "peak_mem_MiB", 1, MemoryFigure::device);
  add(MeasureKind::memory, "gpu_mem_used_MB_nvml", 1, MemoryFigure::device);
  if (num(meas, "peak_memory_MB", -1) > 0) {
    const bool megatron_log = c.request.space.run.framework == Framework::megatron;
    add(MeasureKind::memory, "peak_memory_MB", 1,
        megatron_log ? MemoryFigure::states : MemoryFigure::allocated);
    c.assumptions.push_back(megatron_log ? "memory figure: Megatron report_memory's allocated = model states"
                                         : "memory figure: PyTorch peak allocated");
  }
  // Other memory keys, by the figure their name says (MB and GB as PyTorch prints them,
  // MiB and GiB): PyTorch's max_memory_allocated / max_memory_reserved, an nvidia-smi or
  // NVML reading; a plain peak_memory_GB is a PyTorch peak, as peak_memory_MB is.
  static const std::regex mem_key(R"(^(.*(mem|reserved|allocated).*)_(MB|MiB|GB|GiB)$)", std::regex::icase);
  for (const auto& [key, value] : meas.items()) {
    std::smatch mm;
    if (key == "peak_mem_MiB" || key == "gpu_mem_used_MB_nvml" || key == "peak_memory_MB" ||
        !std::regex_match(key, mm, mem_key) || !value.is_number() || value.get<double>() <= 0)
      continue;
    const std::string what = mm[1].str(), unit = mm[3].str();
    const double scale = has(unit, "G") ? 1024 : 1;
    const MemoryFigure fig = has(what, "reserved") ? MemoryFigure::reserved
                             : has(what, "nvml") || has(what, "smi") || has(what, "device")
                                 ? MemoryFigure::device
                                 : MemoryFigure::allocated;
    c.measured.push_back({MeasureKind::memory, value.get<double>() * scale, fig, key});
  }
  const double gpus = c.request.cluster.num_gpus;
  double v = 0;
  if (const Key* k = first_present(meas,
                                   {{"iteration_time_ms", 1e-3},
                                    {"iteration_time_s", 1},
                                    {"step_time_ms", 1e-3},
                                    {"step_time_s", 1},
                                    {"elapsed_time_per_iteration_ms", 1e-3}},
                                   v)) {
    c.measured.push_back({MeasureKind::step_time, v, MemoryFigure::device, k->name});
  } else if (num(meas, "tflops_per_gpu", -1) > 0 && has(str(row, "notes"), "F=96")) {
    add(MeasureKind::tflops_per_gpu, "tflops_per_gpu", 1);
    flop_convention(row, c);
  } else if (num(meas, "samples_per_s", -1) > 0 || num(meas, "samples_per_s_end_to_end", -1) > 0 ||
             num(meas, "ds_autotuner_metric_samples_per_s", -1) > 0) {
    add(MeasureKind::samples_per_s, "samples_per_s", 1);
    add(MeasureKind::samples_per_s, "samples_per_s_end_to_end", 1);
    add(MeasureKind::samples_per_s, "ds_autotuner_metric_samples_per_s", 1);
  } else if (const Key* t =
                 first_present(meas, {{"samples_per_sec", 1}, {"throughput_samples_per_s", 1}}, v)) {
    c.measured.push_back({MeasureKind::samples_per_s, v, MemoryFigure::device, t->name});
  } else if (const Key* t = first_present(meas, {{"tokens_per_s", 1}, {"tokens_per_sec", 1}}, v)) {
    c.measured.push_back({MeasureKind::tokens_per_s, v, MemoryFigure::device, t->name});
  } else if (const Key* t = first_present(
                 meas,
                 {{"tokens_per_s_per_gpu", 1}, {"tokens_per_sec_per_gpu", 1}, {"tokens_per_gpu_per_s", 1}},
                 v)) {
    c.measured.push_back({MeasureKind::tokens_per_s, v, MemoryFigure::device, t->name, true});
  } else if (const Key* t =
                 first_present(meas, {{"tflops_per_gpu", 1}, {"aggregate_pflops", 1000 / gpus}}, v)) {
    c.measured.push_back({MeasureKind::tflops_per_gpu, v, MemoryFigure::device, t->name});
    flop_convention(row, c);
  }
  if (at(meas, "oom").is_boolean() && at(meas, "oom").get<bool>())
    c.measured.push_back({MeasureKind::oom, 1, MemoryFigure::device, "oom"});
  if (num(meas, "ds_autotuner_metric_samples_per_s", 0) > 0 && num(at(row, "parallel"), "micro_batch") > 0)
    c.measured.push_back({MeasureKind::max_micro_batch, num(at(row, "parallel"), "micro_batch"),
                          MemoryFigure::device, "micro_batch the autotuner ran"});
}

const char* memory_figure_name(MemoryFigure f) {
  switch (f) {
    case MemoryFigure::allocated:
      return "allocated";
    case MemoryFigure::reserved:
      return "reserved";
    case MemoryFigure::device:
      return "device";
    case MemoryFigure::states:
      return "states";
  }
  return "";
}

double predicted_memory(const MemoryBreakdown& m, MemoryFigure f) {
  switch (f) {
    case MemoryFigure::allocated:
      return in_MiB(m.allocated);
    case MemoryFigure::reserved:
      return in_MiB(m.reserved);
    case MemoryFigure::device:
      return in_MiB(m.device);
    case MemoryFigure::states:
      return in_MiB(m.params + m.grads + m.optimizer);
  }
  return 0;
}

double predicted_throughput(const ValidationCase& c, const Measurement& m, const Evaluation& e) {
  const double gpus = c.request.cluster.num_gpus;
  switch (m.kind) {
    case MeasureKind::step_time:
      return e.time.step.v;
    case MeasureKind::samples_per_s:
      return e.samples_per_s;
    case MeasureKind::tokens_per_s:
      return m.per_gpu ? e.tokens_per_s / gpus : e.tokens_per_s;
    case MeasureKind::tflops_per_gpu:
      switch (c.flops) {
        case FlopConvention::hardware:
          return e.hw_tflops_per_gpu;
        case FlopConvention::source_formula:
          return c.source_flops_per_sample.value_or(0) * static_cast<double>(e.cfg.global_batch()) /
                 e.time.step.v / gpus / 1e12;
      }
      return 0;
    default:
      return 0;
  }
}

}  // namespace dsplan::validation
