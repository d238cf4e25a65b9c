// How `dsplan validate` reads the model of a row written the way papers and READMEs
// describe their runs: models that state less than their whole shape, keys under other
// tools' names, precision, recompute, offload and ZeRO stage in words, and models dsplan
// does not price (validation/validation_model.cc).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimator/params.h"
#include "validation/validation_rows.h"
#include "validation_row_fixtures.h"

namespace dsplan::test {
namespace {

std::vector<std::string> notes;

ModelSpec model_of(const json& row) {
  notes.clear();
  auto r = validation::rows::row_request(row, notes);
  EXPECT_TRUE(r) << row["model"].dump() << ": " << (r ? "" : r.errors().front().message);
  return r ? r->model : ModelSpec{};
}

TEST(ValidationGeneralRows, LlamaRowsWithoutTheirMlpWidth) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"] = {{"name", "Llama-2-7b"}, {"layers", 32},    {"hidden", 4096},
                  {"heads", 32},          {"seq_len", 4096}, {"params_B", 6.74}};
  // Parameters with an MLP width f, untied 32000-word embeddings, no biases:
  // 2 * 32000 * 4096 + 32 * (4 * 4096^2 + 3 * 4096 f + 2 * 4096) + 4096
  // = 262,144,000 + 32 * (67,117,056 + 12,288 f) + 4096; 6.74e9 solves to f = 11,006.6,
  // which rounds to 11,008 (Llama 2 7B's intermediate_size).
  ModelSpec m = model_of(row);
  EXPECT_EQ(m.ffn_hidden, 11008);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(has_dropout(m));
  EXPECT_EQ(m.vocab, 32000);
  // RoPE, no position table (a row that names its position keeps it).
  EXPECT_EQ(m.position, PositionKind::rotary);
  // Without params_B, Llama's rule: 256 * ceil(8 * 4096 / 3 / 256) = 256 * 43 = 11008.
  row["model"].erase("params_B");
  EXPECT_EQ(model_of(row).ffn_hidden, 11008);
  // Llama 3 70B without kv_heads or its MLP width: 8 KV heads, and the width that carries
  // 70.6e9 parameters is its 28672.
  row["model"] = {{"name", "Llama 3 70B"}, {"layers", 80},    {"hidden", 8192},
                  {"heads", 64},           {"seq_len", 8192}, {"params_B", 70.6}};
  m = model_of(row);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.ffn_hidden, 28672);
}

// A row that names a model dsplan has as a preset, and gives no shape, takes the preset.
TEST(ValidationGeneralRows, NamedModelWithoutAShapeTakesThePreset) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"] = {{"name", "meta-llama/Llama-2-7b-hf"}, {"seq_len", 4096}};
  const ModelSpec m = model_of(row);
  EXPECT_EQ(m.name, "llama2-7b");
  EXPECT_EQ(m.ffn_hidden, 11008);
  row["model"]["name"] = "an unnamed research model";
  std::vector<std::string> n;
  EXPECT_FALSE(validation::rows::row_request(row, n));
}

// A non-Llama row whose name and shape are a preset's takes the preset (Mistral's gated MLP,
// GQA and RMSNorm the row's fields leave out); a different shape keeps the shape-only model.
TEST(ValidationGeneralRows, NamedModelWithThePresetShapeTakesThePreset) {
  json row = row_on("H100 SXM5 80GB", 8, 1);
  row["model"] = {{"name", "Mistral 7B"}, {"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 4096}};
  ModelSpec m = model_of(row);
  EXPECT_EQ(m.name, "mistral-7b");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.gated_mlp);
  row["model"]["layers"] = 30;
  m = model_of(row);
  EXPECT_NE(m.name, "mistral-7b");
  EXPECT_FALSE(m.gated_mlp);
}

// A file may hold its rows in an object, under "rows"; anything else is one clear error.
TEST(ValidationGeneralRows, RowsUnderAnObject) {
  auto set = validation::load_validation(
      json{{"description", "a table"}, {"rows", json::array({row_on("A100", 8, 1)})}}, "t.json");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->cases.size(), 1u);
  EXPECT_FALSE(validation::load_validation(json{{"rows", 3}}, "t.json"));
  EXPECT_FALSE(validation::load_validation(json{{"a", 1}}, "t.json"));
}

// A width given without saying the MLP is gated: Qwen-72B-like numbers (80 layers of 8192,
// ffn 24576, vocab 152064, 72.3 B). Two matrices give 80 x (4 x 8192^2 + 2 x 8192 x 24576)
// = 53.7 B + 2 x 1.25 B embeddings = 56.2 B; three give 80 x (268.4 M + 604.0 M) = 69.8 B
// + 2.5 B = 72.3 B: gated. The same width with a GPT's 13 B count stays ungated.
TEST(ValidationGeneralRows, GatedMlpFromTheParameterCount) {
  json row = row_on("H100 SXM5 80GB", 8, 1);
  row["model"] = {{"name", "Qwen-72B"},  {"layers", 80},    {"hidden", 8192},           {"heads", 64},
                  {"ffn_hidden", 24576}, {"vocab", 152064}, {"tied_embeddings", false}, {"seq_len", 4096},
                  {"params_B", 72.3}};
  EXPECT_TRUE(model_of(row).gated_mlp);
  row["model"] = {{"name", "GPT 13B"},   {"layers", 40},   {"hidden", 5120},  {"heads", 40},
                  {"ffn_hidden", 20480}, {"vocab", 50257}, {"seq_len", 2048}, {"params_B", 12.9}};
  EXPECT_FALSE(model_of(row).gated_mlp);
}

// Keys under other tools' names: Hugging Face config names, Megatron's and DeepSpeed's
// arguments. A row giving both keeps the format's own key.
TEST(ValidationGeneralRows, KeysUnderOtherToolsNames) {
  json row = {{"id", "t"},
              {"source", "a test row"},
              {"model",
               {{"name", "GPT test"},
                {"num_hidden_layers", 24},
                {"hidden_size", 2048},
                {"num_attention_heads", 16},
                {"seq_length", 2048},
                {"vocab_size", 50257}}},
              {"hardware", {{"gpu", "A100 SXM4 80GB"}, {"world_size", 16}, {"num_nodes", 2}}},
              {"parallel",
               {{"tensor_model_parallel_size", 2},
                {"pipeline_model_parallel_size", 2},
                {"micro_batch_size", 2},
                {"global_batch_size", 64},
                {"zero", 1},
                {"checkpoint_activations", true},
                {"precision", "bf16"}}},
              {"measured", {{"iteration_time_ms", 1000}}}};
  validation::ValidationCase c = case_of(row);
  EXPECT_EQ(c.request.model.layers, 24);
  EXPECT_EQ(c.request.cluster.num_gpus, 16);
  EXPECT_EQ(c.request.space.tp[0], 2);
  EXPECT_EQ(c.request.space.pp[0], 2);
  EXPECT_EQ(c.request.space.micro_batch[0], 2);
  EXPECT_EQ(c.request.space.grad_accum[0], 8);  // 64 / (2 x dp 4)
  EXPECT_EQ(c.request.space.zero[0], 1);
  EXPECT_EQ(c.request.space.checkpointing[0], Checkpointing::full);
  row["model"]["layers"] = 12;  // the format's own key wins
  EXPECT_EQ(case_of(row).request.model.layers, 12);
}

TEST(ValidationGeneralRows, ModelsDsplanDoesNotPriceAreSkipped) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  for (const char* name :
       {"T5-large", "flan-t5-xl", "BART large", "Mixtral 8x7B", "Switch-Base", "GPT MoE 1.3B"}) {
    row["model"]["name"] = name;
    std::vector<std::string> n;
    EXPECT_FALSE(validation::rows::row_request(row, n)) << name;
  }
  // A dense shape whose parameters are far from the row's count: 24 x 2048 GPT is 1.3B, not 13B.
  row["model"]["name"] = "GPT test";
  row["model"]["params_B"] = 13;
  std::vector<std::string> n;
  auto r = validation::rows::row_request(row, n);
  ASSERT_FALSE(r);
  EXPECT_NE(r.errors().front().message.find("25%"), std::string::npos);
  row["model"]["params_B"] = 1.3;
  EXPECT_TRUE(validation::rows::row_request(row, n));
}

TEST(ValidationGeneralRows, HeadsInferredFromTheWidth) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"].erase("heads");
  row["model"]["hidden"] = 2560;  // 2560 / 128 = 20 heads (GPT-3 2.7B: 32 x 80; both 2560 wide)
  EXPECT_EQ(model_of(row).heads, 20);
  row["model"]["hidden"] = 768;  // below 2048: head dimension 64, 12 heads
  EXPECT_EQ(model_of(row).heads, 12);
  row["model"]["heads"] = nullptr;  // null reads as not given
  EXPECT_EQ(model_of(row).heads, 12);
}

TEST(ValidationGeneralRows, PrecisionSpelledOut) {
  const std::pair<const char*, Precision> cases[] = {
      {"bfloat16", Precision::bf16}, {"BF16 mixed", Precision::bf16},
      {"float16", Precision::fp16},  {"mixed precision", Precision::fp16},
      {"AMP", Precision::fp16},      {"fp32", Precision::fp32},
      {"", Precision::fp32},         {"example", Precision::fp32}};  // "example" has no "amp" word
  for (const auto& [text, expected] : cases) {
    TrainConfig run;
    std::vector<std::string> n;
    validation::rows::precision(text, "", run, n);
    EXPECT_EQ(run.precision, expected) << text;
  }
}

TEST(ValidationGeneralRows, RecomputeAndOffloadAsAnswers) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  for (json yes : {json(true), json("yes"), json("enabled"), json("full")}) {
    row["parallel"]["recompute"] = yes;
    EXPECT_EQ(validation::rows::row_request(row, n)->space.checkpointing[0], Checkpointing::full)
        << yes.dump();
  }
  for (json no : {json(false), json("no"), json("none"), json(nullptr)}) {
    row["parallel"]["recompute"] = no;
    EXPECT_EQ(validation::rows::row_request(row, n)->space.checkpointing[0], Checkpointing::none)
        << no.dump();
  }
  row["parallel"]["zero_stage"] = 3;
  row["parallel"]["offload"] = "cpu";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::optimizer);
  row["parallel"]["offload"] = "all";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::all);
  row["parallel"]["offload"] = "none";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::none);
  row["parallel"]["offload"] = "nvme";  // not modelled: the row is refused, naming the words
  auto r = validation::rows::row_request(row, n);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.errors().front().json_path, "/parallel/offload");
}

// A ZeRO stage not given as a number: the stage the text names, FSDP's sharding strategy
// (FULL_SHARD, its default, is stage 3), else none.
TEST(ValidationGeneralRows, ZeroStageFromTheText) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  row["parallel"].erase("zero_stage");
  const std::pair<const char*, int> cases[] = {
      {"DeepSpeed ZeRO-3", 3}, {"ZeRO stage 2", 2},       {"deepspeed zero_stage: 1", 1}, {"DeepSpeed", 0},
      {"PyTorch FSDP", 3},     {"FSDP SHARD_GRAD_OP", 2}, {"DeepSpeed ZeRO-Offload", 0},  {"ZeRO13 typo", 0}};
  for (const auto& [other, stage] : cases) {
    row["parallel"]["other"] = other;
    auto r = validation::rows::row_request(row, n);
    ASSERT_TRUE(r) << other;
    EXPECT_EQ(r->space.zero[0], stage) << other;
  }
  row["parallel"]["zero_stage"] = 1;  // a number given wins
  row["parallel"]["other"] = "ZeRO-3 in an earlier run";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.zero[0], 1);
}

TEST(ValidationGeneralRows, EngineNamedInParallelOther) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  row["parallel"]["other"] = "Megatron-LM, TP within the node";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::megatron);
  row["parallel"]["other"] = "Megatron-DeepSpeed, ZeRO-1";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::deepspeed);
  row["parallel"]["other"] = "PyTorch DDP, torchrun";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::ddp);
  row["parallel"]["other"] = "fairscale OSS + ShardedDDP";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::deepspeed);
}

}  // namespace
}  // namespace dsplan::test
