// Hugging Face config.json import of the Llama-era rotary decoders: llama, mistral, qwen2,
// qwen3, phi3, olmo2 and the gemma generations share RMSNorm, a gated MLP and bias-free
// linears; starcoder2 keeps GPT's LayerNorm, biases and plain MLP. They differ in the keys below,
// each as the family's transformers config class defaults it. Sliding windows are read as
// transformers applies them.
#include <algorithm>

#include "core/json/hf_reader.h"

namespace dsplan::hf {
namespace {

// final_logit_softcapping or attn_logit_softcapping: a positive cap, or null (none).
bool softcap(Hf& hf, const char* key) {
  double cap = 0;
  if (hf.first_present({key}).empty()) return false;
  return hf.r.get(key, cap, false, 1e-6, 1e6);
}

// Sliding windows of the Qwen families: with use_sliding_window (default false), the
// layers from max_window_layers on (default 28).
int qwen_windowed_layers(Hf& hf, const ModelSpec& m) {
  if (!hf.flag("use_sliding_window", false)) return -1;
  int from = 28;
  hf.r.get("max_window_layers", from, false, 0, kMaxDim);
  return std::max(0, m.layers - from);
}

}  // namespace

// Sliding-window attention as transformers configures it (hf_reader.h): `sliding_window`
// keys (null or absent: none) in the layers layer_types marks "sliding_attention" when the
// config lists them, otherwise in the layers `windowed` says (0 = every layer). A window at
// least as long as the context changes nothing and is dropped.
void read_window(Hf& hf, ModelSpec& m, int windowed) {
  int w = 0;
  if (hf.first_present({"sliding_window"}).empty()) return;
  if (!hf.r.get("sliding_window", w, false, 1, 1 << 26) || w >= m.max_positions) return;
  if (const Json* types = hf.r.child("layer_types", false); types && !types->is_null()) {
    const bool strings = types->is_array() && std::all_of(types->begin(), types->end(),
                                                          [](const Json& t) { return t.is_string(); });
    if (!strings || static_cast<int>(types->size()) != m.layers) {
      hf.r.error("layer_types", "expected one string per layer (" + std::to_string(m.layers) + ")",
                 "\"sliding_attention\" or \"full_attention\" for each of num_hidden_layers");
      return;
    }
    const auto odd = std::find_if(types->begin(), types->end(), [](const Json& t) {
      return t != Json("sliding_attention") && t != Json("full_attention");
    });
    if (odd != types->end()) {
      hf.r.error("layer_types", "layer type " + odd->dump() + " is not one dsplan models",
                 "\"sliding_attention\" or \"full_attention\" for each of num_hidden_layers");
      return;
    }
    windowed = static_cast<int>(std::count(types->begin(), types->end(), Json("sliding_attention")));
    if (windowed == 0) return;
  }
  m.attention_window = w;
  m.window_layers = windowed >= m.layers ? 0 : windowed;
}

// The Llama-style decoders (RMSNorm, gated MLP, rotary, no biases unless stated): the
// keys they share (hf_reader.h). `head_dim` is read where the family allows it to differ
// from hidden / heads.
void llama_like(Hf& hf, ModelSpec& m, int default_positions, bool tied) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  m.kv_heads = m.heads;
  hf.get("kv_heads", {"num_key_value_heads"}, m.kv_heads, false);
  hf.get("head_dim", {"head_dim"}, m.head_dim, false);
  hf.get("ffn_hidden", {"intermediate_size"}, m.ffn_hidden, true);
  m.max_positions = default_positions;
  // Contexts beyond kMaxDim exist (Llama 4 Scout: 10,485,760); dsplan's schema allows 2^26.
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false, 1 << 26);
  m.activation = Activation::silu;
  m.tied_embeddings = hf.flag("tie_word_embeddings", tied);
  m.gated_mlp = true;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rotary;
  m.linear_bias = false;
  m.fused_qkv = m.fused_gate_up = false;  // q/k/v_proj; gate_proj, up_proj
  read_dropout(hf, m, {"attention_dropout"}, false);
}

// llama and mistral: RMSNorm, SwiGLU, rotary, no biases, untied head, optional GQA;
// mistral's sliding_window (v0.1) windows every layer.
void llama(Hf& hf, ModelSpec& m, bool mistral) {
  llama_like(hf, m, mistral ? 131072 : 2048, false);
  read_activation(hf, "hidden_act", m);
  hf.require_flag("attention_bias", false, "biases on the attention projections only");
  hf.require_flag("mlp_bias", false, "biases on the MLP projections only");
  if (mistral) read_window(hf, m, 0);  // Mistral 7B v0.1: 4096 keys in every layer
}

// qwen2 (Qwen2, Qwen2.5): Llama's block with biases on Q, K and V (o_proj and the MLP
// have none); the small models tie the head.
void qwen2(Hf& hf, ModelSpec& m) {
  llama_like(hf, m, 32768, false);
  read_activation(hf, "hidden_act", m);
  m.qkv_bias = true;
  if (const int n = qwen_windowed_layers(hf, m); n > 0) read_window(hf, m, n);
}

// qwen3: Llama's block with an RMSNorm on every query and key head, head_dim 128 unless
// stated; attention_bias (default false) adds biases to Q, K, V and the output projection,
// which ModelSpec cannot express without the MLP's.
void qwen3(Hf& hf, ModelSpec& m) {
  m.head_dim = 128;
  llama_like(hf, m, 32768, false);
  read_activation(hf, "hidden_act", m);
  hf.require_flag("attention_bias", false, "biases on the attention projections only");
  m.qk_norm = true;
  if (const int n = qwen_windowed_layers(hf, m); n > 0) read_window(hf, m, n);
}

// phi3 (Phi-3, Phi-3.5, Phi-4-mini): Llama's block with fused qkv_proj and gate_up_proj.
// partial_rotary_factor < 1 rotates part of each head: a cheaper pass than priced.
// Phi-3-mini windows every layer (sliding_window 2047 at a 4096 context).
void phi3(Hf& hf, ModelSpec& m) {
  llama_like(hf, m, 4096, false);
  read_activation(hf, "hidden_act", m);
  m.fused_qkv = m.fused_gate_up = true;
  read_dropout(hf, m, {"resid_pdrop", "embd_pdrop", "attention_dropout"}, false);
  read_window(hf, m, 0);
}

// gemma: Llama's block with a GeGLU MLP (tanh GELU), head_dim 256 unless stated, a tied
// head and the embedding scaled by sqrt(hidden) (one elementwise pass, not priced).
// Gemma 2 adds a norm after each sublayer (4 a block), a sliding window on every other
// layer and soft-capped logits and attention scores (attn_softcap: inside FlashAttention,
// three passes over the scores with standard attention).
// Gemma 3 (gemma3_text) drops the capping and adds the query and key norms, with five
// windowed layers in six.
void gemma(Hf& hf, ModelSpec& m, int version) {
  m.head_dim = 256;
  llama_like(hf, m, 8192, true);
  m.activation = Activation::gelu;
  if (const std::string key = hf.first_present({"hidden_activation", "hidden_act"}); !key.empty())
    read_activation(hf, key.c_str(), m);
  hf.require_flag("attention_bias", false, "biases on the attention projections only");
  if (version == 1) return;
  m.norms_per_layer = 4;
  if (version == 2) {
    read_window(hf, m, (m.layers + 1) / 2);  // layers 0, 2, 4, ...
    m.logit_softcap = softcap(hf, "final_logit_softcapping");
    m.attn_softcap = softcap(hf, "attn_logit_softcapping");
    return;
  }
  m.qk_norm = true;
  int pattern = 6;
  hf.r.get("sliding_window_pattern", pattern, false, 1, kMaxDim);
  read_window(hf, m, m.layers - m.layers / pattern);  // every pattern-th layer is global
  m.logit_softcap = softcap(hf, "final_logit_softcapping");
  m.attn_softcap = softcap(hf, "attn_logit_softcapping");
}

// olmo2 (OLMo 2): Llama's linears with the norms moved: no norm before a sublayer, one on
// each sublayer's output before the residual add (the same two norm passes and saved
// tensors as pre-norms), and one RMSNorm over all the queries and one over all the keys.
void olmo2(Hf& hf, ModelSpec& m) {
  llama_like(hf, m, 4096, false);
  read_activation(hf, "hidden_act", m);
  hf.require_flag("attention_bias", false, "biases on the attention projections only");
  m.qk_norm = m.qk_norm_full_width = true;
}

// starcoder2: GQA, rotary and a sliding window (4096 in the released models) on GPT's
// block: LayerNorms with biases, biases on every linear (use_bias, default true), a plain
// tanh-GELU MLP (c_fc, c_proj), separate q/k/v_proj, a tied head by default.
void starcoder2(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  m.kv_heads = 2;
  hf.get("kv_heads", {"num_key_value_heads"}, m.kv_heads, false);
  hf.get("ffn_hidden", {"intermediate_size"}, m.ffn_hidden, true);
  m.max_positions = 4096;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false);
  m.activation = Activation::gelu;
  read_activation(hf, "hidden_act", m);
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.linear_bias = hf.flag("use_bias", true);
  m.position = PositionKind::rotary;
  m.fused_qkv = false;  // q_proj, k_proj, v_proj
  read_dropout(hf, m, {"residual_dropout", "embedding_dropout", "attention_dropout"}, false);
  read_window(hf, m, 0);
}

}  // namespace dsplan::hf
