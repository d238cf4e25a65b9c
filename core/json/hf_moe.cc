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
//    Both Qwen types make layer i sparse iff i is not in mlp_only_layers and (i + 1) is a
//    multiple of decoder_sparse_step; the other layers keep a dense MLP of
//    intermediate_size. Patterns that are dsplan's (ModelSpec::first_dense_layers,
//    moe_layer_step) are imported as such, the others refused.
//  - olmoe (OlmoeConfig, OLMoE-1B-7B): Llama's pre-norm block with OLMo 2's query and key
//    norms over the full projection widths (OlmoeAttention: q_norm over hidden_size, k_norm
//    over head_dim x num_key_value_heads); num_experts of intermediate_size,
//    num_experts_per_tok a token. clip_qkv clamps Q, K and V: elementwise, not priced.
//  - glm4_moe (Glm4MoeConfig, GLM-4.5 and GLM-4.5-Air): Llama's block with biases on Q, K
//    and V alone (attention_bias; o_proj has none) and optional per-head query and key
//    RMSNorms (use_qk_norm); the first first_k_dense_replace layers keep a dense MLP of
//    intermediate_size, the others route to n_routed_experts of moe_intermediate_size,
//    num_experts_per_tok a token, beside n_shared_experts shared ones of the same width.
//  - llama4_text (Llama4TextConfig, Llama 4 Scout and Maverick): Llama's block; MoE layers
//    every interleave_moe_layer_step-th layer (moe_layers), each num_local_experts experts
//    of intermediate_size, num_experts_per_tok a token, plus one shared expert of
//    intermediate_size; the other layers a dense MLP of intermediate_size_mlp.
//  - gpt_oss (GptOssConfig, gpt-oss-20b and -120b): gpt_oss() below.
#include <algorithm>
#include <cstdint>
#include <vector>

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

// Qwen's layer pattern (Qwen2MoeDecoderLayer, Qwen3MoeDecoderLayer): layer i is sparse iff
// i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0. Mapped onto dsplan's
// first_dense_layers and moe_layer_step when it is one of their patterns (leading dense
// layers, then every step-th layer MoE), refused otherwise.
void read_sparse_layers(Hf& hf, ModelSpec& m) {
  int step = 1;
  hf.r.get("decoder_sparse_step", step, false, 1, kMaxDim);
  std::vector<bool> dense_listed(static_cast<std::size_t>(std::max(m.layers, 0)), false);
  bool listed = false;
  if (const Json* dense = hf.r.child("mlp_only_layers", false); dense && !dense->is_null()) {
    const bool ints =
        dense->is_array() && std::all_of(dense->begin(), dense->end(), [&](const Json& v) {
          return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() < m.layers;
        });
    if (!ints) {
      hf.r.error("mlp_only_layers", "expected a list of layer indices",
                 "the dense layers, each in [0, " + std::to_string(m.layers) + ")");
      return;
    }
    for (const Json& v : *dense) dense_listed[v.get<std::size_t>()] = listed = true;
  }
  if (step == 1 && !listed) return;
  std::vector<int> sparse;
  for (int i = 0; i < m.layers; ++i)
    if (!dense_listed[static_cast<std::size_t>(i)] && (i + 1) % step == 0) sparse.push_back(i);
  const char* key = listed ? "mlp_only_layers" : "decoder_sparse_step";
  const std::string pattern =
      "decoder_sparse_step " + std::to_string(step) + (listed ? " and mlp_only_layers" : std::string());
  if (sparse.empty()) {
    hf.r.error(key, pattern + " leave no MoE layer among the " + std::to_string(m.layers),
               "an MoE model needs at least one sparse layer");
    return;
  }
  // The candidate: the gap between the first two MoE layers (or, with one, a step past
  // the last layer), the dense layers before the first MoE layer's step.
  const int first = sparse.front();
  const int cand_step = sparse.size() > 1 ? sparse[1] - first : std::max(1, m.layers - first);
  ModelSpec p = m;
  p.moe_layer_step = cand_step;
  p.first_dense_layers = first - cand_step + 1;
  bool fits = p.first_dense_layers >= 0;
  for (int i = 0, k = 0; fits && i < m.layers; ++i) {
    const bool is_sparse = k < static_cast<int>(sparse.size()) && sparse[static_cast<std::size_t>(k)] == i;
    k += is_sparse ? 1 : 0;
    fits = is_moe_layer(p, i) == is_sparse;
  }
  if (!fits) {
    hf.r.error(key,
               "the MoE layers of " + pattern +
                   " are not leading dense layers followed by every n-th "
                   "layer MoE, the patterns dsplan models",
               "e.g. mlp_only_layers [0, 1] (then every decoder_sparse_step-th layer), or "
               "decoder_sparse_step alone");
    return;
  }
  m.first_dense_layers = p.first_dense_layers;
  m.moe_layer_step = p.moe_layer_step;
  hf.from["first_dense_layers"] = key;
  hf.from["moe_layer_step"] = "decoder_sparse_step";
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
  read_sparse_layers(hf, m);
}

void qwen3_moe(Hf& hf, ModelSpec& m) {
  qwen3(hf, m);
  read_experts(hf, m, "num_experts", "moe_intermediate_size");
  read_sparse_layers(hf, m);
}

// OLMoE's experts are intermediate_size wide (OlmoeMLP); its context is 4096 unless stated.
void olmoe(Hf& hf, ModelSpec& m) {
  llama(hf, m, false);
  if (hf.first_present({"max_position_embeddings"}).empty()) m.max_positions = 4096;
  m.qk_norm = m.qk_norm_full_width = true;
  read_experts(hf, m, "num_experts", nullptr);
}

// GLM-4.5's MoE layers as transformers holds them (Glm4MoeMoE). Its router also keeps an
// e_score_correction_bias of n_routed_experts floats per MoE layer, a buffer the load
// balancer adjusts (register_buffer), not a trained parameter: not counted. The
// num_nextn_predict_layers multi-token-prediction layers of the checkpoint (GLM-4.5-Air:
// one, stored as model.layers.46) are not part of the model transformers trains
// (_keys_to_ignore_on_load_unexpected) and are neither counted nor priced here.
// partial_rotary_factor (0.5) rotates half of each head: a cheaper rotary pass than priced.
void glm4_moe(Hf& hf, ModelSpec& m) {
  llama_like(hf, m, 131072, false);
  read_activation(hf, "hidden_act", m);
  m.qkv_bias = hf.flag("attention_bias", false);  // q/k/v_proj only; o_proj has no bias
  m.qk_norm = hf.flag("use_qk_norm", false);      // a head_dim RMSNorm each for Q and K
  read_experts(hf, m, "n_routed_experts", "moe_intermediate_size");
  int shared = 1;
  hf.r.get("n_shared_experts", shared, false, 0, 1 << 16);
  m.shared_ffn = shared * m.moe_ffn;
  hf.from["shared_ffn"] = "n_shared_experts";
  m.first_dense_layers = 1;
  hf.r.get("first_k_dense_replace", m.first_dense_layers, false, 0, kMaxDim);
  hf.from["first_dense_layers"] = "first_k_dense_replace";
}

// Llama 4's text model. Its query and key norm (use_qk_norm, Scout) is a weightless L2
// norm (Llama4TextL2Norm), unlike ModelSpec::qk_norm's weighted RMSNorm, so it is not set:
// it adds no parameters. Chunked attention (attention_chunk_size on the RoPE layers) and
// the NoPE layers (no_rope_layers) are not modelled: attention is priced as full causal
// attention with rotary embeddings in every layer. The shared expert's and the dense
// MLP's gate and up projections are separate linears, as are Q, K and V.
void llama4_text(Hf& hf, ModelSpec& m) {
  m.head_dim = 128;  // Llama4TextConfig's default
  llama_like(hf, m, 4096 * 32, false);
  read_activation(hf, "hidden_act", m);
  hf.require_flag("attention_bias", false, "biases on the attention projections only");
  read_experts(hf, m, "num_local_experts", nullptr);  // intermediate_size: an expert's width
  m.shared_ffn = m.moe_ffn;                           // and the one shared expert's
  hf.from["shared_ffn"] = "intermediate_size";
  m.ffn_hidden = 16384;  // intermediate_size_mlp: the dense layers' MLP (class default)
  hf.get("ffn_hidden", {"intermediate_size_mlp"}, m.ffn_hidden, false);
  hf.from["ffn_hidden"] = "intermediate_size_mlp";
  hf.r.get("interleave_moe_layer_step", m.moe_layer_step, false, 1, kMaxDim);
  hf.from["moe_layer_step"] = "interleave_moe_layer_step";
  // moe_layers, when listed, must be the step's own range(step - 1, layers, step).
  if (const Json* listed = hf.r.child("moe_layers", false); listed && !listed->is_null()) {
    Json want = Json::array();
    for (int i = m.moe_layer_step - 1; i < m.layers; i += m.moe_layer_step) want.push_back(i);
    if (*listed != want)
      hf.r.error("moe_layers", "MoE layers other than every interleave_moe_layer_step-th layer",
                 "dsplan models layers step-1, 2*step-1, ...: remove moe_layers or list those");
  }
}

// gpt-oss (transformers' GptOssConfig and modeling_gpt_oss; OpenAI's gpt-oss model card,
// 2025): Llama's pre-norm block with biases on Q, K, V and the output projection
// (attention_bias, default true), heads of head_dim (64) that need not tile hidden, and a
// learned sink logit per head in every layer (GptOssAttention.sinks, always built). The
// layers layer_types marks "sliding_attention" (every other one) attend to sliding_window
// keys. Every layer's MLP routes to num_local_experts experts of intermediate_size,
// num_experts_per_tok a token, with biases on the router and the experts
// (GptOssTopKRouter.bias, GptOssExperts' gate_up_proj_bias and down_proj_bias), through the
// clamped SwiGLU when swiglu_limit is set (default 7.0). Its context is extended with YaRN
// from initial_context_length, which rope_scaling repeats as original_max_position_embeddings
// (read into pretrain_seq by hf_config.cc).
void gpt_oss(Hf& hf, ModelSpec& m) {
  m.head_dim = 64;  // GptOssConfig's default
  llama_like(hf, m, 131072, false);
  m.linear_bias = hf.flag("attention_bias", true);
  m.attention_sinks = true;
  read_window(hf, m, m.layers / 2);
  read_experts(hf, m, "num_local_experts", nullptr);
  m.moe_bias = true;
  m.fused_gate_up = true;  // an expert's gate and up projections: one interleaved matrix
  double limit = 7.0;      // null: no clamp
  if (hf.json.contains("swiglu_limit") && hf.json["swiglu_limit"].is_null())
    limit = 0;
  else
    hf.r.get("swiglu_limit", limit, false, 0.0, 1e6);
  m.activation_clamp = limit > 0;
}

}  // namespace dsplan::hf
