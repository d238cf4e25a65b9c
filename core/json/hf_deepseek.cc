// Hugging Face config.json import of the DeepSeek-V2/V3 decoders (docs/model.md §4.11,
// §4.12): multi-head latent attention (ModelSpec::kv_lora_rank) and a mixture of experts
// whose first layers keep a dense MLP, as transformers' DeepseekV2Config/DeepseekV3Config
// and their modeling code lay them out:
//  - attention (DeepseekV2Attention, DeepseekV3Attention): with q_lora_rank, queries come
//    up from a latent (q_a_proj hidden -> q_lora_rank, q_a_layernorm, q_b_proj
//    -> heads x (qk_nope_head_dim + qk_rope_head_dim)); with q_lora_rank null, one q_proj
//    (DeepSeek-V2-Lite). Keys and values: kv_a_proj_with_mqa hidden -> kv_lora_rank +
//    qk_rope_head_dim, kv_a_layernorm, kv_b_proj -> heads x (qk_nope_head_dim + v_head_dim);
//    o_proj heads x v_head_dim -> hidden. num_key_value_heads is not read: every head has
//    its own keys and values (kv_heads = heads). The config's head_dim key, which
//    transformers sets to qk_rope_head_dim, is not read either: head_dim is
//    qk_nope_head_dim. attention_bias (biases on q_a_proj, kv_a_proj_with_mqa and o_proj)
//    and DeepSeek-V2's mlp_bias are refused: no DeepSeek checkpoint has them.
//  - MLP: SiLU-gated with separate gate and up linears; layers from first_k_dense_replace
//    on route to n_routed_experts of moe_intermediate_size, num_experts_per_tok a token,
//    beside n_shared_experts shared ones (one MLP of n_shared_experts x
//    moe_intermediate_size); the first layers a dense MLP of intermediate_size.
//    moe_layer_freq is read as DeepSeek's own modeling code (trust_remote_code) applies it:
//    layer i is MoE iff i >= first_k_dense_replace and i % moe_layer_freq == 0 (the
//    transformers classes do not read it; every DeepSeek checkpoint has 1). Mapped onto
//    first_dense_layers and moe_layer_step where it can be, refused otherwise.
//  - router: a bias-free hidden x n_routed_experts linear. Group-limited routing (n_group
//    groups of experts, a token's top-k from the topk_group best; ModelSpec::moe_groups,
//    moe_group_topk) is read where the gate applies it: DeepseekV2's with topk_method
//    group_limited_greedy (DeepSeek-V2) or noaux_tc (its default greedy, V2-Lite's, ignores
//    the groups), DeepseekV3's always (noaux_tc; class defaults n_group 8, topk_group 4).
//    n_group 1 (V2-Lite, Kimi K2) or null is no grouping. routed_scaling_factor,
//    scoring_func, norm_topk_prob and seq_aux change how experts are weighted, not the
//    parameters: not read. DeepSeek-V3's e_score_correction_bias (noaux_tc) is a buffer in
//    transformers (register_buffer; a Parameter in DeepSeek's own code), n_routed_experts
//    floats per MoE layer: not counted, as GLM-4.5's (hf_moe.cc).
//  - RMSNorm (rms_norm_eps), rotary embeddings on the qk_rope_head_dim part (rope_scaling
//    or rope_parameters, YaRN in the released models, changes no parameter and is not
//    read), untied head unless tie_word_embeddings.
//  - num_nextn_predict_layers: DeepSeek-V3's multi-token-prediction module (one extra
//    layer with its own projections, stored as model.layers.61 and skipped on load by
//    transformers) is neither counted nor priced.
// Kimi K2 (moonshotai/Kimi-K2-*) ships model_type "kimi_k2" with DeepseekV3Config's layout
// and is read as deepseek_v3.
#include <string>

#include "core/json/hf_reader.h"

namespace dsplan::hf {
namespace {

// The class defaults of the keys read here that differ between the two configs.
struct DeepseekDefaults {
  int max_positions;
  int first_dense;
  int shared;
  bool v3;  // DeepseekV3Config: the gate always routes within groups, 8 and 4 by default
};

// n_group and topk_group (null: none) into moe_groups and moe_group_topk where the gate uses
// them (header comment); validate_model checks the rest against the config's keys.
void read_groups(Hf& hf, ModelSpec& m, bool v3) {
  if (!v3) {
    std::string method = "greedy";  // DeepseekV2Config's default
    hf.r.get("topk_method", method, false);
    if (method != "group_limited_greedy" && method != "noaux_tc") return;
  }
  const auto read = [&](const char* key, int fallback) {
    int v = fallback;
    if (hf.json.contains(key) && hf.json[key].is_null()) return 0;
    hf.r.get(key, v, false, 1, 1 << 16);
    return v;
  };
  const int groups = read("n_group", v3 ? 8 : 0), pick = read("topk_group", v3 ? 4 : 0);
  if (groups <= 1) return;  // one group holds every expert: no limit
  if (m.experts > 0 && m.experts % groups != 0) {
    hf.r.error("n_group",
               std::to_string(m.experts) + " n_routed_experts do not split into " + std::to_string(groups) +
                   " equal groups" +
                   (hf.json.contains("n_group") ? "" : " (DeepseekV3Config's default n_group)"),
               "n_group 1 (no groups) or a divisor of n_routed_experts, with topk_group");
    return;
  }
  m.moe_groups = groups;
  m.moe_group_topk = pick;
  hf.from["moe_groups"] = "n_group";
  hf.from["moe_group_topk"] = "topk_group";
}

// moe_layer_freq f: MoE layers are those i >= first_k_dense_replace k with i % f == 0, the
// first of them m0 (the first multiple of f from k). dsplan's pattern, first_dense_layers
// d then every step-th layer (layer d + step - 1 the first), is the same set with step f
// and d = m0 - f + 1, which needs m0 >= f - 1: every f but 1 fails when k is 0 (layer 0
// MoE, then every f-th).
void read_layer_freq(Hf& hf, ModelSpec& m) {
  int freq = 1;
  hf.r.get("moe_layer_freq", freq, false, 1, kMaxDim);
  if (freq == 1 || m.layers <= 0) return;
  const int k = m.first_dense_layers;
  const int first_moe = (k + freq - 1) / freq * freq;
  const std::string pattern =
      "moe_layer_freq " + std::to_string(freq) + " with first_k_dense_replace " + std::to_string(k);
  if (first_moe >= m.layers) {
    hf.r.error(
        "moe_layer_freq", pattern + " leaves no MoE layer among the " + std::to_string(m.layers),
        "an MoE model needs at least one layer i >= first_k_dense_replace with i % moe_layer_freq == 0");
    return;
  }
  if (first_moe < freq - 1) {
    hf.r.error("moe_layer_freq",
               pattern + " makes layer 0 MoE and then every " + std::to_string(freq) +
                   "-th layer, not leading dense layers followed by every n-th layer MoE, the patterns "
                   "dsplan models",
               "moe_layer_freq 1, or first_k_dense_replace of at least 1");
    return;
  }
  m.moe_layer_step = freq;
  m.first_dense_layers = first_moe - freq + 1;
  hf.from["moe_layer_step"] = "moe_layer_freq";
}

void deepseek(Hf& hf, ModelSpec& m, const DeepseekDefaults& d) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  m.kv_heads = m.heads;
  hf.from["kv_heads"] = "num_attention_heads";
  hf.get("ffn_hidden", {"intermediate_size"}, m.ffn_hidden, true);
  m.max_positions = d.max_positions;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false, 1 << 26);
  m.activation = Activation::silu;
  read_activation(hf, "hidden_act", m);
  m.gated_mlp = true;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rotary;
  m.linear_bias = false;
  m.fused_qkv = m.fused_gate_up = false;  // q_a/q_b (or q), kv_a, kv_b; gate_proj, up_proj
  m.tied_embeddings = hf.flag("tie_word_embeddings", false);
  hf.require_flag("attention_bias", false, "biases on the latent attention's projections");
  hf.require_flag("mlp_bias", false, "biases on the MLP's linears");
  read_dropout(hf, m, {"attention_dropout"}, false);

  // Latent attention; the class defaults are DeepSeek-V3's widths in both configs.
  m.q_lora_rank = 1536;  // q_lora_rank null: queries projected directly
  if (hf.json.contains("q_lora_rank") && hf.json["q_lora_rank"].is_null())
    m.q_lora_rank = 0;
  else
    hf.r.get("q_lora_rank", m.q_lora_rank, false, 1, kMaxDim);
  m.kv_lora_rank = 512;
  hf.r.get("kv_lora_rank", m.kv_lora_rank, false, 1, kMaxDim);
  m.head_dim = 128;
  hf.r.get("qk_nope_head_dim", m.head_dim, false, 1, kMaxDim);
  hf.from["head_dim"] = "qk_nope_head_dim";
  m.qk_rope_head_dim = 64;
  hf.r.get("qk_rope_head_dim", m.qk_rope_head_dim, false, 1, kMaxDim);
  m.v_head_dim = 128;
  hf.r.get("v_head_dim", m.v_head_dim, false, 1, kMaxDim);

  // Experts: the routed ones and their width are required, as for the other MoE types.
  hf.from["experts"] = "n_routed_experts";
  hf.from["topk"] = "num_experts_per_tok";
  hf.from["moe_ffn"] = "moe_intermediate_size";
  hf.r.get("n_routed_experts", m.experts, true, 1, 1 << 16);
  hf.r.get("num_experts_per_tok", m.topk, true, 1, 1 << 16);
  hf.r.get("moe_intermediate_size", m.moe_ffn, true, 1, kMaxDim);
  int shared = d.shared;  // null: no shared experts
  if (hf.json.contains("n_shared_experts") && hf.json["n_shared_experts"].is_null())
    shared = 0;
  else
    hf.r.get("n_shared_experts", shared, false, 0, 1 << 16);
  m.shared_ffn = shared * m.moe_ffn;
  hf.from["shared_ffn"] = "n_shared_experts";
  m.first_dense_layers = d.first_dense;
  hf.r.get("first_k_dense_replace", m.first_dense_layers, false, 0, kMaxDim);
  hf.from["first_dense_layers"] = "first_k_dense_replace";
  read_layer_freq(hf, m);
  read_groups(hf, m, d.v3);
}

}  // namespace

// DeepseekV2Config's defaults: 2048 positions, no dense first layer, two shared experts.
void deepseek_v2(Hf& hf, ModelSpec& m) { deepseek(hf, m, {2048, 0, 2, false}); }

// DeepseekV3Config's (Kimi K2's too): 4096 positions, three dense first layers, one shared,
// experts in 8 groups of which 4 are open to a token.
void deepseek_v3(Hf& hf, ModelSpec& m) { deepseek(hf, m, {4096, 3, 1, true}); }

}  // namespace dsplan::hf
