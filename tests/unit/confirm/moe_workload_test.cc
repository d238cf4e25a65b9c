// The reference workload's mixture-of-experts path (examples/moe_mlp.py): the Megatron-Core
// flags `megatron_args` writes for an MoE plan reach the workload's parser, its per-layer MoE
// pattern comes back as one flag a layer, and what it cannot run is named or refused. No
// PyTorch here: the checks run the parser and moe_mlp's pure-Python helpers through python3.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/confirm.h"
#include "confirm/experiment.h"
#include "confirm/plan.h"
#include "confirm/process.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::ScratchDir;
using test::workload_args;

Plan moe_plan() {
  Plan plan = test::tiny_plan();  // 4 layers, hidden 256
  ModelSpec& m = plan.model;
  m.experts = 8;
  m.topk = 2;
  m.moe_ffn = 128;
  m.shared_ffn = 64;
  m.first_dense_layers = 1;  // layer 0 dense, layers 1-3 MoE: Megatron's list [0,1,1,1]
  return plan;
}

TEST(MoeWorkload, ParserTakesAMegatronMoePlan) {
  ScratchDir d;
  Plan plan = moe_plan();
  Candidate cand = plan.candidates.front();
  cand.cfg.framework = Framework::megatron;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(workload_args(e,
                          "a.num_experts, a.moe_router_topk, a.moe_ffn_hidden_size, a.moe_grouped_gemm, "
                          "a.moe_shared_expert_intermediate_size, a.expert_model_parallel_size, "
                          "a.moe_router_force_load_balancing",
                          d),
            "8 2 128 True 64 1 False\n");
  EXPECT_EQ(workload_args(e, "moe_mlp.moe_layer_flags(a.moe_layer_freq, a.num_layers)", d),
            "[False, True, True, True]\n");
  EXPECT_TRUE(reference_workload_gaps(plan.model).empty());
}

TEST(MoeWorkload, LayerPatternsAsMegatronReadsThem) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(plan.candidates.front(), plan, l, d.path());
  // An int N: every N-th layer from the first (Megatron's `i % N == 0`); the default 1: all.
  EXPECT_EQ(
      workload_args(e, "moe_mlp.moe_layer_flags('2', 5), moe_mlp.moe_layer_flags(a.moe_layer_freq, 3)", d),
      "[True, False, True, False, True] [True, True, True]\n");
  // A list that does not name every layer is an error, not a guess.
  auto r =
      run_process({"python3", "-c",
                   "import sys; sys.path.insert(0, sys.argv[1]); import moe_mlp\n"
                   "try:\n    moe_mlp.moe_layer_flags('[1,0]', 3)\nexcept ValueError as e:\n    print(e)",
                   std::string(DSPLAN_SOURCE_DIR) + "/examples"},
                  d / "out", d / "err", {});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << test::slurp(d / "err");
  EXPECT_EQ(test::slurp(d / "out"), "--moe-layer-freq lists 2 layers, the model has 3\n");
}

TEST(MoeWorkload, WhatTheWorkloadCannotRunIsNamedOrRefused) {
  ScratchDir d;
  Plan plan = moe_plan();
  plan.model.kv_lora_rank = 512;  // DeepSeek's multi-head latent attention
  const auto gaps = reference_workload_gaps(plan.model);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps.front(), "multi-head latent attention");
  // gpt-oss's block: each part the workload lacks is named.
  Plan oss = moe_plan();
  oss.model.attention_sinks = oss.model.moe_bias = oss.model.activation_clamp = true;
  EXPECT_EQ(reference_workload_gaps(oss.model),
            (std::vector<std::string>{"attention sinks", "biased experts and router", "a clamped SwiGLU"}));
  // Expert parallelism and Megatron-Core's recompute modules: the workload exits saying so
  // (before importing PyTorch), which confirm classifies as a failed run.
  const std::string script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--expert-model-parallel-size", "2"},
        std::vector<std::string>{"--recompute-granularity", "selective", "--recompute-modules", "moe_act"}}) {
    std::vector<std::string> argv = {"python3",  script, "--num-experts", "8", "--deepspeed_config",
                                     "none.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = run_process(argv, d / "out", d / "err", {});
    EXPECT_TRUE(r.exited && r.exit_code == 1) << extra.front();
    EXPECT_NE(test::slurp(d / "err").find("Megatron-LM"), std::string::npos) << test::slurp(d / "err");
  }
}

// A plan priced with the unfused permutation (estimate --moe-permute-fusion off) says so in
// its config ("moe_permute_fusion": false); confirm reads it back and leaves the flag out of
// the arguments, so the workload runs the atomic path that was priced.
TEST(MoeWorkload, PlansCarryTheUnfusedPermutation) {
  ScratchDir d;
  Json j = Json::parse(test::slurp(std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json"));
  j["model"]["experts"] = 8;
  j["model"]["topk"] = 2;
  j["model"]["moe_ffn"] = 128;
  j["model"].erase("params");  // recounted with the experts
  Json& cfg = j["configs"][0];
  cfg["framework"] = "megatron";
  cfg["zero_stage"] = 0;
  cfg["moe_permute_fusion"] = false;
  auto plan = parse_plan(j, "plan.json");
  ASSERT_TRUE(plan) << plan.errors().front().to_string();
  const Candidate& c = plan->candidates.front();
  EXPECT_FALSE(c.cfg.moe_permute_fusion);
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  EXPECT_EQ(workload_args(make_experiment(c, *plan, l, d.path()), "a.num_experts, a.moe_permute_fusion", d),
            "8 False\n");
  cfg.erase("moe_permute_fusion");  // absent: the fused kernels, dsplan's default
  auto fused = parse_plan(j, "plan.json");
  ASSERT_TRUE(fused);
  EXPECT_TRUE(fused->candidates.front().cfg.moe_permute_fusion);
  EXPECT_EQ(workload_args(make_experiment(fused->candidates.front(), *fused, l, d.path()),
                          "a.moe_permute_fusion", d),
            "True\n");
}

// Confirm says, before running Megatron plans through the reference workload, that the
// workload's PyTorch step is not Megatron's (and by how much for an MoE model); DeepSpeed and
// DDP plans, which it runs as priced, get no note, nor Megatron plans beyond the ones run.
TEST(MoeWorkload, MegatronPlansRunByTheWorkloadAreSaidToBeStandIns) {
  Plan plan = moe_plan();
  plan.candidates.resize(2, plan.candidates.front());
  plan.candidates[0].cfg.framework = Framework::ddp;
  plan.candidates[1].cfg.framework = Framework::megatron;
  EXPECT_EQ(reference_workload_note(plan, 1), "");
  const std::string note = reference_workload_note(plan, 2);
  EXPECT_NE(note.find("stands in for Megatron-LM"), std::string::npos) << note;
  EXPECT_NE(note.find("MoE layers ran 1.1-1.7x"), std::string::npos) << note;
  plan.model.experts = 0;  // a dense model: the note without the MoE figure
  EXPECT_EQ(reference_workload_note(plan, 5).find("MoE"), std::string::npos);
  EXPECT_NE(reference_workload_note(plan, 5), "");
}

}  // namespace
}  // namespace dsplan
