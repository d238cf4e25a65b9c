// gpt-oss (OpenAI 2025): the presets' parameter counts against the model card, the Hugging
// Face import of its config.json (the fixtures are the published configs' keys), and the
// model-JSON rules of its block options (moe_bias, activation_clamp, attention_sinks).
#include <gtest/gtest.h>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;
using test::contains;
using test::load;
using test::model_errors;

// gpt-oss-120b by component (h 2880, 64 heads of 64 = 4096 query width, 8 KV heads = 512):
//   attention: Q 2880 x 4096 + 4096, K and V 2880 x 512 + 512 each, O 4096 x 2880 + 2880,
//     sinks 64: 11,800,576 + 2 x 1,475,072 + 11,799,360 + 64 = 26,550,144;
//   norms 2 x 2880 = 5,760; router 2880 x 128 + 128 = 368,768;
//   an expert: gate/up 2880 x 5760 + 5760, down 2880 x 2880 + 2880 = 24,891,840; x 128 =
//     3,186,155,520;
//   a layer 3,213,080,192, x 36 = 115,670,886,912; embedding and head 2 x 201088 x 2880 =
//   1,158,266,880; final norm 2,880: 116,829,156,672 (model card: 116.8B).
// Active: a layer keeps 4 experts, 26,550,144 + 5,760 + 368,768 + 4 x 24,891,840 =
//   126,492,032, x 36 = 4,553,713,152, + 1,158,269,760 = 5,711,982,912; less the input
//   embedding (579,133,440) 5,132,849,472, the model card's 5.1B active.
TEST(GptOss, PresetCountsMatchTheModelCard) {
  auto m = model_preset("gpt-oss-120b");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  const ParamCounts c = count_params(*m);
  EXPECT_EQ(c.attention, 26'550'144);
  EXPECT_EQ(c.router, 368'768);
  EXPECT_EQ(expert_params(*m), 24'891'840);
  EXPECT_EQ(c.experts, 3'186'155'520);
  EXPECT_EQ(c.per_layer(), 3'213'080'192);
  EXPECT_EQ(total_params(*m), 116'829'156'672);
  EXPECT_EQ(active_params(*m), 5'711'982'912);
  EXPECT_EQ(active_params(*m) - c.word_embedding, 5'132'849'472);
  EXPECT_EQ(windowed_layers_of(*m), 18);
  EXPECT_EQ(m->pretrain_seq, 4096);
}

// gpt-oss-20b: the same block with 32 experts in 24 layers. Router 2880 x 32 + 32 = 92,192,
// experts 32 x 24,891,840 = 796,538,880; a layer 26,550,144 + 5,760 + 92,192 + 796,538,880
// = 823,186,976, x 24 = 19,756,487,424, + 1,158,269,760 = 20,914,757,184 (model card: 20.9B).
// Active: (26,550,144 + 5,760 + 92,192 + 99,567,360) x 24 = 3,029,170,944, + 1,158,269,760
// = 4,187,440,704; without the input embedding 3,608,307,264 (model card: 3.6B).
TEST(GptOss, SmallPresetCountsMatchTheModelCard) {
  auto m = model_preset("gpt-oss-20b");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(total_params(*m), 20'914'757'184);
  EXPECT_EQ(active_params(*m), 4'187'440'704);
  EXPECT_EQ(windowed_layers_of(*m), 12);
}

// The config.json import gives the preset's model: every field the schema writes, and the
// same counts, for both sizes.
TEST(GptOss, ConfigJsonImportsAsThePreset) {
  for (const char* name : {"gpt-oss-120b", "gpt-oss-20b"}) {
    auto hf = load(std::string("hf/") + name + "/config.json");
    ASSERT_TRUE(hf.ok()) << name << ": " << all_errors(hf.errors());
    auto preset = model_preset(name);
    ASSERT_TRUE(preset.ok());
    Json a = model_to_json(*hf), b = model_to_json(*preset);
    a.erase("name"), b.erase("name");
    EXPECT_EQ(a, b) << name << "\n" << a.dump() << "\n" << b.dump();
    EXPECT_TRUE(hf->attention_sinks && hf->moe_bias && hf->activation_clamp && hf->linear_bias) << name;
    EXPECT_EQ(hf->attention_window, 128) << name;
  }
}

// swiglu_limit null (or 0) turns the clamp off; attention_bias false drops the attention
// projections' biases (Q 4096 + K 512 + V 512 + O 2880 = 8,000 a layer) but not the
// experts'.
TEST(GptOss, ConfigKeysTurnItsOptionsOff) {
  auto base = load("hf/gpt-oss-20b/config.json");
  ASSERT_TRUE(base.ok());
  const auto text = read_text_file(test::fixture("hf/gpt-oss-20b/config.json"));
  ASSERT_TRUE(text.ok());
  Json j = Json::parse(*text);
  j["swiglu_limit"] = nullptr;
  j["attention_bias"] = false;
  auto m = parse_model_json(j, "gpt-oss-20b/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_FALSE(m->activation_clamp);
  EXPECT_FALSE(m->linear_bias);
  EXPECT_TRUE(m->moe_bias);
  EXPECT_EQ(count_params(*base).attention - count_params(*m).attention, 8'000);
  j["swiglu_limit"] = "seven";
  EXPECT_TRUE(contains(model_errors(j, "c.json"), "/swiglu_limit"));
}

// Each option is checked against the block it needs, naming its key.
TEST(GptOss, ModelJsonOptionsNeedTheirBlock) {
  Json dense = {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"vocab", 100}, {"max_positions", 128}};
  Json j = dense;
  j["moe_bias"] = true;
  EXPECT_TRUE(contains(model_errors(j, "m.json"), "/moe_bias")) << model_errors(j, "m.json");
  j = dense;
  j["activation_clamp"] = true;  // gated_mlp false by default
  EXPECT_TRUE(contains(model_errors(j, "m.json"), "/activation_clamp"));
  j["gated_mlp"] = true;
  j["attention_sinks"] = true;
  EXPECT_EQ(model_errors(j, "m.json"), "");
  j["attention_sinks"] = "yes";
  EXPECT_TRUE(contains(model_errors(j, "m.json"), "/attention_sinks"));
  j = dense;
  j["moe_bias"] = true, j["experts"] = 4, j["topk"] = 2, j["moe_ffn"] = 32;
  auto m = parse_model_json(j, "m.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  // Router 64 x 4 + 4; an expert's 2 x 64 x 32 (plain MLP) + 32 + 64 = 4,192.
  EXPECT_EQ(count_params(*m).router, 260);
  EXPECT_EQ(expert_params(*m), 4'192);
  EXPECT_EQ(model_to_json(*m).value("moe_bias", false), true);
}

}  // namespace
}  // namespace dsplan
