// confirm's structural checks of a plan (confirm/plan_check.h): a hand-edited layout that
// the plan's model and GPUs cannot run, an unknown GPU and an empty configuration list are
// each one diagnostic naming the JSON path and the allowed values; the fixture and a
// cluster file's own GPU (written whole by estimate) still load.
#include "confirm/plan_check.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/names.h"
#include "hwdb/hwdb.h"
#include "test_util.h"

namespace dsplan {
namespace {

// The fixture: model gpt-tiny (4 layers, 4 heads, 4 key/value heads) on 2 GPUs; its
// configs[0] is z1 tp1 pp1 dp2 micro_batch 4 grad_accum 1 global_batch 8.
const std::string kFile = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";

Json fixture() { return Json::parse(test::slurp(kFile)); }

// parse_plan of the fixture after `edit`; the one diagnostic it must give.
Diagnostic one_error(const std::function<void(Json&)>& edit) {
  Json j = fixture();
  edit(j);
  auto plan = parse_plan(j, kFile);
  if (plan.ok()) {
    ADD_FAILURE() << "accepted";
    return {};
  }
  EXPECT_EQ(plan.errors().size(), 1u) << plan.errors().back().to_string();
  return plan.errors().front();
}

TEST(PlanCheck, FixtureLoads) {
  auto plan = parse_plan(fixture(), kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_EQ(plan->candidates.size(), 6u);
  EXPECT_EQ(plan->cluster_key(), "test-node/a100-80gb");
}

// tp 3 divides neither the 4 heads nor the 2 GPUs; tp must divide 4, 4 and 2: {1, 2}.
TEST(PlanCheck, TpMustDivideHeadsAndGpus) {
  auto e = one_error([](Json& j) { j["configs"][0]["tp"] = 3; });
  EXPECT_EQ(e.json_path, "/configs/0/tp");
  EXPECT_EQ(e.message, "tp 3 does not divide the 4 attention heads");
  EXPECT_NE(e.hint.find("allowed: 1, 2,"), std::string::npos) << e.hint;
  // tp 4 divides the heads but not the 2 GPUs.
  e = one_error([](Json& j) { j["configs"][0]["tp"] = 4; });
  EXPECT_EQ(e.message, "tp 4 does not divide the plan's 2 GPUs");
}

// dp 64 with tp 1 and pp 1 needs 1 x 1 x 64 = 64 GPUs; the plan has 2, so dp = 2 / (1 x 1) = 2.
// tp 2 keeps dp 2: 2 x 1 x 2 = 4 GPUs; allowed dp = 2 / (2 x 1) = 1.
TEST(PlanCheck, TpPpDpMustUseThePlansGpus) {
  auto e = one_error([](Json& j) { j["configs"][0]["dp"] = 64; });
  EXPECT_EQ(e.json_path, "/configs/0/dp");
  EXPECT_NE(e.message.find("needs 64 GPUs, but the plan is for 2"), std::string::npos) << e.message;
  EXPECT_EQ(e.hint.rfind("allowed: 2,", 0), 0u) << e.hint;
  e = one_error([](Json& j) { j["configs"][0]["tp"] = 2; });
  EXPECT_EQ(e.json_path, "/configs/0/dp");
  EXPECT_NE(e.message.find("needs 4 GPUs"), std::string::npos) << e.message;
  EXPECT_EQ(e.hint.rfind("allowed: 1,", 0), 0u) << e.hint;
  // The same layout on a plan for 4 GPUs is right: 2 x 1 x 2 = 4.
  Json j = fixture();
  j["hardware"]["num_gpus"] = 4;
  for (auto& c : j["configs"]) c["tp"] = 2;
  auto four = parse_plan(j, kFile);
  EXPECT_TRUE(four.ok()) << four.errors().front().to_string();
}

// Context parallelism takes GPUs too: cp 2 with tp 1, pp 1 and dp 2 needs 1 x 1 x 2 x 2 = 4 of
// the plan's 2 (allowed dp = 2 / (1 x 2 x 1) = 1); cp 3 does not divide 2 / tp 1 = 2 GPUs.
TEST(PlanCheck, ContextParallelRanksCount) {
  auto e = one_error([](Json& j) { j["configs"][0]["cp"] = 2; });
  EXPECT_EQ(e.json_path, "/configs/0/dp");
  EXPECT_NE(e.message.find("needs 4 GPUs, but the plan is for 2"), std::string::npos) << e.message;
  EXPECT_EQ(e.hint.rfind("allowed: 1, so that tp x pp x cp x dp", 0), 0u) << e.hint;
  e = one_error([](Json& j) { j["configs"][0]["cp"] = 3; });
  EXPECT_EQ(e.json_path, "/configs/0/cp");
  EXPECT_NE(e.message.find("cp 3 with tp 1 does not divide the plan's 2 GPUs"), std::string::npos)
      << e.message;
}

// pp 5 > 4 layers; pp 2 on 2 GPUs is fine for DeepSpeed (then dp = 2 / 2 = 1), and pp 3
// divides neither the 2 GPUs nor (Megatron) the 4 layers.
TEST(PlanCheck, PpWithinLayersAndGpus) {
  auto e = one_error([](Json& j) { j["configs"][0]["pp"] = 5; });
  EXPECT_EQ(e.json_path, "/configs/0/pp");
  EXPECT_EQ(e.message, "pp 5 exceeds the 4 layers");
  EXPECT_EQ(e.hint, "allowed with tp 1: 1, 2");
  e = one_error([](Json& j) { j["configs"][0]["pp"] = 3; });
  EXPECT_NE(e.message.find("does not divide the 2 GPUs"), std::string::npos) << e.message;
  Json j = fixture();
  j["configs"][0]["pp"] = 2;
  j["configs"][0]["dp"] = 1;
  j["configs"][0]["global_batch"] = 4;                   // 4 x 1 x 1
  j["configs"][0]["throughput"]["samples_per_s"] = 100;  // 4 / 0.04 s
  auto ok = parse_plan(j, kFile);
  EXPECT_TRUE(ok.ok()) << ok.errors().front().to_string();
}

// Megatron's explicit split travels in the plan (estimate writes pp_first_layers and
// pp_last_layers): on the 4 layers, pp 2 takes 1 first and 3 last (nothing between them)
// but not 1 and 2; a plan naming one end alone is refused at that end's path.
TEST(PlanCheck, ExplicitSplitReadAndChecked) {
  Json j = fixture();
  auto& c = j["configs"][0];
  c["framework"] = "megatron";
  c["pp"] = 2;
  c["dp"] = 1;
  c["global_batch"] = 4;
  c["throughput"]["samples_per_s"] = 100;
  c["pp_first_layers"] = 1;
  c["pp_last_layers"] = 3;
  auto ok = parse_plan(j, kFile);
  ASSERT_TRUE(ok.ok()) << ok.errors().front().to_string();
  EXPECT_EQ(ok->candidates.front().cfg.pp_first_layers, 1);
  EXPECT_EQ(ok->candidates.front().cfg.pp_last_layers, 3);
  c["pp_last_layers"] = 2;
  auto bad = parse_plan(j, kFile);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().json_path, "/configs/0/pp");  // pp 2 does not take it
  EXPECT_NE(bad.errors().front().message.find("does not take the plan's split"), std::string::npos)
      << bad.errors().front().message;
  c.erase("pp_last_layers");
  auto one = parse_plan(j, kFile);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.errors().front().json_path, "/configs/0/pp_last_layers");
}

// Interleaving (vpp 2) needs pp >= 2 and pp x vpp dividing the layers (or, Megatron's
// accounted split, the layers + 1 or + 2): pp 2 x vpp 2 = 4 does.
TEST(PlanCheck, VppNeedsPipelineStagesOfWholeLayers) {
  auto e = one_error([](Json& j) { j["configs"][0]["vpp"] = 2; });
  EXPECT_EQ(e.json_path, "/configs/0/vpp");
  EXPECT_EQ(e.message, "vpp 2 needs pp >= 2");
  Json j = fixture();
  j["configs"][0].update({{"framework", "megatron"}, {"pp", 2}, {"dp", 1}, {"vpp", 2}, {"global_batch", 4}});
  j["configs"][0]["throughput"]["samples_per_s"] = 100;  // 4 / 0.04 s
  auto ok = parse_plan(j, kFile);
  EXPECT_TRUE(ok.ok()) << ok.errors().front().to_string();
  // 2 x 4 = 8 chunks divide none of 4, 5 and 6 units (the layers, with the loss and with the
  // embedding counted too). (vpp 3 now fits: 4 + 2 = 6 units, one a chunk.)
  j["configs"][0]["vpp"] = 4;
  auto bad = parse_plan(j, kFile);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().json_path, "/configs/0/vpp");
}

// Megatron's accounted split: 6 layers on pp 4 (4 GPUs, dp 1) divide only as 6 + 2 = 8
// units, 2 a rank, the end ranks holding 1 layer each. A plan without pp_split gets that
// split; "loss" alone (7 units) does not divide into 4. DeepSpeed (Megatron-DeepSpeed's
// 'type:transformer|embedding' partition) counts both embeddings or neither.
TEST(PlanCheck, AccountedPipelineSplit) {
  Json j = fixture();
  j["model"]["layers"] = 6;
  j["model"].erase("params");
  j["hardware"]["num_gpus"] = 4;
  j["configs"] = Json::array({j["configs"][0]});
  j["configs"][0].update({{"framework", "megatron"}, {"pp", 4}, {"dp", 1}, {"global_batch", 4}});
  j["configs"][0]["throughput"]["samples_per_s"] = 100;  // 4 / 0.04 s
  auto derived = parse_plan(j, kFile);
  ASSERT_TRUE(derived.ok()) << derived.errors().front().to_string();
  const TrainConfig& c = derived->candidates.front().cfg;
  EXPECT_TRUE(c.pp_account_embedding && c.pp_account_loss);
  j["configs"][0]["pp_split"] = "embedding+loss";
  EXPECT_TRUE(parse_plan(j, kFile).ok());
  j["configs"][0]["pp_split"] = "loss";
  auto loss = parse_plan(j, kFile);
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.errors().front().json_path, "/configs/0/pp_split");
  j["configs"][0]["pp_split"] = "middle";
  auto unknown = parse_plan(j, kFile);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.errors().front().json_path, "/configs/0/pp_split");
  j["configs"][0]["pp_split"] = "embedding+loss";
  j["configs"][0]["framework"] = "deepspeed";
  EXPECT_TRUE(parse_plan(j, kFile).ok());
  j["configs"][0]["pp_split"] = "loss";
  EXPECT_FALSE(parse_plan(j, kFile).ok());
}

// global_batch 7 is not micro_batch x dp x grad_accum = 4 x 2 x 1 = 8.
TEST(PlanCheck, GlobalBatchIsTheProduct) {
  auto e = one_error([](Json& j) { j["configs"][0]["global_batch"] = 7; });
  EXPECT_EQ(e.json_path, "/configs/0/global_batch");
  EXPECT_EQ(e.message, "7 is not micro_batch x dp x grad_accum = 4 x 2 x 1 = 8");
  EXPECT_EQ(e.hint, "allowed: 8, or leave global_batch out");
  const auto text = one_error([](Json& j) { j["configs"][0]["global_batch"] = "8"; });
  EXPECT_EQ(text.json_path, "/configs/0/global_batch");
  EXPECT_EQ(text.message, "expected an integer, got \"8\"");
  Json j = fixture();
  j["configs"][0].erase("global_batch");  // optional
  EXPECT_TRUE(parse_plan(j, kFile).ok());
}

TEST(PlanCheck, GpuMustBeKnown) {
  auto e = one_error([](Json& j) { j["hardware"]["gpu"]["name"] = "zzz"; });
  EXPECT_EQ(e.json_path, "/hardware/gpu/name");
  EXPECT_NE(e.message.find("\"zzz\""), std::string::npos) << e.message;
  EXPECT_NE(e.hint.find("a100-80gb"), std::string::npos) << e.hint;
  EXPECT_EQ(one_error([](Json& j) { j["hardware"].erase("gpu"); }).json_path, "/hardware/gpu");
  // A cluster file's own GPU, written whole by estimate (gpu_to_json), is known by its keys.
  auto a100 = gpu_preset("a100-80gb");
  ASSERT_TRUE(a100.ok());
  Json j = fixture();
  j["hardware"]["gpu"] = gpu_to_json(*a100);
  j["hardware"]["gpu"]["name"] = "my-a100-300w";
  auto own = parse_plan(j, kFile);
  ASSERT_TRUE(own.ok()) << own.errors().front().to_string();
  EXPECT_EQ(own->cluster_key(), "test-node/my-a100-300w");
  j["hardware"]["gpu"]["sm_count"] = -1;  // ... and checked like a cluster file's
  auto damaged = parse_plan(j, kFile);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.errors().front().json_path, "/hardware/gpu/sm_count");
}

TEST(PlanCheck, EmptyConfigsNamesTheList) {
  auto e = one_error([](Json& j) { j["configs"] = Json::array(); });
  EXPECT_EQ(e.json_path, "/configs");
  EXPECT_NE(e.message.find("is empty"), std::string::npos) << e.message;
}

// Configurations predicted not to fit are not run, so not checked either.
TEST(PlanCheck, ConfigsThatDoNotFitAreNotChecked) {
  Json j = fixture();
  ASSERT_FALSE(j["configs"][7]["fits"].get<bool>());
  j["configs"][7]["tp"] = 3;
  EXPECT_TRUE(parse_plan(j, kFile).ok());
}

// configs[0]: global batch 8 over a step of 0.04 s is 8 / 0.04 = 200 samples/s, as written.
// 300 is 50% off; 201 is within the 1% a hand-rounded value may be.
TEST(PlanCheck, ThroughputMustBeGlobalBatchOverStepTime) {
  auto e = one_error([](Json& j) { j["configs"][0]["throughput"]["samples_per_s"] = 300; });
  EXPECT_EQ(e.json_path, "/configs/0/throughput/samples_per_s");
  EXPECT_EQ(e.message, "300 is not global batch / step_s = 8 / 0.04 = 200");
  Json j = fixture();
  j["configs"][0]["throughput"]["samples_per_s"] = 201;
  EXPECT_TRUE(parse_plan(j, kFile).ok());
}

// 2 GPUs at 8 per node is ceil(2 / 8) = 1 node; 3 is refused. Without gpus_per_node
// nothing is derived, so nodes is not checked.
TEST(PlanCheck, NodesMustFollowFromGpusAndGpusPerNode) {
  auto e = one_error([](Json& j) { j["hardware"]["nodes"] = 3; });
  EXPECT_EQ(e.json_path, "/hardware/nodes");
  EXPECT_EQ(e.message, "3 is not num_gpus / gpus_per_node = 2 / 8 rounded up");
  EXPECT_EQ(e.hint, "allowed: 1, or leave nodes out");
  Json j = fixture();
  j["hardware"].erase("gpus_per_node");
  j["hardware"]["nodes"] = 3;
  EXPECT_TRUE(parse_plan(j, kFile).ok());
}

// A host size must tile the node: 3 does not divide the fixture's 8 GPUs a node, 4 does
// and is kept for the launcher.
TEST(PlanCheck, GpusPerHostMustDivideGpusPerNode) {
  auto e = one_error([](Json& j) { j["hardware"]["gpus_per_host"] = 3; });
  EXPECT_EQ(e.json_path, "/hardware/gpus_per_host");
  EXPECT_EQ(e.message, "3 does not divide gpus_per_node 8");
  Json j = fixture();
  j["hardware"]["gpus_per_host"] = 4;
  auto plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->gpus_per_host, 4);
}

// A plan written back with precision "nvfp4" (estimate's bf16 + NVFP4 linears) reads as bf16
// with NVFP4 linears; "fp8" as bf16 with FP8 linears; a Megatron config at zero_stage 3 is
// Megatron-FSDP.
TEST(PlanCheck, LowPrecisionLinearsAndMegatronFsdpReadBack) {
  Json j = fixture();
  j["configs"][0]["precision"] = "nvfp4";
  j["configs"][0]["framework"] = "megatron";
  j["configs"][0]["zero_stage"] = 3;
  auto plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  const TrainConfig& c = plan->candidates[0].cfg;
  EXPECT_EQ(c.precision, Precision::bf16);
  EXPECT_TRUE(c.nvfp4());
  EXPECT_EQ(c.linear_precision(), Precision::nvfp4);
  EXPECT_TRUE(c.megatron_fsdp());
  EXPECT_EQ(c.cpu_offload_layers, 0);
  j["configs"][0]["cpu_offload_layers"] = 2;  // Megatron's CPU activation offloading
  plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_EQ(plan->candidates[0].cfg.cpu_offload_layers, 2);
  j["configs"][0]["precision"] = "fp8";
  plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_TRUE(plan->candidates[0].cfg.fp8);
  EXPECT_FALSE(plan->candidates[0].cfg.nvfp4());
}

// "tf32" (estimate's fp32 with TF32 matmuls) reads back as fp32 with TrainConfig::tf32.
TEST(PlanCheck, Tf32AndPureBf16ReadBack) {
  Json j = fixture();
  j["configs"][0]["precision"] = "tf32";
  auto plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  const TrainConfig& c = plan->candidates[0].cfg;
  EXPECT_EQ(c.precision, Precision::fp32);
  EXPECT_TRUE(c.tf32);
  EXPECT_EQ(c.gemm_precision(), Precision::tf32);
  // "bf16-pure" (estimate's pure 16-bit model) reads back as bf16 with TrainConfig::pure16.
  j["configs"][0]["precision"] = "bf16-pure";
  j["configs"][0]["framework"] = "fsdp";
  plan = parse_plan(j, kFile);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_EQ(plan->candidates[0].cfg.precision, Precision::bf16);
  EXPECT_TRUE(plan->candidates[0].cfg.pure16_model());
  EXPECT_EQ(precision_flag(plan->candidates[0].cfg), "bf16-pure");
}

}  // namespace
}  // namespace dsplan
