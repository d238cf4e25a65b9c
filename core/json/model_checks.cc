// Cross-field checks of a model's mixture-of-experts, latent-attention and gpt-oss block
// options (model_checks.h): which layers are MoE, group-limited routing, multi-head latent
// attention's widths, and the gpt-oss flags. Each check appends one diagnostic per problem.
#include "core/json/model_checks.h"

#include <utility>

namespace dsplan::detail {

// Which layers are MoE (ModelSpec::first_dense_layers, moe_layer_step): keys of an MoE
// model only, within the layers, leaving at least one MoE layer.
void check_moe_layers(Diagnostics& out, const std::string& file, const ModelSpec& m) {
  const std::string layers = std::to_string(m.layers);
  if (!is_moe(m)) {
    if (m.first_dense_layers != 0)
      out.push_back({file, "/first_dense_layers", "dense leading layers in a model without experts",
                     "only an MoE model (\"experts\") has them; remove first_dense_layers"});
    if (m.moe_layer_step != 1)
      out.push_back({file, "/moe_layer_step", "an MoE layer step in a model without experts",
                     "only an MoE model (\"experts\") has one; remove moe_layer_step"});
    return;
  }
  const bool first_ok = m.first_dense_layers >= 0 && m.first_dense_layers < m.layers;
  const bool step_ok = m.moe_layer_step >= 1 && m.moe_layer_step <= m.layers;
  if (!first_ok)
    out.push_back(
        {file, "/first_dense_layers",
         std::to_string(m.first_dense_layers) + " is not in [0, layers): the model has " + layers + " layers",
         "the leading layers with a dense MLP, 0 to " + std::to_string(m.layers - 1)});
  if (!step_ok)
    out.push_back(
        {file, "/moe_layer_step",
         std::to_string(m.moe_layer_step) + " is not in [1, layers]: the model has " + layers + " layers",
         "1 (every layer after the dense ones is MoE) to " + layers});
  if (first_ok && step_ok && moe_layer_count(m) == 0)
    out.push_back({file, "/moe_layer_step",
                   "first_dense_layers " + std::to_string(m.first_dense_layers) + " and moe_layer_step " +
                       std::to_string(m.moe_layer_step) + " leave no MoE layer among the " + layers,
                   "an MoE model needs one: at most " + std::to_string(m.layers - m.first_dense_layers) +
                       " with " + std::to_string(m.first_dense_layers) + " dense leading layers"});
}

// Group-limited routing (ModelSpec::moe_groups, moe_group_topk): an MoE model's, both set
// or both 0, the groups equal (moe_groups divides experts), at most moe_groups of them
// picked, and the picked groups holding a token's topk experts.
void check_moe_groups(Diagnostics& out, const std::string& file, const ModelSpec& m) {
  const int groups = m.moe_groups, pick = m.moe_group_topk;
  if (groups < 0)
    out.push_back({file, "/moe_groups", "must not be negative, got " + std::to_string(groups),
                   "0 (no groups) or how many equal groups the experts form, e.g. 8"});
  if (pick < 0)
    out.push_back({file, "/moe_group_topk", "must not be negative, got " + std::to_string(pick),
                   "0 (no groups) or how many groups a token's experts come from, e.g. 4"});
  if (groups < 0 || pick < 0 || (groups == 0 && pick == 0)) return;
  if (!is_moe(m)) {
    const std::pair<int, const char*> keys[] = {{groups, "moe_groups"}, {pick, "moe_group_topk"}};
    for (const auto& [v, key] : keys)
      if (v > 0)
        out.push_back({file, std::string("/") + key, "expert groups in a model without experts",
                       "only an MoE model (\"experts\") routes within groups; remove " + std::string(key)});
    return;
  }
  const std::string g = std::to_string(groups), k = std::to_string(pick);
  if (pick == 0) {
    out.push_back({file, "/moe_group_topk", "missing: moe_groups " + g + " needs it",
                   "how many of the " + g + " groups a token's experts come from (HF topk_group), e.g. 4"});
    return;
  }
  if (groups == 0) {
    out.push_back({file, "/moe_groups", "missing: moe_group_topk " + k + " needs it",
                   "how many equal groups the experts form (HF n_group), e.g. 8; or remove moe_group_topk"});
    return;
  }
  const std::string e = std::to_string(m.experts);
  if (m.experts % groups != 0) {
    out.push_back({file, "/moe_groups", "the " + e + " experts do not split into " + g + " equal groups",
                   "a divisor of experts (" + e + "), or 0 for no groups"});
    return;
  }
  if (pick > groups) {
    out.push_back({file, "/moe_group_topk", "moe_group_topk " + k + " exceeds moe_groups " + g,
                   "at most the " + g + " groups (DeepSeek-V3: 4 of 8)"});
    return;
  }
  const int per_group = m.experts / groups;
  if (m.topk > pick * per_group && m.topk <= m.experts)  // topk beyond the experts is /topk's
    out.push_back(
        {file, "/moe_group_topk",
         "topk " + std::to_string(m.topk) + " exceeds the experts a token's groups hold: " + k + " x " +
             std::to_string(per_group) + " a group",
         "at least " + std::to_string((m.topk + per_group - 1) / per_group) + " of the " + g + " groups"});
}

// Multi-head latent attention (ModelSpec::kv_lora_rank): its widths are set together, the
// rotary part even (it rotates pairs), and every head has its own keys and values.
void check_mla(Diagnostics& out, const std::string& file, const ModelSpec& m) {
  if (m.kv_lora_rank < 0)
    out.push_back({file, "/kv_lora_rank", "must not be negative, got " + std::to_string(m.kv_lora_rank),
                   "0 (no latent attention) or the key/value latent's width, e.g. 512"});
  if (m.q_lora_rank < 0)
    out.push_back({file, "/q_lora_rank", "must not be negative, got " + std::to_string(m.q_lora_rank),
                   "0 (queries projected directly) or the query latent's width, e.g. 1536"});
  if (!is_mla(m)) {
    const std::pair<int, const char*> keys[] = {{m.q_lora_rank, "q_lora_rank"},
                                                {m.qk_rope_head_dim, "qk_rope_head_dim"},
                                                {m.v_head_dim, "v_head_dim"}};
    for (const auto& [v, key] : keys)
      if (v > 0)
        out.push_back({file, std::string("/") + key,
                       "set without multi-head latent attention (kv_lora_rank > 0)",
                       "set kv_lora_rank (the key/value latent's width, e.g. 512) or remove it"});
    return;
  }
  if (m.qk_rope_head_dim <= 0 || m.qk_rope_head_dim % 2 != 0)
    out.push_back({file, "/qk_rope_head_dim",
                   "must be a positive even number with multi-head latent attention, got " +
                       std::to_string(m.qk_rope_head_dim),
                   "the rotary part of each query/key head, e.g. 64"});
  if (m.v_head_dim <= 0)
    out.push_back({file, "/v_head_dim",
                   "must be positive with multi-head latent attention, got " + std::to_string(m.v_head_dim),
                   "each head's value width, e.g. 128"});
  if (m.kv_heads != m.heads)
    out.push_back({file, "/kv_heads",
                   "kv_heads " + std::to_string(m.kv_heads) + " differs from heads " +
                       std::to_string(m.heads) + " under multi-head latent attention",
                   "every head has its own keys and values: kv_heads = heads (or leave it out)"});
}

void check_block_options(Diagnostics& out, const std::string& file, const ModelSpec& m) {
  if (m.moe_bias && !is_moe(m))
    out.push_back({file, "/moe_bias", "router and expert biases in a model without experts",
                   "only an MoE model (\"experts\") has them; use linear_bias for a dense model's linears"});
  if (m.activation_clamp && !m.gated_mlp)
    out.push_back(
        {file, "/activation_clamp", "a clamped activation without a gated MLP",
         "the clamp acts on a gated MLP's gate and up projections: set gated_mlp true or remove it"});
  if (m.attention_sinks && is_mla(m))
    out.push_back({file, "/attention_sinks", "attention sinks with multi-head latent attention",
                   "not a combination dsplan models: remove attention_sinks or kv_lora_rank"});
}

}  // namespace dsplan::detail
