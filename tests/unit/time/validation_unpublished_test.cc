// How `dsplan validate` treats options a row does not publish (validation_layout.cc,
// rows::search_unpublished): the attention kernel, sequence parallelism and the ZeRO stage
// become searched dimensions, so the prediction is the fastest configuration that fits;
// recompute stays off; a stack dated before FlashAttention keeps the materialised kernel;
// an out-of-memory row keeps everything off; a published value is always pinned, the
// interleaving too when the micro-batch is searched.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "validation/validation_rows.h"

namespace dsplan::test {
namespace {

using nlohmann::json;

// A NeMo-style table row: only the table's columns (GPUs, batch, TP/PP), as the NeMo
// performance summary publishes them.
json table_row(const std::string& gpu = "H100 SXM5 80GB") {
  return json{{"id", "t"},
              {"source", "a performance table"},
              {"model",
               {{"name", "GPT test"},
                {"layers", 24},
                {"hidden", 4096},
                {"heads", 32},
                {"seq_len", 2048},
                {"vocab", 50257}}},
              {"hardware", {{"gpu", gpu}, {"num_gpus", 16}, {"nodes", 2}}},
              {"parallel",
               {{"tp", 2},
                {"pp", 1},
                {"micro_batch", 2},
                {"global_batch", 256},
                {"precision", "bf16"},
                {"other", "NeMo 24.07"}}},
              {"measured", {{"tokens_per_s_per_gpu", 10000}}}};
}

SearchSpace space_of(const json& row, std::vector<std::string>* notes_out = nullptr) {
  std::vector<std::string> notes;
  auto r = validation::rows::row_request(row, notes);
  EXPECT_TRUE(r) << (r ? "" : r.errors().front().message);
  if (notes_out) *notes_out = notes;
  return r ? r->space : SearchSpace{};
}

TEST(ValidationUnpublished, UnstatedOptionsAreSearched) {
  std::vector<std::string> notes;
  const SearchSpace s = space_of(table_row(), &notes);
  // An empty dimension is filled by with_defaults: every valid choice is searched.
  EXPECT_TRUE(s.flash.empty());
  EXPECT_TRUE(s.sequence_parallel.empty());  // Megatron with tp 2
  EXPECT_TRUE(s.zero.empty());               // Megatron: 0 or 1 (distributed optimizer)
  // Recompute is every framework's default off: pinned to none, not searched.
  ASSERT_EQ(s.checkpointing.size(), 1u);
  EXPECT_EQ(s.checkpointing[0], Checkpointing::none);
  bool said = false;
  for (const auto& n : notes) said = said || n.find("not published: searched") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ValidationUnpublished, PublishedValuesStayPinned) {
  json row = table_row();
  row["parallel"]["flash_attention"] = false;
  row["parallel"]["sequence_parallel"] = true;
  row["parallel"]["zero_stage"] = 0;
  const SearchSpace s = space_of(row);
  EXPECT_EQ(s.flash, std::vector<bool>{false});
  EXPECT_EQ(s.sequence_parallel, std::vector<bool>{true});
  EXPECT_EQ(s.zero, std::vector<int>{0});
  // A stage named in the text is published too ("distributed optimizer" = stage 1).
  row = table_row();
  row["parallel"]["other"] = "NeMo, distributed optimizer";
  EXPECT_EQ(space_of(row).zero, std::vector<int>{1});
}

TEST(ValidationUnpublished, FrameworkAndEraLimitTheSearch) {
  // Plain DDP shards nothing unless a sharding optimizer is named: stage 0, and no
  // sequence parallelism (tp 1; it is Megatron's).
  json ddp = table_row("A100 80GB");
  ddp["parallel"]["tp"] = 1;
  ddp["parallel"]["other"] = "PyTorch DDP";
  SearchSpace s = space_of(ddp);
  EXPECT_EQ(s.zero, std::vector<int>{0});
  EXPECT_EQ(s.sequence_parallel, std::vector<bool>{false});
  EXPECT_TRUE(s.flash.empty());
  // A 2021 stack (transformers 4.12) predates FlashAttention (2022-06): materialised.
  ddp["source"] = "DeepSpeedExamples autotuning with transformers 4.12";
  EXPECT_EQ(space_of(ddp).flash, std::vector<bool>{false});
  // Megatron-LM v1.0 (2020-04) likewise, and it had neither sequence parallelism nor the
  // distributed optimizer (both 2022).
  json v1 = table_row("A100 80GB");  // the era decides, not the GPU
  v1["parallel"]["other"] = "Megatron-LM v1.0 (2020)";
  s = space_of(v1);
  EXPECT_EQ(s.flash, std::vector<bool>{false});
  EXPECT_EQ(s.sequence_parallel, std::vector<bool>{false});
  EXPECT_EQ(s.zero, std::vector<int>{0});
}

TEST(ValidationUnpublished, OutOfMemoryRowsKeepThePlainRun) {
  // "It ran out of memory" describes the run without memory savers: nothing searched.
  json row = table_row();
  row["measured"] = json{{"oom", true}};
  const SearchSpace s = space_of(row);
  EXPECT_EQ(s.flash, std::vector<bool>{false});
  EXPECT_EQ(s.sequence_parallel, std::vector<bool>{false});
  EXPECT_EQ(s.zero, std::vector<int>{0});
}

TEST(ValidationUnpublished, AStatedInterleavingIsKeptWhenTheMicroBatchIsSearched) {
  // Only the global batch published: the micro-batch is searched (1-8), and so is the
  // interleaving (1, 2, 4), unless the row states it. Meta's Llama 3 405B rows state V = 8
  // and no micro-batch; before session 33 their V was replaced by 1-4.
  json row = table_row();
  row["parallel"]["tp"] = 2;
  row["parallel"]["pp"] = 2;
  row["parallel"].erase("micro_batch");
  EXPECT_EQ(space_of(row).vpp, (std::vector<int>{1, 2, 4}));
  row["parallel"]["vpp"] = 3;
  const SearchSpace s = space_of(row);
  EXPECT_EQ(s.vpp, std::vector<int>{3});
  EXPECT_EQ(s.micro_batch, (std::vector<int>{1, 2, 4, 8}));
  ASSERT_TRUE(s.global_batch.has_value());
  EXPECT_EQ(*s.global_batch, 256);
}

// Megatron-Core's recompute modules named in the row: selective with exactly those modules
// (a word like "layernorm" does not make it the block-level selective AC of other stacks);
// a module dsplan does not know is noted and left out; plain "selective" names none (the
// attention core).
TEST(ValidationUnpublished, RecomputeModulesNamed) {
  json row = table_row();
  row["parallel"]["recompute"] = "selective: recompute_modules [layernorm, moe_act, mhc]";
  std::vector<std::string> notes;
  SearchSpace s = space_of(row, &notes);
  ASSERT_EQ(s.checkpointing.size(), 1u);
  EXPECT_EQ(s.checkpointing[0], Checkpointing::selective);
  EXPECT_EQ(s.run.recompute_modules,
            module_bit(RecomputeModule::layernorm) | module_bit(RecomputeModule::moe_act));
  bool left_out = false;
  for (const auto& n : notes) left_out = left_out || n.find("'mhc'") != std::string::npos;
  EXPECT_TRUE(left_out);
  row["parallel"]["recompute"] = "selective";
  s = space_of(row);
  EXPECT_EQ(s.checkpointing[0], Checkpointing::selective);
  EXPECT_EQ(s.run.recompute_modules, 0);
  row["parallel"]["recompute"] = "selective (layer-level, every other block)";
  EXPECT_EQ(space_of(row).checkpointing[0], Checkpointing::block);
}

// DeepEP named in parallel.other sets the flex dispatcher, for an MoE model only.
TEST(ValidationUnpublished, DeepEpNamed) {
  json row = table_row();
  row["parallel"]["other"] = "NeMo 25.07; flex token dispatcher with DeepEP (moe_enable_deepep)";
  EXPECT_FALSE(space_of(row).run.moe_deepep);  // a dense model: nothing to dispatch
  row["model"]["experts"] = 8;
  row["model"]["topk"] = 2;
  row["model"]["moe_ffn"] = 4096;
  row["parallel"]["ep"] = 8;
  EXPECT_TRUE(space_of(row).run.moe_deepep);
  row["parallel"]["other"] = "NeMo 25.07; alltoall dispatcher";
  EXPECT_FALSE(space_of(row).run.moe_deepep);
}

// The permutation of a Megatron MoE row: Transformer Engine's fused kernels where the row
// names moe_permute_fusion, else Megatron-Core's default, the unfused atomic path (Grok-1's
// NeMo 24.xx recipes). A dense row keeps the default (the flag prices nothing there).
TEST(ValidationUnpublished, PermuteFusionNamed) {
  json row = table_row();
  row["parallel"]["other"] = "NeMo 24.12; alltoall dispatcher";
  EXPECT_TRUE(space_of(row).run.moe_permute_fusion);  // dense
  row["model"]["experts"] = 8;
  row["model"]["topk"] = 2;
  row["model"]["moe_ffn"] = 4096;
  row["parallel"]["ep"] = 8;
  EXPECT_FALSE(space_of(row).run.moe_permute_fusion);
  row["parallel"]["other"] =
      "Megatron-Bridge perf recipe: alltoall dispatcher, grouped GEMM, moe_permute_fusion";
  EXPECT_TRUE(space_of(row).run.moe_permute_fusion);
}

}  // namespace
}  // namespace dsplan::test
