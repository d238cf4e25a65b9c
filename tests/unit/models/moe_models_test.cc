// Loading mixture-of-experts models: the presets' active parameter counts, the Hugging Face
// MoE families (mixtral, qwen2_moe, qwen3_moe, olmoe) and the configs dsplan refuses, and
// the expert keys of dsplan's own model JSON. MoE models with dense layers (glm4_moe,
// llama4, Qwen's layer patterns, first_dense_layers and moe_layer_step) are in
// moe_dense_layers_test.cc. Total counts of the presets and fixtures are
// in preset_test.cc and hf_config_test.cc; the arithmetic of each is beside it here.
#include <gtest/gtest.h>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;
using test::load;

// Active parameters: the total less the routed experts a token does not run, in every
// layer (the attention, router, norms, shared expert and embeddings all run). Per layer:
//   mixtral-8x7b: attention 41,943,040 + router 32,768 + 2 x 3*4096*14336 (352,321,536)
//     + norms 8,192 = 394,305,536; x32 = 12,617,777,152; + embedding and head
//     2*32000*4096 = 262,144,000 + final norm 4,096 = 12,879,925,248 (Mistral AI: 12.9B).
//   mixtral-8x22b: 88,080,384 + 49,152 + 2 x 3*6144*16384 (603,979,776) + 12,288 =
//     692,121,600; x56 = 38,758,809,600; + 2*32768*6144 + 6144 = 39,161,468,928 (39B).
//   qwen3-30b-a3b: 18,874,368 + 262,144 + 8 x 3*2048*768 (37,748,736) + 4,352 = 56,889,600;
//     x48 = 2,730,700,800; + 2*151936*2048 + 2048 = 3,353,032,704 (Qwen: 3.3B).
//   qwen3-235b-a22b: 71,303,168 + 524,288 + 8 x 3*4096*1536 (150,994,944) + 8,448 =
//     222,830,848; x94 = 20,946,099,712; + 2*151936*4096 + 4096 = 22,190,763,520 (Qwen: 22B).
//   qwen2-57b-a14b: 29,364,736 + shared 220,200,960 + 229,376 + 8 x 3*3584*2560
//     (220,200,960) + 7,168 = 470,003,200; x28 = 13,160,089,600; + 2*151936*3584 + 3584
//     = 14,249,170,432 (Qwen: 14B).
TEST(MoeParams, ActiveParametersOfThePresets) {
  const std::pair<const char*, std::int64_t> cases[] = {
      {"mixtral-8x7b", 12'879'925'248},   {"mixtral-8x22b", 39'161'468'928},
      {"qwen3-30b-a3b", 3'353'032'704},   {"qwen3-235b-a22b", 22'190'763'520},
      {"qwen2-57b-a14b", 14'249'170'432},
  };
  for (const auto& [name, active] : cases) {
    auto m = model_preset(name);
    ASSERT_TRUE(m.ok()) << name << ": " << all_errors(m.errors());
    EXPECT_TRUE(is_moe(*m)) << name;
    EXPECT_EQ(active_params(*m), active) << name;
  }
}

// Mixtral 8x7B's layer by component (the rows `dsplan models mixtral-8x7b` prints).
TEST(MoeParams, MixtralLayerByComponent) {
  auto m = model_preset("mixtral-8x7b");
  ASSERT_TRUE(m.ok());
  const ParamCounts c = count_params(*m);
  EXPECT_EQ(c.attention, 41'943'040);       // 4096*(4096 + 2*1024) + 4096*4096
  EXPECT_EQ(c.router, 32'768);              // 4096 x 8
  EXPECT_EQ(c.experts, 1'409'286'144);      // 8 x 3*4096*14336
  EXPECT_EQ(c.mlp, 0);                      // no shared expert
  EXPECT_EQ(c.per_layer(), 1'451'270'144);  // + norms 8,192
  EXPECT_EQ(total_params(*m), 46'702'792'704);
}

TEST(HfMoe, MixtralReadsItsExpertsAndNoWindow) {
  auto m = load("hf/Mixtral-8x7B-v0.1/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->experts, 8);
  EXPECT_EQ(m->topk, 2);
  EXPECT_EQ(m->moe_ffn, 14336);  // intermediate_size is each expert's width
  EXPECT_EQ(m->shared_ffn, 0);
  EXPECT_EQ(m->attention_window, 0);  // "sliding_window": null
  EXPECT_EQ(m->max_positions, 32768);
}

// Qwen2-57B-A14B (fixture: the model's config.json): a shared expert and Q/K/V biases.
TEST(HfMoe, Qwen2MoeReadsItsSharedExpert) {
  auto m = load("hf/Qwen2-57B-A14B/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->experts, 64);
  EXPECT_EQ(m->topk, 8);
  EXPECT_EQ(m->moe_ffn, 2560);
  EXPECT_EQ(m->shared_ffn, 20480);
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_EQ(m->attention_window, 0);  // use_sliding_window false
}

// A qwen2_moe config of Qwen1.5-MoE-A2.7B's shape (hidden 2048, 24 layers, 16 heads, 60
// experts of 1408 top-4, a shared expert of 5632). Each layer: attention 4 x 2048^2 +
// 3 x 2048 Q/K/V biases = 16,783,360; shared expert 3 x 2048 x 5632 = 34,603,008; router
// 2048 x 60 = 122,880; experts 60 x 3 x 2048 x 1408 = 519,045,120; norms 4,096: 570,558,464.
// qkv_bias false (Qwen2MoeConfig's key) takes the 6,144 biases away.
Json qwen15_moe() {
  return Json{{"model_type", "qwen2_moe"},
              {"hidden_size", 2048},
              {"num_hidden_layers", 24},
              {"num_attention_heads", 16},
              {"num_key_value_heads", 16},
              {"intermediate_size", 5632},
              {"moe_intermediate_size", 1408},
              {"shared_expert_intermediate_size", 5632},
              {"num_experts", 60},
              {"num_experts_per_tok", 4},
              {"decoder_sparse_step", 1},
              {"mlp_only_layers", Json::array()},
              {"vocab_size", 151936},
              {"tie_word_embeddings", false}};
}

TEST(HfMoe, Qwen2MoeLayerCount) {
  auto m = parse_model_json(qwen15_moe(), "qwen2-moe.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(count_params(*m).per_layer(), 570'558'464);
  Json j = qwen15_moe();
  j["qkv_bias"] = false;
  auto nb = parse_model_json(j, "qwen2-moe.json");
  ASSERT_TRUE(nb.ok()) << all_errors(nb.errors());
  EXPECT_EQ(count_params(*nb).per_layer(), 570'558'464 - 3 * 2048);
}

// Qwen-MoE's shared expert's width is required (its dense-layer patterns: moe_dense_layers_test.cc).
TEST(HfMoe, Qwen2MoeNeedsItsSharedWidth) {
  Json shared = qwen15_moe();
  shared.erase("shared_expert_intermediate_size");
  const std::string text = test::model_errors(shared, "shared.json");
  EXPECT_NE(text.find("/shared_expert_intermediate_size: missing required key"), std::string::npos) << text;
}

TEST(HfMoe, Qwen3MoeHasQkNormsAndNoSharedExpert) {
  auto m = load("hf/Qwen3-30B-A3B/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->experts, 128);
  EXPECT_EQ(m->topk, 8);
  EXPECT_EQ(m->moe_ffn, 768);
  EXPECT_EQ(m->shared_ffn, 0);
  EXPECT_TRUE(m->qk_norm);
  EXPECT_FALSE(m->qk_norm_full_width);  // one norm per head, head_dim 128
}

// OLMoE-1B-7B (allenai/OLMoE-1B-7B-0924's config keys): Llama's pre-norm block, query and
// key norms over the whole projections (2048 + 2048 with 16/16 heads), 64 experts of 1024,
// top-8, V50304 untied. Layer: attention 4 x 2048^2 = 16,777,216; router 2048 x 64 =
// 131,072; experts 64 x 3 x 2048 x 1024 = 402,653,184; norms 4,096 + q/k norms 4,096 =
// 8,192: 419,569,664; x16 = 6,713,114,624; + 2*50304*2048 = 206,045,184 + 2048 =
// 6,919,161,856 (OLMoE paper: 6.9B). Active: 16,777,216 + 131,072 + 8 x 6,291,456 +
// 8,192 = 67,248,128; x16 = 1,075,970,048 + 206,047,232 = 1,282,017,280 (1.3B).
TEST(HfMoe, OlmoeImportsWithFullWidthQkNorms) {
  Json j{{"model_type", "olmoe"},       {"architectures", Json::array({"OlmoeForCausalLM"})},
         {"hidden_act", "silu"},        {"hidden_size", 2048},
         {"intermediate_size", 1024},   {"num_hidden_layers", 16},
         {"num_attention_heads", 16},   {"num_key_value_heads", 16},
         {"num_experts", 64},           {"num_experts_per_tok", 8},
         {"norm_topk_prob", false},     {"clip_qkv", nullptr},
         {"attention_bias", false},     {"vocab_size", 50304},
         {"tie_word_embeddings", false}};
  auto m = parse_model_json(j, "olmoe.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_TRUE(m->qk_norm && m->qk_norm_full_width);
  EXPECT_EQ(m->norms_per_layer, 2);   // pre-norm, unlike OLMo 2's output norms
  EXPECT_EQ(m->max_positions, 4096);  // OlmoeConfig's default
  EXPECT_EQ(m->moe_ffn, 1024);
  EXPECT_EQ(total_params(*m), 6'919'161'856);
  EXPECT_EQ(active_params(*m), 1'282'017'280);
}

// Expert keys on a type that is not an MoE family are refused, naming the key.
TEST(HfMoe, ExpertKeysOnOtherTypesAreRefused) {
  Json llama{{"model_type", "llama"},    {"hidden_size", 64},        {"num_hidden_layers", 2},
             {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 100},
             {"num_local_experts", 8}};
  std::string text = test::model_errors(llama, "llama.json");
  EXPECT_NE(text.find("/num_local_experts: a mixture-of-experts model (num_local_experts 8)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("model_type \"mixtral\""), std::string::npos) << text;
  Json other{{"model_type", "jamba"}, {"num_experts", 16}, {"hidden_size", 64}};
  text = test::model_errors(other, "jamba.json");
  EXPECT_NE(text.find("/num_experts"), std::string::npos) << text;
  EXPECT_NE(text.find("mixture-of-experts types dsplan imports: deepseek_v2, deepseek_v3, glm4_moe, gpt_oss, "
                      "kimi_k2, llama4, llama4_text, mixtral, olmoe, qwen2_moe, qwen3_moe"),
            std::string::npos)
      << text;
}

// dsplan's own schema. The fixtures: moe_topk.json (4 experts, topk 5) and
// moe_topk_without_experts.json (topk 2, no "experts").
TEST(ModelJsonMoe, TopkWithinTheExpertsAndOnlyWithThem) {
  auto over = load("bad/moe_topk.json");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(all_errors(over.errors()).find("/topk: topk 5 is not in [1, experts]"), std::string::npos)
      << all_errors(over.errors());
  auto stray = load("bad/moe_topk_without_experts.json");
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(all_errors(stray.errors()).find("/topk: given without \"experts\""), std::string::npos)
      << all_errors(stray.errors());
}

Json tiny_moe() {
  return Json{{"layers", 2},          {"hidden", 64},      {"heads", 4},           {"vocab", 100},
              {"position", "rotary"}, {"norm", "rmsnorm"}, {"linear_bias", false}, {"gated_mlp", true},
              {"experts", 4},         {"topk", 2},         {"moe_ffn", 32}};
}

// Every problem is reported, each naming its key.
TEST(ModelJsonMoe, EveryMissingOrStrayKeyIsReported) {
  Json missing = tiny_moe();
  missing.erase("topk");
  missing.erase("moe_ffn");
  std::string text = test::model_errors(missing, "missing.json");
  EXPECT_NE(text.find("missing.json: /topk: missing: an MoE model"), std::string::npos) << text;
  EXPECT_NE(text.find("missing.json: /moe_ffn: missing: an MoE model"), std::string::npos) << text;
  Json stray = tiny_moe();
  stray.erase("experts");
  stray["shared_ffn"] = 64;
  text = test::model_errors(stray, "stray.json");
  for (const char* key : {"/topk", "/moe_ffn", "/shared_ffn"})
    EXPECT_NE(text.find(std::string(key) + ": given without \"experts\""), std::string::npos) << key << text;
  Json range = tiny_moe();
  range["experts"] = 0;
  range["moe_ffn"] = 0;
  text = test::model_errors(range, "range.json");
  EXPECT_NE(text.find("/experts"), std::string::npos) << text;
  EXPECT_NE(text.find("/moe_ffn"), std::string::npos) << text;
}

// ffn_hidden may be left out of an MoE model: it is then one expert's width. The JSON a
// model writes keeps its expert keys, so `dsplan models NAME --json` reloads as the same.
TEST(ModelJsonMoe, FfnHiddenDefaultsToTheExpertWidthAndRoundTrips) {
  auto m = parse_model_json(tiny_moe(), "tiny.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->ffn_hidden, 32);
  // Layer: attention 4 x 64^2 = 16,384; router 64 x 4 = 256; experts 4 x 3 x 64 x 32 =
  // 24,576; norms 128: 41,344.
  EXPECT_EQ(count_params(*m).per_layer(), 41'344);
  auto again = parse_model_json(model_to_json(*m), "again.json");
  ASSERT_TRUE(again.ok()) << all_errors(again.errors());
  EXPECT_EQ(model_to_json(*again), model_to_json(*m));
}

}  // namespace
}  // namespace dsplan
