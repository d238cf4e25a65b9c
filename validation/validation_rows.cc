// Reading published.json rows into validation cases: the rows that are orderings
// (validation_orderings.cc) or nccl-tests collectives (CollectiveModel busbw for the stated
// GPUs, size and collective), the pinned request of every other row (validation_map.cc,
// validation_hardware.cc) and the figures it is compared on (validation_measures.cc: the
// measured keys, their units and FLOP conventions; decisions in docs/accuracy.md). A row
// that cannot be mapped is skipped with a reason; a malformed one never stops the others.
//  - PAI's peak_memory_MB ("allocator not stated") under the Megatron trainer is its log
//    line `report_memory`, the current memory_allocated() after the first optimizer step:
//    model states. The tensor-parallel rows confirm it (TP=4: 5673 MiB measured =
//    18 B/param x 0.33e9, below any peak that holds a micro-batch's activations).
#include "validation/validation_rows.h"

#include <exception>
#include <regex>
#include <set>

#include "core/names.h"

namespace dsplan::validation {
namespace {

using rows::at;
using rows::has;
using rows::inum;
using rows::num;
using rows::str;

Diagnostic skip(const std::string& file, const std::string& id, const std::string& why) {
  return Diagnostic{file, "/" + (id.empty() ? std::string("?") : id), why, ""};
}

std::optional<CollectiveCase> collective_case(const Json& row, std::string& why) {
  const Json& meas = at(row, "measured");
  CollectiveCase c;
  c.id = printable(str(row, "id"));
  const std::string coll = str(meas, "collective");
  if (coll != "all_reduce") return why = "collective \"" + coll + "\" not modelled for nccl rows", std::nullopt;
  c.bytes = num(meas, "message_bytes");
  c.measured_GBps = num(meas, "busbw_GBps");
  c.measured_algo = str(meas, "algorithm");
  c.ranks = inum(at(row, "hardware"), "num_gpus");
  if (c.bytes <= 0 || c.measured_GBps <= 0 || c.ranks < 2) return why = "needs message_bytes, busbw_GBps and >= 2 GPUs", std::nullopt;
  const std::string g = str(at(row, "hardware"), "gpu");
  auto s = rows::row_system(row, c.assumptions);
  if (!s) return why = s.errors().front().message, std::nullopt;
  c.node = *s;
  // NVLS (NVLink SHARP) is used only when the row says it was on.
  c.node.nvls = c.node.nvls && (has(c.measured_algo, "NVLS") || has(g, "NVLS on"));
  if (c.ranks > c.node.gpus_per_node) return why = "multi-node nccl rows not mapped", std::nullopt;
  c.assumptions.push_back(c.node.nvls ? "NVLS on" : "without NVLS");
  return c;
}

void load_row(const Json& row, const std::string& file, ValidationSet& set) {
  const std::string id = str(row, "id");
  const Json& meas = at(row, "measured");
  if (!meas.is_object()) return set.skipped.push_back(skip(file, id, "row has no \"measured\" object"));
  if (at(meas, "ranking_best_first").is_array()) return;  // an ordering (validation_orderings.cc)
  if (at(meas, "space_best").is_object())
    return set.skipped.push_back(skip(file, id, "per-stage autotuner results of the DeepSpeedExamples BERT-base "
                                                "README without a sequence length: the ds_autotune_space_BERT-base "
                                                "rows carry the same runs with their settings"));
  if (at(meas, "collective").is_string()) {
    std::string why;
    if (auto c = collective_case(row, why)) set.collectives.push_back(std::move(*c));
    else set.skipped.push_back(skip(file, id, why));
    return;
  }
  if (num(meas, "ds_autotuner_metric_samples_per_s", -1) == 0)
    return set.skipped.push_back(skip(file, id, "autotuner stage produced no metric (failed, OOM or skipped)"));
  ValidationCase c;
  // Printed back to the terminal: control and text-direction characters escaped.
  c.id = printable(id);
  c.source = printable(str(row, "source"));
  c.inconsistent = has(str(row, "notes"), "inconsistent");
  const std::string gpu = str(at(row, "hardware"), "gpu");
  c.gpu_stated = !gpu.empty() && !has(gpu, "not stated") && !has(gpu, "inferred");
  auto req = rows::row_request(row, c.assumptions);
  if (!req) {
    for (auto d : req.errors()) set.skipped.push_back(skip(file, id, d.json_path + ": " + d.message));
    return;
  }
  c.request = *req;
  // Runs of one workload competing for the same GPUs: throughputs compare across batch
  // sizes (the autotuner's micro-batches), step times only at the same global batch.
  c.group = str(row, "source") + " | " + str(at(row, "model"), "name") + " | seq " +
            std::to_string(c.request.space.run.seq_len) + " | " + std::to_string(c.request.cluster.num_gpus) +
            " GPUs";
  c.step_group =
      c.group + " | global batch " + std::to_string(rows::inum(at(row, "parallel"), "global_batch", 0));
  rows::add_measurements(meas, row, c);
  if (c.measured.empty())
    return set.skipped.push_back(skip(
        file, id,
        "no measured quantity dsplan predicts (numbers under iteration_time_ms, step_time_s, samples_per_s, "
        "tokens_per_s, tokens_per_s_per_gpu, tflops_per_gpu, aggregate_pflops, peak_memory_MB, "
        "peak_mem_MiB or oom: docs/accuracy.md, \"Mapping decisions\")"));
  set.cases.push_back(std::move(c));
}

}  // namespace

// dsplan's reference workload (examples/train_gpt.py) fuses Q, K and V into one linear and
// a gated MLP's gate and up into another, unless the row names its --separate-qkv or
// --separate-gate-up flags (passed by confirm when the plan keeps them apart, as the
// llama3.2-1b preset does). torchtitan's Llama (models/llama/model.py) keeps wq, wk, wv and
// w1, w3 apart. Other rows keep the layout of their model: a preset's (Hugging Face's), or
// the fused Megatron layout of a shape-only row.
void rows::projection_layout(const Json& row, ModelSpec& spec, std::vector<std::string>& notes) {
  const std::string other = rows::str(rows::at(row, "parallel"), "other");
  const bool workload = rows::has(other, "reference workload");
  if (!workload && !rows::has(other, "torchtitan")) return;
  const bool qkv = workload && !rows::has(other, "--separate-qkv");
  const bool gate_up = workload && !rows::has(other, "--separate-gate-up");
  if (spec.fused_qkv == qkv && (spec.fused_gate_up == gate_up || !spec.gated_mlp)) return;
  spec.fused_qkv = qkv;
  spec.fused_gate_up = gate_up;
  if (!workload)
    notes.push_back("separate Q, K, V and gate, up linears (torchtitan's Llama)");
  else if (qkv && gate_up)
    notes.push_back("fused QKV and gate/up linears (dsplan's reference workload)");
  else
    notes.push_back(std::string(qkv ? "fused QKV" : "separate Q, K, V") + " and " +
                    (gate_up ? "fused gate/up" : "separate gate, up") +
                    " linears (dsplan's reference workload)");
}

NormKernel rows::norm_kernel(const Json& row, const ModelSpec& spec, std::vector<std::string>& notes) {
  const std::string other = rows::str(rows::at(row, "parallel"), "other");
  if (spec.norm != NormKind::rmsnorm || !rows::has(other, "reference workload")) return NormKernel::auto_;
  if (rows::has(other, "--eager-rmsnorm")) return NormKernel::eager;
  notes.push_back(
      "torch.nn.RMSNorm (PyTorch >= 2.9; dsplan's reference workload): one fused kernel each way "
      "where its input has its weight's dtype, the fp32 fallback chain elsewhere");
  return NormKernel::torch;
}

Expected<ValidationSet> load_validation(const Json& doc, const std::string& file) {
  // A list of rows, or an object holding it under "rows" (its other keys describe the file).
  const Json& rows = doc.is_object() && doc.contains("rows") ? doc["rows"] : doc;
  if (!rows.is_array())
    return Diagnostic{
        file, doc.is_object() && doc.contains("rows") ? "/rows" : "",
        "expected a JSON list of measurement rows",
        "the format of shared/validation/published.json: [ {\"id\": ..., \"model\": ..., "
        "\"hardware\": ..., \"parallel\": ..., \"measured\": ...}, ... ], or {\"rows\": [...]}"};
  ValidationSet set;
  // Every row with its keys under the format's names (validation_keys.cc).
  Json canon = Json::array();
  for (const Json& row : rows) canon.push_back(rows::canonical_row(row));
  std::set<std::string> ids;
  for (std::size_t i = 0; i < canon.size(); ++i) {
    const Json& row = canon[i];
    if (!row.is_object()) {
      set.skipped.push_back(skip(file, "[" + std::to_string(i) + "]", "row is not a JSON object"));
      continue;
    }
    const std::string id = str(row, "id");
    if (auto bad = rows::field_problem(row)) {
      set.skipped.push_back(skip(file, id.empty() ? "[" + std::to_string(i) + "]" : id,
                                 bad->json_path + ": " + bad->message + " (" + bad->hint + ")"));
      continue;
    }
    if (!ids.insert(id).second) {
      set.skipped.push_back(
          skip(file, id, "id given twice in this file: only the first row of it is compared"));
      continue;
    }
    try {
      load_row(row, file, set);
    } catch (const std::exception& e) {  // a malformed row never stops the others
      set.skipped.push_back(skip(file, str(row, "id"), std::string("malformed row: ") + e.what()));
    }
  }
  try {
    add_orderings(canon, set);
  } catch (const std::exception& e) {
    set.skipped.push_back(skip(file, "orderings", std::string("malformed ordering rows: ") + e.what()));
  }
  return set;
}

// Llama's blocks use RMSNorm and SwiGLU (Touvron et al. 2023, "LLaMA", section 2.2), kept
// by Llama 2 and 3. Outside Megatron the norm runs as an eager chain of ops (docs/model.md
// §4, "Elementwise"), so a Llama row priced with LayerNorm's one kernel reads optimistic.
void rows::block_details(const Json& model, ModelSpec& spec, std::vector<std::string>& notes) {
  const std::string position = rows::str(model, "position");
  if (rows::has(position, "rotary") || rows::has(position, "rope")) spec.position = PositionKind::rotary;
  if (rows::has(position, "alibi")) spec.position = PositionKind::alibi;  // no position table
  const std::string norm = rows::str(model, "norm");
  if (rows::has(norm, "rms")) {
    spec.norm = NormKind::rmsnorm;
  } else if (rows::has(norm, "layer")) {
    spec.norm = NormKind::layernorm;
  } else if (rows::has(rows::str(model, "name"), "llama")) {
    spec.norm = NormKind::rmsnorm;
    notes.push_back("Llama: RMSNorm, and SiLU in the gated MLP");
  }
  // A Llama's MLP is gated (SwiGLU: gate, up and down, each h x ffn_hidden) unless the row
  // says otherwise. Until session 30 a Llama row without "gated_mlp" was priced with two
  // of its three MLP matrices (docs/accuracy.md, "Session 30").
  if (rows::has(rows::str(model, "name"), "llama") && !rows::at(model, "gated_mlp").is_boolean())
    spec.gated_mlp = true;
  if (spec.norm == NormKind::rmsnorm && spec.gated_mlp) spec.activation = Activation::silu;
}

void rows::precision(const std::string& text, const std::string& other, TrainConfig& run,
                     std::vector<std::string>& notes) {
  // NVFP4 ("nvfp4", Megatron-Bridge's NVFP4 runs) takes the FP8 linears' place.
  const bool fp4 = has(text, "nvfp4");
  run.fp8 = has(text, "fp8") || fp4;  // also "MXFP8" and "FP8-MX"
  const bool current = has(other, "current scaling") || has(other, "tensorwise");
  // MXFP8 (Megatron-Bridge's "MXFP8" / "FP8-MX" runs) named in the precision or the settings.
  const bool mx = has(text, "mxfp8") || has(text, "fp8-mx") || has(other, "mxfp8");
  if (run.fp8 && current) run.fp8_recipe = Fp8Recipe::tensorwise;
  if (run.fp8 && mx) run.fp8_recipe = Fp8Recipe::mxfp8;
  if (fp4) run.fp8_recipe = Fp8Recipe::nvfp4;
  // Spelled out ("bfloat16", "float16") or as PyTorch AMP's default: "mixed", "amp" or "half"
  // without a dtype is autocast's float16. Anything else (fp32, tf32, unstated) is fp32.
  static const std::regex amp(R"(\bamp\b|mixed|half)", std::regex::icase);
  const bool bf16 = has(text, "bf16") || has(text, "bfloat16") || run.fp8;
  const bool fp16 = has(text, "fp16") || has(text, "float16") || std::regex_search(text, amp);
  run.precision = bf16 ? Precision::bf16 : fp16 ? Precision::fp16 : Precision::fp32;
  if (!bf16 && !has(text, "fp16") && !has(text, "float16") && fp16)
    notes.push_back("precision \"" + text + "\": PyTorch AMP's default float16");
  // fp32 whose matmuls the row says ran on TF32 tensor cores (allow_tf32, NGC's override).
  run.tf32 = run.precision == Precision::fp32 && has(text, "tf32");
  if (run.tf32) notes.push_back("tf32: fp32 with every matmul on TF32 tensor cores");
  // apex AMP's opt_level O2: the model itself cast to 16 bits, fp32 master weights in the
  // optimizer (a DDP row then runs no autocast; TrainConfig::ddp_amp_o2).
  static const std::regex o2(R"(opt_level\W{0,3}O2\b|\bapex\W+AMP\W+O2\b)", std::regex::icase);
  const bool half_model = has(other, "model.half()") && has(other, "master");  // O2 by hand
  run.ddp_amp_o2 =
      run.precision != Precision::fp32 && (std::regex_search(text + " " + other, o2) || half_model);
  if (run.ddp_amp_o2)
    notes.push_back("apex AMP O2: a 16-bit model with fp32 master weights in the optimizer (no autocast)");
  // A pure 16-bit model: 16-bit weights, gradients and optimizer states, no fp32 master.
  const std::string both = text + " " + other;
  run.pure16 = run.precision != Precision::fp32 && !run.ddp_amp_o2 &&
               (has(both, "no fp32 master") || has(both, "pure bf16") || has(both, "pure fp16") ||
                has(both, "bf16-true"));
  if (run.pure16)
    notes.push_back(
        "pure 16-bit: weights, gradients and optimizer states in 16 bits, no fp32 master (DDP, FSDP)");
  static const std::regex fp32(R"(fp32|float32|tf32|single|full)", std::regex::icase);
  if (!bf16 && !fp16 && !text.empty() && !std::regex_search(text, fp32))
    notes.push_back("precision \"" + text +
                    "\" names no dtype dsplan knows (bf16, fp16, fp8, nvfp4, mixed, fp32, "
                    "tf32): priced as fp32");
  if (fp4)
    notes.push_back(
        "nvfp4: bf16 with Transformer Engine NVFP4 linears (E4M3 scales per 16 elements, "
        "Hadamard-transformed weight-gradient operands; NVFP4 parameter gather with the "
        "distributed optimizer, else weights quantized once per step)");
  else if (run.fp8)
    notes.push_back(std::string("fp8: bf16 with Transformer Engine FP8 linears (") +
                    (mx        ? "MXFP8 block scaling"
                     : current ? "per-tensor current scaling"
                               : "delayed scaling") +
                    "; FP8 weights and parameter gather with the distributed optimizer, else weights cast "
                    "once per step)");
}

}  // namespace dsplan::validation
