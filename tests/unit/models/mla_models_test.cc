// Loading models with multi-head latent attention (ModelSpec::kv_lora_rank): the keys of
// dsplan's model JSON, the Hugging Face deepseek_v2, deepseek_v3 and kimi_k2 imports
// (hf_deepseek.cc) with hand-derived parameter counts, moe_layer_freq's mapping onto
// first_dense_layers and moe_layer_step, and the deepseek presets' active counts against
// the published ones (their totals are in preset_test.cc).
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;

// A small MLA model in dsplan's schema: 4 heads of nope 16 + rope 8, values 16, latents 32
// (query) and 16 (key/value), 2 layers, no experts.
Json small_mla() {
  return Json{{"layers", 2},           {"hidden", 64},         {"heads", 4},        {"head_dim", 16},
              {"ffn_hidden", 128},     {"gated_mlp", true},    {"vocab", 100},      {"position", "rotary"},
              {"norm", "rmsnorm"},     {"linear_bias", false}, {"q_lora_rank", 32}, {"kv_lora_rank", 16},
              {"qk_rope_head_dim", 8}, {"v_head_dim", 16}};
}

// Attention: q_down 64*32 = 2,048, q_up 32*4*24 = 3,072, kv_down 64*(16+8) = 1,536, kv_up
// 16*4*(16+16) = 2,048, o_proj 4*16*64 = 4,096 -> 12,800; norms 2*64 + 32 + 16 = 176; MLP
// 3*64*128 = 24,576: 37,552 a layer. 2 layers + tied embedding 6,400 + final norm 64 =
// 81,568.
TEST(MlaJson, KeysAreReadAndWrittenBack) {
  auto m = parse_model_json(small_mla(), "mla.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_TRUE(is_mla(*m));
  EXPECT_EQ(m->kv_heads, 4);  // absent: heads
  EXPECT_EQ(count_params(*m).attention, 12'800);
  EXPECT_EQ(count_params(*m).layer_norms, 176);
  EXPECT_EQ(total_params(*m), 81'568);
  const Json out = model_to_json(*m);
  EXPECT_EQ(out["q_lora_rank"], 32);
  EXPECT_EQ(out["kv_lora_rank"], 16);
  EXPECT_EQ(out["qk_rope_head_dim"], 8);
  EXPECT_EQ(out["v_head_dim"], 16);
  auto again = parse_model_json(out, "again.json");
  ASSERT_TRUE(again.ok()) << all_errors(again.errors());
  EXPECT_EQ(model_to_json(*again), out);
  // Without a query latent q_lora_rank is not written, and reads back as 0.
  Json direct = small_mla();
  direct.erase("q_lora_rank");
  auto d = parse_model_json(direct, "direct.json");
  ASSERT_TRUE(d.ok()) << all_errors(d.errors());
  EXPECT_FALSE(model_to_json(*d).contains("q_lora_rank"));
  // A model without latent attention writes none of the keys.
  Json plain = small_mla();
  for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"}) plain.erase(k);
  auto p = parse_model_json(plain, "plain.json");
  ASSERT_TRUE(p.ok()) << all_errors(p.errors());
  for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"})
    EXPECT_FALSE(model_to_json(*p).contains(k)) << k;
}

TEST(MlaJson, KeysAreRefusedNamingTheField) {
  Json j = small_mla();
  j["kv_lora_rank"] = 0;  // no latent attention: the other three are errors of their own
  std::string text = test::model_errors(j, "m.json");
  for (const char* k : {"/q_lora_rank", "/qk_rope_head_dim", "/v_head_dim"})
    EXPECT_TRUE(test::contains(
        text, std::string(k) + ": given without multi-head latent attention (kv_lora_rank > 0)"))
        << k << "\n"
        << text;
  j = small_mla();
  j["qk_rope_head_dim"] = 7;
  text = test::model_errors(j, "m.json");
  EXPECT_TRUE(test::contains(text, "/qk_rope_head_dim: must be a positive even number")) << text;
  j["qk_rope_head_dim"] = 0;
  EXPECT_TRUE(
      test::contains(test::model_errors(j, "m.json"), "/qk_rope_head_dim: must be a positive even number"));
  j = small_mla();
  j.erase("qk_rope_head_dim");
  j.erase("v_head_dim");
  j.erase("head_dim");
  text = test::model_errors(j, "m.json");
  EXPECT_TRUE(test::contains(text, "/qk_rope_head_dim: missing: multi-head latent attention")) << text;
  EXPECT_TRUE(test::contains(text, "/v_head_dim: missing: multi-head latent attention")) << text;
  EXPECT_TRUE(test::contains(text, "/head_dim: missing: multi-head latent attention")) << text;
  j = small_mla();
  j["v_head_dim"] = 0;
  EXPECT_TRUE(test::contains(test::model_errors(j, "m.json"),
                             "/v_head_dim: must be positive with multi-head latent attention"));
  j = small_mla();
  j["q_lora_rank"] = -1;
  text = test::model_errors(j, "m.json");
  EXPECT_TRUE(test::contains(text, "/q_lora_rank: value -1 is out of range")) << text;
  j = small_mla();
  j["kv_heads"] = 2;  // grouped keys and values do not exist under MLA
  text = test::model_errors(j, "m.json");
  EXPECT_TRUE(
      test::contains(text, "/kv_heads: kv_heads 2 differs from heads 4 under multi-head latent attention"))
      << text;
  EXPECT_FALSE(test::contains(text, "not a multiple")) << text;
  j["kv_heads"] = 4;
  EXPECT_EQ(test::model_errors(j, "m.json"), "");
}

// A tiny DeepSeek-V3 config: 4 layers (the first dense), 4 heads, the widths of small_mla,
// 8 experts of 32 top-2 and one shared. Attention 12,800 and norms 176 as above; dense
// layer + 3*64*128 = 24,576 -> 37,552; MoE layer + shared 3*64*32 = 6,144, router 64*8 =
// 512, experts 8*6,144 = 49,152 -> 68,784. 37,552 + 3 x 68,784 = 243,904; + untied
// embedding and head 2*100*64 = 12,800 + final norm 64 = 256,768. Active: less
// (8-2)*6,144 = 36,864 in each of the 3 MoE layers = 146,176.
Json tiny_v3() {
  return Json{{"model_type", "deepseek_v3"},
              {"hidden_size", 64},
              {"intermediate_size", 128},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 4},
              {"head_dim", 8},  // transformers' copy of qk_rope_head_dim: not read
              {"q_lora_rank", 32},
              {"kv_lora_rank", 16},
              {"qk_nope_head_dim", 16},
              {"qk_rope_head_dim", 8},
              {"v_head_dim", 16},
              {"n_routed_experts", 8},
              {"num_experts_per_tok", 2},
              {"n_shared_experts", 1},
              {"moe_intermediate_size", 32},
              {"first_k_dense_replace", 1},
              {"moe_layer_freq", 1},
              {"num_nextn_predict_layers", 1},
              {"topk_method", "noaux_tc"},
              {"n_group", 2},
              {"topk_group", 1},
              {"routed_scaling_factor", 2.5},
              {"scoring_func", "sigmoid"},
              {"rope_scaling", {{"type", "yarn"}, {"factor", 40}}},
              {"attention_bias", false},
              {"hidden_act", "silu"},
              {"rms_norm_eps", 1e-6},
              {"tie_word_embeddings", false},
              {"vocab_size", 100}};
}

TEST(HfDeepseek, V3Imports) {
  auto m = parse_model_json(tiny_v3(), "v3.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_TRUE(is_mla(*m) && is_moe(*m));
  EXPECT_EQ(m->head_dim, 16);  // qk_nope_head_dim
  EXPECT_EQ(m->kv_heads, 4);
  EXPECT_EQ(m->q_lora_rank, 32);
  EXPECT_EQ(m->qk_rope_head_dim, 8);
  EXPECT_EQ(m->v_head_dim, 16);
  EXPECT_EQ(m->shared_ffn, 32);
  EXPECT_EQ(m->first_dense_layers, 1);
  EXPECT_EQ(m->moe_layer_step, 1);
  EXPECT_EQ(m->max_positions, 4096);  // DeepseekV3Config's default
  EXPECT_FALSE(m->tied_embeddings || m->linear_bias || m->fused_qkv || m->fused_gate_up);
  EXPECT_EQ(count_params(*m).attention, 12'800);
  EXPECT_EQ(count_params(*m).dense_layer(), 37'552);
  EXPECT_EQ(count_params(*m).per_layer(), 68'784);
  EXPECT_EQ(total_params(*m), 256'768);
  EXPECT_EQ(active_params(*m), 146'176);
  // Kimi K2 ships the same layout as model_type kimi_k2.
  Json kimi = tiny_v3();
  kimi["model_type"] = "kimi_k2";
  auto k = parse_model_json(kimi, "kimi.json");
  ASSERT_TRUE(k.ok()) << all_errors(k.errors());
  Json kj = model_to_json(*k), mj = model_to_json(*m);
  kj.erase("name");
  mj.erase("name");
  EXPECT_EQ(kj, mj);
  EXPECT_EQ(total_params(*k), 256'768);
}

// A tiny DeepSeek-V2 config without a query latent (q_lora_rank null, as V2-Lite): 3
// layers (the first dense, ffn 96), 4 experts of 16 top-2, two shared (32). Attention:
// q_proj 64*4*24 = 6,144 + kv_down 1,536 + kv_up 2,048 + o_proj 4,096 = 13,824; norms
// 2*64 + 16 = 144. Dense layer + 3*64*96 = 18,432 -> 32,400; MoE layer + shared 3*64*32 =
// 6,144, router 64*4 = 256, experts 4*3*64*16 = 12,288 -> 32,656. 32,400 + 2 x 32,656 =
// 97,712; + 2*100*64 = 12,800 + 64 = 110,576. Active: less (4-2)*3,072 = 6,144 in each of
// the 2 MoE layers = 98,288.
Json tiny_v2() {
  return Json{{"model_type", "deepseek_v2"},
              {"hidden_size", 64},
              {"intermediate_size", 96},
              {"num_hidden_layers", 3},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 4},
              {"q_lora_rank", nullptr},
              {"kv_lora_rank", 16},
              {"qk_nope_head_dim", 16},
              {"qk_rope_head_dim", 8},
              {"v_head_dim", 16},
              {"n_routed_experts", 4},
              {"num_experts_per_tok", 2},
              {"n_shared_experts", 2},
              {"moe_intermediate_size", 16},
              {"first_k_dense_replace", 1},
              {"topk_method", "greedy"},
              {"mlp_bias", false},
              {"vocab_size", 100}};
}

TEST(HfDeepseek, V2WithoutQueryLatentImports) {
  auto m = parse_model_json(tiny_v2(), "v2.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->q_lora_rank, 0);
  EXPECT_EQ(m->max_positions, 2048);  // DeepseekV2Config's default
  EXPECT_EQ(count_params(*m).attention, 13'824);
  EXPECT_EQ(count_params(*m).layer_norms, 144);
  EXPECT_EQ(count_params(*m).dense_layer(), 32'400);
  EXPECT_EQ(count_params(*m).per_layer(), 32'656);
  EXPECT_EQ(total_params(*m), 110'576);
  EXPECT_EQ(active_params(*m), 98'288);
  // Absent, q_lora_rank is the class default 1536 (a query latent).
  Json absent = tiny_v2();
  absent.erase("q_lora_rank");
  auto a = parse_model_json(absent, "v2.json");
  ASSERT_TRUE(a.ok()) << all_errors(a.errors());
  EXPECT_EQ(a->q_lora_rank, 1536);
}

TEST(HfDeepseek, BiasesAndMissingExpertsAreRefused) {
  Json j = tiny_v3();
  j["attention_bias"] = true;
  EXPECT_TRUE(test::contains(test::model_errors(j, "v3.json"),
                             "/attention_bias: biases on the latent attention's projections"));
  j = tiny_v2();
  j["mlp_bias"] = true;
  EXPECT_TRUE(test::contains(test::model_errors(j, "v2.json"), "/mlp_bias: biases on the MLP's linears"));
  j = tiny_v3();
  j["n_routed_experts"] = nullptr;
  EXPECT_TRUE(test::contains(test::model_errors(j, "v3.json"), "/n_routed_experts: missing required key"));
  j = tiny_v3();
  j["qk_rope_head_dim"] = 7;  // validation errors point at the config's key
  EXPECT_TRUE(
      test::contains(test::model_errors(j, "v3.json"), "/qk_rope_head_dim: must be a positive even number"));
  j = tiny_v3();
  j["first_k_dense_replace"] = 4;
  EXPECT_TRUE(
      test::contains(test::model_errors(j, "v3.json"), "/first_k_dense_replace: 4 is not in [0, layers)"));
}

// moe_layer_freq as DeepSeek's code applies it (layer i MoE iff i >= first_k_dense_replace
// and i % moe_layer_freq == 0) maps onto first_dense_layers and moe_layer_step layer by
// layer where it can; from layer 0 with a step above 1, or with no MoE layer left, it is
// refused.
TEST(HfDeepseek, MoeLayerFreqMapsOrIsRefused) {
  for (const auto& [layers, k, freq] : {std::tuple{8, 1, 2}, {9, 3, 3}, {12, 5, 4}, {8, 2, 1}, {6, 4, 2}}) {
    Json j = tiny_v3();
    j["num_hidden_layers"] = layers;
    j["first_k_dense_replace"] = k;
    j["moe_layer_freq"] = freq;
    auto m = parse_model_json(j, "v3.json");
    ASSERT_TRUE(m.ok()) << layers << " " << k << " " << freq << ": " << all_errors(m.errors());
    for (int i = 0; i < layers; ++i)
      EXPECT_EQ(is_moe_layer(*m, i), i >= k && i % freq == 0) << "layer " << i << " of " << k << "/" << freq;
  }
  Json j = tiny_v3();
  j["num_hidden_layers"] = 8;
  j["first_k_dense_replace"] = 1;
  j["moe_layer_freq"] = 2;
  auto m = parse_model_json(j, "v3.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->first_dense_layers, 1);  // layers 2, 4, 6 MoE: step 2 after one dense layer
  EXPECT_EQ(m->moe_layer_step, 2);
  j["first_k_dense_replace"] = 0;
  std::string text = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(
      text, "/moe_layer_freq: moe_layer_freq 2 with first_k_dense_replace 0 makes layer 0 MoE"))
      << text;
  j["first_k_dense_replace"] = 7;
  text = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(
      text, "/moe_layer_freq: moe_layer_freq 2 with first_k_dense_replace 7 leaves no MoE layer"))
      << text;
}

// The real configs (deepseek-ai/DeepSeek-V3 and DeepSeek-V2-Lite config.json, the keys
// that matter) import as the presets.
TEST(HfDeepseek, RealConfigsAreThePresets) {
  Json v3{{"model_type", "deepseek_v3"},
          {"hidden_size", 7168},
          {"intermediate_size", 18432},
          {"num_hidden_layers", 61},
          {"num_attention_heads", 128},
          {"num_key_value_heads", 128},
          {"q_lora_rank", 1536},
          {"kv_lora_rank", 512},
          {"qk_nope_head_dim", 128},
          {"qk_rope_head_dim", 64},
          {"v_head_dim", 128},
          {"n_routed_experts", 256},
          {"num_experts_per_tok", 8},
          {"n_shared_experts", 1},
          {"moe_intermediate_size", 2048},
          {"first_k_dense_replace", 3},
          {"moe_layer_freq", 1},
          {"num_nextn_predict_layers", 1},
          {"max_position_embeddings", 163840},
          {"rope_scaling",
           {{"beta_fast", 32},
            {"beta_slow", 1},
            {"factor", 40},
            {"mscale", 1.0},
            {"mscale_all_dim", 1.0},
            {"original_max_position_embeddings", 4096},
            {"type", "yarn"}}},
          {"tie_word_embeddings", false},
          {"vocab_size", 129280}};
  Json lite{{"model_type", "deepseek_v2"},
            {"hidden_size", 2048},
            {"intermediate_size", 10944},
            {"num_hidden_layers", 27},
            {"num_attention_heads", 16},
            {"num_key_value_heads", 16},
            {"q_lora_rank", nullptr},
            {"kv_lora_rank", 512},
            {"qk_nope_head_dim", 128},
            {"qk_rope_head_dim", 64},
            {"v_head_dim", 128},
            {"n_routed_experts", 64},
            {"num_experts_per_tok", 6},
            {"n_shared_experts", 2},
            {"moe_intermediate_size", 1408},
            {"first_k_dense_replace", 1},
            {"moe_layer_freq", 1},
            {"head_dim", 64},
            {"max_position_embeddings", 163840},
            {"rope_scaling",
             {{"beta_fast", 32},
              {"beta_slow", 1},
              {"factor", 40},
              {"mscale", 0.707},
              {"mscale_all_dim", 0.707},
              {"original_max_position_embeddings", 4096},
              {"type", "yarn"}}},
            {"tie_word_embeddings", false},
            {"vocab_size", 102400}};
  for (const auto& [config, preset] : {std::pair{v3, "deepseek-v3"}, {lite, "deepseek-v2-lite"}}) {
    auto m = parse_model_json(config, std::string(preset) + "/config.json");
    ASSERT_TRUE(m.ok()) << preset << ": " << all_errors(m.errors());
    auto p = model_preset(preset);
    ASSERT_TRUE(p.ok()) << preset;
    Json got = model_to_json(*m), want = model_to_json(*p);
    got.erase("name");
    want.erase("name");
    EXPECT_EQ(got, want) << preset;
  }
}

// Active parameters, against the published: deepseek-v3 671,026,404,352 less 248 idle
// experts x 44,040,192 x 58 MoE layers (633,474,121,728) = 37,552,282,624 (DeepSeek: 37B);
// deepseek-v2-lite 15,706,484,224 less 58 x 8,650,752 x 26 (13,045,334,016) =
// 2,661,150,208 (DeepSeek: 2.4B). The published active figures match neither count
// with the embedding and head: without the input embedding (a lookup, no GEMM) they are
// 36,625,603,584 (37B) and 2,451,435,008 (2.4B), which is what is checked to 3%. kimi-k2
// 1,026,408,209,408 less 376 idle experts x 44,040,192 x 60 MoE layers (993,546,731,520) =
// 32,861,477,888; without its input embedding (163840 x 7168 = 1,174,405,120)
// 31,687,072,768 (Moonshot: 32B activated).
TEST(MlaPresets, ActiveParametersAgainstThePublished) {
  const std::tuple<const char*, std::int64_t, double> cases[] = {
      {"deepseek-v3", 37'552'282'624, 37e9},
      {"deepseek-v2-lite", 2'661'150'208, 2.4e9},
      {"kimi-k2", 32'861'477'888, 32e9},
  };
  for (const auto& [name, active, published] : cases) {
    auto m = model_preset(name);
    ASSERT_TRUE(m.ok()) << name;
    EXPECT_TRUE(is_mla(*m)) << name;
    EXPECT_EQ(active_params(*m), active) << name;
    const double without_input_embedding = double(active - count_params(*m).word_embedding);
    EXPECT_NEAR(without_input_embedding / published, 1.0, 0.03) << name;
  }
}

}  // namespace
}  // namespace dsplan
