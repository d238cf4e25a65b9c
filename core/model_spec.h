// A transformer's architecture as dsplan models it: enough to count every parameter
// exactly and to list every GEMM and memory-bound kernel of a training step.
// Covers decoder-only GPT/Llama/Mistral/NeoX/OPT/BLOOM and encoder BERT/DistilBERT
// families, and mixture-of-experts variants of the decoders (Mixtral, Qwen-MoE, OLMoE:
// every layer's MLP routed to top-k of n experts, optional shared experts; GLM-4.5 and
// Llama 4: some layers dense; gpt-oss: biased experts, attention sinks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dsplan {

enum class Activation : std::uint8_t { gelu, relu, silu };
enum class NormKind : std::uint8_t { layernorm, rmsnorm };
// learned: a table of max_positions x hidden; rotary and alibi add no parameters.
enum class PositionKind : std::uint8_t { learned, rotary, alibi };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // == heads for MHA, 1 for MQA, in between for GQA
  int head_dim = 0;        // usually hidden / heads
  int ffn_hidden = 0;      // intermediate size of the MLP
  bool gated_mlp = false;  // SwiGLU/GeGLU: three FFN matrices instead of two
  // How the model code lays out its projections (the parameters are the same either way).
  // fused_qkv: one linear computes Q, K and V (Megatron, GPT-2, GPT-NeoX, BLOOM, Falcon,
  // MPT); false: three linears (Hugging Face BERT, DistilBERT, OPT, Llama, Mistral, and
  // torchtitan's Llama). fused_gate_up: one linear computes a gated MLP's gate and up
  // projections (Megatron, IBM FMS); false: two (Hugging Face Llama/Mistral, torchtitan).
  // Separate linears run more, smaller GEMMs, more kernels and per-tensor work, and their
  // shared input's gradient is summed by autograd. Megatron's layers (Megatron, and
  // Megatron-DeepSpeed with TP: TrainConfig::megatron_layers) fuse both whatever the model.
  bool fused_qkv = true;
  bool fused_gate_up = true;
  Activation activation = Activation::gelu;
  // The activation runs as a chain of separate elementwise kernels rather than one fused
  // kernel: Hugging Face GPT-2's gelu_new, 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))),
  // written in Python (pow, mul, add, mul, tanh, add, mul, mul). It costs 8 kernel
  // launches and 18 tensor passes forward, and autograd keeps 3 more f-wide tensors
  // (tanh output, 1 + tanh, 0.5x) for the backward.
  bool activation_unfused = false;
  std::int64_t vocab = 0;
  bool tied_embeddings = true;  // LM head shares the input embedding matrix
  PositionKind position = PositionKind::learned;
  int max_positions = 0;  // max context (and rows of the learned position table)
  // Tokens per sequence of the model's main pre-training phase where its context was
  // extended afterwards (Llama 3.1: 8192 of 131072; DeepSeek-V3: 4096 of 163840); 0 = not
  // known or not extended: max_positions. What `estimate` plans when no --seq is given.
  int pretrain_seq = 0;
  // Learned-table rows before position 0 that no token uses as context: RoBERTa's padding
  // offset (max_position_embeddings 514 for 512 tokens) and OPT's 2. Parameters only.
  int position_offset_rows = 0;
  NormKind norm = NormKind::layernorm;
  bool norm_bias = true;        // LayerNorms carry a bias (false: MPT's weight-only LayerNorm)
  bool linear_bias = true;      // biases on QKV/proj/FFN linears
  // Biases on the Q, K and V projections only, the rest without (Qwen2, Qwen2.5); only
  // read when linear_bias is false.
  bool qkv_bias = false;
  // An RMSNorm over head_dim on every query and key head before the rotary embedding, one
  // head_dim weight each per layer (Qwen3, Gemma 3); with qk_norm_full_width one norm over
  // all the queries and one over all the keys, weights heads x head_dim and kv_heads x
  // head_dim (OLMo 2). The same elements are normalised either way.
  bool qk_norm = false;
  bool qk_norm_full_width = false;
  bool causal = true;           // decoder (causal mask) vs encoder
  bool parallel_residual = false;  // GPT-NeoX/GPT-J style attention || MLP
  // Norms per block: 2 (before attention and before the MLP), 1 when one norm feeds both
  // parallel branches (Falcon-7B; needs parallel_residual), or 4 when each sublayer is also
  // normed on its way out (Gemma 2 and 3's "sandwich" pre- and post-norms).
  int norms_per_layer = 2;
  // Sliding-window attention: in `window_layers` of the layers (0 = every layer) each token
  // attends to at most `attention_window` keys, itself included (0 = no window). Mistral
  // v0.1 and Phi-3-mini window every layer, Gemma 2 every other one. Kernels that take a
  // window (FlashAttention's window_size) skip the key blocks outside it.
  int attention_window = 0;
  int window_layers = 0;
  // Gemma 2's final-logit soft-capping, logits = cap * tanh(logits / cap): three
  // elementwise passes over the 16-bit logits each way, and the tanh output is saved.
  bool logit_softcap = false;
  // Gemma 2's attn_logit_softcapping, scores = cap * tanh(scores / cap) before the softmax.
  // FlashAttention (flash-attn >= 2.6) applies it inside the kernel; standard attention
  // runs three passes over the scores each way and keeps the tanh output.
  bool attn_softcap = false;
  int type_vocab = 0;           // BERT token-type embeddings (0 = none)
  bool embedding_norm = false;  // a norm right after the embeddings (BERT, BLOOM)
  bool final_norm = true;       // a norm after the last layer
  bool pooler = false;          // BERT pooler (hidden x hidden dense + bias)
  // false for a task head without vocabulary-sized logits (sequence classification
  // fine-tuning); the memory model then adds no b x s x vocab logits tensor.
  bool vocab_logits = true;
  // Megatron pads the vocabulary to a multiple of this x TP; 1 = no padding.
  int vocab_pad_multiple = 1;
  // Whether training runs dropout layers (probability > 0): they cost a pass over each
  // residual-stream tensor and keep a 1-byte mask per element for the backward. Unset:
  // LayerNorm models (GPT-2, BERT, OPT) have them, RMSNorm models (Llama, Mistral) not.
  // Many LayerNorm models train without dropout (BLOOM, GPT-NeoX-20B, MPT).
  std::optional<bool> dropout;
  // Mixture of experts (docs/model.md §4.11). experts > 0: every layer's MLP is a router
  // (a hidden x experts linear) over `experts` routed experts, each an MLP of width moe_ffn
  // (gated_mlp and activation as the dense one), of which each token runs `topk`; plus
  // shared experts that every token runs, shared_ffn wide in all (0 = none; Qwen2-MoE's
  // shared_expert_intermediate_size). ffn_hidden is then the dense layers' width (below).
  // Experts and the router carry biases only with moe_bias.
  int experts = 0;
  int topk = 0;
  int moe_ffn = 0;
  int shared_ffn = 0;
  // Which layers are MoE (is_moe_layer): after the first `first_dense_layers` layers, every
  // moe_layer_step-th one; the others keep a dense MLP of ffn_hidden. DeepSeek-V2/V3 and
  // GLM-4.5 start with dense layers (first_k_dense_replace), Llama 4 Maverick alternates
  // (interleave_moe_layer_step 2; Megatron's --moe-layer-freq). Defaults: every layer.
  int first_dense_layers = 0;
  int moe_layer_step = 1;
  // Group-limited routing (DeepSeek-V2/V3's device- or node-limited top-k; HF n_group and
  // topk_group, Megatron's --moe-router-num-groups and --moe-router-group-topk): the experts
  // form moe_groups equal groups in order, and a token's top-k experts come from the
  // moe_group_topk groups it scores best. 0 = no groups.
  int moe_groups = 0;
  int moe_group_topk = 0;
  // gpt-oss (OpenAI 2025, its model card; transformers' GptOss*): the router and every
  // routed expert's linears carry biases (moe_bias: experts per router, and per expert the
  // up/gate outputs and the hidden width); each attention head has a learned sink, one
  // logit added to its softmax's denominator (attention_sinks: heads parameters a layer;
  // FlashAttention-2 and -3 have no backward for it, Transformer Engine's cuDNN attention
  // has); and the gated MLP's activation is clamped, gate * sigmoid(1.702 gate) * (up + 1)
  // after clamping gate and up to a limit (activation_clamp: one fused kernel under
  // Megatron-Core, a chain of seven elementwise ops in eager model code).
  bool moe_bias = false;
  bool attention_sinks = false;
  bool activation_clamp = false;
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2; Megatron-Core's
  // MLASelfAttention; docs/model.md §4.12), on when kv_lora_rank > 0: keys and values come
  // up from a kv_lora_rank-wide latent (one hidden -> kv_lora_rank + qk_rope_head_dim
  // projection, an RMSNorm, then kv_lora_rank -> heads x (head_dim + v_head_dim)), queries
  // from a q_lora_rank-wide one the same way (q_lora_rank 0: one hidden -> heads x
  // (head_dim + qk_rope_head_dim) projection). head_dim is then the per-head query/key part
  // without rotary (qk_nope_head_dim), qk_rope_head_dim the rotary part shared by every
  // head's key, v_head_dim the value and attention-output width per head; kv_heads = heads.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

inline bool is_moe(const ModelSpec& m) { return m.experts > 0; }
// Whether layer i (0-based) of an MoE model routes its MLP to experts (ModelSpec::
// first_dense_layers, moe_layer_step), and how many layers do.
inline bool is_moe_layer(const ModelSpec& m, int i) {
  const int step = m.moe_layer_step > 0 ? m.moe_layer_step : 1;
  return is_moe(m) && i >= m.first_dense_layers && (i - m.first_dense_layers) % step == step - 1;
}
// MoE layers among layers 0 .. n-1: of the n - first_dense_layers after the leading ones,
// every step-th (is_moe_layer, counted in closed form).
inline int moe_layers_below(const ModelSpec& m, int n) {
  const int step = m.moe_layer_step > 0 ? m.moe_layer_step : 1;
  return is_moe(m) && n > m.first_dense_layers ? (n - m.first_dense_layers) / step : 0;
}
inline int moe_layer_count(const ModelSpec& m) { return moe_layers_below(m, m.layers); }
// Whether some layers of an MoE model keep a dense MLP: leading ones, or (step > 1) the
// first of every step.
inline bool has_dense_layers(const ModelSpec& m) {
  return is_moe(m) && m.layers > 0 && (m.first_dense_layers > 0 || m.moe_layer_step > 1);
}
// The MLP width one token runs through in an MoE layer (topk routed experts and the shared
// ones), or a dense layer's ffn_hidden.
inline double active_ffn(const ModelSpec& m) {
  return is_moe(m) ? double(m.topk) * m.moe_ffn + m.shared_ffn : double(m.ffn_hidden);
}

// The attention head width and key/value head count, with the fallbacks of a hand-built
// spec (a loaded model always sets both): hidden / heads, and MHA's kv_heads = heads.
inline int head_dim_of(const ModelSpec& m) {
  return m.head_dim > 0 ? m.head_dim : m.hidden / (m.heads > 0 ? m.heads : 1);
}
inline int kv_heads_of(const ModelSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
inline bool is_mla(const ModelSpec& m) { return m.kv_lora_rank > 0; }
// Per-head widths the attention core multiplies: queries and keys (with MLA their rotary
// part too), and values (= the attention output's per head).
inline int qk_head_dim_of(const ModelSpec& m) {
  return head_dim_of(m) + (is_mla(m) ? m.qk_rope_head_dim : 0);
}
inline int v_head_dim_of(const ModelSpec& m) {
  return is_mla(m) && m.v_head_dim > 0 ? m.v_head_dim : head_dim_of(m);
}

// Layers whose attention is windowed: window_layers, or every layer when it is 0.
inline int windowed_layers_of(const ModelSpec& m) {
  if (m.attention_window <= 0) return 0;
  return m.window_layers > 0 ? m.window_layers : m.layers;
}

// Biases on the Q, K and V projections: with every linear's (linear_bias), or alone.
inline bool has_qkv_bias(const ModelSpec& m) { return m.linear_bias || m.qkv_bias; }

inline bool has_dropout(const ModelSpec& m) {
  return m.dropout.value_or(m.norm == NormKind::layernorm);
}

}  // namespace dsplan
