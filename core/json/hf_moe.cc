// Hugging Face config.json import of the mixture-of-experts decoders (docs/model.md §4.11):
// the dense block of their family (hf_llama.cc) whose MLP is a router over routed experts,
// as the transformers config classes lay them out:
//  - mixtral (MixtralConfig): Mistral's block; num_local_experts experts of
//    intermediate_size, num_experts_per_tok of them a token.
//  - qwen2_moe (Qwen2MoeConfig): Qwen2's block (biases on Q, K, V); num_experts of
//    moe_intermediate_size, num_experts_per_tok a token, and one shared expert of
//    shared_expert_intermediate_size that every token runs. Its shared expert's sigmoid
//    gate (a hidden x 1 linear) is not counted: h parameters a layer, and no GEMM worth
//    pricing.
//  - qwen3_moe (Qwen3MoeConfig): Qwen3's block (query and key norms); num_experts of
//    moe_intermediate_size, num_experts_per_tok a token, no shared expert.
//  - olmoe (OlmoeConfig, OLMoE-1B-7B): Llama's pre-norm block with OLMo 2's query and key
//    norms over the full projection widths (OlmoeAttention: q_norm over hidden_size, k_norm
//    over head_dim x num_key_value_heads); num_experts of intermediate_size,
//    num_experts_per_tok a token. clip_qkv clamps Q, K and V: elementwise, not priced.
// dsplan prices models whose every layer is an MoE layer: Qwen's decoder_sparse_step other
// than 1 or a non-empty mlp_only_layers (dense layers among them) are refused.
#include "core/json/hf_reader.h"

namespace dsplan::hf {
namespace {

void read_experts(Hf& hf, ModelSpec& m, const char* experts_key, const char* width_key) {
  hf.from["experts"] = experts_key;
  hf.from["topk"] = "num_experts_per_tok";
  hf.r.get(experts_key, m.experts, true, 1, 1 << 16);
  hf.r.get("num_experts_per_tok", m.topk, true, 1, 1 << 16);
  if (width_key) {
    hf.from["moe_ffn"] = width_key;
    hf.r.get(width_key, m.moe_ffn, true, 1, kMaxDim);
  } else {
    hf.from["moe_ffn"] = "intermediate_size";
    m.moe_ffn = m.ffn_hidden;
  }
}

// Qwen's layer pattern: every decoder_sparse_step-th layer is sparse, none in mlp_only_layers.
void require_every_layer_sparse(Hf& hf) {
  int step = 1;
  if (hf.r.get("decoder_sparse_step", step, false, 0, kMaxDim) && step != 1)
    hf.r.error(
        "decoder_sparse_step",
        "MoE layers every " + std::to_string(step) + " layers: dsplan plans models whose every layer is MoE",
        "1");
  if (const Json* dense = hf.r.child("mlp_only_layers", false);
      dense && !dense->is_null() && !(dense->is_array() && dense->empty()))
    hf.r.error("mlp_only_layers",
               "dense layers among the MoE layers: dsplan plans models whose every layer is MoE", "[]");
}

}  // namespace

void mixtral(Hf& hf, ModelSpec& m) {
  llama(hf, m, true);
  read_experts(hf, m, "num_local_experts", nullptr);
}

// Qwen2MoeConfig's qkv_bias (default true) drops the Q, K and V biases; the shared expert
// is always built, so its width is required rather than taken from the class default.
void qwen2_moe(Hf& hf, ModelSpec& m) {
  qwen2(hf, m);
  m.qkv_bias = hf.flag("qkv_bias", true);
  read_experts(hf, m, "num_experts", "moe_intermediate_size");
  hf.from["shared_ffn"] = "shared_expert_intermediate_size";
  hf.r.get("shared_expert_intermediate_size", m.shared_ffn, true, 1, kMaxDim);
  require_every_layer_sparse(hf);
}

void qwen3_moe(Hf& hf, ModelSpec& m) {
  qwen3(hf, m);
  read_experts(hf, m, "num_experts", "moe_intermediate_size");
  require_every_layer_sparse(hf);
}

// OLMoE's experts are intermediate_size wide (OlmoeMLP); its context is 4096 unless stated.
void olmoe(Hf& hf, ModelSpec& m) {
  llama(hf, m, false);
  if (hf.first_present({"max_position_embeddings"}).empty()) m.max_positions = 4096;
  m.qk_norm = m.qk_norm_full_width = true;
  read_experts(hf, m, "num_experts", nullptr);
}

}  // namespace dsplan::hf
