// Parameter counting. Layouts follow the reference implementations:
//  - attention: Q has heads*head_dim outputs, K and V kv_heads*head_dim each (GQA/MQA);
//    output projection heads*head_dim -> hidden; biases when linear_bias (on Q, K and V
//    alone with qkv_bias); a head_dim RMSNorm weight each for queries and keys (qk_norm).
//  - MLP: gated (SwiGLU) has gate, up and down matrices, otherwise up and down.
//  - MoE: shared experts as a dense MLP of shared_ffn, a hidden x experts router, and
//    `experts` expert MLPs of moe_ffn (Mixtral, Qwen-MoE, OLMoE layouts), in the MoE
//    layers; the dense layers among them (DeepSeek, GLM-4.5, Llama 4) a dense MLP. Router
//    and experts are bias-free but with moe_bias (gpt-oss: a bias per expert on the router,
//    and on each expert's up/gate outputs and its hidden-wide output).
//  - Attention sinks (gpt-oss): one learned logit per head and layer, with the attention.
//  - LayerNorm has weight and bias, RMSNorm only a weight; norms_per_layer norms a layer.
//  - Multi-head latent attention (mla_weights): the down and up projections of the query
//    and key/value latents, an RMSNorm on each latent, and the heads x v_head_dim -> hidden
//    projection (DeepSeek-V2/V3 layout; no biases).
#include "estimator/params.h"

#include <algorithm>

namespace dsplan {

ParamCounts count_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden;
  const std::int64_t d = head_dim_of(m);
  const std::int64_t q = static_cast<std::int64_t>(m.heads) * d;
  const std::int64_t kv = static_cast<std::int64_t>(kv_heads_of(m)) * d;
  const std::int64_t f = m.ffn_hidden;
  const std::int64_t norm = m.norm == NormKind::layernorm && m.norm_bias ? 2 * h : h;
  const bool b = m.linear_bias;

  ParamCounts c;
  c.word_embedding = m.vocab * h;
  if (m.position == PositionKind::learned)
    c.other_embedding += static_cast<std::int64_t>(m.max_positions + m.position_offset_rows) * h;
  c.other_embedding += static_cast<std::int64_t>(m.type_vocab) * h;
  if (m.embedding_norm) c.other_embedding += norm;

  const bool qkv_b = has_qkv_bias(m);
  const std::int64_t qkv = h * (q + 2 * kv) + (qkv_b ? q + 2 * kv : 0);
  const std::int64_t proj = q * h + (b ? h : 0);
  c.attention = qkv + proj + (m.attention_sinks ? m.heads : 0);
  const MlaWeights mla = mla_weights(m);
  if (is_mla(m)) c.attention = std::int64_t(mla.total()) + (b ? h : 0);
  const std::int64_t mats = m.gated_mlp ? 3 : 2;
  c.layers = m.layers;
  if (is_moe(m)) {
    c.moe_layers = moe_layer_count(m);
    c.dense_mlp = mats * h * f + (b ? (mats - 1) * f + h : 0);
    const std::int64_t sf = m.shared_ffn;
    c.mlp = sf > 0 ? mats * h * sf + (b ? (mats - 1) * sf + h : 0) : 0;
    c.router = h * m.experts + (m.moe_bias ? m.experts : 0);
    c.experts = m.experts * expert_params(m);
  } else {
    c.mlp = mats * h * f + (b ? (mats - 1) * f + h : 0);
  }
  c.layer_norms = m.norms_per_layer * norm + (!m.qk_norm ? 0 : m.qk_norm_full_width ? q + kv : 2 * d);
  if (is_mla(m)) c.layer_norms += m.q_lora_rank + m.kv_lora_rank;  // the latents' RMSNorms
  c.final_norm = m.final_norm ? norm : 0;
  c.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  c.pooler = m.pooler ? h * h + h : 0;

  // Separate Q, K and V (or gate and up) linears are modules of their own.
  const std::int64_t qkv_module = m.fused_qkv ? qkv : h * q + (qkv_b ? q : 0);
  const std::int64_t up_width =
      !is_moe(m) ? f : std::max<std::int64_t>({m.shared_ffn, m.moe_ffn, has_dense_layers(m) ? f : 0});
  const std::int64_t up_module =
      (m.gated_mlp && m.fused_gate_up ? 2 : 1) * (h * up_width + (b ? up_width : 0));
  c.largest_module = std::max({c.word_embedding, is_mla(m) ? std::int64_t(mla.largest()) : qkv_module,
                               is_mla(m) ? std::int64_t(mla.proj) : proj, up_module, c.lm_head});
  return c;
}

LayerLinears layer_linears(const ModelSpec& m, bool megatron_layers) {
  LayerLinears l;
  if (megatron_layers) return l;
  l.qkv = m.fused_qkv ? 1 : 3;
  l.up_gate = m.gated_mlp && !m.fused_gate_up ? 2 : 1;
  return l;
}

int layer_tensors(const ModelSpec& m, bool megatron_layers) {
  const bool norm_bias = m.norm == NormKind::layernorm && m.norm_bias;
  const LayerLinears l = layer_linears(m, megatron_layers);
  return l.total() + bias_tensors(m, l) + m.norms_per_layer * (norm_bias ? 2 : 1) + (m.qk_norm ? 2 : 0);
}

int bias_tensors(const ModelSpec& m, const LayerLinears& l) {
  return m.linear_bias ? l.total() : m.qkv_bias ? l.qkv : 0;
}

double matmul_params_per_layer(const ModelSpec& m) {
  const double h = m.hidden, hd = head_dim_of(m), q = m.heads * hd, kv = kv_heads_of(m) * hd;
  const double mats = m.gated_mlp ? 3.0 : 2.0;
  const double attention = is_mla(m) ? mla_weights(m).total() : h * (q + 2 * kv) + q * h;
  if (!is_moe(m)) return attention + h * m.ffn_hidden * mats;
  const double moe = h * active_ffn(m) * mats + h * m.experts, dense = h * m.ffn_hidden * mats;
  const double share = m.layers > 0 ? double(moe_layer_count(m)) / m.layers : 1.0;
  return attention + share * moe + (1.0 - share) * dense;
}

std::int64_t expert_params(const ModelSpec& m) {
  const std::int64_t mats = m.gated_mlp ? 3 : 2, h = m.hidden, f = m.moe_ffn;
  return mats * h * f + (m.moe_bias ? (mats - 1) * f + h : 0);
}

std::int64_t active_params(const ModelSpec& m) {
  const ParamCounts c = count_params(m);
  const std::int64_t inactive = is_moe(m) ? (m.experts - m.topk) * expert_params(m) : 0;
  return c.total() - inactive * c.moe_layers;
}

MlaWeights mla_weights(const ModelSpec& m) {
  MlaWeights w;
  if (!is_mla(m)) return w;
  const double h = m.hidden, H = m.heads, dn = head_dim_of(m), dr = m.qk_rope_head_dim, dv = v_head_dim_of(m);
  const double ql = m.q_lora_rank, kl = m.kv_lora_rank;
  w.q_down = ql > 0 ? h * ql : 0.0;
  w.q_up = (ql > 0 ? ql : h) * H * (dn + dr);
  w.kv_down = h * (kl + dr);
  w.kv_up = kl * H * (dn + dv);
  w.proj = H * dv * h;
  return w;
}

double moe_layer_share(const ModelSpec& m, const TrainConfig& cfg) {
  if (!has_dense_layers(m)) return 1.0;
  const int pp = std::max(1, cfg.pp), v = pp > 1 ? std::max(1, cfg.vpp) : 1;
  const int front = pp > 1 && cfg.pp_account_embedding ? 1 : 0;
  const int back = pp > 1 && cfg.pp_account_loss ? 1 : 0;
  const int units = m.layers + front + back, chunks = pp * v;
  const int size = (units + chunks - 1) / chunks;  // units per chunk (the last may hold fewer)
  // A chunk's first unit: even chunks, or the explicit split's ends and even middle chunks.
  const bool ends = pp > 1 && cfg.explicit_split() && chunks > 2;
  const int mid = ends ? cfg.middle_chunk_layers(m.layers) : 0;
  auto start = [&](int j) {
    if (!ends) return std::min(units, j * size);
    return j == 0 ? 0 : std::min(units, cfg.pp_first_layers + (j - 1) * mid);
  };
  // The busiest rank is priced as its most layers, of which the most MoE layers any rank
  // holds (no rank costs more when an MoE layer costs more than a dense one).
  int most = 0, most_moe = 0;
  for (int r = 0; r < pp; ++r) {
    int layers = 0, moe = 0;
    for (int j = r; j < chunks; j += pp) {
      // the chunk's transformer layers (not the embedding's or the loss's unit)
      const int lo = std::max(0, start(j) - front);
      const int hi = std::min(m.layers, (j + 1 == chunks ? units : start(j + 1)) - front);
      if (hi <= lo) continue;
      layers += hi - lo;
      moe += moe_layers_below(m, hi) - moe_layers_below(m, lo);
    }
    most = std::max(most, layers);
    most_moe = std::max(most_moe, moe);
  }
  return most > 0 ? double(most_moe) / most : 1.0;
}

ModelSpec dense_layer_view(const ModelSpec& m) {
  ModelSpec d = m;
  d.experts = d.topk = d.moe_ffn = d.shared_ffn = 0;
  d.first_dense_layers = 0;
  d.moe_layer_step = 1;
  return d;
}

std::int64_t padded_vocab(const ModelSpec& m, int tp) {
  const std::int64_t mult = static_cast<std::int64_t>(std::max(1, m.vocab_pad_multiple)) * std::max(1, tp);
  return (m.vocab + mult - 1) / mult * mult;
}

}  // namespace dsplan
