// Group-limited expert routing (ModelSpec::moe_groups, moe_group_topk; docs/model.md §1):
// dsplan's model JSON keys (read, written back where set, each refusal with its JSON path),
// the Hugging Face deepseek_v2 / deepseek_v3 / kimi_k2 imports of n_group and topk_group
// (hf_deepseek.cc), the deepseek presets, and the validation rows' "model" keys
// (validation_model.cc, validation_keys.cc) with validation/holdout/deepseek-mla.json.
// Loading only: no prediction reads the groups here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "estimator/params.h"
#include "test_util.h"
#include "validation/validation_rows.h"

namespace dsplan {
namespace {

using test::all_errors;

// 4 layers of hidden 64, 8 experts of 32, top-2.
Json tiny_moe() {
  return Json{{"layers", 4},          {"hidden", 64},      {"heads", 4},           {"vocab", 100},
              {"position", "rotary"}, {"norm", "rmsnorm"}, {"linear_bias", false}, {"gated_mlp", true},
              {"experts", 8},         {"topk", 2},         {"moe_ffn", 32}};
}

TEST(MoeGroupsJson, KeysRoundTripAndAreWrittenOnlyWhenSet) {
  Json j = tiny_moe();
  j["moe_groups"] = 4;
  j["moe_group_topk"] = 2;
  auto m = parse_model_json(j, "g.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->moe_groups, 4);
  EXPECT_EQ(m->moe_group_topk, 2);
  const Json written = model_to_json(*m);
  EXPECT_EQ(written["moe_groups"], 4);
  EXPECT_EQ(written["moe_group_topk"], 2);
  auto again = parse_model_json(written, "again.json");
  ASSERT_TRUE(again.ok()) << all_errors(again.errors());
  EXPECT_EQ(again->moe_groups, 4);
  EXPECT_EQ(again->moe_group_topk, 2);
  EXPECT_EQ(model_to_json(*again), written);
  // The groups change no parameter.
  auto plain = parse_model_json(tiny_moe(), "plain.json");
  ASSERT_TRUE(plain.ok()) << all_errors(plain.errors());
  EXPECT_EQ(total_params(*m), total_params(*plain));
  EXPECT_EQ(active_params(*m), active_params(*plain));
  // Unset (absent or 0/0): not written, and the JSON is what it was.
  EXPECT_EQ(plain->moe_groups, 0);
  EXPECT_EQ(plain->moe_group_topk, 0);
  EXPECT_FALSE(model_to_json(*plain).contains("moe_groups"));
  EXPECT_FALSE(model_to_json(*plain).contains("moe_group_topk"));
  j["moe_groups"] = 0;
  j["moe_group_topk"] = 0;
  auto zero = parse_model_json(j, "zero.json");
  ASSERT_TRUE(zero.ok()) << all_errors(zero.errors());
  Json zero_json = model_to_json(*zero), plain_json = model_to_json(*plain);
  zero_json.erase("name");
  plain_json.erase("name");
  EXPECT_EQ(zero_json, plain_json);
  // One group of all the experts, picked whole, is accepted as given.
  j["moe_groups"] = 1;
  j["moe_group_topk"] = 1;
  EXPECT_EQ(test::model_errors(j, "one.json"), "");
}

// Each refusal names the key (its JSON path) and what is allowed.
TEST(MoeGroupsJson, RefusalsNameTheKey) {
  const auto text_with = [](int groups, int pick) {
    Json j = tiny_moe();
    j["moe_groups"] = groups;
    j["moe_group_topk"] = pick;
    return test::model_errors(j, "m.json");
  };
  std::string t = text_with(4, 0);
  EXPECT_TRUE(test::contains(t, "m.json: /moe_group_topk: missing: moe_groups 4 needs it")) << t;
  t = text_with(0, 2);
  EXPECT_TRUE(test::contains(t, "/moe_groups: missing: moe_group_topk 2 needs it")) << t;
  t = text_with(3, 1);
  EXPECT_TRUE(test::contains(t, "/moe_groups: the 8 experts do not split into 3 equal groups")) << t;
  EXPECT_TRUE(test::contains(t, "a divisor of experts (8)")) << t;
  t = text_with(4, 5);
  EXPECT_TRUE(test::contains(t, "/moe_group_topk: moe_group_topk 5 exceeds moe_groups 4")) << t;
  // 8 groups of 1 expert: one group holds 1, fewer than top-2.
  t = text_with(8, 1);
  EXPECT_TRUE(
      test::contains(t, "/moe_group_topk: topk 2 exceeds the experts a token's groups hold: 1 x 1 a group"))
      << t;
  EXPECT_TRUE(test::contains(t, "at least 2 of the 8 groups")) << t;
  // Only one line when only one thing is wrong.
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 1) << t;
  // The reader's own checks: negative values and other types.
  t = text_with(-1, -2);
  EXPECT_TRUE(test::contains(t, "/moe_groups: value -1 is out of range")) << t;
  EXPECT_TRUE(test::contains(t, "/moe_group_topk: value -2 is out of range")) << t;
  Json j = tiny_moe();
  j["moe_groups"] = "8";
  j["moe_group_topk"] = 1.5;
  t = test::model_errors(j, "m.json");
  EXPECT_TRUE(test::contains(t, "/moe_groups: expected an integer")) << t;
  EXPECT_TRUE(test::contains(t, "/moe_group_topk: expected an integer")) << t;
  // Only with experts.
  j = tiny_moe();
  for (const char* k : {"experts", "topk", "moe_ffn"}) j.erase(k);
  j["moe_groups"] = 8;
  j["moe_group_topk"] = 4;
  t = test::model_errors(j, "dense.json");
  EXPECT_TRUE(test::contains(t, "/moe_groups: given without \"experts\"")) << t;
  EXPECT_TRUE(test::contains(t, "/moe_group_topk: given without \"experts\"")) << t;
}

// A ModelSpec built in code is checked the same way by validate_model.
TEST(MoeGroupsJson, SpecsBuiltInCodeAreChecked) {
  ModelSpec dense;
  dense.layers = dense.hidden = dense.heads = dense.kv_heads = dense.head_dim = dense.ffn_hidden = 8;
  dense.vocab = dense.max_positions = 8;
  dense.moe_groups = 8;
  dense.moe_group_topk = 4;
  std::string t = all_errors(validate_model(dense, "code"));
  EXPECT_TRUE(test::contains(t, "/moe_groups: expert groups in a model without experts")) << t;
  EXPECT_TRUE(test::contains(t, "/moe_group_topk: expert groups in a model without experts")) << t;
  ModelSpec moe = dense;
  moe.experts = 8, moe.topk = 2, moe.moe_ffn = 8;
  moe.moe_groups = -1;
  moe.moe_group_topk = 1;
  t = all_errors(validate_model(moe, "code"));
  EXPECT_TRUE(test::contains(t, "/moe_groups: must not be negative, got -1")) << t;
  moe.moe_groups = 4;
  moe.moe_group_topk = 2;
  EXPECT_TRUE(validate_model(moe, "code").empty()) << all_errors(validate_model(moe, "code"));
}

// A small DeepSeek-V3 config: 8 experts of 32, top-2, latent attention as the real ones.
Json tiny_v3() {
  return Json{{"model_type", "deepseek_v3"},
              {"hidden_size", 64},
              {"intermediate_size", 128},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 4},
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
              {"topk_method", "noaux_tc"},
              {"n_group", 4},
              {"topk_group", 2},
              {"vocab_size", 100}};
}

// DeepSeek-V2-Lite's routing keys (deepseek-ai/DeepSeek-V2-Lite config.json): greedy top-6 of
// 64, n_group 1 and topk_group 1.
Json lite_v2() {
  Json j = tiny_v3();
  j["model_type"] = "deepseek_v2";
  j["q_lora_rank"] = nullptr;
  j["n_routed_experts"] = 64;
  j["num_experts_per_tok"] = 6;
  j["n_shared_experts"] = 2;
  j["topk_method"] = "greedy";
  j["n_group"] = 1;
  j["topk_group"] = 1;
  return j;
}

std::pair<int, int> groups_of(const Json& j) {
  auto m = parse_model_json(j, "config.json");
  EXPECT_TRUE(m.ok()) << all_errors(m.errors());
  return m.ok() ? std::pair{m->moe_groups, m->moe_group_topk} : std::pair{-1, -1};
}

TEST(MoeGroupsHf, DeepseekConfigsImportTheirGroups) {
  EXPECT_EQ(groups_of(tiny_v3()), std::pair(4, 2));
  // DeepSeek-V3's config.json: 256 experts top-8, n_group 8, topk_group 4.
  Json v3 = tiny_v3();
  v3["n_routed_experts"] = 256;
  v3["num_experts_per_tok"] = 8;
  v3["n_group"] = 8;
  v3["topk_group"] = 4;
  EXPECT_EQ(groups_of(v3), std::pair(8, 4));
  // Absent: DeepseekV3Config's defaults, n_group 8 and topk_group 4.
  v3.erase("n_group");
  v3.erase("topk_group");
  v3.erase("topk_method");
  EXPECT_EQ(groups_of(v3), std::pair(8, 4));
  // Kimi K2 (moonshotai/Kimi-K2-Instruct: 384 experts, n_group 1, topk_group 1): no groups.
  Json kimi = tiny_v3();
  kimi["model_type"] = "kimi_k2";
  kimi["n_routed_experts"] = 384;
  kimi["num_experts_per_tok"] = 8;
  kimi["n_group"] = 1;
  kimi["topk_group"] = 1;
  EXPECT_EQ(groups_of(kimi), std::pair(0, 0));
  // n_group null: none.
  Json null_group = tiny_v3();
  null_group["n_group"] = nullptr;
  null_group["topk_group"] = nullptr;
  EXPECT_EQ(groups_of(null_group), std::pair(0, 0));
  // DeepSeek-V2-Lite: n_group 1, greedy: none; the model's JSON has neither key.
  EXPECT_EQ(groups_of(lite_v2()), std::pair(0, 0));
  auto lite = parse_model_json(lite_v2(), "config.json");
  ASSERT_TRUE(lite.ok());
  EXPECT_FALSE(model_to_json(*lite).contains("moe_groups"));
  // DeepSeek-V2 (deepseek-ai/DeepSeek-V2: 160 experts top-6, group_limited_greedy, n_group 8,
  // topk_group 3).
  Json v2 = lite_v2();
  v2["n_routed_experts"] = 160;
  v2["topk_method"] = "group_limited_greedy";
  v2["n_group"] = 8;
  v2["topk_group"] = 3;
  EXPECT_EQ(groups_of(v2), std::pair(8, 3));
  // DeepseekV2's greedy gate (its default topk_method) does not use the groups.
  v2["topk_method"] = "greedy";
  EXPECT_EQ(groups_of(v2), std::pair(0, 0));
  v2.erase("topk_method");
  EXPECT_EQ(groups_of(v2), std::pair(0, 0));
}

// Refusals point at the config's own keys.
TEST(MoeGroupsHf, RefusalsNameTheConfigKeys) {
  Json j = tiny_v3();
  j["n_group"] = 3;
  std::string t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(t, "/n_group: 8 n_routed_experts do not split into 3 equal groups")) << t;
  j = tiny_v3();
  j.erase("n_group");
  j["n_routed_experts"] = 12;  // DeepseekV3Config's default 8 groups do not fit
  t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(
      test::contains(t,
                     "/n_group: 12 n_routed_experts do not split into 8 equal groups (DeepseekV3Config's "
                     "default n_group)"))
      << t;
  j = tiny_v3();
  j["topk_group"] = 5;
  t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(t, "/topk_group: moe_group_topk 5 exceeds moe_groups 4")) << t;
  j = tiny_v3();
  j["topk_group"] = nullptr;
  t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(t, "/topk_group: missing: moe_groups 4 needs it")) << t;
  j = tiny_v3();
  j["n_group"] = 8;
  j["topk_group"] = 1;  // one group of one expert, top-2
  t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(t, "/topk_group: topk 2 exceeds the experts a token's groups hold")) << t;
  j = tiny_v3();
  j["n_group"] = "8";
  t = test::model_errors(j, "v3.json");
  EXPECT_TRUE(test::contains(t, "/n_group: expected an integer")) << t;
}

TEST(MoeGroupsPresets, DeepseekV3RoutesWithinGroups) {
  auto v3 = model_preset("deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->moe_groups, 8);
  EXPECT_EQ(v3->moe_group_topk, 4);
  EXPECT_EQ(total_params(*v3), 671'026'404'352);  // unchanged by the groups
  auto lite = model_preset("deepseek-v2-lite");
  ASSERT_TRUE(lite.ok());
  EXPECT_EQ(lite->moe_groups, 0);
  EXPECT_EQ(lite->moe_group_topk, 0);
}

// A row's "model" block (validation_model.cc moe_details), under Megatron's and Hugging
// Face's names too (validation_keys.cc).
TEST(MoeGroupsValidationRows, ModelBlockKeys) {
  const Json row_model{
      {"experts", 256}, {"topk", 8}, {"moe_ffn", 2048}, {"moe_groups", 8}, {"moe_group_topk", 4}};
  ModelSpec spec;
  spec.layers = 61;
  std::vector<std::string> notes;
  ASSERT_FALSE(validation::rows::moe_details(row_model, spec, notes));
  EXPECT_EQ(spec.moe_groups, 8);
  EXPECT_EQ(spec.moe_group_topk, 4);
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(test::contains(notes.back(), "tokens routed within 4 of 8 expert groups")) << notes.back();
  for (const auto& [groups, pick] : {std::pair{8, 0}, {0, 4}, {6, 4}, {8, 9}, {64, 1}}) {
    Json bad = row_model;
    bad["moe_groups"] = groups;
    bad["moe_group_topk"] = pick;
    ModelSpec s;
    s.layers = 61;
    auto d = validation::rows::moe_details(bad, s, notes);
    ASSERT_TRUE(d) << groups << "/" << pick;
    EXPECT_EQ(d->json_path, "/model/moe_groups") << groups << "/" << pick;
  }
  Json megatron{{"model", {{"moe_router_num_groups", 8}, {"moe_router_group_topk", 4}}}};
  Json canon = validation::rows::canonical_row(megatron)["model"];
  EXPECT_EQ(canon["moe_groups"], 8);
  EXPECT_EQ(canon["moe_group_topk"], 4);
  Json hf{{"model", {{"n_group", 8}, {"topk_group", 4}}}};
  canon = validation::rows::canonical_row(hf)["model"];
  EXPECT_EQ(canon["moe_groups"], 8);
  EXPECT_EQ(canon["moe_group_topk"], 4);
}

// validation/holdout/deepseek-mla.json: its four DeepSeek-V3 rows map with 8 groups, top 4.
TEST(MoeGroupsValidationRows, DeepseekHoldoutRowsCarryTheGroups) {
  const std::string file = std::string(DSPLAN_SOURCE_DIR) + "/validation/holdout/deepseek-mla.json";
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse_json_text(text.str(), file);
  ASSERT_TRUE(doc.ok()) << all_errors(doc.errors());
  auto set = validation::load_validation(*doc, file);
  ASSERT_TRUE(set.ok()) << all_errors(set.errors());
  EXPECT_TRUE(set->skipped.empty()) << all_errors(set->skipped);
  ASSERT_EQ(set->cases.size(), 4u);
  for (const auto& c : set->cases) {
    EXPECT_EQ(c.request.model.moe_groups, 8) << c.id;
    EXPECT_EQ(c.request.model.moe_group_topk, 4) << c.id;
  }
}

}  // namespace
}  // namespace dsplan
