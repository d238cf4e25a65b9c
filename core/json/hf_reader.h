// The reader the Hugging Face config.json families share (hf_config.cc, hf_llama.cc,
// hf_moe.cc, hf_deepseek.cc):
// alternative key spellings, the config key behind each ModelSpec field (so validation
// errors point at the user's key), dropout and activation keys. Internal to core/json.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>

#include "core/json/model_json.h"

namespace dsplan::hf {

inline constexpr int kMaxDim = 1 << 20;

// A JsonObjectReader that tries alternative key spellings and remembers, for each ModelSpec
// field, which config key it came from so validation errors point at the user's key.
struct Hf {
  Hf(const Json& j, const std::string& f, Diagnostics& e) : json(j), r(j, f, "", e), file(f), errs(e) {}
  const Json& json;
  JsonObjectReader r;
  std::string file;
  Diagnostics& errs;
  std::map<std::string, std::string> from;  // dsplan field -> config key

  // The first of `keys` present with a non-null value ("n_inner": null means the default).
  std::string first_present(std::initializer_list<const char*> keys) const {
    for (const char* k : keys)
      if (json.contains(k) && !json[k].is_null()) return k;
    return "";
  }
  // Reads the first present key into `out` (at most `hi`); a missing one is an error if
  // `required`.
  bool get(const char* field, std::initializer_list<const char*> keys, int& out, bool required,
           int hi = kMaxDim) {
    std::string k = first_present(keys);
    if (k.empty()) {
      if (required) {
        std::vector<std::string> names(keys.begin(), keys.end());
        r.error(names.front(), "missing required key", names.size() > 1 ? "any of: " + join(names) : "");
      }
      return false;
    }
    from[field] = k;
    return r.get(k, out, true, 1, hi);
  }
  bool flag(const char* key, bool fallback) {
    bool v = fallback;
    r.get(key, v, false);
    return v;
  }
  // A key whose only supported value is `want`; anything else is rejected with `why`.
  void require_flag(const char* key, bool want, const std::string& why) {
    bool v = want;
    if (r.get(key, v, false) && v != want) r.error(key, why, "dsplan cannot model this variant");
  }
};

// Dropout: the family's probability keys; any of them above zero means dropout layers run
// in training (ModelSpec::dropout). With none present, the transformers config class's
// default decides (`fallback`: GPT-2/BERT/OPT 0.1, BLOOM/GPT-NeoX/Llama 0.0).
inline void read_dropout(Hf& hf, ModelSpec& m, std::initializer_list<const char*> keys, bool fallback) {
  bool any_key = false, positive = false;
  for (const char* k : keys) {
    double p = 0;
    if (hf.json.contains(k) && !hf.json[k].is_null() && hf.r.get(k, p, false, 0.0, 1.0)) {
      any_key = true;
      positive = positive || p > 0;
    }
  }
  m.dropout = any_key ? positive : fallback;
}

inline std::optional<Activation> hf_activation(const std::string& s) {
  static const std::map<std::string, Activation> table{
      {"gelu", Activation::gelu},        {"gelu_new", Activation::gelu},
      {"gelu_fast", Activation::gelu},   {"gelu_pytorch_tanh", Activation::gelu},
      {"gelu_python", Activation::gelu}, {"gelu_accurate", Activation::gelu},
      {"quick_gelu", Activation::gelu},  {"bloom_gelu", Activation::gelu},
      {"relu", Activation::relu},        {"silu", Activation::silu},
      {"swish", Activation::silu}};
  auto it = table.find(s);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

inline void read_activation(Hf& hf, const char* key, ModelSpec& m) {
  std::string s;
  if (!hf.r.get(key, s, false)) return;
  if (auto a = hf_activation(s)) {
    m.activation = *a;
    // transformers' NewGELUActivation (GPT-2) is a Python tanh formula: a chain of
    // elementwise kernels (ModelSpec::activation_unfused). gelu_fast (GPT-NeoX) is one
    // too under transformers, but NeoX-20B is trained with the gpt-neox library's fused
    // kernel, which the preset describes; it is left fused.
    m.activation_unfused = s == "gelu_new";
    return;
  }
  hf.r.error(key, "unsupported activation \"" + s + "\"",
             "one of: gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, quick_gelu, relu, silu, swish");
}

// The Llama-style families (hf_llama.cc), and the keys they share: layers, sizes, heads,
// intermediate_size (ffn_hidden), RMSNorm, SwiGLU, rotary, bias-free separate linears.
void llama_like(Hf& hf, ModelSpec& m, int default_positions, bool tied);
// sliding_window keys in the layers layer_types marks "sliding_attention", else in
// `windowed` of them (0 = every layer); none when absent, null or not below the context.
void read_window(Hf& hf, ModelSpec& m, int windowed);
void llama(Hf& hf, ModelSpec& m, bool mistral);
void qwen2(Hf& hf, ModelSpec& m);
void qwen3(Hf& hf, ModelSpec& m);
void phi3(Hf& hf, ModelSpec& m);
void gemma(Hf& hf, ModelSpec& m, int version);
void starcoder2(Hf& hf, ModelSpec& m);
void olmo2(Hf& hf, ModelSpec& m);
// The mixture-of-experts families (hf_moe.cc).
void mixtral(Hf& hf, ModelSpec& m);
void qwen2_moe(Hf& hf, ModelSpec& m);
void qwen3_moe(Hf& hf, ModelSpec& m);
void olmoe(Hf& hf, ModelSpec& m);
void glm4_moe(Hf& hf, ModelSpec& m);
void gpt_oss(Hf& hf, ModelSpec& m);
// The DeepSeek-V2/V3 decoders, multi-head latent attention (hf_deepseek.cc); kimi_k2 is
// read as deepseek_v3.
void deepseek_v2(Hf& hf, ModelSpec& m);
void deepseek_v3(Hf& hf, ModelSpec& m);
// llama4_text: the text model of Llama 4 (a "llama4" config's text_config, hf_config.cc).
void llama4_text(Hf& hf, ModelSpec& m);

}  // namespace dsplan::hf
