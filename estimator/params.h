// Exact parameter counts of a ModelSpec, by component, as the framework's modules hold
// them (Hugging Face / Megatron layouts). The memory model shards these components
// differently (embeddings vs layers vs replicated norms), so a breakdown is returned.
#pragma once

#include <cstdint>

#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

struct ParamCounts {
  std::int64_t word_embedding = 0;  // vocab x hidden
  std::int64_t other_embedding = 0; // positions, token types, embedding norm
  std::int64_t attention = 0;       // per layer: QKV + output projection (+ biases)
  std::int64_t mlp = 0;             // per layer: FFN matrices (+ biases); MoE: the shared experts'
  std::int64_t router = 0;          // per layer, MoE: the hidden x experts router (replicated over TP)
  std::int64_t experts = 0;         // per layer, MoE: every routed expert's MLP matrices
  std::int64_t layer_norms = 0;     // per layer: the norms' weights and biases (q/k norms too)
  std::int64_t final_norm = 0;
  std::int64_t lm_head = 0;         // 0 when tied to the word embedding
  std::int64_t pooler = 0;          // BERT pooler
  // MoE models with dense layers (ModelSpec::first_dense_layers, moe_layer_step): how many
  // layers route to experts, and a dense layer's MLP (ffn_hidden wide).
  int layers = 0;
  int moe_layers = 0;
  std::int64_t dense_mlp = 0;
  // Parameters of a layer: an MoE layer's in an MoE model (the fields above), and a dense
  // layer's (the MoE fields' place taken by dense_mlp; the same as per_layer() in a dense model).
  std::int64_t per_layer() const { return attention + mlp + layer_norms + router + experts; }
  std::int64_t dense_layer() const {
    return moe_layers > 0 ? attention + dense_mlp + layer_norms : per_layer();
  }
  std::int64_t all_layers() const {
    return moe_layers > 0 ? per_layer() * moe_layers + dense_layer() * (layers - moe_layers)
                          : per_layer() * layers;
  }
  std::int64_t total() const {
    return word_embedding + other_embedding + all_layers() + final_norm + lm_head + pooler;
  }
  // Largest single module's own parameters (DeepSpeed's largest_layer_params).
  std::int64_t largest_module = 0;
};

// Multi-head latent attention's weight matrices (ModelSpec::kv_lora_rank > 0; zero
// otherwise): the query latent's down projection (0 without q_lora_rank) and its up
// projection (or the direct query projection) to heads x (head_dim + qk_rope_head_dim), the
// key/value down projection to kv_lora_rank + qk_rope_head_dim and its up projection to
// heads x (head_dim + v_head_dim), and the output projection from heads x v_head_dim.
struct MlaWeights {
  double q_down = 0, q_up = 0, kv_down = 0, kv_up = 0, proj = 0;
  double total() const { return q_down + q_up + kv_down + kv_up + proj; }
  double largest() const {
    double l = q_down;
    for (double x : {q_up, kv_down, kv_up}) l = x > l ? x : l;
    return l;
  }
};
MlaWeights mla_weights(const ModelSpec& m);
// Attention weights every TP rank holds whole: MLA's down projections (Megatron-Core runs
// them duplicated); 0 otherwise. The rest of ParamCounts::attention splits over TP.
inline double tp_replicated_attention(const ModelSpec& m) {
  const MlaWeights w = mla_weights(m);
  return w.q_down + w.kv_down;
}

ParamCounts count_params(const ModelSpec& m);
inline std::int64_t total_params(const ModelSpec& m) { return count_params(m).total(); }
// Parameters one token runs through (MoE: topk of the routed experts; the total otherwise).
std::int64_t active_params(const ModelSpec& m);
// Matrices of one routed expert (gate, up and down, or up and down), and their biases
// with moe_bias.
std::int64_t expert_params(const ModelSpec& m);

// Weight matrices of one layer as the model code runs them (ModelSpec::fused_qkv,
// fused_gate_up): Q, K and V as one linear or three, the attention projection, the MLP's
// up projection (with the gate: one linear or two) and its down projection. Megatron's
// layers (`megatron_layers`, TrainConfig::megatron_layers()) fuse QKV and gate/up whatever
// the model. Each linear is one weight tensor (and one bias tensor with linear_bias).
struct LayerLinears {
  int qkv = 1;      // 1 fused, 3 separate
  int up_gate = 1;  // 1 (no gate, or fused with it), 2 separate
  int total() const { return qkv + 1 + up_gate + 1; }
};
LayerLinears layer_linears(const ModelSpec& m, bool megatron_layers);

// Parameter tensors of one layer: its linears' weights (and biases) and its norms' weights
// (and biases).
int layer_tensors(const ModelSpec& m, bool megatron_layers);
// Bias tensors of a layer's linears: one per linear with linear_bias, Q, K and V's alone
// with qkv_bias.
int bias_tensors(const ModelSpec& m, const LayerLinears& l);

// Weights of one layer's linears (Q, K, V, the attention projection, the MLP; no biases or
// norms): the N of the 6N matmul FLOPs a token spends in a layer over 3 passes. MoE: the
// router, the shared experts and topk routed experts (what one token runs), averaged over
// the layers when some are dense (times layers, the model's matmul weights a token runs).
double matmul_params_per_layer(const ModelSpec& m);

// MoE models with dense layers: the share of MoE layers among the layers of the pipeline
// rank that holds the most of them (1 for a model without dense layers). Layers are dealt
// to ranks as Megatron does: chunks of layers / (pp x vpp) in order, chunk j to rank
// j mod pp, the accounted split's embedding and loss units counted at the two ends. The
// estimators price that rank's layers as this blend of an MoE and a dense layer.
double moe_layer_share(const ModelSpec& m, const TrainConfig& cfg);
// A multi-token prediction module's weights besides its transformer layer, on one TP rank:
// the 2h x h projection of the normalised hidden state and next-token embedding (split over
// TP) and those two norms.
inline double mtp_projection_params(const ModelSpec& m, int tp) {
  const double h = m.hidden;
  return 2.0 * h * h / (tp > 1 ? tp : 1) + 2.0 * h;
}
// The model's dense layers alone: its MoE fields cleared (ffn_hidden wide MLPs).
ModelSpec dense_layer_view(const ModelSpec& m);

// Vocabulary as the framework allocates it: rounded up to vocab_pad_multiple x tp.
std::int64_t padded_vocab(const ModelSpec& m, int tp);

}  // namespace dsplan
