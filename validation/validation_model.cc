// What a shape-only published row leaves out of its model, and when the row is outside
// what dsplan models (docs/accuracy.md, "Mapping decisions", Model):
//  - Encoder-decoder (T5, BART, Pegasus) and mixture-of-experts models (MoE, Mixtral,
//    Switch, "experts") are not modelled: such rows are skipped, never priced as a dense
//    decoder.
//  - Heads not given: head dimension 128 where the width is a multiple of 128 and at least
//    2048 (GPT-3 from 2.7B up, Llama), else 64 (GPT-2, BERT). Attention's FLOPs do not
//    depend on the split; its score memory without flash does.
//  - A Llama-family name without the numbers (Touvron et al. 2023 §2.2, Llama 2 Table 1,
//    Llama 3 herd paper Table 3): vocabulary 32000 (Llama 1/2) or 128256 (Llama 3);
//    untied input and output embeddings (Llama 3.2 1B/3B tie them); 8 KV heads for
//    Llama 3; no linear biases and no dropout.
//  - A gated MLP's width is not the 4h of a GPT: when the row does not give it, it is
//    solved from the row's params_B (rounded to 256), which pins the GEMM FLOPs per token,
//    else Llama's rule 256 * ceil((8h/3) / 256). A width given without `gated_mlp` is read
//    as gated where three matrices of it, not two, carry the row's params_B.
//  - The mapped model must carry the row's params_B within 25%: a larger gap means an
//    architecture the row's fields do not describe (its FLOPs would be wrong by as much),
//    and the row is skipped with both counts. (Every row in shared/validation and
//    validation/ agrees within 5%: tests/unit/time/validation_shapes_test.cc.)
#include <cmath>
#include <cstdio>
#include <regex>

#include "estimator/params.h"
#include "validation/validation_rows.h"

namespace dsplan::validation::rows {
namespace {

std::string billions(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3gB", n / 1e9);
  return buf;
}

}  // namespace

std::optional<Diagnostic> unsupported_architecture(const Json& m) {
  const std::string n = str(m, "name") + " " + str(m, "architecture");
  static const std::regex enc_dec(R"(\b(m?T5|Flan-T5|m?BART|Pegasus|encoder-decoder)\b)", std::regex::icase);
  static const std::regex moe(R"(\bMoE\b|Mixtral|\bSwitch\b|\bexperts?\b|\b\d+x\d+(\.\d+)?B\b)",
                              std::regex::icase);
  if (std::regex_search(n, enc_dec))
    return Diagnostic{"", "/model/name",
                      "encoder-decoder models are not modelled (\"" + str(m, "name") + "\")",
                      "dsplan models decoder-only and encoder-only transformers"};
  // Hybrid state-space models (Mamba-2 layers among the attention ones: NemotronH, Jamba)
  // have layers dsplan has no operators for.
  static const std::regex ssm(R"(\bMamba|\bJamba\b|\bNemotron-?H\b|state.space)", std::regex::icase);
  if (m.is_object() &&
      (m.contains("hybrid_layer_pattern") || m.contains("mamba_layers") || std::regex_search(n, ssm)))
    return Diagnostic{"", "/model/architecture",
                      "hybrid Mamba/attention models are not modelled (\"" + str(m, "name") + "\")",
                      "dsplan prices transformer layers (attention with a dense or MoE MLP) only"};
  // A row that gives its experts (model.experts, topk, moe_ffn) is an MoE shape dsplan
  // prices (moe_details); a name alone is not enough to build one.
  if (num(m, "experts") <= 0 && std::regex_search(n, moe))
    return Diagnostic{"", "/model/name",
                      "mixture-of-experts models are not modelled (\"" + str(m, "name") + "\")",
                      "dsplan models dense transformers"};
  return std::nullopt;
}

std::optional<Diagnostic> moe_details(const Json& m, ModelSpec& spec, std::vector<std::string>& notes) {
  // The head width where it is not hidden / heads (Megatron's kv_channels; Qwen3, gpt-oss).
  const int hd = std::max(inum(m, "kv_channels"), inum(m, "head_dim"));
  if (hd > 0 && hd <= (1 << 16)) spec.head_dim = hd;
  if (at(m, "qk_layernorm").is_boolean() && at(m, "qk_layernorm").get<bool>()) spec.qk_norm = true;
  if (num(m, "kv_lora_rank") > 0) {  // multi-head latent attention (DeepSeek-V2/V3)
    spec.kv_lora_rank = inum(m, "kv_lora_rank");
    spec.q_lora_rank = std::max(0, inum(m, "q_lora_rank"));
    spec.qk_rope_head_dim = inum(m, "qk_rope_head_dim");
    spec.v_head_dim = inum(m, "v_head_dim");
    spec.kv_heads = spec.heads;
    spec.qk_norm = false;  // its norms are the latents' (counted with them)
    if (spec.kv_lora_rank > (1 << 16) || spec.q_lora_rank > (1 << 16) || spec.qk_rope_head_dim < 1 ||
        spec.qk_rope_head_dim > 1024 || spec.v_head_dim < 1 || spec.v_head_dim > 1024)
      return Diagnostic{"", "/model/kv_lora_rank",
                        "an MLA row needs kv_lora_rank, qk_rope_head_dim and v_head_dim", ""};
    notes.push_back("multi-head latent attention: q rank " + std::to_string(spec.q_lora_rank) + ", kv rank " +
                    std::to_string(spec.kv_lora_rank) + ", rope " + std::to_string(spec.qk_rope_head_dim) +
                    ", v " + std::to_string(spec.v_head_dim));
  }
  if (num(m, "experts") <= 0) return std::nullopt;
  spec.experts = inum(m, "experts");
  spec.topk = inum(m, "topk");
  spec.moe_ffn = inum(m, "moe_ffn");
  spec.shared_ffn = std::max(0, inum(m, "shared_ffn"));
  if (spec.experts > (1 << 16) || spec.topk < 1 || spec.topk > spec.experts || spec.moe_ffn < 1 ||
      spec.moe_ffn > (1 << 20) || spec.shared_ffn > (1 << 20))
    return Diagnostic{"", "/model/experts", "an MoE row needs experts, topk in [1, experts] and moe_ffn", ""};
  // Dense layers among the MoE ones: the first few (DeepSeek, GLM-4.5), or all but every
  // step-th (Llama 4), each with an MLP of ffn_hidden.
  spec.first_dense_layers = std::max(0, inum(m, "first_dense_layers"));
  spec.moe_layer_step = std::max(1, inum(m, "moe_layer_step", 1));
  if (spec.first_dense_layers >= spec.layers || spec.moe_layer_step > spec.layers ||
      (has_dense_layers(spec) && spec.ffn_hidden < 1))
    return Diagnostic{
        "", "/model/first_dense_layers",
        "dense layers need first_dense_layers < layers, moe_layer_step <= layers and ffn_hidden", ""};
  // Group-limited routing (DeepSeek-V3's node-limited top-k; Megatron's
  // --moe-router-num-groups and --moe-router-group-topk): 0 = none.
  spec.moe_groups = std::max(0, inum(m, "moe_groups"));
  spec.moe_group_topk = std::max(0, inum(m, "moe_group_topk"));
  if ((spec.moe_groups > 0) != (spec.moe_group_topk > 0) ||
      (spec.moe_groups > 0 && (spec.experts % spec.moe_groups != 0 || spec.moe_group_topk > spec.moe_groups ||
                               spec.topk > spec.moe_group_topk * (spec.experts / spec.moe_groups))))
    return Diagnostic{"", "/model/moe_groups",
                      "group-limited routing needs moe_groups dividing experts and moe_group_topk in [1, "
                      "moe_groups], whose groups hold at least topk experts",
                      ""};
  // gpt-oss's block (model_spec.h): a sliding window in window_layers of the layers, a
  // learned sink per head, biased router and experts, the clamped SwiGLU.
  const int window = inum(m, "attention_window"), windowed = inum(m, "window_layers");
  if (window > 0 && window < (1 << 26) && windowed >= 0 && windowed <= spec.layers) {
    spec.attention_window = window;
    spec.window_layers = windowed;
    notes.push_back(std::to_string(window) + "-key sliding window in " +
                    (windowed > 0 ? std::to_string(windowed) : std::string("all")) + " of " +
                    std::to_string(spec.layers) + " layers");
  }
  auto flag = [&](const char* key) { return at(m, key).is_boolean() && at(m, key).get<bool>(); };
  spec.attention_sinks = flag("attention_sinks");
  spec.moe_bias = flag("moe_bias");
  spec.activation_clamp = flag("activation_clamp") && spec.gated_mlp;
  if (spec.attention_sinks || spec.moe_bias || spec.activation_clamp)
    notes.push_back(std::string("gpt-oss block:") + (spec.attention_sinks ? " attention sinks" : "") +
                    (spec.moe_bias ? " expert biases" : "") +
                    (spec.activation_clamp ? " clamped SwiGLU" : ""));
  notes.push_back("mixture of experts: " + std::to_string(spec.experts) + " experts, top-" +
                  std::to_string(spec.topk) + ", width " + std::to_string(spec.moe_ffn) +
                  (spec.shared_ffn > 0 ? ", shared " + std::to_string(spec.shared_ffn) : std::string()) +
                  (has_dense_layers(spec) ? ", " + std::to_string(moe_layer_count(spec)) + " of " +
                                                std::to_string(spec.layers) + " layers MoE, the rest dense"
                                          : std::string()) +
                  (spec.moe_groups > 0 ? ", tokens routed within " + std::to_string(spec.moe_group_topk) +
                                             " of " + std::to_string(spec.moe_groups) + " expert groups"
                                       : std::string()));
  return std::nullopt;
}

std::optional<Diagnostic> expert_layout(const Json& p, const Json& model, const ModelSpec& m, SearchSpace& s,
                                        std::vector<std::string>& notes) {
  s.cp = {std::max(1, inum(p, "cp", 1))};
  // DeepSeek-V3's multi-token prediction (model.mtp_layers; Megatron's --mtp-num-layers) and
  // the explicit uneven split its recipes balance it with (parallel.pp_first_layers and
  // pp_last_layers: the first and last virtual stages' layers).
  s.run.mtp_layers = std::clamp(inum(model, "mtp_layers"), 0, 16);
  if (s.run.mtp_layers > 0)
    notes.push_back(std::to_string(s.run.mtp_layers) +
                    " multi-token prediction layer(s) on the last stage (model.mtp_layers)");
  if (at(p, "pp_first_layers").is_number() && at(p, "pp_last_layers").is_number()) {
    s.run.pp_first_layers = std::clamp(inum(p, "pp_first_layers"), 0, 1 << 16);
    s.run.pp_last_layers = std::clamp(inum(p, "pp_last_layers"), 0, 1 << 16);
    notes.push_back("explicit pipeline split: " + std::to_string(s.run.pp_first_layers) + " layers first, " +
                    std::to_string(s.run.pp_last_layers) +
                    " last (parallel.pp_first_layers, pp_last_layers)");
  }
  if (s.cp[0] > 1) notes.push_back("context parallelism " + std::to_string(s.cp[0]) + " (parallel.cp)");
  // Megatron's CPU activation offloading (parallel.activation_offload_layers, the run's
  // --cpu-offloading-num-layers).
  s.run.cpu_offload_layers = std::clamp(inum(p, "activation_offload_layers"), 0, 1 << 16);
  if (s.run.cpu_offload_layers > 0)
    notes.push_back("CPU activation offloading of " + std::to_string(s.run.cpu_offload_layers) +
                    " layers (parallel.activation_offload_layers)");
  s.ep = {std::max(1, inum(p, "ep", 1))};
  if (!is_moe(m)) return std::nullopt;
  // Megatron-Core (0.10 on) defaults the expert TP degree to the TP degree when the run
  // does not set it.
  const int tp = std::max(1, inum(p, "tp", 1));
  const bool stated = at(p, "etp").is_number();
  s.run.etp = std::max(1, stated ? inum(p, "etp", 1) : tp);
  s.run.framework = Framework::megatron;
  notes.push_back(
      "expert parallelism " + std::to_string(s.ep[0]) + ", expert TP " + std::to_string(s.run.etp) +
      (stated ? " (parallel.ep, etp)" : " (parallel.ep; etp unset: Megatron-Core's default, the TP degree)"));
  return std::nullopt;
}

int inferred_heads(int hidden, std::vector<std::string>& notes) {
  const int head_dim = hidden >= 2048 && hidden % 128 == 0 ? 128 : hidden % 64 == 0 ? 64 : 0;
  if (head_dim == 0) return 0;
  notes.push_back("heads not given: head dimension " + std::to_string(head_dim) + ", " +
                  std::to_string(hidden / head_dim) + " heads");
  return hidden / head_dim;
}

void family_defaults(const Json& m, ModelSpec& spec, std::vector<std::string>& notes) {
  const std::string n = str(m, "name");
  if (!has(n, "llama")) return;
  static const std::regex llama3(R"(llama[ -]?3)", std::regex::icase);
  const bool v3 = std::regex_search(n, llama3);
  if (num(m, "vocab") <= 0) {
    spec.vocab = v3 ? 128256 : 32000;
    notes.push_back(std::string("vocab not given: Llama ") + (v3 ? "3's 128256" : "1/2's 32000"));
  }
  if (!at(m, "tied_embeddings").is_boolean() && !has(n, "3.2")) spec.tied_embeddings = false;
  // Llama's linears carry no biases and its blocks no dropout (Hugging Face LlamaConfig:
  // attention_bias and mlp_bias false, attention_dropout 0.0; NeMo's Llama configs:
  // add_bias_linear false, hidden and attention dropout 0.0).
  if (!at(m, "linear_bias").is_boolean()) spec.linear_bias = false;
  if (!at(m, "dropout").is_boolean()) spec.dropout = false;
  // Every Llama rotates its queries and keys (RoPE; Touvron et al. 2023, section 2.2) and has
  // no position table.
  if (str(m, "position").empty()) spec.position = PositionKind::rotary;
  if (v3 && num(m, "kv_heads") <= 0 && spec.heads % 8 == 0) {
    spec.kv_heads = 8;
    notes.push_back("kv_heads not given: Llama 3's 8");
  }
}

std::optional<Diagnostic> settle_parameters(const Json& m, bool shape_only, ModelSpec& spec,
                                            std::vector<std::string>& notes) {
  if (num(m, "params_B") > 1e6)
    return Diagnostic{"", "/model/params_B", "params_B must be at most 1e6 (billions of parameters)", ""};
  const double stated = num(m, "params_B") * 1e9;
  // An MLP width given without saying whether the MLP is gated: the reading whose parameter
  // count is nearer the row's params_B (a gated MLP has three matrices of that width, not two).
  if (shape_only && stated > 0 && num(m, "ffn_hidden") > 0 && !at(m, "gated_mlp").is_boolean() &&
      !spec.gated_mlp) {
    ModelSpec gated = spec;
    gated.gated_mlp = true;
    if (gated.norm == NormKind::rmsnorm) gated.activation = Activation::silu;
    const double plain_p = static_cast<double>(total_params(spec)),
                 gated_p = static_cast<double>(total_params(gated));
    if (std::abs(gated_p - stated) < std::abs(plain_p - stated)) {
      spec = gated;
      notes.push_back("gated MLP: with three matrices of width ffn_hidden the model carries params_B");
    }
  }
  if (shape_only && spec.gated_mlp && num(m, "ffn_hidden") <= 0) {
    const int rule = 256 * static_cast<int>(std::ceil(8.0 * spec.hidden / 3 / 256));
    spec.ffn_hidden = rule;
    if (stated > 0) {
      // Parameters are linear in the FFN width: solve from two widths, round to 256.
      const double p0 = static_cast<double>(total_params(spec));
      ModelSpec wider = spec;
      wider.ffn_hidden += 256;
      const double slope = (static_cast<double>(total_params(wider)) - p0) / 256;
      const double width = rule + (stated - p0) / slope;
      if (std::isfinite(width) && width >= spec.hidden && width <= 8.0 * spec.hidden) {
        const int solved = 256 * static_cast<int>(std::lround(width / 256));
        spec.ffn_hidden = solved;
        notes.push_back("gated MLP width not given: " + std::to_string(solved) + ", solved from params_B");
      } else {
        notes.push_back("gated MLP width not given: Llama's rule, " + std::to_string(rule));
      }
    } else {
      notes.push_back("gated MLP width not given: Llama's rule, " + std::to_string(rule));
    }
  }
  if (stated <= 0) return std::nullopt;
  const double mapped = static_cast<double>(total_params(spec));
  if (std::abs(mapped / stated - 1) > 0.25)
    return Diagnostic{
        "", "/model/params_B",
        "the row's " + billions(stated) + " parameters differ from the mapped model's " + billions(mapped) +
            " by more than 25%",
        "give the model's ffn_hidden, kv_heads, gated_mlp, vocab and tied_embeddings, or it is an "
        "architecture dsplan does not model"};
  return std::nullopt;
}

// The optimizer a row's loop hands the engine: the Hugging Face Trainer's AdamW (per tensor),
// a client torch optimizer the DeepSpeed engine runs as it is (its log: "Using client
// Optimizer as basic optimizer"; under ZeRO-Offload on the host, not as CPU Adam), or
// bitsandbytes' 8-bit Adam.
void optimizer_settings(const Json& row, TrainConfig& run, std::vector<std::string>& notes) {
  const std::string other = str(at(row, "parallel"), "other");
  if (has(str(row, "source"), "huggingface") || has(str(row, "source"), "autotuning/hf")) {
    run.fused_optimizer = 0;
    notes.push_back("HF Trainer's AdamW (unfused, per tensor) as the optimizer");
  }
  if (run.framework == Framework::deepspeed && has(other, "client optimizer")) {
    run.fused_optimizer = 0;
    notes.push_back("the client's torch optimizer (parallel.other), not DeepSpeed's fused or CPU Adam");
  }
  if (has(other, "use-bnb-optimizer")) {
    run.optimizer = Optimizer::adam_8bit;
    notes.push_back("bitsandbytes 8-bit Adam (--use-bnb-optimizer)");
  }
}

// DeepSpeed's activation checkpointing options a row names (ds_config keys or
// Megatron-DeepSpeed's flags): partition_activations and cpu_checkpointing (checkpoint_in_cpu).
void checkpoint_settings(const Json& row, TrainConfig& run, std::vector<std::string>& notes) {
  const std::string other = str(at(row, "parallel"), "other");
  static const std::regex partition(R"(partition[-_]activations\b\s*[=:]?\s*true|--partition-activations\b)",
                                    std::regex::icase);
  static const std::regex host(
      R"((cpu_checkpointing|checkpoint[-_]in[-_]cpu)\b\s*[=:]?\s*true|--checkpoint-in-cpu\b)",
      std::regex::icase);
  if (run.framework != Framework::deepspeed) return;
  run.ds_partition_activations = std::regex_search(other, partition);
  run.ds_cpu_checkpointing = std::regex_search(other, host);
  if (run.ds_partition_activations)
    notes.push_back("DeepSpeed's partition_activations (named in parallel.other)");
  if (run.ds_cpu_checkpointing)
    notes.push_back("DeepSpeed's cpu_checkpointing: checkpoints in host memory (named)");
}

// ZeRO's bucket sizes a DeepSpeed row names with their ds_config keys (elements):
// reduce_bucket_size, allgather_bucket_size, stage3_prefetch_bucket_size and
// stage3_max_live_parameters; DeepSpeed's defaults otherwise (ZeroKnobs).
void zero_buckets(const Json& row, TrainConfig& run, std::vector<std::string>& notes) {
  if (run.framework != Framework::deepspeed) return;
  const std::string other = str(at(row, "parallel"), "other");
  auto read = [&](const char* key, double& out) {
    const std::regex re(std::string(R"(\b)") + key + R"(\b\s*[=:]?\s*([0-9]+(\.[0-9]+)?([eE]\+?[0-9]+)?))",
                        std::regex::icase);
    std::smatch mt;
    if (!std::regex_search(other, mt, re)) return;
    const double v = std::stod(mt[1].str());
    if (v < 1 || v > 1e13) return;
    out = v;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %g (parallel.other)", key, v);
    notes.push_back(buf);
  };
  read("reduce_bucket_size", run.zero.reduce_bucket_elems);
  read("allgather_bucket_size", run.zero.allgather_bucket_elems);
  read("stage3_prefetch_bucket_size", run.zero.prefetch_bucket_elems);
  read("stage3_max_live_parameters", run.zero.max_live_params);
}

}  // namespace dsplan::validation::rows
