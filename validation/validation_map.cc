// Which dsplan model, hardware and framework stand for a published row, decided from the
// row's own text (docs/accuracy.md, "Mapping decisions"):
//  - Model: a preset when the model name names one (DistilBERT, BERT-base cased/uncased,
//    BERT-large, GPT-2 sizes: the Hugging Face models the sources ran; Llama 3.2 1B), else a
//    Megatron-style GPT decoder of the row's shape (vocabulary padded to 128 x TP); an MPT
//    name (llm-foundry) keeps the vocabulary unpadded and has no dropout.
//    Classification fine-tuning (run_glue, "SequenceClassification") has no vocabulary
//    logits; pre-training and causal-LM runs do.
//  - Hardware: validation_hardware.cc (GPU family, memory, form factor, node size).
//  - Framework: Megatron-LM, Megatron-Core and NeMo sources and PAI's Megatron runs =
//    megatron; Hugging Face Trainer and "torch DDP, no DeepSpeed" = ddp (torch autocast for
//    fp16); PyTorch FSDP named in parallel.other = fsdp; otherwise deepspeed. fairscale OSS /
//    OSS+ShardedDDP = ZeRO stage 1 / 2 (closest supported).
//  - CUDA context: 0.5 GiB (CUDA >= 11.7 lazy loading), or 1343 MB where the row's text shows
//    an older eager-loading stack: NGC PyTorch 20.xx/21.xx (DLPerf: 20.12 = CUDA 11.1), a
//    context its notes measured (HF model_memory_anatomy), transformers 4.12 (CUDA <= 11.3).
//  - Optimizer: HF Trainer's per-tensor AdamW wherever the Trainer drives training (also with
//    DeepSpeed configs without an "optimizer" block: autotuning/hf); --use-bnb-optimizer = adam_8bit.
//  - Loss scale: DeepSpeed autotuner metric rows in fp16 from the 2021 examples time fp16
//    overflow steps (TrainConfig::overflow_step): no optimizer update, no parameter all-gather.
//  - Training loop: llm-foundry/Composer rows evaluate two train metrics over the logits
//    per micro-batch (TrainConfig::logit_metrics = 2).
//  - Checkpointing: "selective" at layer, block or op level (torchtitan, IBM FMS) = block
//    recompute of half the layers; plain "selective" = Megatron's attention-core recompute.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "core/json/model_json.h"
#include "core/names.h"
#include "estimator/time/efficiency_defaults.h"
#include "hwdb/hwdb.h"
#include "validation/validation_rows.h"

namespace dsplan::validation::rows {

bool has(const std::string& s, const std::string& sub) {
  const std::string a = ascii_lower(s), b = ascii_lower(sub);
  return a.find(b) != std::string::npos;
}

const Json& at(const Json& j, const char* key) {
  static const Json null_json;
  if (!j.is_object()) return null_json;
  auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

double num(const Json& j, const char* key, double fallback) {
  const Json& v = at(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}

int inum(const Json& j, const char* key, int fallback) {
  return static_cast<int>(std::clamp(num(j, key, fallback), -1e9, 1e9));
}

std::string str(const Json& j, const char* key) {
  const Json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

std::string joined(const Json& j) {
  std::string out;
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array())
    for (const Json& e : j) out += joined(e) + "; ";
  return out;
}

Expected<SystemSpec> system_named(const std::string& name) {
  return resolve_hardware(name, std::nullopt, std::nullopt,
                          [](const std::string& f) -> Expected<std::string> {
                            return Diagnostic{f, "", "validation reads no hardware files", ""};
                          });
}

namespace {

// Text that says what task the model was trained on.
std::string task_text(const Json& row) {
  return str(at(row, "model"), "name") + " " + str(at(row, "parallel"), "other") + " " + str(row, "source");
}

Expected<ModelSpec> preset_for(const std::string& name, const std::string& task, std::vector<std::string>& notes) {
  std::optional<std::string> p;
  if (has(name, "distilbert")) p = "distilbert";
  else if (has(name, "bert-large")) p = "bert-large";
  else if (has(name, "bert-base") || has(name, "bert base"))
    p = has(task, "bert-base-cased") ? "bert-base-cased" : "bert-base";
  else if (has(name, "gpt2-medium")) p = "gpt2-medium";
  else if (has(name, "gpt2-large")) p = "gpt2-large";
  else if (has(name, "gpt2-xl")) p = "gpt2-xl";
  else if (has(name, "gpt2")) p = "gpt2";  // after its larger siblings
  else if (has(name, "llama3.2-1b")) p = "llama3.2-1b";
  else if (has(name, "bloom-176b")) p = "bloom-176b";
  if (!p) return Diagnostic{"", "", "no preset", ""};
  notes.push_back("model preset " + *p);
  return model_preset(*p);
}

Expected<ModelSpec> row_model(const Json& row, std::vector<std::string>& notes) {
  const Json& m = at(row, "model");
  if (!m.is_object()) return Diagnostic{"", "/model", "row has no model object", ""};
  const std::string n = str(m, "name"), task = task_text(row);
  if (auto bad = unsupported_architecture(m)) return *bad;
  const int layers = inum(m, "layers"), hidden = inum(m, "hidden");
  int heads = inum(m, "heads");
  ModelSpec spec;
  auto preset = preset_for(n, task, notes);
  // A row that names its model but gives no shape: the dsplan preset of that name, under any
  // spelling or its Hugging Face id ("Llama-2-7b", "meta-llama/Llama-2-7b-hf").
  if (!preset && layers <= 0 && hidden <= 0)
    if (auto named = preset_for_name(n)) {
      preset = model_preset(*named);
      if (preset) notes.push_back("no shape given: model preset " + *named + " for \"" + n + "\"");
    }
  // A row naming a preset outside the Llama family (Mistral, Qwen, OPT, Falcon, ...) with the
  // preset's shape: the preset, which knows the architecture the row's fields leave out.
  // Llama rows keep the shape-only mapping with Llama's defaults (validation_model.cc).
  if (!preset && layers > 0 && !has(n, "llama"))
    if (auto named = preset_for_name(n)) {
      auto p = model_preset(*named);
      if (p && p->layers == layers && p->hidden == hidden && (heads <= 0 || p->heads == heads)) {
        preset = std::move(p);
        notes.push_back("model preset " + *named + " (its name and shape)");
      }
    }
  if (preset) {
    spec = *preset;
    if ((layers > 0 && layers != spec.layers) || (hidden > 0 && hidden != spec.hidden) ||
        (heads > 0 && heads != spec.heads))
      return Diagnostic{"", "/model", "row's shape differs from the " + spec.name + " preset", ""};
  } else {
    // Dimensions within the bound model files have (2^20).
    constexpr int kMaxDim = 1 << 20;
    if (heads <= 0 && hidden > 0 && hidden <= kMaxDim && !at(m, "heads").is_number())
      heads = inferred_heads(hidden, notes);
    if (layers <= 0 || hidden <= 0 || heads <= 0 || hidden % heads != 0 || layers > kMaxDim ||
        hidden > kMaxDim || heads > kMaxDim)
      return Diagnostic{"", "/model", "row has no usable model shape (layers, hidden, heads)", ""};
    spec.name = n.empty() ? "gpt" : n;
    spec.layers = layers;
    spec.hidden = hidden;
    spec.heads = heads;
    spec.kv_heads = heads;
    spec.head_dim = hidden / heads;
    spec.ffn_hidden = 4 * hidden;
    spec.vocab = 50257;
    spec.vocab_pad_multiple = 128;
    notes.push_back("Megatron GPT decoder of the row's shape, vocab padded to 128 x TP");
    if (num(m, "vocab") <= 0 && !has(n, "llama")) notes.push_back("vocab not given: GPT-2 BPE 50257");
    // Optional architecture keys (held-out rows of Llama/Nemotron-style models): grouped
    // KV heads, FFN width, gated MLP, rotary positions, untied embeddings, no biases, no
    // dropout.
    if (num(m, "kv_heads") > 0) spec.kv_heads = inum(m, "kv_heads");
    if (num(m, "ffn_hidden") > 0) spec.ffn_hidden = inum(m, "ffn_hidden");
    if (at(m, "gated_mlp").is_boolean()) spec.gated_mlp = at(m, "gated_mlp").get<bool>();
    if (at(m, "tied_embeddings").is_boolean()) spec.tied_embeddings = at(m, "tied_embeddings").get<bool>();
    if (at(m, "linear_bias").is_boolean()) spec.linear_bias = at(m, "linear_bias").get<bool>();
    if (at(m, "dropout").is_boolean()) {  // the recipe's dropout probabilities, > 0 or all 0
      spec.dropout = at(m, "dropout").get<bool>();
      if (!spec.dropout) notes.push_back("no dropout (the row's recipe sets the dropout probabilities to 0)");
    }
    block_details(m, spec, notes);
    if (auto bad = moe_details(m, spec, notes)) return *bad;
    family_defaults(m, spec, notes);
    if (spec.kv_heads < 1 || spec.heads % spec.kv_heads != 0)
      return Diagnostic{"", "/model/kv_heads", "kv_heads must divide heads", ""};
  }
  if (has(n, "MPT")) {
    // MPTConfig defaults: attn/resid/emb_pdrop 0.0; llm-foundry's yamls keep the vocabulary
    // at 50368 (a multiple of 64), unpadded; learned positions and biases as a GPT.
    spec.dropout = false;
    spec.vocab_pad_multiple = 1;
    notes.push_back("MPT: no dropout (MPTConfig pdrop defaults 0.0), vocabulary not padded");
  }
  projection_layout(row, spec, notes);
  if (num(m, "vocab") > 1e9) return Diagnostic{"", "/model/vocab", "vocab must be at most 1e9", ""};
  if (num(m, "vocab") > 0) spec.vocab = static_cast<std::int64_t>(num(m, "vocab"));
  spec.max_positions = std::max(spec.max_positions, inum(m, "seq_len", 0));
  if (has(task, "run_glue") || has(task, "SequenceClassification")) {
    spec.vocab_logits = false;
    notes.push_back("sequence classification: no vocabulary logits");
  }
  if (auto bad = settle_parameters(m, !preset, spec, notes)) return *bad;
  return spec;
}

// fairscale's OSS named as its own upper-case word: a case-insensitive substring would also
// find "loss" or "cross-node".
bool names_oss(const std::string& text) {
  static const std::regex oss(R"((^|[^A-Za-z])OSS([^A-Za-z]|$))");
  return std::regex_search(text, oss);
}

Framework row_framework(const Json& row, std::vector<std::string>& notes) {
  const std::string src = str(row, "source"), other = str(at(row, "parallel"), "other"),
                    name = str(at(row, "model"), "name");
  if (has(other, "no DeepSpeed") || has(other, "fp32 DDP") || has(src, "huggingface/transformers")) return Framework::ddp;
  if (has(src, "Megatron-LM") || has(src, "Narayanan") || has(src, "Megatron-Core") || has(src, "NeMo"))
    return Framework::megatron;
  // The engine named in parallel.other: Megatron-DeepSpeed is DeepSpeed's engine.
  if (!has(other, "Megatron-DeepSpeed") && !has(src, "Megatron-DeepSpeed") &&
      (has(other, "Megatron-LM") || has(other, "Megatron-Core") || has(other, "NeMo")))
    return Framework::megatron;
  if (has(other, "FSDP")) return Framework::fsdp;
  // Plain PyTorch DistributedDataParallel (not fairscale's ShardedDDP, which is ZeRO-2-like).
  static const std::regex ddp(R"((^|[^A-Za-z])DDP\b|DistributedDataParallel)");
  if (std::regex_search(other, ddp) && !has(other, "ShardedDDP") && !has(other, "ZeRO") &&
      !has(other, "DeepSpeed"))
    return Framework::ddp;
  if (has(other, "ZeRO") || names_oss(other) || has(src, "DeepSpeed")) return Framework::deepspeed;
  if (has(name, "(HF)")) return Framework::ddp;
  if (has(name, "Megatron")) {
    notes.push_back("no engine named: the Megatron model's own trainer (megatron)");
    return Framework::megatron;
  }
  return Framework::deepspeed;
}

// The Megatron-LM release (YYYYMM) the row's text dates, and why; nothing for a current one:
// "Megatron-LM of YYYY-MM", Megatron-LM v1.0 (2020-04), an NGC PyTorch 20.xx container (20.12
// = 2020-12), else the year of "<author> et al. <year>" taken as mid-year (Narayanan et al.
// 2021 ran April 2021 code, Korthikanti et al. 2022 the 2022 code).
std::optional<std::pair<int, std::string>> megatron_release(const Json& row) {
  const std::string text = str(row, "source") + " " + str(at(row, "parallel"), "other");
  static const std::regex dated(R"(Megatron-LM of (20\d\d)-(\d\d))");
  static const std::regex ngc(R"((?:NGC PyTorch |pytorch:)(\d\d)\.(\d\d))", std::regex::icase);
  static const std::regex paper(R"(et al\.,? (20\d\d))");
  std::smatch mm;
  if (std::regex_search(text, mm, dated))
    return std::make_pair(std::stoi(mm[1]) * 100 + std::stoi(mm[2]), std::string("dated in the row"));
  if (has(text, "Megatron-LM v1.0")) return std::make_pair(202004, std::string("Megatron-LM v1.0"));
  if (std::regex_search(text, mm, ngc))
    return std::make_pair(200000 + std::stoi(mm[1].str()) * 100 + std::stoi(mm[2].str()),
                          "NGC PyTorch " + mm[1].str() + "." + mm[2].str() + " container");
  if (std::regex_search(text, mm, paper))
    return std::make_pair(std::stoi(mm[1].str()) * 100 + 6, "a paper of " + mm[1].str());
  return std::nullopt;
}

// The eager-loading (pre-CUDA-11.7) stacks the row's text names, or nothing.
std::optional<std::string> eager_stack(const Json& row) {
  const std::string text = str(row, "source") + " " + str(at(row, "parallel"), "other"), notes = str(row, "notes");
  if (has(notes, "1343 MB")) return "the row's notes measured a ~1343 MB CUDA context";
  if (has(text, "NGC PyTorch 20.") || has(text, "NGC PyTorch 21."))
    return "NGC PyTorch 20.xx/21.xx container (CUDA < 11.7, eager module loading)";
  if (has(text, "transformers 4.12")) return "transformers 4.12 (2021: PyTorch <= 1.10, CUDA <= 11.3, eager loading)";
  return std::nullopt;
}

Checkpointing row_ckpt(const Json& p, std::vector<std::string>& notes) {
  const std::string r = str(p, "recompute");
  // "Selective" outside Megatron means something else: torchtitan's selective layer AC
  // (every other block) and op AC (every other matmul plus the elementwise ops), IBM FMS's
  // every-n-th-block AC. Each recomputes about half a forward: block recompute of half the
  // layers is the closest dsplan layout (Megatron's selective, the attention core only,
  // is nearly free with flash attention).
  if (has(r, "selective") && !has(r, "recompute_modules") &&
      (has(r, "layer") || has(r, "block") || has(r, " op"))) {
    notes.push_back("selective AC outside Megatron (layer/op/block level): block recompute of half the layers");
    return Checkpointing::block;
  }
  if (has(r, "selective")) return Checkpointing::selective;
  if (has(r, "full") || has(r, "checkpoint")) return Checkpointing::full;
  // A yes/no answer: true or "yes"/"on"/"enabled"/"uniform" is full recompute.
  static const std::regex yes(R"(^\s*(yes|true|on|enabled?|uniform|all)\b)", std::regex::icase);
  if ((at(p, "recompute").is_boolean() && at(p, "recompute").get<bool>()) || std::regex_search(r, yes)) {
    notes.push_back("recompute named without a kind: full (every layer recomputed)");
    return Checkpointing::full;
  }
  return Checkpointing::none;
}

// The ZeRO stage the row states (a number, a named stage or sharding design), or nothing
// when it states none and the framework offers a choice (search_unpublished decides then).
std::optional<int> zero_stage(const Json& p, Framework framework, std::vector<std::string>& notes) {
  const std::string other = str(p, "other");
  if (has(other, "ShardedDDP")) {
    notes.push_back("fairscale OSS + ShardedDDP taken as ZeRO-2 (states and gradients sharded)");
    return 2;
  }
  if (has(other, "ZeroRedundancyOptimizer")) {
    notes.push_back("torch ZeroRedundancyOptimizer on DDP: ZeRO stage 1 (optimizer state sharded)");
    return 1;
  }
  if (names_oss(other)) {
    notes.push_back("fairscale OSS taken as ZeRO-1 (optimizer states sharded)");
    return 1;
  }
  if (at(p, "zero_stage").is_number()) return inum(p, "zero_stage", 0);
  // Not given as a number: the stage the text names ("ZeRO-3", "ZeRO stage 2"), FSDP's
  // sharding strategy (FULL_SHARD, its default, is stage 3), Megatron's distributed optimizer.
  static const std::regex named(R"(zero[ _-]?(?:stage)?\s*[:=]?\s*-?([0-3])\b)", std::regex::icase);
  std::smatch mm;
  if (std::regex_search(other, mm, named)) {
    notes.push_back("ZeRO stage " + mm[1].str() + " as parallel.other names it");
    return std::stoi(mm[1].str());
  }
  if (framework == Framework::fsdp) {
    const int stage = has(other, "SHARD_GRAD_OP") ? 2 : has(other, "NO_SHARD") ? 0 : 3;
    notes.push_back("FSDP sharding " +
                    std::string(stage == 3   ? "FULL_SHARD (the default)"
                                : stage == 2 ? "SHARD_GRAD_OP"
                                             : "NO_SHARD") +
                    ": ZeRO stage " + std::to_string(stage));
    return stage;
  }
  if (framework == Framework::megatron &&
      (has(other, "distributed optimizer") || has(other, "distributed-optimizer")))
    return 1;
  // Plain DDP shards nothing unless a sharding optimizer is named (above).
  if (framework == Framework::ddp || at(p, "zero_stage").is_number()) return 0;
  return std::nullopt;
}

// Engine settings a row names (its offload flag and parallel.other text): CPU offload,
// Megatron's 16-bit gradient buffer, FSDP hybrid sharding, overlapped gradient reduction.
void engine_settings(const Json& p, SearchSpace& s, std::vector<std::string>& notes) {
  const std::string other = str(p, "other");
  s.offload = {Offload::none};
  const auto kind = offload_kind(at(p, "offload"));
  if (kind && *kind != Offload::none) {
    // ZeRO-Offload moves the optimizer (states, master weights, the step) to the host;
    // ZeRO-Infinity's parameter offload only when the row says offload_param to cpu (or
    // its offload is "all"/"param"), under stage 3.
    static const std::regex param_cpu(R"(offload_param[^;,.]*\bcpu\b)", std::regex::icase);
    const bool params = s.zero[0] == 3 && (*kind == Offload::all || std::regex_search(other, param_cpu));
    s.offload = {params ? Offload::all : Offload::optimizer};
    notes.push_back(params ? "CPU offload of optimizer and parameters (offload_param cpu named)"
                           : "CPU offload of the optimizer (ZeRO-Offload)");
  }
  // A 16-bit Megatron gradient buffer and reduction: Megatron-Core's grad_reduce_in_fp32
  // set false (NeMo 2 performance recipes) or NeMo 1's DistributedFusedAdam with
  // grad_sync_dtype bf16.
  static const std::regex grads16(R"(grad_reduce_in_fp32\s*[=:]?\s*false|grad_sync_dtype\s*[=:]?\s*bf16)",
                                  std::regex::icase);
  if (s.run.framework == Framework::megatron && std::regex_search(other, grads16)) {
    s.run.megatron_fp32_grads = false;
    notes.push_back("16-bit gradient buffer and reduction (grad_reduce_in_fp32=False / grad_sync_dtype bf16 named)");
  }
  // FSDP reducing gradients in fp32: MixedPrecision(Policy) reduce_dtype float32 (torchtitan's
  // "reduce fp32") or Composer's mixed_precision DEFAULT (param bf16, reduce float32).
  static const std::regex fsdp_fp32(R"(reduce[ _]?(dtype)?\s*[=:]?\s*(fp32|float32)|mixed_precision\s+DEFAULT)",
                                    std::regex::icase);
  if (s.run.framework == Framework::fsdp && std::regex_search(other, fsdp_fp32)) {
    s.run.fsdp_reduce_fp32 = true;
    notes.push_back("FSDP gradients reduced in fp32 (reduce fp32 / Composer mixed_precision DEFAULT named)");
  }
  if (s.run.framework == Framework::fsdp && (has(other, "HYBRID_SHARD") || has(other, "HSDP"))) {
    s.run.fsdp_hybrid = true;
    notes.push_back("FSDP hybrid sharding (HYBRID_SHARD / HSDP named): sharded within a node, replicated across nodes");
  }
  if (s.run.framework == Framework::fsdp && (has(other, "FSDP2") || has(other, "fully_shard"))) {
    s.run.fsdp_version = 2;
    notes.push_back("FSDP2 (FSDP2 / fully_shard named): all-gathers copied out, reduce-scatter inputs copied in");
  }
  static const std::regex fused_ce(R"(fused cross-entropy|xentropy|Liger|inplace_backward)",
                                   std::regex::icase);
  if (std::regex_search(other, fused_ce)) {
    s.run.cross_entropy = CrossEntropy::fused;
    notes.push_back("fused cross-entropy named (16-bit logits only, gradient written in place)");
  }
  // Megatron-DeepSpeed's --pp-partition-method 'type:transformer|embedding' (BLOOM's
  // tr11-176B-ml.slurm): the input and the tied output embedding balance as layers.
  if (s.run.framework == Framework::deepspeed && has(other, "type:transformer|embedding")) {
    s.run.pp_account_embedding = s.run.pp_account_loss = true;
    notes.push_back("pipeline partition 'type:transformer|embedding' named: the embeddings count as layers");
  }
  static const std::regex ds_overlap(R"(overlap_comm:?\s*(true|on)\b)", std::regex::icase);
  // Megatron-Core's config name or its command-line flag (--overlap-grad-reduce).
  if (has(other, "overlap_grad_reduce") || has(other, "overlap-grad-reduce") ||
      (s.run.framework == Framework::deepspeed && std::regex_search(other, ds_overlap))) {
    s.run.zero.overlap_comm = 1;
    notes.push_back("gradient reduction overlapped with backward (overlap_grad_reduce / overlap_comm named)");
  }
}

}  // namespace

Expected<PlanRequest> row_request(const Json& row, std::vector<std::string>& notes) {
  const Json& m = at(row, "model");
  const Json& p = at(row, "parallel");
  if (!p.is_object()) return Diagnostic{"", "/parallel", "row has no parallel layout", ""};
  auto model = row_model(row, notes);
  if (!model) return model.errors();
  auto found = row_system(row, notes);
  if (!found) return found.errors();
  const SystemSpec& sys = *found;
  // The same bound as estimate's --gpus; a fractional or absurd count is a malformed row.
  std::string counted;
  const double gpu_count = rows::gpu_count(row, &counted);
  if (!counted.empty()) notes.push_back(counted);
  if (gpu_count < 1 || gpu_count > kMaxGpus || gpu_count != std::floor(gpu_count))
    return Diagnostic{"", "/hardware/num_gpus",
                      "num_gpus must be a whole number in [1, " + std::to_string(kMaxGpus) + "]", ""};
  const int gpus = static_cast<int>(gpu_count);
  PlanRequest req;
  req.model = *model;
  req.cluster = Cluster{sys, gpus};
  req.efficiency = default_efficiency(sys.gpu);
  if (auto why = eager_stack(row)) {
    req.memory_options.cuda_context = MB(1343);
    notes.push_back("CUDA context 1343 MB: " + *why);
  }
  req.top = 1;
  req.include_infeasible = true;
  SearchSpace& s = req.space;
  s.run.seq_len = inum(m, "seq_len", 0);
  if (s.run.seq_len <= 0) return Diagnostic{"", "/model/seq_len", "row has no sequence length", ""};
  rows::precision(str(p, "precision"), str(p, "other"), s.run, notes);
  s.run.framework = row_framework(row, notes);
  rows::optimizer_settings(row, s.run, notes);
  rows::checkpoint_settings(row, s.run, notes);
  rows::zero_buckets(row, s.run, notes), rows::deepspeed_release(row, s.run, notes);
  // The autotuner's metric times steps 3-5 (start/end_profile_step). DeepSpeed before v0.8
  // starts fp16's loss scale at 2^32 (initial_scale_power 32, hysteresis 2), so those steps
  // overflow and skip the update: the 2021 autotuning examples (transformers 4.12) ran such a
  // DeepSpeed (the autotuner shipped in v0.5.7).
  if (s.run.framework == Framework::deepspeed && s.run.precision == Precision::fp16 &&
      num(at(row, "measured"), "ds_autotuner_metric_samples_per_s", 0) > 0 &&
      has(str(row, "source"), "transformers 4.12")) {
    s.run.overflow_step = true;
    notes.push_back("fp16 overflow steps: DeepSpeed < 0.8 starts the loss scale at 2^32, so the "
                    "profiled steps 3-5 skip the optimizer update and the parameter all-gather");
  }
  // llm-foundry models under Composer evaluate LanguageCrossEntropy and LanguagePerplexity
  // on every training micro-batch (use_train_metrics default true; Composer 0.14-0.16
  // Trainer._eval_train_metrics after each backward).
  if (has(str(row, "source"), "llm-foundry") || has(str(p, "other"), "Composer")) {
    s.run.logit_metrics = 2;
    notes.push_back("Composer train metrics: 2 fp32 cross-entropies over the logits per micro-batch");
  }
  // Megatron-Core's jit-fused cross-entropy: named, or a NeMo recipe (NeMo 2's GPTConfig
  // defaults cross_entropy_loss_fusion to True; NeMo launcher configs set it).
  const std::string text = str(row, "source") + " " + str(p, "other");
  // A single-kernel fused loss named in the row wins (it was matched above).
  if (s.run.framework == Framework::megatron && s.run.cross_entropy == CrossEntropy::eager &&
      (has(text, "NeMo") || has(text, "cross_entropy_loss_fusion") ||
       has(text, "cross-entropy-loss-fusion"))) {
    s.run.cross_entropy = CrossEntropy::jit_fused;
    notes.push_back("Megatron-Core's fused cross-entropy (NeMo, or cross_entropy_loss_fusion named)");
  }
  if (has(str(p, "other"), "attn_impl triton")) {  // flash-attn's Triton kernel (docs/model.md §4.1)
    s.run.attention = AttentionKernel::triton;
    notes.push_back("llm-foundry's Triton attention (attn_impl triton): FlashAttention-2's rate / 1.4 forward, / 2 backward");
  }
  if (has(str(p, "other"), "FlashAttention-3") && sys.gpu.arch == GpuArch::hopper) {  // Hopper's FA3
    s.run.attention = AttentionKernel::fa3;
    notes.push_back("FlashAttention-3 named: its Hopper rate");
  }
  if (has(str(p, "other"), "NVTE_FUSED_ATTN=0")) {  // TE told not to use cuDNN's fused attention
    s.run.attention = AttentionKernel::fa2;
    notes.push_back("NVTE_FUSED_ATTN=0: Transformer Engine's flash-attn backend, FlashAttention-2's rate");
  }
  const std::optional<int> stage = zero_stage(p, s.run.framework, notes);
  s.zero = {stage.value_or(0)};
  if (s.run.framework == Framework::megatron) {
    if (auto rel = megatron_release(row)) {
      s.run.megatron_release = rel->first;
      TrainConfig probe;  // what that release does (TrainConfig holds the thresholds)
      probe.framework = Framework::megatron;
      probe.megatron_release = rel->first;
      probe.vpp = 2;
      char buf[200];
      std::snprintf(
          buf, sizeof buf, "Megatron-LM of %04d-%02d (%s): %s TP backward, %s interleaved sends%s",
          rel->first / 100, rel->first % 100, rel->second.c_str(),
          probe.megatron_async_tp() ? "asynchronous" : "blocking",
          probe.megatron_overlap_p2p() ? "overlapped" : "blocking",
          probe.megatron_unfused_elementwise() ? ", unfused scale/mask/softmax and dropout/add" : "");
      notes.push_back(buf);
    }
  }
  s.tp = {std::max(1, inum(p, "tp", 1))};
  s.pp = {std::max(1, inum(p, "pp", 1))};
  s.checkpointing = {row_ckpt(p, notes)};
  recompute_modules(p, s, notes);
  moe_kernels(p, *model, s, notes);
  s.flash = {at(p, "flash_attention").is_boolean() && at(p, "flash_attention").get<bool>()};
  s.sequence_parallel = {at(p, "sequence_parallel").is_boolean() && at(p, "sequence_parallel").get<bool>()};
  engine_settings(p, s, notes);
  s.run.norm_kernel = norm_kernel(row, *model, notes);
  s.vpp = {std::max(1, inum(p, "vpp", 1))};
  if (auto bad = expert_layout(p, at(row, "model"), *model, s, notes)) return *bad;
  if (auto bad = layout_and_batch(p, gpus, s, notes)) return *bad;
  // FlashAttention, Megatron's sequence parallelism and its distributed optimizer all date
  // from 2022 (FlashAttention and Korthikanti et al. in 2022-05/06): a stack the row dates
  // earlier had none of them.
  const auto release = megatron_release(row);
  const bool pre_2022 = eager_stack(row).has_value() || (release && release->first < 202206);
  search_unpublished(row, stage.has_value(), pre_2022, s, notes);
  notes.push_back("framework " + std::string(name(s.run.framework)) + ", " + std::string(name(s.run.precision)));
  return req;
}

}  // namespace dsplan::validation::rows
