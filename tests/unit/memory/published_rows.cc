// Row mapping for the memory validation test. Architectures are the public configs of
// the named models; every mapping decision is also listed in docs/model.md §3 Memory.
#include "published_rows.h"

namespace dsplan {
namespace {

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

ModelSpec gpt(int layers, int hidden, int heads, int seq, int pad) {
  ModelSpec m;
  m.layers = layers; m.hidden = hidden; m.heads = heads; m.kv_heads = heads;
  m.head_dim = hidden / heads; m.ffn_hidden = 4 * hidden; m.vocab = 50257;
  m.max_positions = seq; m.vocab_pad_multiple = pad;
  return m;
}

// BERT-family encoder with a sequence-classification head (no vocabulary logits).
ModelSpec bert(int layers, int hidden, int heads, long vocab, bool mlm) {
  ModelSpec m;
  m.layers = layers; m.hidden = hidden; m.heads = heads; m.kv_heads = heads;
  m.head_dim = hidden / heads; m.ffn_hidden = 4 * hidden; m.vocab = vocab;
  m.max_positions = 512; m.type_vocab = 2; m.embedding_norm = true; m.final_norm = false;
  m.pooler = true; m.causal = false; m.vocab_logits = mlm;
  return m;
}

Cluster v100(double mem_MiB, int gpus, int per_node) {
  Cluster c;
  c.node.gpu.arch = GpuArch::volta;
  c.node.gpu.memory = MiB(mem_MiB);
  c.node.gpus_per_node = per_node;
  c.num_gpus = gpus;
  return c;
}

Precision precision_of(const std::string& p) {
  if (p.find("bf16") != std::string::npos) return Precision::bf16;
  if (p.find("fp16") != std::string::npos) return Precision::fp16;
  return Precision::fp32;
}

int int_or(const nlohmann::json& j, const char* k, int dflt) {
  return j.contains(k) && j[k].is_number() ? j[k].get<int>() : dflt;
}

void read_parallel(const nlohmann::json& row, TrainConfig& cfg) {
  const auto& p = row["parallel"];
  cfg.tp = int_or(p, "tp", 1);
  cfg.pp = int_or(p, "pp", 1);
  cfg.dp = int_or(p, "dp", 1);
  cfg.zero_stage = int_or(p, "zero_stage", 0);
  cfg.micro_batch = int_or(p, "micro_batch", 1);
  cfg.grad_accum = int_or(p, "grad_accum", 1);
  cfg.seq_len = int_or(row["model"], "seq_len", 1024);
  cfg.precision = precision_of(p.value("precision", "fp32"));
  const std::string rc = p.contains("recompute") && p["recompute"].is_string() ? p["recompute"].get<std::string>() : "";
  if (rc.find("full") != std::string::npos || rc.find("checkpointing") != std::string::npos)
    cfg.checkpointing = Checkpointing::full;
}

std::optional<MappedRow> map_dlperf(const nlohmann::json& row, MappedRow r) {
  // Megatron-LM 2020 (--fp16, --checkpoint-activations), vocab padded to 128 x TP,
  // V100-SXM2 16GB (nvidia-smi total 16160 MiB), 8 GPUs per node; nvidia-smi figure.
  const auto& m = row["model"];
  r.model = gpt(m["layers"], m["hidden"], m["heads"], 2048, 128);
  read_parallel(row, r.cfg);
  r.cfg.framework = Framework::megatron;
  r.cluster = v100(16160, r.cfg.gpus(), 8);
  r.options.cuda_context = MB(1343);  // NGC PyTorch 20.12 = CUDA 11.1: eager loading
  r.figure = Figure::device;
  r.measured_MiB = row["measured"]["peak_mem_MiB"];
  return r;
}

std::optional<MappedRow> map_hf_bert_large(const nlohmann::json& row, MappedRow r) {
  // HF Trainer on one V100 16GB, bert-large-uncased sequence classification, torch
  // AdamW; fp16 = torch.amp. NVML 'used' = device.
  r.model = bert(24, 1024, 16, 30522, false);
  read_parallel(row, r.cfg);
  r.cfg.framework = Framework::ddp;
  r.cluster = v100(16160, 1, 1);
  r.options.cuda_context = MB(1343);  // the context the row's notes measured
  r.figure = Figure::device;
  r.measured_MiB = row["measured"]["gpu_mem_used_MB_nvml"];
  return r;
}

std::optional<MappedRow> map_pai(const nlohmann::json& row, MappedRow r) {
  const std::string& id = r.id;
  read_parallel(row, r.cfg);
  r.figure = Figure::allocated;
  r.measured_MiB = row["measured"]["peak_memory_MB"];
  r.caveat = "GPU and allocator figure not stated";
  if (starts(id, "pai_bert")) {
    // HF BERT-base pretraining (MLM logits), 4 ranks, torch.amp for mixed precision.
    r.model = bert(12, 768, 12, 30522, true);
    r.cfg.framework = Framework::ddp;
    r.cluster = v100(32510, 4, 4);
    return r;
  }
  // GPT 1.3B: 24 x 2048, 32 heads, seq 1024, GPT-2 vocabulary padded to 128 x TP.
  r.model = gpt(24, 2048, 32, 1024, 128);
  r.cluster = v100(32510, 4, 4);
  if (id == "pai_gpt1.3b_3d_tp4_pp4") return std::nullopt;  // tp x pp > GPUs: inconsistent
  if (starts(id, "pai_gpt1.3b_zero")) {
    r.cfg.framework = Framework::deepspeed;
  } else if (id == "pai_gpt1.3b_oss") {
    r.cfg.framework = Framework::ddp;  // fairscale OSS = optimizer-state sharding
    r.cfg.zero_stage = 1;
  } else if (id == "pai_gpt1.3b_oss_sdp") {
    r.cfg.framework = Framework::ddp;  // OSS + ShardedDDP = states + gradient sharding
    r.cfg.zero_stage = 2;
  } else {
    // Megatron runs: the figure equals the model states alone (TP=4: 5673 MiB measured
    // vs 18 B/param x 0.33e9 = 5671 MiB; no room for the ~1.8 GiB of activations), so it
    // is a between-iterations memory_allocated() reading, not a peak.
    r.cfg.framework = Framework::megatron;
    r.figure = Figure::states;
    r.caveat = "figure = model states between iterations (see docs)";
  }
  r.cfg.dp = r.cfg.dp > 0 ? r.cfg.dp : 4 / (r.cfg.tp * r.cfg.pp);
  r.cfg.grad_accum = 4 / (r.cfg.dp * r.cfg.micro_batch);
  return r;
}

std::optional<MappedRow> map_autotune(const nlohmann::json& row, MappedRow r) {
  // DeepSpeed autotuner on one 16-GPU V100 node: a 16-GPU node is a DGX-2, whose V100s
  // have 32 GB (nvidia-smi total 32510 MiB). HF run_glue (classification heads) for the
  // BERTs, run_clm (LM logits, block size 1024) for GPT-2. DeepSpeed default knobs.
  const std::string name = row["model"]["name"];
  read_parallel(row, r.cfg);
  r.cfg.framework = Framework::deepspeed;
  r.cfg.grad_accum = 1;
  if (name == "DistilBERT") {
    r.model = bert(6, 768, 12, 30522, false);
    r.model.type_vocab = 0;
    r.model.pooler = false;
  } else if (name == "BERT-base") {
    r.model = bert(12, 768, 12, 28996, false);
  } else {
    const auto& m = row["model"];
    r.model = gpt(m["layers"], m["hidden"], m["heads"], 1024, 1);
    r.model.activation_unfused = true;  // HF GPT-2's gelu_new, as the gpt2 presets say
  }
  r.cluster = v100(32510, 16, 16);
  r.options.cuda_context = MB(1343);  // transformers 4.12 (2021): CUDA <= 11.3, eager loading
  r.best_micro_batch = r.cfg.micro_batch;
  r.autotuner_ran = row["measured"]["ds_autotuner_metric_samples_per_s"].get<double>() > 0;
  return r;
}

}  // namespace

std::optional<MappedRow> map_row(const nlohmann::json& row) {
  MappedRow r;
  r.id = row["id"];
  if (starts(r.id, "dlperf_megatron")) return map_dlperf(row, r);
  if (starts(r.id, "hf_bertlarge")) return map_hf_bert_large(row, r);
  if (starts(r.id, "pai_") && row["measured"].contains("peak_memory_MB")) return map_pai(row, r);
  if (starts(r.id, "ds_autotune_space_")) return map_autotune(row, r);
  return std::nullopt;
}

}  // namespace dsplan
