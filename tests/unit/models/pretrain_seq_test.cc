// The context a model was pre-trained at (ModelSpec::pretrain_seq), the sequence length
// `estimate` plans when no --seq is given: dsplan's model JSON key (read, checked against
// max_positions, written back only where set), the Hugging Face import from RoPE scaling's
// original_max_position_embeddings (hf_config.cc), and the presets that carry it. The CLI
// default is the golden case tests/cli/cases/estimate_pretrain_seq_default.json.
#include <gtest/gtest.h>

#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;
using test::contains;
using test::model_errors;

Json tiny(int max_positions) {
  return Json{
      {"layers", 2},          {"hidden", 64},      {"heads", 4},           {"vocab", 100},
      {"position", "rotary"}, {"norm", "rmsnorm"}, {"linear_bias", false}, {"max_positions", max_positions}};
}

TEST(PretrainSeqJson, ReadWrittenBackOnlyWhereSet) {
  Json j = tiny(32768);
  j["pretrain_seq"] = 4096;
  auto m = parse_model_json(j, "m.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->pretrain_seq, 4096);
  EXPECT_EQ(model_to_json(*m)["pretrain_seq"], 4096);
  auto plain = parse_model_json(tiny(32768), "plain.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pretrain_seq, 0);
  EXPECT_FALSE(model_to_json(*plain).contains("pretrain_seq"));
}

TEST(PretrainSeqJson, LongerThanTheContextOrNotAPositiveIntegerIsRefused) {
  Json longer = tiny(2048);
  longer["pretrain_seq"] = 4096;
  const std::string e = model_errors(longer, "m.json");
  EXPECT_TRUE(contains(e, "/pretrain_seq") && contains(e, "exceeds max_positions 2048")) << e;
  for (const Json& bad : {Json("4k"), Json(0), Json(1.5)}) {
    Json j = tiny(32768);
    j["pretrain_seq"] = bad;
    EXPECT_TRUE(contains(model_errors(j, "m.json"), "/pretrain_seq")) << bad.dump();
  }
}

// meta-llama/Llama-3.1-8B's config.json, the keys that matter.
Json llama31_8b() {
  return Json{{"model_type", "llama"},
              {"hidden_size", 4096},
              {"intermediate_size", 14336},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"max_position_embeddings", 131072},
              {"rope_scaling",
               {{"factor", 8.0},
                {"low_freq_factor", 1.0},
                {"high_freq_factor", 4.0},
                {"original_max_position_embeddings", 8192},
                {"rope_type", "llama3"}}},
              {"tie_word_embeddings", false},
              {"vocab_size", 128256}};
}

TEST(PretrainSeqHf, RopeScalingsOriginalContextIsThePreTrainingOne) {
  auto m = parse_model_json(llama31_8b(), "llama31/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->max_positions, 131072);
  EXPECT_EQ(m->pretrain_seq, 8192);
  // transformers 5 names the same object rope_parameters.
  Json v5 = llama31_8b();
  v5["rope_parameters"] = v5["rope_scaling"];
  v5.erase("rope_scaling");
  auto m5 = parse_model_json(v5, "v5/config.json");
  ASSERT_TRUE(m5.ok()) << all_errors(m5.errors());
  EXPECT_EQ(m5->pretrain_seq, 8192);
}

TEST(PretrainSeqHf, Phi3LongropeWritesItAtTheTopLevel) {
  // microsoft/Phi-3-mini-128k-instruct: 131072 positions, longrope over 4096.
  Json phi{{"model_type", "phi3"},
           {"hidden_size", 3072},
           {"intermediate_size", 8192},
           {"num_hidden_layers", 32},
           {"num_attention_heads", 32},
           {"max_position_embeddings", 131072},
           {"original_max_position_embeddings", 4096},
           {"rope_scaling", {{"type", "longrope"}, {"long_factor", {1.0}}, {"short_factor", {1.0}}}},
           {"sliding_window", 262144},
           {"vocab_size", 32064}};
  auto m = parse_model_json(phi, "phi3/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->pretrain_seq, 4096);
}

TEST(PretrainSeqHf, NothingExtendedLeavesItUnknown) {
  Json none = llama31_8b();
  none["rope_scaling"] = nullptr;  // Llama 2 and 3's configs
  auto a = parse_model_json(none, "a/config.json");
  ASSERT_TRUE(a.ok()) << all_errors(a.errors());
  EXPECT_EQ(a->pretrain_seq, 0);
  // An "original" context as long as the whole one extends nothing.
  Json same = llama31_8b();
  same["rope_scaling"]["original_max_position_embeddings"] = 131072;
  auto b = parse_model_json(same, "b/config.json");
  ASSERT_TRUE(b.ok()) << all_errors(b.errors());
  EXPECT_EQ(b->pretrain_seq, 0);
}

TEST(PretrainSeqHf, ANonIntegerIsAnErrorAtItsPath) {
  Json bad = llama31_8b();
  bad["rope_scaling"]["original_max_position_embeddings"] = "8k";
  const std::string e = model_errors(bad, "bad/config.json");
  EXPECT_TRUE(contains(e, "/rope_scaling/original_max_position_embeddings")) << e;
}

TEST(PretrainSeqPresets, LongContextPresetsPlanTheirPreTrainingContext) {
  struct Want {
    const char* preset;
    int pretrain, max;
  };
  for (const Want& w :
       {Want{"deepseek-v3", 4096, 163840}, Want{"deepseek-v2-lite", 4096, 163840}, Want{"kimi-k2", 4096, 131072},
        Want{"llama3.1-405b", 8192, 131072}, Want{"llama3.2-1b", 8192, 131072}, Want{"qwen3-8b", 4096, 40960},
        Want{"qwen2.5-7b", 4096, 32768}, Want{"qwen2-57b-a14b", 4096, 131072}, Want{"gpt-2.7b", 0, 2048}}) {
    auto m = model_preset(w.preset);
    ASSERT_TRUE(m.ok()) << w.preset;
    EXPECT_EQ(m->pretrain_seq, w.pretrain) << w.preset;
    EXPECT_EQ(m->max_positions, w.max) << w.preset;
  }
}

}  // namespace
}  // namespace dsplan
