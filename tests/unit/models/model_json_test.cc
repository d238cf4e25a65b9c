// The dsplan model schema: defaults, explicit shapes, round-trips and error texts.
#include <gtest/gtest.h>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;
using test::load;

TEST(ModelJson, MinimalFileTakesDefaults) {
  auto m = load("minimal.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->name, "minimal");  // from the file name
  EXPECT_EQ(m->kv_heads, 8);
  EXPECT_EQ(m->head_dim, 32);       // 256 / 8
  EXPECT_EQ(m->ffn_hidden, 1024);   // 4 * 256
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->position, PositionKind::learned);
  EXPECT_EQ(m->norm, NormKind::layernorm);
  EXPECT_TRUE(m->linear_bias);
  EXPECT_TRUE(m->final_norm);
  EXPECT_EQ(m->vocab_pad_multiple, 1);
  // embeddings 1000*256 + 512*256 = 256,000 + 131,072 = 387,072;
  // layer 12*256^2 + 13*256 = 786,432 + 3,328 = 789,760, x4 = 3,159,040; final LN 512.
  EXPECT_EQ(total_params(*m), 387072 + 3159040 + 512);
}

// "dropout" is optional: unset, LayerNorm models have dropout and RMSNorm models not.
TEST(ModelJson, DropoutDefaultsByNormAndCanBeTurnedOff) {
  Json j{{"name", "d"}, {"layers", 2}, {"hidden", 64}, {"heads", 4}, {"vocab", 100},
         {"max_positions", 128}};
  auto ln = parse_model_json(j, "d.json");
  ASSERT_TRUE(ln.ok()) << all_errors(ln.errors());
  EXPECT_FALSE(ln->dropout.has_value());
  EXPECT_TRUE(has_dropout(*ln));
  j["norm"] = "rmsnorm";
  auto rms = parse_model_json(j, "d.json");
  ASSERT_TRUE(rms.ok());
  EXPECT_FALSE(has_dropout(*rms));
  j["norm"] = "layernorm";
  j["dropout"] = false;
  auto off = parse_model_json(j, "d.json");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(has_dropout(*off));
  EXPECT_EQ(model_to_json(*off)["dropout"], false);
  j["dropout"] = "no";
  auto bad = parse_model_json(j, "d.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(all_errors(bad.errors()).find("dropout"), std::string::npos);
}

// One norm per block only makes sense when attention and MLP read the same input.
TEST(ModelJson, OneNormPerBlockNeedsParallelResidual) {
  Json j{{"name", "n"}, {"layers", 2}, {"hidden", 64}, {"heads", 4}, {"vocab", 100},
         {"max_positions", 128}, {"norms_per_layer", 1}};
  auto bad = parse_model_json(j, "n.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(all_errors(bad.errors()).find("/norms_per_layer"), std::string::npos);
  j["parallel_residual"] = true;
  auto ok = parse_model_json(j, "n.json");
  ASSERT_TRUE(ok.ok()) << all_errors(ok.errors());
  EXPECT_EQ(ok->norms_per_layer, 1);
  j["norms_per_layer"] = 3;
  EXPECT_FALSE(parse_model_json(j, "n.json").ok());
}

// The block variants of the Llama-style families: read, written back only where set,
// and checked against each other and the layer count.
TEST(ModelJson, BlockVariantsRoundTripAndAreChecked) {
  Json j{{"name", "n"},           {"layers", 4},          {"hidden", 64},           {"heads", 4},
         {"vocab", 100},          {"max_positions", 128}, {"linear_bias", false},   {"qkv_bias", true},
         {"qk_norm", true},       {"norms_per_layer", 4}, {"attention_window", 32}, {"window_layers", 2},
         {"logit_softcap", true}, {"attn_softcap", true}};
  auto m = parse_model_json(j, "n.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(windowed_layers_of(*m), 2);
  const Json back = model_to_json(*m);
  for (const char* key :
       {"qkv_bias", "qk_norm", "attention_window", "window_layers", "logit_softcap", "attn_softcap"})
    EXPECT_EQ(back.at(key), j.at(key)) << key;
  EXPECT_FALSE(model_to_json(ModelSpec{}).contains("attention_window"));
  auto error_at = [&](Json edit) {
    Json k = j;
    k.update(edit);
    auto r = parse_model_json(k, "n.json");
    return r.ok() ? std::string("accepted") : all_errors(r.errors());
  };
  EXPECT_NE(error_at({{"window_layers", 5}}).find("5 exceeds the 4 layers"), std::string::npos);
  EXPECT_NE(error_at({{"attention_window", 0}}).find("window_layers without attention_window"),
            std::string::npos);
  EXPECT_NE(error_at({{"causal", false}}).find("sliding window on an encoder"), std::string::npos);
  EXPECT_NE(error_at({{"parallel_residual", true}}).find("pre- and post-norms (4) on parallel branches"),
            std::string::npos);
  EXPECT_NE(error_at({{"norms_per_layer", 5}}).find("/norms_per_layer"), std::string::npos);
  EXPECT_NE(error_at({{"qk_norm", false}, {"qk_norm_full_width", true}}).find("without qk_norm"),
            std::string::npos);
}

TEST(ModelJson, ExplicitHeadDimAndGqa) {
  auto m = load("tiny-llama.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->name, "tiny-llama");
  EXPECT_EQ(m->head_dim, 32);  // given; 8 * 32 = 256 != hidden 128 is allowed
  EXPECT_EQ(m->max_positions, 2048);  // rotary default
  // embed 1000*128 = 128,000, untied head 128,000; layer: q 8*32 = 256, kv 2*32 = 64 each:
  // qkv 128*(256+128) = 49,152, proj 256*128 = 32,768, SwiGLU 3*128*344 = 132,096,
  // 2 RMSNorms 256 -> 214,272, x2 = 428,544; final 128. Total 684,672.
  EXPECT_EQ(total_params(*m), 684672);
}

TEST(ModelJson, EveryPresetRoundTrips) {
  for (const auto& n : model_preset_names()) {
    auto m = model_preset(n);
    ASSERT_TRUE(m.ok()) << n << ": " << all_errors(m.errors());
    auto back = parse_model_json(model_to_json(*m), "roundtrip.json");
    ASSERT_TRUE(back.ok()) << n << ": " << all_errors(back.errors());
    EXPECT_EQ(model_to_json(*back), model_to_json(*m)) << n;
    EXPECT_EQ(total_params(*back), total_params(*m)) << n;
  }
}

// `dsplan models NAME --json` wraps the model as {"model": ..., "params": ...}: that output
// is a model file too, the same model as the preset.
TEST(ModelJson, ModelsCommandOutputIsAModelFile) {
  auto m = model_preset("llama2-7b");
  ASSERT_TRUE(m.ok());
  const Json wrapped{{"model", model_to_json(*m)}, {"params", 6738415616}, {"source", "preset"}};
  auto back = parse_model_json(wrapped, "models.json");
  ASSERT_TRUE(back.ok()) << all_errors(back.errors());
  EXPECT_EQ(total_params(*back), total_params(*m));
  // Anything else beside "model" is not that output: read as dsplan's format, it is an error.
  auto other = parse_model_json(Json{{"model", model_to_json(*m)}, {"layers", 2}}, "x.json");
  EXPECT_FALSE(other.ok());
}

// The model block of 'estimate --json' is the model's keys plus its "params" total: a
// model file as it stands (the plan's hint says so). The total is derived, only its type
// is checked.
TEST(ModelJson, EstimatePlansModelBlockIsAModelFile) {
  auto m = model_preset("gpt2");
  ASSERT_TRUE(m.ok());
  Json block = model_to_json(*m);
  block["params"] = 124439808;
  auto back = parse_model_json(block, "plan_model.json");
  ASSERT_TRUE(back.ok()) << all_errors(back.errors());
  EXPECT_EQ(total_params(*back), total_params(*m));
  block["params"] = "many";
  auto bad = parse_model_json(block, "plan_model.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(all_errors(bad.errors()).find("/params: expected an integer"), std::string::npos);
}

struct BadCase {
  const char* file;
  const char* must_contain[3];
};

class ModelJsonErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ModelJsonErrors, ExplainsTheProblem) {
  const BadCase& c = GetParam();
  auto m = load(std::string("bad/") + c.file);
  ASSERT_FALSE(m.ok()) << c.file;
  const std::string text = all_errors(m.errors());
  EXPECT_NE(text.find(c.file), std::string::npos) << text;  // names the file
  for (const char* s : c.must_contain)
    if (s) {
      EXPECT_NE(text.find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << text;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Bad, ModelJsonErrors,
    ::testing::Values(
        BadCase{"malformed.json", {"malformed JSON", "parse error", nullptr}},
        BadCase{"unknown_key.json", {"/ffn_hiden", "unknown key \"ffn_hiden\"", "did you mean \"ffn_hidden\"?"}},
        BadCase{"wrong_type.json", {"/layers: expected an integer, found a string",
                                    "/tied_embeddings: expected a boolean, found a string", nullptr}},
        BadCase{"kv_heads.json", {"/kv_heads", "heads 32 is not a multiple of kv_heads 6", nullptr}},
        BadCase{"hidden_not_divisible.json", {"/heads", "hidden 5140 is not divisible by heads 40", "head_dim"}},
        BadCase{"bad_enum.json", {"/position", "unknown value \"rotery\"", "did you mean \"rotary\"?"}},
        BadCase{"learned_no_positions.json", {"/max_positions", "missing required key", "learned"}}));

TEST(ModelJson, ReportsEveryErrorNotJustTheFirst) {
  auto m = load("bad/wrong_type.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors().size(), 2u) << all_errors(m.errors());
}

TEST(ModelJson, MissingRequiredKeysAreNamed) {
  auto m = parse_model_json(Json{{"hidden", 64}}, "x.json");
  ASSERT_FALSE(m.ok());
  const std::string text = all_errors(m.errors());
  for (const char* key : {"/layers", "/heads", "/vocab"})
    EXPECT_NE(text.find(std::string(key) + ": missing required key"), std::string::npos) << text;
}

TEST(ModelJson, NonPositiveSizesAreRejected) {
  auto m = parse_model_json(Json{{"layers", 0}, {"hidden", 64}, {"heads", 4}, {"vocab", 10}, {"max_positions", 8}},
                            "x.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(all_errors(m.errors()).find("/layers: value 0 is out of range"), std::string::npos)
      << all_errors(m.errors());
}

TEST(ModelJson, NotAnObject) {
  auto m = parse_model_json(Json::array({1, 2}), "x.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(all_errors(m.errors()).find("expected a JSON object"), std::string::npos);
}

TEST(ModelJson, ValidateModelChecksKvHeads) {
  ModelSpec m;
  m.layers = 1; m.hidden = 64; m.heads = 4; m.kv_heads = 8; m.head_dim = 16; m.ffn_hidden = 256;
  m.vocab = 10; m.max_positions = 8;
  auto errs = validate_model(m, "f");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].json_path, "/kv_heads");
  m.kv_heads = 2;
  EXPECT_TRUE(validate_model(m, "f").empty());
}

// A model too large for dsplan's exact 64-bit parameter counts is refused, naming the keys
// that size it. 1,048,576 layers of hidden 1,048,576 (1,024 heads of 1,024, MLP 4h): each
// layer 4h^2 + 8h^2 = 12 x 2^40 = 1.32e13 parameters, 1.38e19 in all, past 2^63 = 9.2e18.
// One layer of hidden 8192 with 10^9 words: 2 x 10^9 x 8192 = 1.6e13 of embeddings, taken.
TEST(ModelJson, ModelsBeyondTenToTheFifteenParametersAreRefused) {
  auto big = parse_model_json(Json{{"layers", 1 << 20},
                                   {"hidden", 1 << 20},
                                   {"heads", 1024},
                                   {"vocab", 32000},
                                   {"max_positions", 2048}},
                              "big.json");
  ASSERT_FALSE(big.ok());
  const std::string e = all_errors(big.errors());
  EXPECT_NE(e.find("/layers: the model would have about 1.38e+19 parameters"), std::string::npos) << e;
  EXPECT_NE(e.find("ffn_hidden, experts, moe_ffn and vocab"), std::string::npos) << e;
  auto wide = parse_model_json(
      Json{{"layers", 1}, {"hidden", 8192}, {"heads", 64}, {"vocab", 1000000000}, {"max_positions", 2048}},
      "wide.json");
  EXPECT_TRUE(wide.ok()) << all_errors(wide.errors());
}

}  // namespace
}  // namespace dsplan
