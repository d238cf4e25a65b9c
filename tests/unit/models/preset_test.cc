// The embedded presets: every preset loads, cites a source, and its parameter count equals
// the published (Hugging Face) count of the real model, or for the GPT-3 shapes the count
// derived by hand from Brown et al. 2020 Table 2.1. Also preset lookup and resolve_model().
#include <gtest/gtest.h>

#include <algorithm>

#include "estimator/params.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::all_errors;

struct Count {
  const char* preset;
  std::int64_t params;
};

// Arithmetic (h = hidden, f = ffn, V = vocab, P = position rows, L = layers):
//  GPT-2/GPT-3 layer = 12h^2 + 13h (qkv 3h^2+3h, proj h^2+h, MLP 8h^2+5h, 2 LN 4h);
//   total = V*h + P*h + L*layer + 2h (final LN).
//   gpt2 h768 L12: 38,597,376 + 786,432 + 12*7,087,872 + 1,536 = 124,439,808.
//   gpt2-medium h1024 L24: 51,463,168 + 1,048,576 + 24*12,596,224 + 2,048 = 354,823,168.
//   gpt2-large h1280 L36: 64,328,960 + 1,310,720 + 36*19,677,440 + 2,560 = 774,030,080.
//   gpt2-xl h1600 L48: 80,411,200 + 1,638,400 + 48*30,740,800 + 3,200 = 1,557,611,200.
//   GPT-3 shapes, V 50257, P 2048 (unpadded vocabulary, as the paper counts):
//   1.3b h2048 L24: 102,926,336 + 4,194,304 + 24*50,358,272 + 4,096 = 1,315,723,264.
//   2.7b h2560 L32: 128,657,920 + 5,242,880 + 32*78,676,480 + 5,120 = 2,651,553,280.
//   6.7b h4096 L32: 205,852,672 + 8,388,608 + 32*201,379,840 + 8,192 = 6,658,404,352.
//   13b h5120 L40: 257,315,840 + 10,485,760 + 40*314,639,360 + 10,240 = 12,853,386,240.
//   175b h12288 L96: 617,558,016 + 25,165,824 + 96*1,812,099,072 + 24,576 = 174,604,259,328.
//  BERT (post-LN, pooler h^2+h, embeddings V*h + 512h + 2h + LN 2h, no final norm):
//   bert-base h768 L12 V30522: 23,440,896 + 393,216 + 1,536 + 1,536 + 12*7,087,872
//     + 590,592 = 109,482,240.   bert-base-cased V28996: 109,482,240 - 1,526*768 = 108,310,272.
//   bert-large h1024 L24: 31,254,528 + 524,288 + 2,048 + 2,048 + 24*12,596,224
//     + 1,049,600 = 335,141,888.
//   distilbert h768 L6, no token types/pooler: 23,440,896 + 393,216 + 1,536
//     + 6*7,087,872 = 66,362,880.
//  Llama (SwiGLU 3hf, RMSNorm h, no biases, untied head, kv = kv_heads*head_dim):
//   llama2-7b: 2*32000*4096 + 32*(4*4096^2 + 3*4096*11008 + 2*4096) + 4096
//     = 262,144,000 + 32*202,383,360 + 4,096 = 6,738,415,616.
//   llama2-13b: 2*32000*5120 + 40*(4*5120^2 + 3*5120*13824 + 10240) + 5120
//     = 327,680,000 + 40*317,204,480 + 5,120 = 13,015,864,320.
//   llama2-70b (GQA 8): layer = 8192*(8192+2*1024) + 8192^2 + 3*8192*28672 + 16384
//     = 83,886,080 + 67,108,864 + 704,643,072 + 16,384 = 855,654,400;
//     2*32000*8192 + 80*855,654,400 + 8192 = 68,976,648,192.
//   llama3-8b: layer = 4096*(4096+2048) + 4096^2 + 3*4096*14336 + 8192 = 218,112,000;
//     2*128256*4096 + 32*218,112,000 + 4096 = 8,030,261,248.
//   llama3-70b: 2*128256*8192 + 80*855,654,400 + 8192 = 70,553,706,496.
//   llama3.1-405b (GQA 8 x 128): layer = 16384*(16384+2*1024) + 16384^2 + 3*16384*53248
//     + 2*16384 = 301,989,888 + 268,435,456 + 2,617,245,696 + 32,768 = 3,187,703,808;
//     2*128256*16384 + 126*3,187,703,808 + 16384 = 405,853,388,800.
//   llama3.2-1b (GQA 8 x 64, tied): layer = 2048*(2048+2*512) + 2048^2 + 3*2048*8192 + 4096
//     = 6,291,456 + 4,194,304 + 50,331,648 + 4,096 = 60,821,504;
//     128256*2048 + 16*60,821,504 + 2048 = 1,235,814,400 (Meta's card: 1.23B).
//   mistral-7b: 2*32000*4096 + 32*218,112,000 + 4096 = 7,241,732,096.
//  gpt-neox-20b h6144 f24576 V50432 untied: layer = (6144*18432 + 18432) + (6144^2 + 6144)
//     + (2*6144*24576 + 24576 + 6144) + 4*6144 = 453,064,704;
//     2*309,854,208 + 44*453,064,704 + 12,288 = 20,554,567,680.
//  bloom-176b h14336 V250880 tied, embedding LN: layer = 12h^2 + 13h = 2,466,437,120;
//     3,596,615,680 + 28,672 + 70*2,466,437,120 + 28,672 = 176,247,271,424.
//  opt-1.3b h2048 f8192 V50272, 2050 position rows: 102,957,056 + 4,198,400
//     + 24*(4*(2048^2+2048) + 2*2048*8192 + 8192 + 2048 + 4*2048) + 4096
//     = 107,155,456 + 24*50,358,272 + 4,096 = 1,315,758,080.
//  mpt-7b and falcon-7b: arithmetic beside their Hugging Face fixtures in hf_config_test.cc
//     (6,649,286,656 and 6,921,720,704).
// Mixture of experts (layer = attention + router + experts + norms):
//   mixtral-8x7b h4096, 32/8 heads of 128, 8 experts of 14336 gated, V32000 untied:
//     4096*(4096 + 2048) + 4096^2 = 41,943,040; router 4096*8 = 32,768; experts
//     8*3*4096*14336 = 1,409,286,144; norms 8,192: 1,451,270,144 a layer;
//     32 layers + 2*32000*4096 + 4096 = 46,702,792,704 (Mistral AI: 46.7B).
//   mixtral-8x22b h6144, 48/8 heads of 128, 8 experts of 16384, V32768 untied:
//     6144*(6144 + 2048) + 6144^2 = 88,080,384; router 49,152; experts 2,415,919,104; norms
//     12,288: 2,504,060,928; 56 layers + 2*32768*6144 + 6144 = 140,630,071,296 (141B).
//   qwen3-30b-a3b h2048, 32/4 heads of 128 (q 4096, kv 512), 128 experts of 768, V151936:
//     2048*(4096 + 1024) + 4096*2048 = 18,874,368; router 2048*128 = 262,144; experts
//     128*3*2048*768 = 603,979,776; norms 2*2048 + q/k norms 2*128 = 4,352: 623,120,640;
//     48 layers + 2*151936*2048 + 2048 = 30,532,122,624 (Qwen: 30.5B).
//   qwen3-235b-a22b h4096, 64/4 heads of 128 (q 8192, kv 512), 128 experts of 1536, V151936:
//     4096*(8192 + 1024) + 8192*4096 = 71,303,168; router 4096*128 = 524,288; experts
//     128*3*4096*1536 = 2,415,919,104; norms 2*4096 + q/k norms 2*128 = 8,448: 2,487,755,008;
//     94 layers + 2*151936*4096 + 4096 = 235,093,634,560 (Qwen: 235B).
//   qwen2-57b-a14b h3584, 28/4 heads of 128 (q 3584, kv 512), Q/K/V biases, 64 experts of
//     2560 top-8, one shared expert of 20480, V151936 untied: 3584*(3584 + 1024) + 4608
//     + 3584^2 = 29,364,736; shared 3*3584*20480 = 220,200,960; router 3584*64 = 229,376;
//     experts 64*3*3584*2560 = 1,761,607,680; norms 7,168: 2,011,409,920 a layer;
//     28 layers + 2*151936*3584 + 3584 = 57,408,558,592 (Qwen: 57B; the shared expert's
//     3584 x 1 sigmoid gate, 100,352 in all, is not counted).
// Mixture of experts with dense layers (layers = MoE layers x MoE layer + dense layers x
// dense layer; a dense layer = attention + dense MLP 3*h*ffn + norms):
//   glm-4.5-air h4096, 96/8 heads of 128 (q 12288, kv 1024), Q/K/V biases, 46 layers of
//     which the first dense (ffn 10944), then 128 experts of 1408 top-8 and one shared
//     expert of 1408, V151552 untied: attention 4096*(12288 + 2048) + 14,336 biases
//     + 12288*4096 = 109,066,240; norms 8,192. Dense layer: + 3*4096*10944 = 134,479,872
//     -> 243,554,304. MoE layer: + shared 3*4096*1408 = 17,301,504, router 4096*128 =
//     524,288, experts 128*17,301,504 = 2,214,592,512 -> 2,341,492,736. 45 x 2,341,492,736
//     + 243,554,304 = 105,610,727,424; + 2*151552*4096 = 1,241,513,984 + 4,096 =
//     106,852,245,504 (Zhipu: 106B; the checkpoint's multi-token-prediction layer, about
//     2.4B more, and the routers' e_score_correction_bias buffers are not counted).
//   llama4-maverick h5120, 40/8 heads of 128 (q 5120, kv 1024), 48 layers alternating dense
//     (ffn 16384) and MoE (odd layers: 128 experts of 8192 top-1 and one shared expert of
//     8192), V202048 untied: attention 5120*(5120 + 2048) + 5120^2 = 62,914,560; norms
//     10,240. Dense layer: + 3*5120*16384 = 251,658,240 -> 314,583,040. MoE layer: + shared
//     3*5120*8192 = 125,829,120, router 5120*128 = 655,360, experts 128*125,829,120 =
//     16,106,127,360 -> 16,295,536,640. 24 x 16,295,536,640 + 24 x 314,583,040 =
//     398,642,872,320; + 2*202048*5120 = 2,068,971,520 + 5,120 = 400,711,848,960 (Meta:
//     400B; the text model only, without the vision tower and projector).
// Multi-head latent attention (DeepSeek; h hidden, H heads, ql/kl the query/key-value latent
// ranks, dn/dr/dv the nope/rope/value head widths): attention = q_down h*ql + q_up
// (ql, or h without a query latent)*H*(dn+dr) + kv_down h*(kl+dr) + kv_up kl*H*(dn+dv)
// + o_proj H*dv*h; norms 2h + ql + kl (the latents' RMSNorms).
//   deepseek-v3 h7168, H128, ql1536, kl512, dn128, dr64, dv128, 61 layers of which the first
//     3 dense (ffn 18432), then 256 experts of 2048 top-8 and one shared expert of 2048,
//     V129280 untied: attention 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216
//     + 117,440,512 = 187,105,280; norms 16,384. Dense layer: + 3*7168*18432 = 396,361,728
//     -> 583,483,392. MoE layer: + shared 3*7168*2048 = 44,040,192, router 7168*256 =
//     1,835,008, experts 256*44,040,192 = 11,274,289,152 -> 11,507,286,016. 58 x
//     11,507,286,016 + 3 x 583,483,392 = 669,173,039,104; + 2*129280*7168 = 1,853,358,080
//     + 7,168 = 671,026,404,352 (DeepSeek: 671B; the checkpoint's 685B adds the 14B
//     multi-token-prediction module, num_nextn_predict_layers, not counted).
//   kimi-k2 (session 46) DeepSeek-V3's layer with H64, the first layer dense, 384 experts
//     of 2048 top-8 and one shared, no expert groups, V163840 untied: attention 11,010,048
//     + 1536*64*192 = 18,874,368 + 4,128,768 + 512*64*256 = 8,388,608 + 64*128*7168 =
//     58,720,256 -> 101,122,048; norms 16,384. Dense layer: + 396,361,728 -> 497,500,160.
//     MoE layer: + shared 44,040,192, router 7168*384 = 2,752,512, experts 384*44,040,192 =
//     16,911,433,728 -> 17,059,364,864. 60 x 17,059,364,864 + 497,500,160 =
//     1,024,059,392,000; + 2*163840*7168 = 2,348,810,240 + 7,168 = 1,026,408,209,408
//     (Moonshot: "1.04 trillion").
//   deepseek-v2-lite h2048, H16, no query latent, kl512, dn128, dr64, dv128, 27 layers of
//     which the first dense (ffn 10944), then 64 experts of 1408 top-6 and two shared
//     (2816), V102400 untied: attention 2048*16*192 = 6,291,456 + 2048*576 = 1,179,648
//     + 512*16*256 = 2,097,152 + 16*128*2048 = 4,194,304 -> 13,762,560; norms 4,608.
//     Dense layer: + 3*2048*10944 = 67,239,936 -> 81,007,104. MoE layer: + shared
//     3*2048*2816 = 17,301,504, router 2048*64 = 131,072, experts 64*3*2048*1408 =
//     553,648,128 -> 584,847,872. 26 x 584,847,872 + 81,007,104 = 15,287,051,776;
//     + 2*102400*2048 = 419,430,400 + 2,048 = 15,706,484,224 (DeepSeek: 15.7B).
const Count kCounts[] = {
    {"deepseek-v3", 671'026'404'352},
    {"kimi-k2", 1'026'408'209'408},
    {"deepseek-v2-lite", 15'706'484'224},
    {"glm-4.5-air", 106'852'245'504},
    {"llama4-maverick", 400'711'848'960},
    {"mixtral-8x7b", 46'702'792'704},
    {"mixtral-8x22b", 140'630'071'296},
    {"qwen3-30b-a3b", 30'532'122'624},
    {"qwen3-235b-a22b", 235'093'634'560},
    {"qwen2-57b-a14b", 57'408'558'592},
    {"gpt2", 124'439'808},
    {"gpt2-medium", 354'823'168},
    {"gpt2-large", 774'030'080},
    {"gpt2-xl", 1'557'611'200},
    {"gpt-1.3b", 1'315'723'264},
    {"gpt-2.7b", 2'651'553'280},
    {"gpt-6.7b", 6'658'404'352},
    {"gpt-13b", 12'853'386'240},
    {"gpt-175b", 174'604'259'328},
    {"bert-base", 109'482'240},
    {"bert-base-cased", 108'310'272},
    {"bert-large", 335'141'888},
    {"distilbert", 66'362'880},
    {"llama2-7b", 6'738'415'616},
    {"llama2-13b", 13'015'864'320},
    {"llama2-70b", 68'976'648'192},
    {"llama3-8b", 8'030'261'248},
    {"llama3-70b", 70'553'706'496},
    {"llama3.1-405b", 405'853'388'800},
    {"mistral-7b", 7'241'732'096},
    {"gpt-neox-20b", 20'554'567'680},
    {"bloom-176b", 176'247'271'424},
    {"opt-1.3b", 1'315'758'080},
    {"mpt-7b", 6'649'286'656},
    {"falcon-7b", 6'921'720'704},
    {"llama3.2-1b", 1'235'814'400},
    // The 2024-25 families: arithmetic beside their Hugging Face fixtures in
    // hf_config_test.cc, whose imports these presets equal (test SameShapeAsThePreset).
    {"qwen2.5-7b", 7'615'616'512},
    {"qwen3-8b", 8'190'735'360},
    {"gemma2-9b", 9'241'705'984},
    {"phi3-mini", 3'821'079'552},
    // The small ones of session 34's real runs (arithmetic in hf_config_test.cc).
    {"qwen2.5-0.5b", 494'032'768},
    {"qwen3-0.6b", 596'049'920},
    {"gemma3-1b", 999'885'952},
    {"starcoder2-3b", 3'030'371'328},
    // Llama 3.1 (Llama 3's shapes and counts, 131,072 positions), Qwen2.5-72B and Qwen3-32B
    // (arithmetic beside their Hugging Face fixtures in hf_config_test.cc, session 43).
    {"llama3.1-8b", 8'030'261'248},
    {"llama3.1-70b", 70'553'706'496},
    {"qwen2.5-72b", 72'706'203'648},
    {"qwen3-32b", 32'762'123'264},
    // gpt-oss (arithmetic in gpt_oss_test.cc, whose config.json imports equal these presets).
    {"gpt-oss-120b", 116'829'156'672},
    {"gpt-oss-20b", 20'914'757'184},
};

TEST(Presets, ParameterCountsMatchPublishedModels) {
  for (const auto& c : kCounts) {
    auto m = model_preset(c.preset);
    ASSERT_TRUE(m.ok()) << c.preset << ": " << all_errors(m.errors());
    EXPECT_EQ(total_params(*m), c.params) << c.preset;
  }
}

TEST(Presets, EveryPresetIsCountedAboveAndCitesASource) {
  const auto names = model_preset_names();
  EXPECT_EQ(names.size(), std::size(kCounts));
  for (const auto& n : names) {
    EXPECT_TRUE(
        std::any_of(std::begin(kCounts), std::end(kCounts), [&](const Count& c) { return n == c.preset; }))
        << n << " has no count test";
    EXPECT_FALSE(model_preset_source(n).empty()) << n;
    auto m = model_preset(n);
    ASSERT_TRUE(m.ok()) << n;
    EXPECT_EQ(m->name, n) << "the preset's name key must match its file name";
  }
}

TEST(Presets, NamesAreInNaturalOrder) {
  const auto names = model_preset_names();
  auto pos = [&](const char* n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  EXPECT_LT(pos("gpt-1.3b"), pos("gpt-2.7b"));
  EXPECT_LT(pos("gpt-2.7b"), pos("gpt-13b"));
  EXPECT_LT(pos("gpt-13b"), pos("gpt-175b"));
  EXPECT_LT(pos("llama2-7b"), pos("llama2-13b"));
  EXPECT_LT(pos("bert-base"), pos("bert-base-cased"));
}

TEST(Presets, Gpt3ShapesUseMegatronVocabPadding) {
  auto m = model_preset("gpt-2.7b");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->layers, 32);
  EXPECT_EQ(m->hidden, 2560);
  EXPECT_EQ(m->heads, 32);
  EXPECT_EQ(m->head_dim, 80);
  EXPECT_EQ(m->max_positions, 2048);
  EXPECT_EQ(padded_vocab(*m, 1), 50304);  // ceil(50257 / 128) * 128 = 393 * 128
}

TEST(Presets, UnknownNameSuggestsTheClosest) {
  auto m = model_preset("gpt2-mediun");
  ASSERT_FALSE(m.ok());
  const std::string text = all_errors(m.errors());
  EXPECT_NE(text.find("unknown model \"gpt2-mediun\""), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean \"gpt2-medium\"?"), std::string::npos) << text;
  EXPECT_NE(text.find("llama2-70b"), std::string::npos) << "lists the presets: " << text;
}

TEST(ResolveModel, PresetNameNeverReadsAFile) {
  int reads = 0;
  auto m = resolve_model("llama3-8b", [&](const std::string&) -> Expected<std::string> {
    ++reads;
    return std::string("{}");
  });
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(reads, 0);
  EXPECT_EQ(m->kv_heads, 8);
}

TEST(ResolveModel, UnknownBareNameIsOneClearMessage) {
  auto m = resolve_model("lama2-7b", read_text_file);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.errors().size(), 1u);
  const std::string text = all_errors(m.errors());
  EXPECT_NE(text.find("not a preset name or a readable file"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean \"llama2-7b\"?"), std::string::npos) << text;
}

// A bare name that is a file the reader cannot take (here a silent pipe) keeps the reader's
// reason rather than reading as an unknown preset.
TEST(ResolveModel, BareNameOfAnUnreadableFileKeepsTheReason) {
  auto m = resolve_model("fifo", [](const std::string& path) -> Expected<std::string> {
    return Diagnostic{path, "", "no data for 20 s (a pipe without a writer)", "start the writer first"};
  });
  ASSERT_FALSE(m.ok());
  const std::string text = all_errors(m.errors());
  EXPECT_NE(text.find("cannot read model file: no data for 20 s"), std::string::npos) << text;
  EXPECT_EQ(text.find("not a preset name"), std::string::npos) << text;
}

// A preset named the way people write it: other case and separators, or the Hugging Face
// id of the model it mirrors. A path that does not exist stays an error.
TEST(ResolveModel, PresetsNamedOtherWays) {
  const std::pair<const char*, const char*> cases[] = {
      {"Llama2-7B", "llama2-7b"},
      {"llama-2-7b", "llama2-7b"},
      {"meta-llama/Llama-2-7b-hf", "llama2-7b"},
      {"meta-llama/Meta-Llama-3-70B", "llama3-70b"},
      {"GPT-2.7B", "gpt-2.7b"},
      {"GPT-1.3B", "gpt-1.3b"},  // not gpt-13b: the dot stays
      {"gpt-13B", "gpt-13b"},
      {"bert-base-uncased", "bert-base"},
      {"distilbert-base-uncased", "distilbert"},
      {"mistralai/Mistral-7B-v0.1", "mistral-7b"},
      {"Qwen/Qwen2.5-7B", "qwen2.5-7b"},
      {"Qwen/Qwen2.5-0.5B", "qwen2.5-0.5b"},
      {"Qwen/Qwen3-0.6B", "qwen3-0.6b"},
      {"google/gemma-3-1b-pt", "gemma3-1b"},  // the pretrained checkpoint's id
      {"bigcode/starcoder2-3b", "starcoder2-3b"},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},
      {"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},
      {"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"},
      {"openai/gpt-oss-120b", "gpt-oss-120b"},
      {"meta-llama/Llama-3.1-8B", "llama3.1-8b"},
      {"meta-llama/Llama-3.1-70B", "llama3.1-70b"},
      {"Qwen/Qwen2.5-72B", "qwen2.5-72b"},
      {"Qwen/Qwen3-32B", "qwen3-32b"},
      {"openai/gpt-oss-20b", "gpt-oss-20b"},
      {"Qwen/Qwen2-57B-A14B", "qwen2-57b-a14b"},
      {"zai-org/GLM-4.5-Air", "glm-4.5-air"},
      {"meta-llama/Llama-4-Maverick-17B-128E", "llama4-maverick"},
      {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
      {"moonshotai/Kimi-K2-Base", "kimi-k2"},
      {"moonshotai/Kimi-K2-Instruct", "kimi-k2"},
      {"deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"},
  };
  for (const auto& [given, preset] : cases) {
    auto m = resolve_model(given, read_text_file);
    ASSERT_TRUE(m.ok()) << given;
    EXPECT_EQ(m->name, preset) << given;
  }
  // A version that is the name's only number is its generation: DeepSeek-V2 is no preset,
  // and not deepseek-v3.
  EXPECT_FALSE(preset_for_name("deepseek-ai/DeepSeek-V2").has_value());
  for (const char* path : {"./nope/gpt2", "configs/gpt2.json", "a/b/llama2-7b"})
    EXPECT_FALSE(resolve_model(path, read_text_file).ok()) << path;
  // Every preset's own name is its key, and no two presets share one.
  for (const std::string& n : model_preset_names()) EXPECT_EQ(preset_for_name(n).value_or(""), n);
}

TEST(ResolveModel, MissingFileIsOneClearMessage) {
  const std::string path = test::fixture("no/such/model.json");
  auto m = resolve_model(path, read_text_file);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.errors().size(), 1u);
  EXPECT_EQ(m.errors()[0].file, path);
  EXPECT_NE(m.errors()[0].message.find("cannot read model file"), std::string::npos);
}

// A Hugging Face id without a preset (and no such file): the config.json to download is named.
TEST(ResolveModel, UnknownHubIdNamesItsConfig) {
  auto m = resolve_model("some-org/Some-Model-7B", read_text_file);
  ASSERT_FALSE(m.ok());
  ASSERT_EQ(m.errors().size(), 1u);
  EXPECT_NE(m.errors()[0].message.find("reads no model hub"), std::string::npos);
  EXPECT_NE(m.errors()[0].hint.find("https://huggingface.co/some-org/Some-Model-7B/resolve/main/config.json"),
            std::string::npos);
}

TEST(ResolveModel, FileContentsGoThroughTheCallback) {
  auto m = resolve_model("mem.json", [](const std::string& p) -> Expected<std::string> {
    EXPECT_EQ(p, "mem.json");
    return std::string(R"({"layers": 1, "hidden": 8, "heads": 2, "vocab": 4, "position": "alibi"})");
  });
  ASSERT_TRUE(m.ok()) << all_errors(m.errors());
  EXPECT_EQ(m->name, "mem");
  EXPECT_EQ(m->position, PositionKind::alibi);
}

}  // namespace
}  // namespace dsplan
