// Hugging Face config.json import: the fixtures under tests/data/models/hf are the real
// models' config files (irrelevant keys kept), and their counts must equal the models'
// published parameter counts (arithmetic in preset_test.cc). Each must also describe the
// same shape as the matching preset. Then the error texts.
#include <gtest/gtest.h>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;
using test::load;

struct HfCase {
  const char* dir;     // tests/data/models/hf/<dir>/config.json
  const char* preset;  // the preset with the same shape, or nullptr
  std::int64_t params;
};

const HfCase kCases[] = {
    {"gpt2", "gpt2", 124'439'808},
    {"gpt2-medium", "gpt2-medium", 354'823'168},
    {"gpt2-large", "gpt2-large", 774'030'080},
    {"gpt2-xl", "gpt2-xl", 1'557'611'200},
    {"bert-base-uncased", "bert-base", 109'482'240},
    {"bert-large-uncased", "bert-large", 335'141'888},
    {"distilbert-base-uncased", "distilbert", 66'362'880},
    {"Llama-2-7b-hf", "llama2-7b", 6'738'415'616},
    {"Llama-2-13b-hf", "llama2-13b", 13'015'864'320},
    {"Llama-2-70b-hf", "llama2-70b", 68'976'648'192},
    {"Meta-Llama-3-8B", "llama3-8b", 8'030'261'248},
    {"Meta-Llama-3-70B", "llama3-70b", 70'553'706'496},
    {"Mistral-7B-v0.1", "mistral-7b", 7'241'732'096},
    {"gpt-neox-20b", "gpt-neox-20b", 20'554'567'680},
    {"bloom", "bloom-176b", 176'247'271'424},
    {"opt-1.3b", "opt-1.3b", 1'315'758'080},
    // roberta-base: embeddings 50265*768 + 514*768 + 1*768 + LN 1,536 = 39,000,576;
    // 12*7,087,872 = 85,054,464; pooler 590,592. Total 124,645,632.
    {"roberta-base", nullptr, 124'645'632},
    // mpt-7b (no biases anywhere, weight-only LayerNorms, ALiBi, tied): embedding
    // 50432*4096 = 206,569,472; layer: Wqkv 4096*12288 + out 4096^2 = 67,108,864, MLP
    // 2*4096*16384 = 134,217,728, 2 norm weights 8,192 -> 201,334,784, x32 =
    // 6,442,713,088; final norm 4,096. Total 6,649,286,656.
    {"mpt-7b", "mpt-7b", 6'649'286'656},
    // falcon-7b (one LayerNorm per block, MQA with 64-wide heads, no linear biases, tied):
    // embedding 65024*4544 = 295,469,056; layer: QKV 4544*(4544 + 2*64) = 21,229,568,
    // dense 4544^2 = 20,647,936, MLP 2*4544*18176 = 165,183,488, one LayerNorm 9,088 ->
    // 207,070,080, x32 = 6,626,242,560; final LayerNorm 9,088. Total 6,921,720,704.
    {"falcon-7b", "falcon-7b", 6'921'720'704},
    // Qwen2.5-7B-Instruct (biases on Q, K, V only; GQA 28/4, head_dim 128; untied): layer:
    // Q 3584^2 + 3584, K and V 3584*512 + 512 each, O 3584^2 -> 29,364,736; MLP
    // 3*3584*18944 = 203,685,888; 2 RMSNorm 7,168 -> 233,057,792, x28 = 6,525,618,176;
    // embedding and head 2*152064*3584 = 1,089,994,752; final norm 3,584. Total 7,615,616,512.
    {"Qwen2.5-7B-Instruct", "qwen2.5-7b", 7'615'616'512},
    // Qwen2.5-0.5B (tied; 14/2 heads of 64): layer: Q 896^2 + 896, K and V 896*128 + 128
    // each, O 896^2 -> 1,836,160; MLP 3*896*4864 = 13,074,432; norms 1,792 -> 14,912,384,
    // x24 = 357,897,216; embedding 151936*896 = 136,134,656; final norm 896. Total 494,032,768.
    {"Qwen2.5-0.5B", "qwen2.5-0.5b", 494'032'768},
    // Llama 3.1 8B and 70B: Llama 3's counts (the Meta-Llama-3 rows above); only the context
    // (131,072, pre-trained at 8,192) differs.
    {"Llama-3.1-8B", "llama3.1-8b", 8'030'261'248},
    {"Llama-3.1-70B", "llama3.1-70b", 70'553'706'496},
    // Qwen2.5-72B (biases on Q, K, V; GQA 64/8 heads of 128; untied): layer: Q 8192^2 + 8192,
    // K and V 8192*1024 + 1024 each, O 8192^2 -> 151,005,184; MLP 3*8192*29568 = 726,663,168;
    // norms 16,384 -> 877,684,736, x80 = 70,214,778,880; embedding and head 2*152064*8192 =
    // 2,491,416,576; final norm 8,192. Total 72,706,203,648 (Qwen: 72.7B).
    {"Qwen2.5-72B", "qwen2.5-72b", 72'706'203'648},
    // Qwen3-32B (64/8 heads of 128 on a 5120 hidden, query and key norms; untied): layer: Q and
    // O 5120*8192 each, K and V 5120*1024 each -> 94,371,840; MLP 3*5120*25600 = 393,216,000;
    // norms 10,240 + q/k norms 256 -> 487,598,336, x64 = 31,206,293,504; embedding and head
    // 2*151936*5120 = 1,555,824,640; final norm 5,120. Total 32,762,123,264 (Qwen: 32.8B).
    {"Qwen3-32B", "qwen3-32b", 32'762'123'264},
    // gemma-3-27b-pt (the multimodal "gemma3" config: its text_config, at Gemma3TextConfig's
    // defaults where it leaves keys out; the vision tower not counted): 62 layers, 32 heads of
    // 128 over 16 KV heads on a 5376 hidden; layer: Q and O 5376*4096 each, K and V 5376*2048
    // each -> 66,060,288; MLP 3*5376*21504 = 346,816,512; 4 norms 21,504 + q/k norms 256 ->
    // 412,898,560, x62 = 25,599,710,720; tied embedding 262208*5376 = 1,409,630,208; final
    // norm 5,376. Total 27,009,346,304 (Google: 27B).
    {"gemma-3-27b-pt", nullptr, 27'009'346'304},
    // Mixture of experts (arithmetic in preset_test.cc): every expert counted, the router too.
    {"Mixtral-8x7B-v0.1", "mixtral-8x7b", 46'702'792'704},
    {"Qwen3-30B-A3B", "qwen3-30b-a3b", 30'532'122'624},
    {"Qwen3-235B-A22B", "qwen3-235b-a22b", 235'093'634'560},
    {"Qwen2-57B-A14B", "qwen2-57b-a14b", 57'408'558'592},
    // Qwen3-8B (query and key RMSNorms of head_dim 128): layer: Q and O 4096^2 each, K and
    // V 4096*1024 each -> 41,943,040; MLP 3*4096*12288 = 150,994,944; norms 8,192 + q/k
    // norms 256 -> 192,946,432, x36 = 6,946,071,552; embedding and head 2*151936*4096 =
    // 1,244,659,712; final norm 4,096. Total 8,190,735,360.
    {"Qwen3-8B", "qwen3-8b", 8'190'735'360},
    // Qwen3-0.6B (head_dim 128 with hidden 1024 and 16 heads: Q is 2048 wide; tied):
    // layer: Q 1024*2048, K and V 1024*1024 each, O 2048*1024 -> 6,291,456; MLP
    // 3*1024*3072 = 9,437,184; norms 2,048 + 256 -> 15,730,944, x28 = 440,466,432;
    // embedding 151936*1024 = 155,582,464; final norm 1,024. Total 596,049,920.
    {"Qwen3-0.6B", "qwen3-0.6b", 596'049'920},
    // gemma-7b (head_dim 256: Q, K, V 4096 wide on hidden 3072; GeGLU; tied): layer:
    // Q, K, V 3072*4096 each and O 4096*3072 -> 50,331,648; MLP 3*3072*24576 = 226,492,416;
    // norms 6,144 -> 276,830,208, x28 = 7,751,245,824; embedding 256000*3072 = 786,432,000;
    // final norm 3,072. Total 8,537,680,896.
    {"gemma-7b", nullptr, 8'537'680'896},
    // gemma-2-9b (4 norms a block; 16/8 heads of 256): layer: Q and O 3584*4096 each, K
    // and V 3584*2048 each -> 44,040,192; MLP 3*3584*14336 = 154,140,672; norms 4*3584 =
    // 14,336 -> 198,195,200, x42 = 8,324,198,400; embedding 256000*3584 = 917,504,000;
    // final norm 3,584. Total 9,241,705,984.
    {"gemma-2-9b", "gemma2-9b", 9'241'705'984},
    // gemma-3-1b-pt (4 norms and q/k norms; 4/1 heads of 256): layer: Q and O 1152*1024
    // each, K and V 1152*256 each -> 2,949,120; MLP 3*1152*6912 = 23,887,872; norms 4,608 +
    // 512 -> 26,842,112, x26 = 697,894,912; embedding 262144*1152 = 301,989,888; final
    // norm 1,152. Total 999,885,952.
    {"gemma-3-1b-pt", "gemma3-1b", 999'885'952},
    // Phi-3-mini-4k-instruct (fused qkv_proj and gate_up_proj, no biases, untied): layer:
    // QKV 3072*9216 = 28,311,552, O 9,437,184, gate/up 3072*16384 = 50,331,648, down
    // 25,165,824, norms 6,144 -> 113,252,352, x32 = 3,624,075,264; embedding and head
    // 2*32064*3072 = 197,001,216; final norm 3,072. Total 3,821,079,552.
    {"Phi-3-mini-4k-instruct", "phi3-mini", 3'821'079'552},
    // starcoder2-3b (biases everywhere, LayerNorms with biases, GQA 24/2 of 128, plain
    // MLP, tied): layer: Q and O 3072^2 + 3072 each, K and V 3072*256 + 256 each ->
    // 20,453,888; MLP 3072*12288 + 12288 + 12288*3072 + 3072 = 75,512,832; 2 LayerNorms
    // 12,288 -> 95,979,008, x30 = 2,879,370,240; embedding 49152*3072 = 150,994,944; final
    // LayerNorm 6,144. Total 3,030,371,328.
    {"starcoder2-3b", "starcoder2-3b", 3'030'371'328},
    // OLMo-2-1124-7B (full-width query and key norms, 4096 each; untied): layer: Q, K, V, O
    // 4096^2 each -> 67,108,864; MLP 3*4096*11008 = 135,266,304; 2 norms 8,192 and q/k norms
    // 8,192 -> 202,391,552, x32 = 6,476,529,664; embedding and head 2*100352*4096 =
    // 822,083,584; final norm 4,096. Total 7,298,617,344.
    {"OLMo-2-1124-7B", nullptr, 7'298'617'344},
};

// The shape only: the pre-training context (pretrain_seq) is a fact of how a model was
// trained, which the Qwen presets take from their technical reports and their configs do not
// record (pretrain_seq_test.cc).
Json without_name(const ModelSpec& m) {
  Json j = model_to_json(m);
  j.erase("name");
  j.erase("pretrain_seq");
  return j;
}

TEST(HfConfig, ParameterCountsMatchPublishedModels) {
  for (const auto& c : kCases) {
    auto m = load(std::string("hf/") + c.dir + "/config.json");
    ASSERT_TRUE(m.ok()) << c.dir << ": " << all_errors(m.errors());
    EXPECT_EQ(total_params(*m), c.params) << c.dir;
  }
}

// Gemma 3's multimodal config is read through its text_config: keys it states override the
// class defaults filled in, and errors point into text_config.
TEST(HfConfig, Gemma3ReadsItsTextConfig) {
  auto m = load("hf/gemma-3-27b-pt/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->vocab, 262208);  // Gemma3TextConfig's default: the released text_config omits it
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->attention_window, 1024);
  EXPECT_EQ(windowed_layers_of(*m), 52);  // all but every 6th of 62
  const auto text = read_text_file(test::fixture("hf/gemma-3-27b-pt/config.json"));
  ASSERT_TRUE(text.ok());
  Json j = Json::parse(*text);
  j["text_config"]["vocab_size"] = 1000;
  j["text_config"]["num_hidden_layers"] = "62";
  const std::string errs = test::model_errors(j, "gemma3.json");
  EXPECT_NE(errs.find("/text_config/num_hidden_layers"), std::string::npos) << errs;
  j["text_config"]["num_hidden_layers"] = 62;
  auto small = parse_model_json(j, "gemma3.json");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->vocab, 1000);
}

TEST(HfConfig, SameShapeAsThePreset) {
  for (const auto& c : kCases) {
    if (!c.preset) continue;
    auto m = load(std::string("hf/") + c.dir + "/config.json");
    auto p = model_preset(c.preset);
    ASSERT_TRUE(m.ok() && p.ok()) << c.dir;
    EXPECT_EQ(without_name(*m), without_name(*p)) << c.dir << " vs preset " << c.preset;
  }
}

// GPT-2's gelu_new is transformers' Python tanh formula (a chain of elementwise kernels);
// BERT's "gelu" is torch's fused kernel.
TEST(HfConfig, Gpt2GeluNewIsUnfused) {
  auto gpt2 = load("hf/gpt2/config.json");
  ASSERT_TRUE(gpt2.ok());
  EXPECT_TRUE(gpt2->activation_unfused);
  auto bert = load("hf/bert-base-uncased/config.json");
  ASSERT_TRUE(bert.ok());
  EXPECT_FALSE(bert->activation_unfused);
}

TEST(HfConfig, NameComesFromNameOrPathElseTheFolder) {
  auto opt = load("hf/opt-1.3b/config.json");
  ASSERT_TRUE(opt.ok());
  EXPECT_EQ(opt->name, "facebook/opt-1.3b");
  auto llama = load("hf/Llama-2-7b-hf/config.json");
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->name, "Llama-2-7b-hf");
}

TEST(HfConfig, FamilyDefaults) {
  auto bloom = load("hf/bloom/config.json");
  ASSERT_TRUE(bloom.ok());
  EXPECT_EQ(bloom->position, PositionKind::alibi);
  EXPECT_TRUE(bloom->embedding_norm);
  EXPECT_EQ(bloom->ffn_hidden, 4 * 14336);
  auto neox = load("hf/gpt-neox-20b/config.json");
  ASSERT_TRUE(neox.ok());
  EXPECT_TRUE(neox->parallel_residual);
  EXPECT_FALSE(neox->tied_embeddings);
  auto opt = load("hf/opt-1.3b/config.json");
  ASSERT_TRUE(opt.ok());
  // OPT's table has 2048 + 2 rows (OPTLearnedPositionalEmbedding's offset); the context is
  // 2048, the default --seq.
  EXPECT_EQ(opt->max_positions, 2048);
  EXPECT_EQ(opt->position_offset_rows, 2);
  // RoBERTa's max_position_embeddings 514 holds 512 positions after its padding offset.
  auto roberta = load("hf/roberta-base/config.json");
  ASSERT_TRUE(roberta.ok());
  EXPECT_EQ(roberta->max_positions, 512);
  EXPECT_EQ(roberta->position_offset_rows, 2);
  EXPECT_EQ(opt->activation, Activation::relu);
  auto bert = load("hf/bert-base-uncased/config.json");
  ASSERT_TRUE(bert.ok());
  EXPECT_FALSE(bert->causal);
  EXPECT_TRUE(bert->pooler);
  auto distil = load("hf/distilbert-base-uncased/config.json");
  ASSERT_TRUE(distil.ok());
  EXPECT_FALSE(distil->pooler);
  EXPECT_EQ(distil->type_vocab, 0);
}

// Dropout follows the config's probabilities, else the transformers class default:
// GPT-2/BERT/DistilBERT/OPT configs carry 0.1; BLOOM's hidden/attention dropout are 0.0,
// GPT-NeoX-20B's config has no dropout keys (class default 0.0), Llama's attention_dropout
// is 0.0 and it has no hidden dropout.
TEST(HfConfig, DropoutFollowsTheProbabilities) {
  for (const char* dir : {"gpt2", "bert-base-uncased", "distilbert-base-uncased", "opt-1.3b"}) {
    auto m = load(std::string("hf/") + dir + "/config.json");
    ASSERT_TRUE(m.ok()) << dir;
    EXPECT_TRUE(has_dropout(*m)) << dir;
  }
  for (const char* dir : {"bloom", "gpt-neox-20b", "Llama-2-7b-hf", "Mistral-7B-v0.1"}) {
    auto m = load(std::string("hf/") + dir + "/config.json");
    ASSERT_TRUE(m.ok()) << dir;
    EXPECT_FALSE(has_dropout(*m)) << dir;
  }
  Json j{{"model_type", "gpt2"}, {"n_layer", 2},       {"n_embd", 64},
         {"n_head", 4},          {"n_positions", 128}, {"vocab_size", 100},
         {"resid_pdrop", 0.0},   {"embd_pdrop", 0.0},  {"attn_pdrop", 0.0}};
  auto off = parse_model_json(j, "gpt2-nodrop/config.json");
  ASSERT_TRUE(off.ok()) << all_errors(off.errors());
  EXPECT_FALSE(has_dropout(*off));
  j["attn_pdrop"] = 0.05;  // any probability above zero keeps dropout layers
  auto some = parse_model_json(j, "gpt2-attn-drop/config.json");
  ASSERT_TRUE(some.ok());
  EXPECT_TRUE(has_dropout(*some));
  j["attn_pdrop"] = 1.5;
  auto bad = parse_model_json(j, "gpt2-bad/config.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(all_errors(bad.errors()).find("attn_pdrop"), std::string::npos);
}

// MPT: transformers' MptModel has ALiBi, no biases (no_bias), weight-only LayerNorms and no
// dropout by default; llm-foundry's grouped-query attention and gated MLP are read from
// attn_config / ffn_config.
TEST(HfConfig, MptLayout) {
  auto m = load("hf/mpt-7b/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->position, PositionKind::alibi);
  EXPECT_FALSE(m->linear_bias);
  EXPECT_EQ(m->norm, NormKind::layernorm);
  EXPECT_FALSE(m->norm_bias);
  EXPECT_FALSE(has_dropout(*m));
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->ffn_hidden, 16384);
  Json j{{"model_type", "mpt"},
         {"n_layers", 2},
         {"d_model", 64},
         {"n_heads", 4},
         {"vocab_size", 100},
         {"max_seq_len", 128},
         {"no_bias", false},
         {"attn_config", {{"alibi", false}, {"attn_type", "grouped_query_attention"}, {"kv_n_heads", 2}}},
         {"ffn_config", {{"ffn_type", "mptglu"}, {"ffn_hidden_size", 96}}}};
  auto g = parse_model_json(j, "mpt-gqa/config.json");
  ASSERT_TRUE(g.ok()) << all_errors(g.errors());
  EXPECT_EQ(g->kv_heads, 2);
  EXPECT_TRUE(g->gated_mlp);
  EXPECT_EQ(g->ffn_hidden, 96);
  EXPECT_EQ(g->position, PositionKind::learned);  // learned_pos_emb defaults to true
  EXPECT_TRUE(g->linear_bias);
  EXPECT_TRUE(g->norm_bias);
  j["attn_config"]["attn_type"] = "sliding";
  auto bad = parse_model_json(j, "mpt-bad/config.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(all_errors(bad.errors()).find("attn_type"), std::string::npos);
}

// Falcon-7B: one shared norm before parallel attention and MLP, one K/V head. The new
// decoder architecture (Falcon-40B/180B) has two norms and num_kv_heads K/V heads.
TEST(HfConfig, FalconLayouts) {
  auto f7 = load("hf/falcon-7b/config.json");
  ASSERT_TRUE(f7.ok()) << all_errors(f7.errors());
  EXPECT_EQ(f7->norms_per_layer, 1);
  EXPECT_TRUE(f7->parallel_residual);
  EXPECT_EQ(f7->kv_heads, 1);
  EXPECT_EQ(f7->position, PositionKind::rotary);
  EXPECT_FALSE(f7->linear_bias);
  EXPECT_FALSE(has_dropout(*f7));
  Json j{{"model_type", "falcon"},   {"hidden_size", 256}, {"num_hidden_layers", 2},
         {"num_attention_heads", 8}, {"num_kv_heads", 2},  {"new_decoder_architecture", true},
         {"vocab_size", 100}};
  auto f40 = parse_model_json(j, "falcon-40b-like/config.json");
  ASSERT_TRUE(f40.ok()) << all_errors(f40.errors());
  EXPECT_EQ(f40->norms_per_layer, 2);
  EXPECT_EQ(f40->kv_heads, 2);
  // embedding 100*256 = 25,600; layer: QKV 256*(256 + 2*2*32) = 98,304, dense 65,536,
  // MLP 2*256*1024 = 524,288, two LayerNorms 1,024 -> 689,152, x2 = 1,378,304; final
  // LayerNorm 512. Total 1,404,416.
  EXPECT_EQ(total_params(*f40), 1404416);
}

TEST(HfConfig, GptBigcodeIsMultiQuery) {
  Json j{{"model_type", "gpt_bigcode"}, {"n_layer", 2},      {"n_embd", 64},      {"n_head", 4},
         {"n_positions", 128},          {"vocab_size", 100}, {"n_inner", nullptr}};
  auto m = parse_model_json(j, "starcoder-tiny/config.json");
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->kv_heads, 1);
  EXPECT_EQ(m->ffn_hidden, 256);  // n_inner null -> 4h
  // embeddings 100*64 + 128*64 = 14,592; layer: c_attn 64*(64+2*16) + 96 = 6,240,
  // proj 4,096 + 64 = 4,160, MLP 2*64*256 + 256 + 64 = 33,088, 2 LN 256 -> 43,744;
  // 2 layers 87,488; final LN 128. Total 102,208.
  EXPECT_EQ(total_params(*m), 102208);
}

// What the Llama-style families set beyond the shape, as each transformers config class
// and model code define it.
TEST(HfConfig, LlamaStyleFamiliesBlockDetails) {
  auto load_hf = [](const char* dir) {
    auto m = load(std::string("hf/") + dir + "/config.json");
    EXPECT_TRUE(m.ok()) << dir;
    return m.ok() ? *m : ModelSpec{};
  };
  // Qwen2.5: Q, K and V biases only; use_sliding_window false, so no window.
  ModelSpec q2 = load_hf("Qwen2.5-0.5B");
  EXPECT_TRUE(q2.qkv_bias && !q2.linear_bias && q2.tied_embeddings);
  EXPECT_EQ(q2.attention_window, 0);
  // Qwen3: per-head query and key norms; head_dim 128 although 1024 / 16 = 64.
  ModelSpec q3 = load_hf("Qwen3-0.6B");
  EXPECT_TRUE(q3.qk_norm && !q3.qk_norm_full_width && !q3.qkv_bias);
  EXPECT_EQ(q3.head_dim, 128);
  // Phi-3-mini: fused projections, a 2047-key window in every layer (window_layers 0).
  ModelSpec phi = load_hf("Phi-3-mini-4k-instruct");
  EXPECT_TRUE(phi.fused_qkv && phi.fused_gate_up);
  EXPECT_EQ(phi.attention_window, 2047);
  EXPECT_EQ(windowed_layers_of(phi), 32);
  // Gemma 2: 4 norms a block, every other layer of 42 windowed at 4096, capped logits.
  ModelSpec g2 = load_hf("gemma-2-9b");
  EXPECT_EQ(g2.norms_per_layer, 4);
  EXPECT_EQ(g2.attention_window, 4096);
  EXPECT_EQ(windowed_layers_of(g2), 21);
  EXPECT_TRUE(g2.logit_softcap && g2.attn_softcap && g2.activation == Activation::gelu && g2.gated_mlp);
  // Gemma 3: every 6th layer global, so 26 - floor(26 / 6) = 22 layers at 512 keys; no
  // capping (final_logit_softcapping null); q/k norms.
  ModelSpec g3 = load_hf("gemma-3-1b-pt");
  EXPECT_EQ(windowed_layers_of(g3), 22);
  EXPECT_EQ(g3.attention_window, 512);
  EXPECT_TRUE(g3.qk_norm && !g3.logit_softcap && !g3.attn_softcap);
  // OLMo 2: one norm over all the queries and one over all the keys.
  ModelSpec olmo = load_hf("OLMo-2-1124-7B");
  EXPECT_TRUE(olmo.qk_norm && olmo.qk_norm_full_width);
  // layer_types, where a config lists them, decide which layers window.
  Json j = Json::parse(*read_text_file(test::fixture("hf/gemma-2-9b/config.json")));
  j["layer_types"] = Json::array();
  for (int i = 0; i < 42; ++i) j["layer_types"].push_back(i < 40 ? "sliding_attention" : "full_attention");
  auto typed = parse_model_json(j, "config.json");
  ASSERT_TRUE(typed.ok()) << all_errors(typed.errors());
  EXPECT_EQ(windowed_layers_of(*typed), 40);
  // A window no shorter than the context is no window: Qwen2.5-7B's 131072 > 32768.
  j = Json::parse(*read_text_file(test::fixture("hf/Qwen2.5-7B-Instruct/config.json")));
  j["use_sliding_window"] = true;
  auto wide = parse_model_json(j, "config.json");
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->attention_window, 0);
}

struct BadCase {
  const char* file;
  const char* must_contain[3];
};

class HfErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(HfErrors, ExplainsTheProblem) {
  const BadCase& c = GetParam();
  auto m = load(std::string("bad/") + c.file);
  ASSERT_FALSE(m.ok()) << c.file;
  const std::string text = all_errors(m.errors());
  EXPECT_NE(text.find(c.file), std::string::npos) << text;
  for (const char* s : c.must_contain)
    if (s) {
      EXPECT_NE(text.find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << text;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Bad, HfErrors,
    ::testing::Values(
        BadCase{
            "hf_unsupported.json",
            {"/model_type", "unsupported Hugging Face model_type \"t5\"",
             "supported: bert, bloom, deepseek_v2, deepseek_v3, distilbert, falcon, gemma, gemma2, "
             "gemma3, gemma3_text, glm4_moe, gpt2, gpt_bigcode, gpt_neox, gpt_oss, kimi_k2, llama, llama4, "
             "llama4_text, "
             "mistral, mixtral, mpt, olmo2, olmoe, opt, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, roberta"}},
        BadCase{"hf_typo_type.json", {"did you mean \"llama\"?", nullptr, nullptr}},
        BadCase{"hf_wrong_type.json",
                {"/num_hidden_layers: expected an integer, found a string",
                 "/tie_word_embeddings: expected a boolean, found a string", nullptr}},
        BadCase{"hf_kv_heads.json",
                {"/num_key_value_heads", "heads 32 is not a multiple of kv_heads 5", nullptr}},
        BadCase{"hf_opt_350m.json", {"/word_embed_proj_dim", "project_in/project_out", nullptr}},
        BadCase{"hf_layer_types_short.json", {"/layer_types", "one string per layer (42)", nullptr}},
        BadCase{"hf_softcap_string.json", {"/final_logit_softcapping", "expected a number", nullptr}},
        BadCase{"hf_multimodal.json", {"multimodal config", "text_config", "\"mistral\""}},
        // decoder_sparse_step 2 with layer 5 dense as well: not dsplan's layer pattern.
        BadCase{"hf_moe_sparse_step.json",
                {"/mlp_only_layers", "the MoE layers of decoder_sparse_step 2 and mlp_only_layers",
                 "not leading dense layers followed by every n-th layer MoE"}},
        // DeepSeek-V3 with moe_layer_freq 2 from layer 0: MoE, dense, MoE, ... is not a pattern
        // of leading dense layers then every n-th layer MoE.
        BadCase{"hf_deepseek_moe_layer_freq.json",
                {"/moe_layer_freq: moe_layer_freq 2 with first_k_dense_replace 0 makes layer 0 MoE",
                 "not leading dense layers followed by every n-th layer MoE",
                 "moe_layer_freq 1, or first_k_dense_replace of at least 1"}}));

TEST(HfConfig, UnknownKeysAreIgnoredButMissingSizesAreNot) {
  Json j{{"model_type", "llama"}, {"hidden_size", 64}, {"some_future_key", {1, 2}}};
  auto m = parse_model_json(j, "c.json");
  ASSERT_FALSE(m.ok());
  const std::string text = all_errors(m.errors());
  EXPECT_EQ(text.find("some_future_key"), std::string::npos) << text;
  EXPECT_NE(text.find("/num_hidden_layers: missing required key"), std::string::npos) << text;
  EXPECT_NE(text.find("/vocab_size: missing required key"), std::string::npos) << text;
}

TEST(HfConfig, ModelTypeMustBeAString) {
  auto m = parse_model_json(Json{{"model_type", 3}}, "c.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(all_errors(m.errors()).find("/model_type: expected a string"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
