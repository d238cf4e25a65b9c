// dsplan's model schema: reading (with defaults and cross-field checks), writing, and the
// name-or-path resolution used by every command that takes a model. Hugging Face configs
// are handed to hf_config.cc; presets live in preset.cc.
#include "core/json/model_json.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "core/json/model_checks.h"
#include "core/names.h"

namespace dsplan {
namespace {

constexpr int kMaxDim = 1 << 20;
constexpr std::int64_t kMaxVocab = 1'000'000'000;

template <class E>
void read_enum(JsonObjectReader& r, std::string_view key, const std::vector<std::string>& names, E& out) {
  int idx = 0;
  if (r.get_choice(key, idx, false, names)) out = static_cast<E>(idx);
}

// Fills the size keys; returns which optional sizes were given explicitly.
struct Given {
  bool kv_heads = false, head_dim = false, ffn = false, max_positions = false;
  bool topk = false, moe_ffn = false, shared_ffn = false;
  bool first_dense = false, moe_step = false, groups = false, group_topk = false;
  bool q_lora = false, kv_lora = false, qk_rope = false, v_head = false;
};

Given read_sizes(JsonObjectReader& r, ModelSpec& m) {
  Given g;
  r.get("layers", m.layers, true, 1, kMaxDim);
  r.get("hidden", m.hidden, true, 1, kMaxDim);
  r.get("heads", m.heads, true, 1, kMaxDim);
  g.kv_heads = r.get("kv_heads", m.kv_heads, false, 1, kMaxDim);
  g.head_dim = r.get("head_dim", m.head_dim, false, 1, kMaxDim);
  g.ffn = r.get("ffn_hidden", m.ffn_hidden, false, 1, kMaxDim);
  r.get("vocab", m.vocab, true, 1, kMaxVocab);
  g.max_positions = r.get("max_positions", m.max_positions, false, 1, 1 << 26);
  r.get("pretrain_seq", m.pretrain_seq, false, 1, 1 << 26);
  r.get("position_offset_rows", m.position_offset_rows, false, 0, 64);
  r.get("type_vocab", m.type_vocab, false, 0, kMaxDim);
  r.get("vocab_pad_multiple", m.vocab_pad_multiple, false, 1, 1 << 16);
  // Mixture of experts (ModelSpec::experts): the MoE layers' MLP routed to topk of them;
  // which layers are MoE: after first_dense_layers dense ones, every moe_layer_step-th.
  r.get("experts", m.experts, false, 1, 1 << 16);
  g.topk = r.get("topk", m.topk, false, 1, 1 << 16);
  g.moe_ffn = r.get("moe_ffn", m.moe_ffn, false, 1, kMaxDim);
  g.shared_ffn = r.get("shared_ffn", m.shared_ffn, false, 0, kMaxDim);
  g.first_dense = r.get("first_dense_layers", m.first_dense_layers, false, 0, kMaxDim);
  g.moe_step = r.get("moe_layer_step", m.moe_layer_step, false, 1, kMaxDim);
  // Group-limited routing (ModelSpec::moe_groups): 0 = none; checked in check_moe_groups.
  g.groups = r.get("moe_groups", m.moe_groups, false, 0, 1 << 16);
  g.group_topk = r.get("moe_group_topk", m.moe_group_topk, false, 0, 1 << 16);
  // Multi-head latent attention (ModelSpec::kv_lora_rank): on with kv_lora_rank > 0.
  g.q_lora = r.get("q_lora_rank", m.q_lora_rank, false, 0, kMaxDim);
  g.kv_lora = r.get("kv_lora_rank", m.kv_lora_rank, false, 0, kMaxDim);
  g.qk_rope = r.get("qk_rope_head_dim", m.qk_rope_head_dim, false, 0, kMaxDim);
  g.v_head = r.get("v_head_dim", m.v_head_dim, false, 0, kMaxDim);
  return g;
}

void read_flags(JsonObjectReader& r, ModelSpec& m) {
  r.get("gated_mlp", m.gated_mlp, false);
  r.get("fused_qkv", m.fused_qkv, false);
  r.get("fused_gate_up", m.fused_gate_up, false);
  read_enum(r, "activation", activation_names(), m.activation);
  r.get("activation_unfused", m.activation_unfused, false);
  r.get("tied_embeddings", m.tied_embeddings, false);
  read_enum(r, "position", position_names(), m.position);
  read_enum(r, "norm", norm_names(), m.norm);
  r.get("norm_bias", m.norm_bias, false);
  r.get("linear_bias", m.linear_bias, false);
  r.get("qkv_bias", m.qkv_bias, false);
  r.get("qk_norm", m.qk_norm, false);
  r.get("qk_norm_full_width", m.qk_norm_full_width, false);
  r.get("attention_window", m.attention_window, false, 0, 1 << 26);
  r.get("window_layers", m.window_layers, false, 0, kMaxDim);
  r.get("logit_softcap", m.logit_softcap, false);
  r.get("attn_softcap", m.attn_softcap, false);
  r.get("attention_sinks", m.attention_sinks, false);
  r.get("activation_clamp", m.activation_clamp, false);
  r.get("moe_bias", m.moe_bias, false);
  r.get("causal", m.causal, false);
  r.get("parallel_residual", m.parallel_residual, false);
  r.get("norms_per_layer", m.norms_per_layer, false, 1, 4);
  r.get("embedding_norm", m.embedding_norm, false);
  r.get("final_norm", m.final_norm, false);
  r.get("pooler", m.pooler, false);
  bool dropout = false;
  if (r.get("dropout", dropout, false)) m.dropout = dropout;
}

// The expert keys go together: "experts" needs "topk" and "moe_ffn", and each of "topk",
// "moe_ffn", "shared_ffn", "first_dense_layers", "moe_layer_step", "moe_groups" and
// "moe_group_topk" without "experts" is an error of its own. Dense layers among the MoE
// ones need their MLP width, "ffn_hidden".
void check_moe_keys(const Given& g, JsonObjectReader& r, const ModelSpec& m) {
  if (!is_moe(m)) {
    const std::pair<bool, const char*> keys[] = {{g.topk, "topk"},
                                                 {g.moe_ffn, "moe_ffn"},
                                                 {g.shared_ffn, "shared_ffn"},
                                                 {g.first_dense, "first_dense_layers"},
                                                 {g.moe_step, "moe_layer_step"},
                                                 {g.groups, "moe_groups"},
                                                 {g.group_topk, "moe_group_topk"}};
    for (const auto& [given, key] : keys)
      if (given)
        r.error(key, "given without \"experts\"", "add \"experts\" (routed experts per layer) or remove it");
    return;
  }
  if (!g.topk)
    r.error("topk", "missing: an MoE model (\"experts\") needs it", "experts each token runs, e.g. 2");
  if (!g.moe_ffn)
    r.error("moe_ffn", "missing: an MoE model (\"experts\") needs it", "each expert's MLP width");
  if (!g.ffn && (m.first_dense_layers > 0 || m.moe_layer_step > 1))
    r.error("ffn_hidden",
            "missing: an MoE model with dense layers (first_dense_layers, moe_layer_step) needs it",
            "the dense layers' MLP width, e.g. 4 x hidden");
}

// The latent-attention keys go together: q_lora_rank, qk_rope_head_dim and v_head_dim
// only with kv_lora_rank > 0, which needs the rotary and value widths and, since the
// nope part of a head is rarely hidden / heads, head_dim. kv_heads is heads (given or not).
void check_mla_keys(const Given& g, JsonObjectReader& r, ModelSpec& m) {
  if (!is_mla(m)) {
    const std::pair<bool, const char*> keys[] = {
        {g.q_lora, "q_lora_rank"}, {g.qk_rope, "qk_rope_head_dim"}, {g.v_head, "v_head_dim"}};
    for (const auto& [given, key] : keys)
      if (given)
        r.error(key, "given without multi-head latent attention (kv_lora_rank > 0)",
                "add \"kv_lora_rank\" (the key/value latent's width, e.g. 512) or remove it");
    return;
  }
  if (!g.qk_rope)
    r.error("qk_rope_head_dim", "missing: multi-head latent attention (kv_lora_rank > 0) needs it",
            "the rotary part of each query/key head, a positive even number, e.g. 64");
  if (!g.v_head)
    r.error("v_head_dim", "missing: multi-head latent attention (kv_lora_rank > 0) needs it",
            "each head's value width, e.g. 128");
  if (!g.head_dim)
    r.error("head_dim", "missing: multi-head latent attention (kv_lora_rank > 0) needs it",
            "each query/key head's width without the rotary part (qk_nope_head_dim), e.g. 128");
  if (!g.kv_heads) m.kv_heads = m.heads;
}

// Defaults that depend on other keys: kv_heads = heads, head_dim = hidden / heads,
// ffn_hidden = 4 * hidden, max_positions = 2048 unless the positions are a learned table.
void apply_defaults(const Given& g, JsonObjectReader& r, ModelSpec& m) {
  if (!g.kv_heads) m.kv_heads = m.heads;
  // An MoE model's ffn_hidden is its dense layers' MLP width; with none (every layer MoE)
  // it is unused by the pricing, and absent it is one expert's width.
  if (!g.ffn) m.ffn_hidden = is_moe(m) && m.moe_ffn > 0 ? m.moe_ffn : 4 * m.hidden;
  check_moe_keys(g, r, m);
  check_mla_keys(g, r, m);
  if (!g.head_dim && !is_mla(m) && m.heads > 0 && m.hidden > 0) {
    if (m.hidden % m.heads != 0)
      r.error("heads",
              "hidden " + std::to_string(m.hidden) + " is not divisible by heads " + std::to_string(m.heads),
              "give \"head_dim\" explicitly if the attention width differs from hidden");
    else
      m.head_dim = m.hidden / m.heads;
  }
  if (!g.max_positions) {
    if (m.position == PositionKind::learned)
      r.error("max_positions", "missing required key",
              "learned position embeddings need the table size (rows)");
    else
      m.max_positions = 2048;
  }
}

Expected<ModelSpec> parse_dsplan(const Json& j, const std::string& file) {
  Diagnostics errs;
  JsonObjectReader r(j, file, "", errs);
  if (!r.is_object()) return errs;
  ModelSpec m;
  m.name = detail::model_name_from_file(file);
  r.get("name", m.name, false);
  const Given g = read_sizes(r, m);
  read_flags(r, m);
  r.allow("source");
  // The parameter total 'estimate --json' writes into its model block: derived from the
  // shape, so it is type-checked and otherwise not read (the shape decides).
  std::int64_t params = 0;
  r.get("params", params, false, 0, std::int64_t{1} << 50);
  r.finish();
  if (!errs.empty()) return errs;
  apply_defaults(g, r, m);
  if (!errs.empty()) return errs;
  Diagnostics v = validate_model(m, file);
  if (!v.empty()) return v;
  return m;
}

void check_positive(Diagnostics& out, const std::string& file, const char* key, std::int64_t v) {
  if (v < 1) out.push_back({file, std::string("/") + key, "must be positive, got " + std::to_string(v), ""});
}

// A model whose parameters dsplan's 64-bit counts hold with room to spare: about 10^15 at
// most (the largest trained models have about 2 x 10^12; past 9.2 x 10^18 the exact counts
// of estimator/params.cc would overflow). Its size is estimated in floating point from the
// layer's projections and MLP (every expert) and the two embedding tables.
void check_size(Diagnostics& out, const std::string& file, const ModelSpec& m) {
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.head_dim < 1 || m.vocab < 1) return;
  const double h = m.hidden, hd = m.head_dim;
  const double attention = h * hd * (2.0 * m.heads + 2.0 * std::max(m.kv_heads, 1));
  const double mats = m.gated_mlp ? 3.0 : 2.0;
  const double mlp = mats * h * std::max<double>(m.ffn_hidden, 0) +
                     mats * h *
                         (double(std::max(m.experts, 0)) * std::max<double>(m.moe_ffn, 0) +
                          std::max<double>(m.shared_ffn, 0));
  const double total = double(m.layers) * (attention + mlp) + 2.0 * double(m.vocab) * h;
  constexpr double kMaxParams = 1e15;
  if (total <= kMaxParams) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", total);
  out.push_back(
      {file, "/layers",
       std::string("the model would have about ") + buf + " parameters, more than the 10^15 dsplan plans",
       "check layers, hidden, heads, head_dim, ffn_hidden, experts, moe_ffn and vocab; the largest "
       "trained models have about 2 x 10^12"});
}

}  // namespace

Diagnostics validate_model(const ModelSpec& m, const std::string& file) {
  Diagnostics out;
  check_positive(out, file, "layers", m.layers);
  check_positive(out, file, "hidden", m.hidden);
  check_positive(out, file, "heads", m.heads);
  check_positive(out, file, "kv_heads", m.kv_heads);
  check_positive(out, file, "head_dim", m.head_dim);
  check_positive(out, file, "ffn_hidden", m.ffn_hidden);
  check_positive(out, file, "vocab", m.vocab);
  check_positive(out, file, "max_positions", m.max_positions);
  check_positive(out, file, "vocab_pad_multiple", m.vocab_pad_multiple);
  if (m.pretrain_seq > m.max_positions && m.max_positions > 0)
    out.push_back({file, "/pretrain_seq",
                   "pretrain_seq " + std::to_string(m.pretrain_seq) + " exceeds max_positions " +
                       std::to_string(m.max_positions),
                   "at most the model's context: the length it was pre-trained at"});
  if (is_moe(m) && (m.topk < 1 || m.topk > m.experts))
    out.push_back({file, "/topk", "topk " + std::to_string(m.topk) + " is not in [1, experts]",
                   "at most the " + std::to_string(m.experts) + " experts"});
  if (is_moe(m) && m.moe_ffn < 1)
    out.push_back({file, "/moe_ffn", "must be positive for an MoE model, got " + std::to_string(m.moe_ffn),
                   "each expert's MLP width"});
  detail::check_moe_layers(out, file, m);
  detail::check_moe_groups(out, file, m);
  detail::check_mla(out, file, m);
  detail::check_block_options(out, file, m);
  if (m.norms_per_layer == 1 && !m.parallel_residual)
    out.push_back({file, "/norms_per_layer", "one norm per block needs parallel_residual",
                   "a sequential block normalises before attention and before the MLP: 2"});
  if (m.norms_per_layer == 3)
    out.push_back({file, "/norms_per_layer", "3 norms per block is not a layout dsplan knows",
                   "1 (one norm for parallel branches), 2 (pre-norms) or 4 (pre- and post-norms)"});
  if (m.norms_per_layer == 4 && m.parallel_residual)
    out.push_back({file, "/norms_per_layer", "pre- and post-norms (4) on parallel branches",
                   "4 describes a sequential block (Gemma 2): set parallel_residual false or use 1 or 2"});
  if (m.qk_norm_full_width && !m.qk_norm)
    out.push_back({file, "/qk_norm_full_width", "qk_norm_full_width without qk_norm",
                   "set qk_norm true too, or remove qk_norm_full_width"});
  if (m.attention_window > 0 && !m.causal)
    out.push_back({file, "/attention_window", "a sliding window on an encoder (causal false)",
                   "windows are modelled for decoders; remove attention_window"});
  if (m.window_layers > 0 && m.attention_window <= 0)
    out.push_back({file, "/window_layers", "window_layers without attention_window",
                   "give the window's width in keys as attention_window"});
  if (m.window_layers > m.layers)
    out.push_back({file, "/window_layers",
                   std::to_string(m.window_layers) + " exceeds the " + std::to_string(m.layers) + " layers",
                   "0 (every layer) or at most layers"});
  if (m.type_vocab < 0)
    out.push_back({file, "/type_vocab", "must not be negative, got " + std::to_string(m.type_vocab), ""});
  check_size(out, file, m);
  if (!is_mla(m) && m.heads > 0 && m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0))
    out.push_back(
        {file, "/kv_heads",
         "heads " + std::to_string(m.heads) + " is not a multiple of kv_heads " + std::to_string(m.kv_heads),
         "kv_heads must divide heads (MHA: kv_heads = heads, MQA: 1, GQA: a divisor)"});
  return out;
}

Expected<ModelSpec> parse_model_json(const Json& j, const std::string& file) {
  if (j.is_object() && j.contains("model_type")) {
    if (!j["model_type"].is_string())
      return Diagnostic{file, "/model_type", "expected a string", "one of: " + join(hf_model_types())};
    return detail::parse_hf_config(j, file);
  }
  // A Hugging Face config.json without its model_type would otherwise be read as dsplan's
  // format and yield a line per unknown key: say the one thing that is missing.
  const bool hf_keys =
      j.is_object() && (j.contains("architectures") || j.contains("num_hidden_layers") ||
                        j.contains("hidden_size") || j.contains("n_layer") || j.contains("n_embd"));
  // What `dsplan models NAME --json` prints: the model under "model", beside its derived
  // "params" (and "source"), read as the model itself.
  if (j.is_object() && j.contains("model") && j["model"].is_object() &&
      std::all_of(j.items().begin(), j.items().end(), [](const auto& kv) {
        return kv.key() == "model" || kv.key() == "params" || kv.key() == "source";
      }))
    return parse_model_json(j["model"], file);
  if (j.is_object() && j.contains("configs"))
    return Diagnostic{file, "", "this is a plan ('dsplan estimate --json' output), not a model",
                      "--model takes a preset, a dsplan model JSON (the plan's own is its \"model\") or a "
                      "Hugging Face config.json"};
  if (j.is_object() && (j.contains("fitted") || j.contains("records")))
    return Diagnostic{file, "", "this is a calibration profile, not a model", "give it to --profile"};
  // A cluster JSON given to --model: likewise one line.
  if (j.is_object() && (j.contains("gpus_per_node") || j.contains("gpu")) && !j.contains("layers"))
    return Diagnostic{
        file, "", "this is a cluster file (it has gpu or gpus_per_node), not a model",
        "give it to --hw; --model takes a preset, a dsplan model JSON or a Hugging Face config.json"};
  if (hf_keys && !j.contains("layers") && !j.contains("hidden"))
    return Diagnostic{file, "/model_type",
                      "looks like a Hugging Face config.json (architectures, hidden_size or "
                      "n_embd, num_hidden_layers or n_layer) but has no model_type",
                      "add \"model_type\", one of: " + join(hf_model_types())};
  return parse_dsplan(j, file);
}

// GCC 12 reports a false -Warray-bounds inside nlohmann::json's string constructor when
// JSON_DIAGNOSTICS is on (a known GCC 12 false positive); the code is plain assignment.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
Json model_to_json(const ModelSpec& m) {
  Json j;
  j["name"] = m.name;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["ffn_hidden"] = m.ffn_hidden;
  j["gated_mlp"] = m.gated_mlp;
  j["fused_qkv"] = m.fused_qkv;
  j["fused_gate_up"] = m.fused_gate_up;
  j["activation"] = std::string(name(m.activation));
  j["activation_unfused"] = m.activation_unfused;
  j["vocab"] = m.vocab;
  j["tied_embeddings"] = m.tied_embeddings;
  j["position"] = std::string(name(m.position));
  j["max_positions"] = m.max_positions;
  if (m.pretrain_seq > 0) j["pretrain_seq"] = m.pretrain_seq;
  if (m.position_offset_rows > 0) j["position_offset_rows"] = m.position_offset_rows;
  j["norm"] = std::string(name(m.norm));
  j["norm_bias"] = m.norm_bias;
  j["linear_bias"] = m.linear_bias;
  // Written where set, so models without them keep their JSON.
  if (m.qkv_bias) j["qkv_bias"] = true;
  if (m.qk_norm) j["qk_norm"] = true;
  if (m.qk_norm_full_width) j["qk_norm_full_width"] = true;
  if (m.attention_window > 0) j["attention_window"] = m.attention_window;
  if (m.window_layers > 0) j["window_layers"] = m.window_layers;
  if (m.logit_softcap) j["logit_softcap"] = true;
  if (m.attn_softcap) j["attn_softcap"] = true;
  if (m.attention_sinks) j["attention_sinks"] = true;
  if (m.activation_clamp) j["activation_clamp"] = true;
  if (m.moe_bias) j["moe_bias"] = true;
  j["causal"] = m.causal;
  j["parallel_residual"] = m.parallel_residual;
  j["norms_per_layer"] = m.norms_per_layer;
  j["type_vocab"] = m.type_vocab;
  j["embedding_norm"] = m.embedding_norm;
  j["final_norm"] = m.final_norm;
  j["pooler"] = m.pooler;
  j["vocab_pad_multiple"] = m.vocab_pad_multiple;
  j["dropout"] = has_dropout(m);
  if (is_moe(m)) {  // written for MoE models only, so dense models keep their JSON
    j["experts"] = m.experts;
    j["topk"] = m.topk;
    j["moe_ffn"] = m.moe_ffn;
    j["shared_ffn"] = m.shared_ffn;
    // Written where not the default (every layer MoE), so those models keep their JSON.
    if (m.first_dense_layers != 0) j["first_dense_layers"] = m.first_dense_layers;
    if (m.moe_layer_step != 1) j["moe_layer_step"] = m.moe_layer_step;
    if (m.moe_groups > 0) j["moe_groups"] = m.moe_groups;  // group-limited routing, where set
    if (m.moe_group_topk > 0) j["moe_group_topk"] = m.moe_group_topk;
  }
  if (is_mla(m)) {  // latent attention's widths, for those models only
    if (m.q_lora_rank > 0) j["q_lora_rank"] = m.q_lora_rank;
    j["kv_lora_rank"] = m.kv_lora_rank;
    j["qk_rope_head_dim"] = m.qk_rope_head_dim;
    j["v_head_dim"] = m.v_head_dim;
  }
  return j;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace detail {

std::string model_name_from_file(const std::string& file) {
  std::filesystem::path p(file);
  std::string stem = p.stem().string();  // last extension only: "gpt-1.3b.json" -> "gpt-1.3b"
  if (stem == "config" && p.has_parent_path()) {
    std::string parent = p.parent_path().filename().string();
    if (!parent.empty() && parent != "." && parent != "..") return parent;
  }
  return stem;
}

}  // namespace detail
}  // namespace dsplan
