// Loading mixture-of-experts models whose some layers keep a dense MLP (ModelSpec::
// first_dense_layers, moe_layer_step): dsplan's own keys (accepted, refused, written back),
// the glm4_moe (GLM-4.5) and llama4 (Llama 4) Hugging Face imports, Qwen's layer patterns
// (decoder_sparse_step, mlp_only_layers) mapped or refused, and the new presets' active
// counts. Total counts of the presets, with their arithmetic, are in preset_test.cc.
#include <gtest/gtest.h>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;

// 4 layers of hidden 64 (4 heads), 4 experts of 32 top-2, dense MLP 128, RMSNorm, no
// biases, V100 tied.
Json tiny() {
  return Json{{"layers", 4},          {"hidden", 64},      {"heads", 4},           {"vocab", 100},
              {"position", "rotary"}, {"norm", "rmsnorm"}, {"linear_bias", false}, {"gated_mlp", true},
              {"experts", 4},         {"topk", 2},         {"moe_ffn", 32},        {"ffn_hidden", 128}};
}

// Layer: attention 4 x 64^2 = 16,384; norms 128. MoE layer: router 64 x 4 = 256, experts
// 4 x 3 x 64 x 32 = 24,576 -> 41,344. Dense layer: 3 x 64 x 128 = 24,576 -> 41,088.
// first_dense_layers 1: 3 x 41,344 + 41,088 = 165,120; + 100 x 64 + 64 = 171,584.
TEST(ModelJsonDenseLayers, FirstDenseLayersCountAndRoundTrip) {
  Json j = tiny();
  j["first_dense_layers"] = 1;
  auto m = parse_model_json(j, "tiny.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->first_dense_layers, 1);
  EXPECT_EQ(moe_layer_count(*m), 3);
  const ParamCounts c = count_params(*m);
  EXPECT_EQ(c.per_layer(), 41'344);
  EXPECT_EQ(c.dense_layer(), 41'088);
  EXPECT_EQ(c.all_layers(), 165'120);
  EXPECT_EQ(total_params(*m), 171'584);
  // Active: 3 MoE layers each run 2 of the 4 experts: 171,584 - 3 x 2 x 6,144 = 134,720.
  EXPECT_EQ(active_params(*m), 134'720);
  const Json written = model_to_json(*m);
  EXPECT_EQ(written["first_dense_layers"], 1);
  EXPECT_FALSE(written.contains("moe_layer_step"));  // written where not the default
  auto again = parse_model_json(written, "again.json");
  ASSERT_TRUE(again.ok()) << all_errors(again.errors());
  EXPECT_EQ(total_params(*again), total_params(*m));
  EXPECT_EQ(model_to_json(*again), written);
}

// moe_layer_step 2: layers 1 and 3 MoE, 0 and 2 dense: 2 x 41,344 + 2 x 41,088 = 164,864.
TEST(ModelJsonDenseLayers, MoeLayerStepCountAndRoundTrip) {
  Json j = tiny();
  j["moe_layer_step"] = 2;
  auto m = parse_model_json(j, "tiny.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_FALSE(is_moe_layer(*m, 0));
  EXPECT_TRUE(is_moe_layer(*m, 1));
  EXPECT_EQ(count_params(*m).all_layers(), 164'864);
  auto again = parse_model_json(model_to_json(*m), "again.json");
  ASSERT_TRUE(again.ok()) << all_errors(again.errors());
  EXPECT_EQ(again->moe_layer_step, 2);
  EXPECT_EQ(total_params(*again), total_params(*m));
  // Without dense layers the MoE JSON keeps its keys as before.
  auto all_moe = parse_model_json(tiny(), "all.json");
  ASSERT_TRUE(all_moe.ok());
  EXPECT_FALSE(model_to_json(*all_moe).contains("first_dense_layers"));
}

// Each problem names its key and the values allowed.
TEST(ModelJsonDenseLayers, RefusedValuesNameTheKey) {
  const auto text_with = [](std::initializer_list<std::pair<const char*, Json>> keys, bool drop_experts) {
    Json j = tiny();
    if (drop_experts)
      for (const char* k : {"experts", "topk", "moe_ffn"}) j.erase(k);
    for (const auto& [k, v] : keys) j[k] = v;
    return test::model_errors(j, "m.json");
  };
  std::string t = text_with({{"first_dense_layers", 1}, {"moe_layer_step", 2}}, true);
  EXPECT_NE(t.find("/first_dense_layers: given without \"experts\""), std::string::npos) << t;
  EXPECT_NE(t.find("/moe_layer_step: given without \"experts\""), std::string::npos) << t;
  t = text_with({{"first_dense_layers", 4}}, false);
  EXPECT_NE(t.find("/first_dense_layers: 4 is not in [0, layers): the model has 4 layers"), std::string::npos)
      << t;
  EXPECT_NE(t.find("0 to 3"), std::string::npos) << t;
  t = text_with({{"moe_layer_step", 5}}, false);
  EXPECT_NE(t.find("/moe_layer_step: 5 is not in [1, layers]"), std::string::npos) << t;
  t = text_with({{"first_dense_layers", 2}, {"moe_layer_step", 3}}, false);
  EXPECT_NE(
      t.find("/moe_layer_step: first_dense_layers 2 and moe_layer_step 3 leave no MoE layer among the 4"),
      std::string::npos)
      << t;
  t = text_with({{"first_dense_layers", -1}, {"moe_layer_step", 0}}, false);
  EXPECT_NE(t.find("/first_dense_layers: value -1 is out of range"), std::string::npos) << t;
  EXPECT_NE(t.find("/moe_layer_step: value 0 is out of range"), std::string::npos) << t;
  t = text_with({{"first_dense_layers", "1"}, {"moe_layer_step", 1.5}}, false);
  EXPECT_NE(t.find("/first_dense_layers: expected an integer"), std::string::npos) << t;
  EXPECT_NE(t.find("/moe_layer_step: expected an integer"), std::string::npos) << t;
  // Dense layers need their width.
  Json no_ffn = tiny();
  no_ffn.erase("ffn_hidden");
  no_ffn["moe_layer_step"] = 2;
  t = test::model_errors(no_ffn, "m.json");
  EXPECT_NE(t.find("/ffn_hidden: missing: an MoE model with dense layers"), std::string::npos) << t;
  no_ffn["ffn_hidden"] = 0;
  t = test::model_errors(no_ffn, "m.json");
  EXPECT_NE(t.find("/ffn_hidden: value 0 is out of range"), std::string::npos) << t;
  // A spec built in code is checked the same way.
  ModelSpec dense;
  dense.layers = dense.hidden = dense.heads = dense.kv_heads = dense.head_dim = dense.ffn_hidden = 8;
  dense.vocab = dense.max_positions = 8;
  dense.first_dense_layers = 1;
  t = all_errors(validate_model(dense, "code"));
  EXPECT_NE(t.find("/first_dense_layers: dense leading layers in a model without experts"), std::string::npos)
      << t;
}

// GLM-4.5-Air's config.json keys (zai-org/GLM-4.5-Air, transformers 4.54.1's Glm4MoeConfig).
Json glm45_air() {
  return Json{{"architectures", Json::array({"Glm4MoeForCausalLM"})},
              {"attention_bias", true},
              {"attention_dropout", 0.0},
              {"first_k_dense_replace", 1},
              {"head_dim", 128},
              {"hidden_act", "silu"},
              {"hidden_size", 4096},
              {"intermediate_size", 10944},
              {"max_position_embeddings", 131072},
              {"model_type", "glm4_moe"},
              {"moe_intermediate_size", 1408},
              {"n_group", 1},
              {"n_routed_experts", 128},
              {"n_shared_experts", 1},
              {"norm_topk_prob", true},
              {"num_attention_heads", 96},
              {"num_experts_per_tok", 8},
              {"num_hidden_layers", 46},
              {"num_key_value_heads", 8},
              {"num_nextn_predict_layers", 1},
              {"partial_rotary_factor", 0.5},
              {"rms_norm_eps", 1e-05},
              {"rope_theta", 1000000},
              {"routed_scaling_factor", 1.0},
              {"tie_word_embeddings", false},
              {"topk_group", 1},
              {"use_qk_norm", false},
              {"vocab_size", 151552}};
}

// The import is the preset's shape (arithmetic in preset_test.cc). Active: 120 unused
// experts of 17,301,504 in each of the 45 MoE layers: 106,852,245,504 - 93,428,121,600 =
// 13,424,123,904; Zhipu's 12B active leaves out the embedding and head (13.42 - 1.24 B).
TEST(HfGlm4Moe, GlmAirImportsAsThePreset) {
  auto m = parse_model_json(glm45_air(), "GLM-4.5-Air/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_FALSE(m->linear_bias);  // o_proj and the MLPs have no bias
  EXPECT_FALSE(m->qk_norm);
  EXPECT_EQ(m->first_dense_layers, 1);
  EXPECT_EQ(m->moe_layer_step, 1);
  EXPECT_EQ(m->ffn_hidden, 10944);
  EXPECT_EQ(m->shared_ffn, 1408);
  EXPECT_EQ(total_params(*m), 106'852'245'504);
  EXPECT_EQ(active_params(*m), 13'424'123'904);
  auto preset = model_preset("glm-4.5-air");
  ASSERT_TRUE(preset.ok()) << all_errors(preset.errors());
  Json a = model_to_json(*m), b = model_to_json(*preset);
  a.erase("name");
  b.erase("name");
  EXPECT_EQ(a, b);
  EXPECT_EQ(active_params(*preset), 13'424'123'904);
}

// Query and key norms add 2 x 128 a layer; two shared experts are 2 x 1408 wide; the
// dense layers' count points at first_k_dense_replace; the MLA types stay refused.
TEST(HfGlm4Moe, FlagsSharedExpertsAndErrors) {
  Json j = glm45_air();
  j["use_qk_norm"] = true;
  j["n_shared_experts"] = 2;
  auto m = parse_model_json(j, "glm.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_TRUE(m->qk_norm);
  EXPECT_EQ(m->shared_ffn, 2816);
  EXPECT_EQ(count_params(*m).layer_norms, 8'192 + 256);
  j = glm45_air();
  j["first_k_dense_replace"] = 46;
  std::string t = test::model_errors(j, "glm.json");
  EXPECT_NE(t.find("/first_k_dense_replace: 46 is not in [0, layers)"), std::string::npos) << t;
  j = glm45_air();
  j.erase("n_routed_experts");
  t = test::model_errors(j, "glm.json");
  EXPECT_NE(t.find("/n_routed_experts: missing required key"), std::string::npos) << t;
}

// Llama 4 Maverick's text_config (meta-llama/Llama-4-Maverick-17B-128E; the same keys as
// TensorRT-LLM's copy of it), under a llama4 config with its vision_config.
Json maverick_text() {
  return Json{{"attention_bias", false},
              {"attention_chunk_size", 8192},
              {"head_dim", 128},
              {"hidden_act", "silu"},
              {"hidden_size", 5120},
              {"interleave_moe_layer_step", 2},
              {"intermediate_size", 8192},
              {"intermediate_size_mlp", 16384},
              {"max_position_embeddings", 1048576},
              {"model_type", "llama4_text"},
              {"num_attention_heads", 40},
              {"num_experts_per_tok", 1},
              {"num_hidden_layers", 48},
              {"num_key_value_heads", 8},
              {"num_local_experts", 128},
              {"rms_norm_eps", 1e-05},
              {"rope_theta", 500000.0},
              {"use_qk_norm", false},
              {"vocab_size", 202048}};
}

Json maverick() {
  return Json{{"architectures", Json::array({"Llama4ForConditionalGeneration"})},
              {"model_type", "llama4"},
              {"text_config", maverick_text()},
              {"vision_config", Json{{"hidden_size", 1408}, {"num_hidden_layers", 34}}}};
}

// Active: 127 unused experts of 125,829,120 in each of the 24 MoE layers:
// 400,711,848,960 - 383,527,157,760 = 17,184,691,200 (Meta: 17B active).
TEST(HfLlama4, MaverickImportsAsThePresetWithOrWithoutItsWrapper) {
  auto m = parse_model_json(maverick(), "Llama-4-Maverick-17B-128E/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->moe_layer_step, 2);
  EXPECT_EQ(m->first_dense_layers, 0);
  EXPECT_EQ(moe_layer_count(*m), 24);
  EXPECT_TRUE(is_moe_layer(*m, 1) && !is_moe_layer(*m, 0) && is_moe_layer(*m, 47));
  EXPECT_EQ(m->ffn_hidden, 16384);
  EXPECT_EQ(m->moe_ffn, 8192);
  EXPECT_EQ(m->shared_ffn, 8192);
  EXPECT_FALSE(m->qk_norm);
  EXPECT_EQ(total_params(*m), 400'711'848'960);
  EXPECT_EQ(active_params(*m), 17'184'691'200);
  auto flat = parse_model_json(maverick_text(), "text.json");
  ASSERT_TRUE(flat.ok()) << all_errors(flat.errors());
  EXPECT_EQ(total_params(*flat), 400'711'848'960);
  auto preset = model_preset("llama4-maverick");
  ASSERT_TRUE(preset.ok()) << all_errors(preset.errors());
  Json a = model_to_json(*m), b = model_to_json(*preset);
  a.erase("name");
  b.erase("name");
  // The preset's default sequence (8,192) is not in the config: it states no pre-training
  // length (llama4-maverick.json's source says where 8,192 comes from).
  EXPECT_EQ(b.value("pretrain_seq", 0), 8192);
  b.erase("pretrain_seq");
  EXPECT_EQ(a, b);
}

// Llama 4 Scout (16 experts, every layer MoE, a 10M context): its weightless L2 query/key
// norm adds nothing. Layer: 62,914,560 + router 81,920 + shared 125,829,120 + 16 x
// 125,829,120 + 10,240 = 2,202,101,760; x48 + 2,068,971,520 + 5,120 = 107,769,861,120
// (Meta: 109B with the vision tower). Active: - 48 x 15 x 125,829,120 = 17,172,894,720.
TEST(HfLlama4, ScoutEveryLayerMoeAndNoNormWeights) {
  Json j = maverick();
  Json& t = j["text_config"];
  t["interleave_moe_layer_step"] = 1;
  t["num_local_experts"] = 16;
  t["use_qk_norm"] = true;
  t["max_position_embeddings"] = 10485760;
  t["moe_layers"] = Json::array();
  for (int i = 0; i < 48; ++i) t["moe_layers"].push_back(i);
  auto m = parse_model_json(j, "scout.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_FALSE(m->qk_norm);
  EXPECT_EQ(moe_layer_count(*m), 48);
  EXPECT_EQ(total_params(*m), 107'769'861'120);
  EXPECT_EQ(active_params(*m), 17'172'894'720);
}

TEST(HfLlama4, ErrorsPointIntoTheTextConfig) {
  Json j = maverick();
  j["text_config"]["moe_layers"] = Json::array({0, 2});
  std::string t = test::model_errors(j, "l4.json");
  EXPECT_NE(t.find("/text_config/moe_layers: MoE layers other than every interleave_moe_layer_step-th"),
            std::string::npos)
      << t;
  j = maverick();
  j["text_config"]["attention_bias"] = true;
  j["text_config"]["num_hidden_layers"] = "48";
  t = test::model_errors(j, "l4.json");
  EXPECT_NE(t.find("/text_config/attention_bias"), std::string::npos) << t;
  EXPECT_NE(t.find("/text_config/num_hidden_layers: expected an integer"), std::string::npos) << t;
  j = maverick();
  j.erase("text_config");
  t = test::model_errors(j, "l4.json");
  EXPECT_NE(t.find("/text_config: missing"), std::string::npos) << t;
}

// A qwen2_moe config of Qwen1.5-MoE-A2.7B's shape (moe_models_test.cc): 24 layers; a dense
// layer is attention 16,783,360 + 3 x 2048 x 5632 = 34,603,008 + norms 4,096 = 51,390,464.
Json qwen_moe(int step, Json dense_layers) {
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
              {"decoder_sparse_step", step},
              {"mlp_only_layers", std::move(dense_layers)},
              {"vocab_size", 151936}};
}

// Layer i is sparse iff i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
TEST(HfQwenMoe, LayerPatternsMapOntoDenseLayers) {
  struct Case {
    int step;
    Json dense;
    int first, moe_step, moe_layers;
  };
  const Case cases[] = {
      {2, Json::array(), 0, 2, 12},          // layers 1, 3, ..., 23
      {1, Json::array({0, 1}), 2, 1, 22},    // layers 2..23
      {2, Json::array({0}), 0, 2, 12},       // layer 0 was dense anyway
      {2, Json::array({0, 1, 2}), 2, 2, 11}  // layers 3, 5, ..., 23
  };
  for (const Case& c : cases) {
    auto m = parse_model_json(qwen_moe(c.step, c.dense), "q.json");
    ASSERT_TRUE(m.ok()) << c.dense << all_errors(m.errors());
    EXPECT_EQ(m->first_dense_layers, c.first) << c.dense;
    EXPECT_EQ(m->moe_layer_step, c.moe_step) << c.dense;
    EXPECT_EQ(moe_layer_count(*m), c.moe_layers) << c.dense;
    EXPECT_EQ(count_params(*m).dense_layer(), 51'390'464);
  }
  Json q3 = qwen_moe(2, Json::array());
  q3["model_type"] = "qwen3_moe";  // Qwen3MoeDecoderLayer's rule is the same
  auto m = parse_model_json(q3, "q3.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->moe_layer_step, 2);
}

TEST(HfQwenMoe, OtherPatternsAreRefused) {
  std::string t = test::model_errors(qwen_moe(1, Json::array({5})), "q.json");
  EXPECT_NE(t.find("/mlp_only_layers: the MoE layers of decoder_sparse_step 1 and mlp_only_layers are not"),
            std::string::npos)
      << t;
  t = test::model_errors(qwen_moe(30, Json::array()), "q.json");
  EXPECT_NE(t.find("/decoder_sparse_step: decoder_sparse_step 30 leave no MoE layer among the 24"),
            std::string::npos)
      << t;
  t = test::model_errors(qwen_moe(1, Json::array({"a", 30})), "q.json");
  EXPECT_NE(t.find("/mlp_only_layers: expected a list of layer indices"), std::string::npos) << t;
  t = test::model_errors(qwen_moe(0, Json::array()), "q.json");
  EXPECT_NE(t.find("/decoder_sparse_step: value 0 is out of range"), std::string::npos) << t;
}

}  // namespace
}  // namespace dsplan
