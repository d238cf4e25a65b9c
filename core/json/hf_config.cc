// Hugging Face config.json import. Each supported model_type maps the config's keys (and,
// where a key is absent, the defaults of the corresponding transformers config class) onto
// a ModelSpec laid out as the transformers module of that family holds its parameters:
// the base model plus the LM head (BERT-family: BertModel/RobertaModel with pooler,
// DistilBertModel without). Keys dsplan does not read are ignored, as HF configs carry many
// irrelevant ones; a key that is read but has the wrong type is an error. Features that
// would change the parameter layout in ways ModelSpec cannot express are rejected.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>

#include "core/json/hf_reader.h"

namespace dsplan {
namespace {

using namespace hf;

// gpt2 and gpt_bigcode: Conv1D linears with biases, learned positions, pre-LN, tied head.
void gpt2(Hf& hf, ModelSpec& m, bool bigcode) {
  hf.get("layers", {"n_layer", "num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"n_embd", "hidden_size"}, m.hidden, true);
  hf.get("heads", {"n_head", "num_attention_heads"}, m.heads, true);
  m.ffn_hidden = 4 * m.hidden;
  hf.get("ffn_hidden", {"n_inner", "intermediate_size"}, m.ffn_hidden, false);  // null: 4h
  m.max_positions = 1024;
  hf.get("max_positions", {"n_positions", "max_position_embeddings"}, m.max_positions, false);
  m.activation = Activation::gelu;
  // GPT2Config's default activation_function is gelu_new (GPTBigCode's gelu_pytorch_tanh).
  m.activation_unfused = !bigcode;
  read_activation(hf, "activation_function", m);
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.kv_heads = bigcode && hf.flag("multi_query", true) ? 1 : m.heads;
  read_dropout(hf, m, {"resid_pdrop", "embd_pdrop", "attn_pdrop"}, true);
}

// bert and roberta: post-LN encoder; embedding LayerNorm, token types, pooler, no final norm.
void bert(Hf& hf, ModelSpec& m, bool roberta) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  hf.get("ffn_hidden", {"intermediate_size"}, m.ffn_hidden, true);
  m.max_positions = roberta ? 514 : 512;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false);
  if (roberta && m.max_positions > 2) {  // RoBERTa's positions start after padding_idx 1
    m.max_positions -= 2;
    m.position_offset_rows = 2;
  }
  m.type_vocab = 2;
  hf.r.get("type_vocab_size", m.type_vocab, false, 0, kMaxDim);
  read_activation(hf, "hidden_act", m);
  std::string pos = "absolute";
  if (hf.r.get("position_embedding_type", pos, false) && pos != "absolute")
    hf.r.error("position_embedding_type", "unsupported value \"" + pos + "\"", "only \"absolute\"");
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.causal = hf.flag("is_decoder", false);
  m.embedding_norm = true;
  m.final_norm = false;
  m.pooler = true;
  m.fused_qkv = false;  // BertSelfAttention: query, key and value linears
  read_dropout(hf, m, {"hidden_dropout_prob", "attention_probs_dropout_prob"}, true);
}

// distilbert: BERT without token types or pooler.
void distilbert(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"n_layers"}, m.layers, true);
  hf.get("hidden", {"dim"}, m.hidden, true);
  hf.get("heads", {"n_heads"}, m.heads, true);
  hf.get("ffn_hidden", {"hidden_dim"}, m.ffn_hidden, true);
  m.max_positions = 512;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false);
  read_activation(hf, "activation", m);
  bool sinusoidal = false;  // a fixed table, but still an nn.Embedding parameter in HF
  hf.r.get("sinusoidal_pos_embds", sinusoidal, false);
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.causal = false;
  m.embedding_norm = true;
  m.final_norm = false;
  m.fused_qkv = false;  // MultiHeadSelfAttention: q_lin, k_lin, v_lin
  read_dropout(hf, m, {"dropout", "attention_dropout"}, true);
}

// gpt_neox: LayerNorm with biases, rotary, parallel residual by default, untied head.
void gpt_neox(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  hf.get("ffn_hidden", {"intermediate_size"}, m.ffn_hidden, true);
  m.max_positions = 2048;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false);
  read_activation(hf, "hidden_act", m);
  m.tied_embeddings = hf.flag("tie_word_embeddings", false);
  m.parallel_residual = hf.flag("use_parallel_residual", true);
  hf.require_flag("attention_bias", true, "attention without biases next to an MLP with them");
  m.position = PositionKind::rotary;
  read_dropout(hf, m, {"hidden_dropout", "attention_dropout"}, false);
}

// opt: learned positions with 2 offset rows before position 0 (OPTLearnedPositionalEmbedding), ReLU.
void opt(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads"}, m.heads, true);
  hf.get("ffn_hidden", {"ffn_dim"}, m.ffn_hidden, true);
  int positions = 2048;
  hf.get("max_positions", {"max_position_embeddings"}, positions, false);
  m.max_positions = positions;
  m.position_offset_rows = 2;
  m.activation = Activation::relu;
  read_activation(hf, "activation_function", m);
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.linear_bias = hf.flag("enable_bias", true);
  m.final_norm = hf.flag("do_layer_norm_before", true) && !hf.flag("_remove_final_layer_norm", false);
  hf.require_flag("layer_norm_elementwise_affine", true, "LayerNorms without weights");
  m.fused_qkv = false;  // OPTAttention: q_proj, k_proj, v_proj
  read_dropout(hf, m, {"dropout", "attention_dropout", "activation_dropout"}, true);
  int proj = m.hidden;
  if (hf.r.get("word_embed_proj_dim", proj, false, 1, kMaxDim) && m.hidden > 0 && proj != m.hidden)
    hf.r.error(
        "word_embed_proj_dim",
        "embedding width " + std::to_string(proj) + " differs from hidden_size " + std::to_string(m.hidden),
        "the project_in/project_out layers (e.g. opt-350m) are not modelled");
}

// bloom: ALiBi, LayerNorm after the word embeddings, 4h MLP, tied head.
void bloom(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"n_layer", "num_hidden_layers"}, m.layers, true);
  hf.get("hidden", {"hidden_size", "n_embed"}, m.hidden, true);
  hf.get("heads", {"n_head", "num_attention_heads"}, m.heads, true);
  m.ffn_hidden = 4 * m.hidden;
  m.max_positions = 2048;
  hf.get("max_positions", {"seq_length"}, m.max_positions, false);
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.position = PositionKind::alibi;
  m.embedding_norm = true;
  read_dropout(hf, m, {"hidden_dropout", "attention_dropout"}, false);
}

// mpt: MosaicML MPT as transformers' MptModel and llm-foundry lay it out: a fused Wqkv,
// an MLP of expansion_ratio x d_model (or ffn_config's ffn_hidden_size; "mptglu" gated),
// GELU, tied head, dropout probabilities defaulting to 0. With no_bias (transformers'
// default true) neither the linears nor the LayerNorms have biases (MptBlock drops them).
// Positions: ALiBi (attn_config.alibi, transformers' default), else rotary (rope), else a
// learned table of max_seq_len rows (llm-foundry's learned_pos_emb).
void mpt(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"n_layers"}, m.layers, true);
  hf.get("hidden", {"d_model"}, m.hidden, true);
  hf.get("heads", {"n_heads"}, m.heads, true);
  m.max_positions = 2048;
  hf.get("max_positions", {"max_seq_len"}, m.max_positions, false);
  double ratio = 4;
  hf.r.get("expansion_ratio", ratio, false, 0.125, 64.0);
  m.ffn_hidden = static_cast<int>(std::lround(ratio * m.hidden));
  Diagnostics& errs = hf.errs;
  bool alibi = true, rope = false;
  double attn_pdrop = 0;
  m.kv_heads = m.heads;
  if (const Json* ac = hf.r.child("attn_config", false); ac && ac->is_object()) {
    JsonObjectReader a(*ac, hf.file, "/attn_config", errs);
    a.get("alibi", alibi, false);
    a.get("rope", rope, false);
    a.get("attn_pdrop", attn_pdrop, false, 0.0, 1.0);
    std::string type = "multihead_attention";
    a.get("attn_type", type, false);
    if (type == "multiquery_attention") {
      m.kv_heads = 1;
    } else if (type == "grouped_query_attention") {
      a.get("kv_n_heads", m.kv_heads, true, 1, kMaxDim);
    } else if (type != "multihead_attention") {
      a.error("attn_type", "unsupported value \"" + type + "\"",
              "one of: multihead_attention, multiquery_attention, grouped_query_attention");
    }
  }
  if (const Json* fc = hf.r.child("ffn_config", false); fc && fc->is_object()) {
    JsonObjectReader f(*fc, hf.file, "/ffn_config", errs);
    std::string type = "mptmlp";
    f.get("ffn_type", type, false);
    if (type == "mptglu")
      m.gated_mlp = true;
    else if (type != "mptmlp")
      f.error("ffn_type", "unsupported value \"" + type + "\"", "one of: mptmlp, mptglu");
    f.get("ffn_hidden_size", m.ffn_hidden, false, 1, kMaxDim);
  }
  bool learned = true;
  hf.r.get("learned_pos_emb", learned, false);
  if (alibi)
    m.position = PositionKind::alibi;
  else if (rope)
    m.position = PositionKind::rotary;
  else if (learned)
    m.position = PositionKind::learned;
  else
    hf.r.error("learned_pos_emb", "no position scheme: alibi, rope and learned_pos_emb are all off",
               "dsplan models ALiBi, rotary or a learned table");
  const bool no_bias = hf.flag("no_bias", true);
  m.linear_bias = !no_bias;
  std::string norm = "low_precision_layernorm";
  hf.r.get("norm_type", norm, false);
  const bool rms = norm.find("rmsnorm") != std::string::npos;
  if (!rms && norm.find("layernorm") == std::string::npos)
    hf.r.error("norm_type", "unsupported value \"" + norm + "\"",
               "one of: layernorm, low_precision_layernorm, rmsnorm, low_precision_rmsnorm");
  m.norm = rms ? NormKind::rmsnorm : NormKind::layernorm;
  m.norm_bias = !no_bias;
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.activation = Activation::gelu;
  read_dropout(hf, m, {"resid_pdrop", "emb_pdrop"}, false);
  if (attn_pdrop > 0) m.dropout = true;
}

// falcon: transformers' FalconModel. Linears carry biases only with "bias" (default false);
// LayerNorms always have them. parallel_attn (default true) runs attention and MLP side by
// side: on one shared norm (Falcon-7B), or on two (ln_attn, ln_mlp) with
// new_decoder_architecture (Falcon-40B/180B), whose K/V heads are num_kv_heads; otherwise
// multi_query (default true) means one K/V head. Rotary unless alibi; tied head by default.
void falcon(Hf& hf, ModelSpec& m) {
  hf.get("layers", {"num_hidden_layers", "n_layer"}, m.layers, true);
  hf.get("hidden", {"hidden_size"}, m.hidden, true);
  hf.get("heads", {"num_attention_heads", "n_head"}, m.heads, true);
  m.ffn_hidden = 4 * m.hidden;
  hf.get("ffn_hidden", {"ffn_hidden_size"}, m.ffn_hidden, false);
  m.max_positions = 2048;
  hf.get("max_positions", {"max_position_embeddings"}, m.max_positions, false);
  const bool new_arch = hf.flag("new_decoder_architecture", false);
  m.parallel_residual = hf.flag("parallel_attn", true) || new_arch;
  m.norms_per_layer = m.parallel_residual && !new_arch ? 1 : 2;
  if (new_arch) {
    m.kv_heads = m.heads;
    hf.get("kv_heads", {"num_kv_heads"}, m.kv_heads, false);
  } else {
    m.kv_heads = hf.flag("multi_query", true) ? 1 : m.heads;
  }
  m.linear_bias = hf.flag("bias", false);
  m.position = hf.flag("alibi", false) ? PositionKind::alibi : PositionKind::rotary;
  m.tied_embeddings = hf.flag("tie_word_embeddings", true);
  m.activation = Activation::gelu;
  read_activation(hf, "activation", m);
  hf.require_flag("apply_residual_connection_post_layernorm", false,
                  "residual taken after the norm (post-LN blocks)");
  read_dropout(hf, m, {"hidden_dropout", "attention_dropout"}, false);
}

using Family = void (*)(Hf&, ModelSpec&);
const std::vector<std::pair<std::string, Family>>& families() {
  static const std::vector<std::pair<std::string, Family>> f{
      {"bert", [](Hf& h, ModelSpec& m) { bert(h, m, false); }},
      {"bloom", bloom},
      {"deepseek_v2", deepseek_v2},
      {"deepseek_v3", deepseek_v3},
      {"distilbert", distilbert},
      {"falcon", falcon},
      {"gemma", [](Hf& h, ModelSpec& m) { gemma(h, m, 1); }},
      {"gemma2", [](Hf& h, ModelSpec& m) { gemma(h, m, 2); }},
      {"gemma3", [](Hf& h, ModelSpec& m) { gemma(h, m, 3); }},
      {"gemma3_text", [](Hf& h, ModelSpec& m) { gemma(h, m, 3); }},
      {"glm4_moe", glm4_moe},
      {"gpt2", [](Hf& h, ModelSpec& m) { gpt2(h, m, false); }},
      {"gpt_bigcode", [](Hf& h, ModelSpec& m) { gpt2(h, m, true); }},
      {"gpt_neox", gpt_neox},
      {"gpt_oss", gpt_oss},
      {"kimi_k2", deepseek_v3},  // Kimi K2: DeepseekV3Config's layout under its own type
      {"llama", [](Hf& h, ModelSpec& m) { llama(h, m, false); }},
      // "llama4" and "gemma3" nest the text model's keys in text_config: parse_nested_text()
      // reads them there.
      {"llama4", llama4_text},
      {"llama4_text", llama4_text},
      {"mistral", [](Hf& h, ModelSpec& m) { llama(h, m, true); }},
      {"mixtral", mixtral},
      {"mpt", mpt},
      {"olmo2", olmo2},
      {"olmoe", olmoe},
      {"opt", opt},
      {"phi3", phi3},
      {"qwen2", qwen2},
      {"qwen2_moe", qwen2_moe},
      {"qwen3", qwen3},
      {"qwen3_moe", qwen3_moe},
      {"roberta", [](Hf& h, ModelSpec& m) { bert(h, m, true); }},
      {"starcoder2", starcoder2},
  };
  return f;
}

// The context a model was pre-trained at before RoPE scaling extended it (ModelSpec::
// pretrain_seq): original_max_position_embeddings in rope_scaling (rope_parameters from
// transformers 5): Llama 3.1's "llama3" type, DeepSeek's and Qwen's "yarn"; or at the top
// level, as Phi-3's "longrope" configs write it. One not below the context is dropped.
void read_pretrain_context(Hf& hf, ModelSpec& m) {
  int original = 0;
  if (!hf.first_present({"original_max_position_embeddings"}).empty())
    hf.r.get("original_max_position_embeddings", original, false, 1, 1 << 26);
  for (const char* outer : {"rope_scaling", "rope_parameters"}) {
    const Json* o = hf.r.child(outer, false);
    if (o && !o->is_null() && !o->is_object()) {
      hf.r.error(outer, "expected an object or null, got " + o->dump(),
                 "transformers' form: {\"rope_type\": \"llama3\", \"factor\": 8.0, ...}, or null");
      continue;
    }
    if (!o || !o->is_object() || !o->contains("original_max_position_embeddings")) continue;
    JsonObjectReader sub(*o, hf.file, hf.r.path_of(outer), hf.errs);
    sub.get("original_max_position_embeddings", original, false, 1, 1 << 26);
  }
  if (original > 0 && original < m.max_positions) m.pretrain_seq = original;
}

// Validation errors name ModelSpec fields; point them at the config key that set the field.
Diagnostics remap_paths(Diagnostics v, const std::map<std::string, std::string>& from) {
  for (auto& d : v) {
    auto it = from.find(d.json_path.substr(1));
    if (it != from.end()) d.json_path = "/" + it->second;
  }
  return v;
}

// The mixture-of-experts families (hf_moe.cc, hf_deepseek.cc): the only types whose expert
// keys are read.
const std::vector<std::string>& moe_types() {
  static const std::vector<std::string> t{"deepseek_v2", "deepseek_v3", "glm4_moe",    "gpt_oss",
                                          "kimi_k2",     "llama4",      "llama4_text", "mixtral",
                                          "olmoe",       "qwen2_moe",   "qwen3_moe"};
  return t;
}

// Expert keys on a type that is not an MoE family (a dense family's config such as a
// Mixtral-style mistral one, or jamba, dbrx, ...) would price one expert's MLP as the
// whole layer's: refused.
std::optional<Diagnostic> refuse_moe(const Json& j, const std::string& type, bool known,
                                     const std::string& file) {
  if (std::find(moe_types().begin(), moe_types().end(), type) != moe_types().end()) return std::nullopt;
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"})
    if (j.contains(key) && j[key].is_number() && j[key].get<double>() > 1)
      return Diagnostic{
          file, std::string("/") + key,
          "a mixture-of-experts model (" + std::string(key) + " " + j[key].dump() +
              ") of a type dsplan does not import as one",
          known ? "a Mixtral is model_type \"mixtral\", which imports its experts; or remove the key to "
                  "plan the dense model with one expert's MLP, knowing that is not this model"
                : "mixture-of-experts types dsplan imports: " + join(moe_types()) +
                      "; all: " + join(hf_model_types())};
  return std::nullopt;
}

// The multimodal configs whose text model nests in text_config: Llama 4
// (Llama4ForConditionalGeneration, "llama4", read as "llama4_text", Llama4ForCausalLM's) and
// Gemma 3 4B/12B/27B (Gemma3ForConditionalGeneration, "gemma3", read as "gemma3_text"),
// errors pointing into text_config. The vision tower (vision_config) and the multi-modal
// projector are not modelled: the plan is the text transformer's alone (ModelSpec has no
// place for a note, hence this comment). Gemma 3's released text_config leaves out the keys
// at Gemma3TextConfig's defaults: vocab_size 262208, max_position_embeddings 131072,
// hidden_activation gelu_pytorch_tanh and a tied head, filled in here.
Expected<ModelSpec> parse_nested_text(const Json& j, const std::string& file, const std::string& type) {
  const std::string text_type = type + "_text";
  if (!j.contains("text_config") || !j["text_config"].is_object())
    return Diagnostic{
        file, "/text_config", "missing: a \"" + type + "\" config holds its text model in text_config",
        "an object with the text model's keys, or a config of model_type \"" + text_type + "\""};
  Json text = j["text_config"];
  text["model_type"] = text_type;
  if (type == "gemma3") {
    const std::pair<const char*, Json> defaults[] = {
        {"vocab_size", 262208},
        {"max_position_embeddings", 131072},
        {"hidden_activation", "gelu_pytorch_tanh"},
        {"tie_word_embeddings", j.value("tie_word_embeddings", true)}};
    for (const auto& [key, value] : defaults)
      if (!text.contains(key)) text[key] = value;
  }
  if (j.contains("_name_or_path") && !text.contains("_name_or_path"))
    text["_name_or_path"] = j["_name_or_path"];
  auto m = detail::parse_hf_config(text, file);
  if (m) return m;
  Diagnostics errs = m.errors();
  for (auto& d : errs) d.json_path = "/text_config" + d.json_path;
  return errs;
}

}  // namespace

const std::vector<std::string>& hf_model_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& f : families()) n.push_back(f.first);
    return n;
  }();
  return names;
}

namespace detail {

Expected<ModelSpec> parse_hf_config(const Json& j, const std::string& file) {
  const std::string type = j["model_type"].get<std::string>();
  auto fam =
      std::find_if(families().begin(), families().end(), [&](const auto& f) { return f.first == type; });
  if (auto refused = refuse_moe(j, type, fam != families().end(), file)) return *refused;
  if (type == "llama4" || type == "gemma3") return parse_nested_text(j, file, type);
  if (fam == families().end() && j.contains("text_config") && j["text_config"].is_object())
    return Diagnostic{file, "/model_type",
                      "\"" + type +
                          "\" is a multimodal config (it nests a text_config): dsplan plans the text "
                          "transformer alone",
                      "save its text_config as a config.json of its own (model_type " +
                          (j["text_config"].contains("model_type") ? j["text_config"]["model_type"].dump()
                                                                   : std::string("of the text model")) +
                          "), knowing the vision tower is not planned"};
  if (fam == families().end()) {
    auto near = closest_match(type, hf_model_types());
    return Diagnostic{
        file, "/model_type", "unsupported Hugging Face model_type \"" + type + "\"",
        (near ? "did you mean \"" + *near + "\"? " : std::string()) + "supported: " + join(hf_model_types())};
  }
  Diagnostics errs;
  Hf hf(j, file, errs);
  ModelSpec m;
  m.name = model_name_from_file(file);
  hf.r.get("_name_or_path", m.name, false);
  if (m.name.empty()) m.name = model_name_from_file(file);
  hf.from["vocab"] = "vocab_size";
  hf.r.get("vocab_size", m.vocab, true, 1, 1'000'000'000);
  fam->second(hf, m);
  read_pretrain_context(hf, m);
  if (!errs.empty()) return errs;
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.head_dim == 0) {
    if (m.hidden % m.heads != 0)
      return Diagnostic{file, "/" + hf.from["heads"],
                        "hidden size " + std::to_string(m.hidden) + " is not divisible by " +
                            std::to_string(m.heads) + " heads",
                        ""};
    m.head_dim = m.hidden / m.heads;
  }
  Diagnostics v = validate_model(m, file);
  if (!v.empty()) return remap_paths(std::move(v), hf.from);
  return m;
}

}  // namespace detail
}  // namespace dsplan
