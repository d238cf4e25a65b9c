// 'dsplan models': lists the embedded model presets as a table (or JSON), or shows one
// model -- a preset name, a dsplan model JSON or a Hugging Face config.json -- with its
// exact parameter breakdown.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/json/model_json.h"
#include "core/names.h"
#include "estimator/params.h"

namespace dsplan::cli {

std::string window_phrase(const ModelSpec& m) {
  const int w = windowed_layers_of(m);
  return "sliding window of " + std::to_string(m.attention_window) + " keys in " +
         (w == m.layers ? "every layer" : std::to_string(w) + " of " + std::to_string(m.layers) + " layers");
}

namespace {

// 1234567 -> "1,234,567".
std::string grouped(std::int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string s = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

std::string billions(std::int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(v) / 1e9);
  return buf;
}

Json params_json(const ModelSpec& m) {
  const ParamCounts c = count_params(m);
  Json j{{"word_embedding", c.word_embedding},
         {"other_embedding", c.other_embedding},
         {"attention_per_layer", c.attention},
         {"mlp_per_layer", c.mlp},
         {"layer_norms_per_layer", c.layer_norms},
         {"per_layer", c.per_layer()},
         {"final_norm", c.final_norm},
         {"lm_head", c.lm_head},
         {"pooler", c.pooler},
         {"largest_module", c.largest_module},
         {"total", c.total()}};
  if (is_moe(m)) {  // MoE models only, so dense listings keep their JSON
    j["router_per_layer"] = c.router;
    j["experts_per_layer"] = c.experts;
    j["active"] = active_params(m);
    j["moe_layers"] = c.moe_layers;
    if (has_dense_layers(m)) {  // per_layer is then an MoE layer's; a dense layer's here
      j["dense_layer"] = c.dense_layer();
      j["dense_mlp_per_layer"] = c.dense_mlp;
    }
  }
  if (is_mla(m)) {  // latent attention's projections (attention_per_layer's parts): MLA only
    const MlaWeights w = mla_weights(m);
    j["mla"] = Json{{"q_down", std::int64_t(w.q_down)},   {"q_up", std::int64_t(w.q_up)},
                    {"kv_down", std::int64_t(w.kv_down)}, {"kv_up", std::int64_t(w.kv_up)},
                    {"proj", std::int64_t(w.proj)},       {"latent_norms", m.q_lora_rank + m.kv_lora_rank}};
  }
  return j;
}

void print_table(const std::vector<ModelSpec>& models) {
  std::printf("%-16s %9s %6s %6s %9s %6s %7s %6s\n", "name", "params_B", "layers", "hidden", "heads/kv",
              "ffn", "vocab", "seq");
  for (const auto& m : models) {
    std::string hk = std::to_string(m.heads) + "/" + std::to_string(m.kv_heads);
    std::printf("%-16s %9s %6d %6d %9s %6d %7lld %6d\n", m.name.c_str(), billions(total_params(m)).c_str(),
                m.layers, m.hidden, hk.c_str(), m.ffn_hidden, static_cast<long long>(m.vocab),
                m.max_positions);
  }
}

void print_row(const char* label, std::int64_t v, const std::string& note = "") {
  std::printf("  %-22s %18s%s\n", label, grouped(v).c_str(), note.empty() ? "" : ("  " + note).c_str());
}

// An MoE layer: the per-layer total, then its router and routed experts on rows of their
// own (the MLP of a dense layer is the shared expert here, when the model has one); then,
// where some layers keep a dense MLP of ffn_hidden, such a layer.
void print_moe_layer(const ModelSpec& m, const ParamCounts& c) {
  const bool dense = has_dense_layers(m);
  print_row(dense ? "per MoE layer" : "per layer", c.per_layer(),
            "attention " + grouped(c.attention) + ", norms " + grouped(c.layer_norms) +
                (c.mlp > 0 ? ", shared experts " + grouped(c.mlp) : std::string()) + ", and");
  const std::string bias = m.moe_bias ? " + biases" : "";
  print_row("  router", c.router, "hidden x " + std::to_string(m.experts) + " experts" + bias);
  print_row("  routed experts", c.experts,
            std::to_string(m.experts) + " x " + grouped(expert_params(m)) + " (" + (m.gated_mlp ? "3" : "2") +
                " x " + std::to_string(m.hidden) + " x " + std::to_string(m.moe_ffn) + bias + ")");
  if (dense)
    print_row("per dense layer", c.dense_layer(),
              "attention " + grouped(c.attention) + ", mlp " + grouped(c.dense_mlp) + ", norms " +
                  grouped(c.layer_norms));
}

// Multi-head latent attention's widths: "multi-head latent attention: q rank 1536, kv rank
// 512, rope 64, v 128" (q "projected directly" without a query latent).
std::string mla_phrase(const ModelSpec& m) {
  return "multi-head latent attention: " +
         (m.q_lora_rank > 0 ? "q rank " + std::to_string(m.q_lora_rank)
                            : std::string("q projected directly")) +
         ", kv rank " + std::to_string(m.kv_lora_rank) + ", rope " + std::to_string(m.qk_rope_head_dim) +
         ", v " + std::to_string(m.v_head_dim);
}

// Which layers of an MoE model with dense layers route to experts, and how many keep the
// dense MLP: ", 45 MoE layers after the first 1, 1 dense layer with the ffn above".
std::string moe_layers_phrase(const ModelSpec& m) {
  const int moe = moe_layer_count(m), dense = m.layers - moe;
  std::string s = ", " + std::to_string(moe) + " MoE layers";
  if (m.moe_layer_step > 1) s += " (one in every " + std::to_string(m.moe_layer_step) + ")";
  if (m.first_dense_layers > 0) s += " after the first " + std::to_string(m.first_dense_layers);
  return s + ", " + std::to_string(dense) + (dense == 1 ? " dense layer" : " dense layers") +
         " with the ffn above";
}

void print_one(const ModelSpec& m, const std::string& source) {
  const ParamCounts c = count_params(m);
  std::printf("%s\n", m.name.c_str());
  if (!source.empty()) std::printf("  source: %s\n", source.c_str());
  std::printf("  %s, %d layers, hidden %d, heads %d (kv %d, head_dim %d)\n", m.causal ? "decoder" : "encoder",
              m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim);
  if (is_mla(m)) std::printf("  attention: %s\n", mla_phrase(m).c_str());
  const std::string pretrain =
      m.pretrain_seq > 0 ? "; pre-trained at " + std::to_string(m.pretrain_seq) + ", the default --seq" : "";
  std::printf("  ffn %d %s%s, %s, %s positions (%d%s), vocab %lld (pad multiple %d)\n", m.ffn_hidden,
              name(m.activation), m.gated_mlp ? " gated" : "",
              m.norm == NormKind::layernorm && !m.norm_bias ? "layernorm (no bias)" : name(m.norm),
              name(m.position), m.max_positions, pretrain.c_str(), static_cast<long long>(m.vocab),
              m.vocab_pad_multiple);
  std::printf("  biases %s, embeddings %s%s%s%s\n",
              m.linear_bias ? "yes"
              : m.qkv_bias  ? "on Q, K, V only"
                            : "no",
              m.tied_embeddings ? "tied" : "untied", m.parallel_residual ? ", parallel residual" : "",
              m.embedding_norm ? ", embedding norm" : "", m.pooler ? ", pooler" : "");
  // The projection layout of the model code; Megatron fuses both whatever it says.
  const bool gate_split = m.gated_mlp && !m.fused_gate_up;
  std::printf("  linears: %s%s%s\n",
              is_mla(m)     ? "latent down and up projections"
              : m.fused_qkv ? "fused QKV"
                            : "separate Q, K, V",
              m.gated_mlp ? (gate_split ? ", separate gate and up" : ", fused gate/up") : "",
              (!m.fused_qkv && !is_mla(m)) || gate_split ? " (Megatron fuses them)" : "");
  // Block details beyond the common layout, where the model has them.
  std::vector<std::string> extra;
  if (m.norms_per_layer == 4) extra.push_back("norms before and after each sublayer");
  if (m.qk_norm)
    extra.push_back(m.qk_norm_full_width ? "query and key norms over all heads" : "query and key norms");
  if (windowed_layers_of(m) > 0) extra.push_back(window_phrase(m));
  if (m.attn_softcap) extra.push_back("soft-capped attention scores");
  if (m.logit_softcap) extra.push_back("soft-capped logits");
  if (m.attention_sinks) extra.push_back("attention sinks (a learned logit per head)");
  if (m.activation_clamp) extra.push_back("clamped gated activation");
  if (m.moe_bias) extra.push_back("biases on the router and the experts");
  if (is_moe(m))
    extra.push_back(
        "mixture of experts: " + std::to_string(m.experts) + " experts of width " +
        std::to_string(m.moe_ffn) + ", top-" + std::to_string(m.topk) +
        (m.shared_ffn > 0 ? ", shared experts of width " + std::to_string(m.shared_ffn) : std::string()) +
        (has_dense_layers(m) ? moe_layers_phrase(m) : " in every layer (the ffn width above is not used)"));
  if (!extra.empty()) std::printf("  block: %s\n", join(extra).c_str());
  std::printf("parameters\n");
  print_row("word embedding", c.word_embedding);
  print_row("other embeddings", c.other_embedding, "positions, token types, embedding norm");
  if (is_moe(m))
    print_moe_layer(m, c);
  else
    print_row("per layer", c.per_layer(),
              "attention " + grouped(c.attention) + ", mlp " + grouped(c.mlp) + ", norms " +
                  grouped(c.layer_norms));
  print_row(("x " + std::to_string(m.layers) + " layers").c_str(), c.all_layers(),
            has_dense_layers(m)
                ? std::to_string(c.moe_layers) + " MoE, " + std::to_string(m.layers - c.moe_layers) + " dense"
                : "");
  print_row("final norm", c.final_norm);
  print_row("lm head", c.lm_head, m.tied_embeddings ? "tied to the word embedding" : "");
  print_row("pooler", c.pooler);
  print_row("total", c.total(), "(" + billions(c.total()) + " B)");
  if (is_moe(m))
    print_row("active per token", active_params(m),
              "(" + billions(active_params(m)) + " B: top-" + std::to_string(m.topk) + " of the " +
                  std::to_string(m.experts) + " routed experts in each " +
                  (has_dense_layers(m) ? "MoE layer)" : "layer)"));
}

int run_list(bool json) {
  std::vector<ModelSpec> models;
  Diagnostics errs;
  for (const auto& n : model_preset_names()) {
    auto m = model_preset(n);
    if (!m)
      errs.insert(errs.end(), m.errors().begin(), m.errors().end());
    else
      models.push_back(*m);
  }
  if (!errs.empty()) return report(errs);
  if (!json) {
    print_table(models);
    return 0;
  }
  Json out = Json::array();
  for (const auto& m : models) {
    Json j = model_to_json(m);
    j["params"] = total_params(m);
    j["source"] = model_preset_source(m.name);
    out.push_back(std::move(j));
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_one(const std::string& what, bool json) {
  auto m = resolve_model(what, read_text_file);
  if (!m) return report(m.errors());
  const std::string source = model_preset_source(what);
  if (json) {
    Json j{{"model", model_to_json(*m)}, {"params", params_json(*m)}};
    if (!source.empty()) j["source"] = source;
    std::cout << j.dump(2) << "\n";
  } else {
    print_one(*m, source);
  }
  return 0;
}

}  // namespace

void add_models(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "models", "List the model presets, or show one model (preset, model JSON or HF config.json)");
  struct Opts {
    std::string what;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* model =
      sub->add_option("model", opts->what, "a preset name or the path of a model JSON / config.json");
  sub->add_flag("--json", opts->json, "print JSON instead of a table");
  sub->callback([opts, model, &exit_code] {
    if (model->count() > 0 && opts->what.empty()) {  // `models ""`: a name was meant, none given
      exit_code = report(
          {Diagnostic{"", "", "empty model name", "a preset name (dsplan models lists them) or a path"}});
      return;
    }
    exit_code = opts->what.empty() ? run_list(opts->json) : run_one(opts->what, opts->json);
  });
}

}  // namespace dsplan::cli
