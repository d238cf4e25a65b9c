// confirm's table says where each ok run's measured / predicted step falls against the
// accuracy band estimate stated for its regime (confirm/report.h; the band is read from the
// plan's "evidence", confirm/plan.cc).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "confirm/plan.h"
#include "confirm/report.h"

namespace dsplan {
namespace {

ExperimentRecord run(double predicted_step_s, double measured_samples_per_s, double low, double high) {
  ExperimentRecord r;
  r.cand.cfg.micro_batch = 4;
  r.cand.cfg.grad_accum = 2;
  r.cand.cfg.dp = 2;  // global batch 4 x 2 x 2 = 16 samples
  r.cand.name = "z1_tp1_pp1_gas2_tmbspg4";
  r.cand.pred.step_s = predicted_step_s;
  r.cand.pred.samples_per_s = 16 / predicted_step_s;
  r.cand.pred.regime = "hopper ddp";
  r.cand.pred.band_low = low;
  r.cand.pred.band_high = high;
  r.result.cls.outcome = Outcome::ok;
  r.result.measured.throughput = measured_samples_per_s;
  return r;
}

TEST(ConfirmReport, SaysWhetherTheRunFallsInsideItsRegimesBand) {
  ConfirmReport rep;
  // Predicted 1.0 s; measured 16 / 14.5 = 1.103 s: 1.10x, inside [0.93, 1.21].
  rep.runs.push_back(run(1.0, 14.5, 0.93, 1.21));
  // Measured 16 / 10 = 1.6 s: 1.60x, outside [0.93, 1.21].
  rep.runs.push_back(run(1.0, 10.0, 0.93, 1.21));
  // No band in the plan (a regime never checked): no note.
  rep.runs.push_back(run(1.0, 10.0, 0, 0));
  const std::string t = results_table(rep);
  EXPECT_NE(
      t.find("| measured 1.10x the predicted step, inside the 0.93-1.21 of published and real runs like it "
             "(hopper ddp) |"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("| measured 1.60x the predicted step, outside the 0.93-1.21"), std::string::npos) << t;
  // The third row ends with its corrected-throughput cell ("-") and an empty note.
  EXPECT_NE(t.find("| - |  |\n"), std::string::npos) << t;
}

// The peak memory against its own band, when the workload reported it: predicted 20 GiB
// allocated, measured 20.4: 1.02x, outside [0.99, 1.01].
TEST(ConfirmReport, PeakMemoryIsPlacedAgainstItsBand) {
  ConfirmReport rep;
  rep.runs.push_back(run(1.0, 16.0, 0.93, 1.21));  // 16 / 16 = 1.0 s: 1.00x, inside
  rep.runs.back().cand.pred.allocated_gib = 20.0;
  rep.runs.back().cand.pred.memory_band_low = 0.99;
  rep.runs.back().cand.pred.memory_band_high = 1.01;
  rep.runs.back().result.measured.peak_memory_gib = 20.4;
  const std::string t = results_table(rep);
  EXPECT_NE(t.find("inside the 0.93-1.21 of published and real runs like it (hopper ddp); peak memory 1.02x "
                   "predicted, outside its runs' 0.99-1.01 |"),
            std::string::npos)
      << t;
}

TEST(ConfirmReport, AFailedRunGetsNoBandNote) {
  ConfirmReport rep;
  rep.runs.push_back(run(1.0, 10.0, 0.93, 1.21));
  rep.runs.back().result.cls.outcome = Outcome::oom;
  EXPECT_EQ(results_table(rep).find("published and real runs"), std::string::npos);
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// The plan's "evidence" is read with the config: a band becomes the prediction's, a malformed
// one is an error at its JSON path.
TEST(ConfirmReport, ThePlansBandIsReadAndCheckedWithTheConfig) {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  Json j = Json::parse(ss.str());
  j["configs"][0]["evidence"] = {
      {"regime", "hopper ddp"},
      {"runs", 58},
      {"measured_over_predicted", {0.93, 1.21}},
      {"memory", {{"regime", "hopper ddp"}, {"measured_over_predicted", {0.99, 1.01}}}}};
  auto plan = parse_plan(j, file);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_EQ(plan->candidates[0].pred.regime, "hopper ddp");
  EXPECT_DOUBLE_EQ(plan->candidates[0].pred.band_low, 0.93);
  EXPECT_DOUBLE_EQ(plan->candidates[0].pred.band_high, 1.21);
  EXPECT_DOUBLE_EQ(plan->candidates[0].pred.memory_band_high, 1.01);
  EXPECT_DOUBLE_EQ(plan->candidates[1].pred.band_low, 0);  // no evidence: no band

  j["configs"][0]["evidence"]["measured_over_predicted"] = {1.2, 0.9};  // low above high
  auto bad = parse_plan(j, file);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().json_path, "/configs/0/evidence/measured_over_predicted");
  j["configs"][0]["evidence"]["measured_over_predicted"] = {0.93, 1.21};
  j["configs"][0]["evidence"]["memory"]["measured_over_predicted"] = {0, 1.0};  // not positive
  auto bad_memory = parse_plan(j, file);
  ASSERT_FALSE(bad_memory.ok());
  EXPECT_EQ(bad_memory.errors().front().json_path, "/configs/0/evidence/memory/measured_over_predicted");
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// A plan's "recompute_modules" (estimate --json under selective checkpointing) is read into
// the config; a name that is no module is an error at its path, naming the modules.
TEST(ConfirmPlan, RecomputeModulesAreRead) {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  Json j = Json::parse(ss.str());
  j["configs"][0]["checkpointing"] = "selective";
  j["configs"][0]["recompute_modules"] = {"moe_act", "layernorm"};
  auto plan = parse_plan(j, file);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
  EXPECT_EQ(plan->candidates[0].cfg.recompute_modules,
            module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::layernorm));
  EXPECT_EQ(plan->candidates[1].cfg.recompute_modules, 0);
  j["configs"][0]["recompute_modules"] = {"moe_ac"};
  auto bad = parse_plan(j, file);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors().front().json_path, "/configs/0/recompute_modules");
  EXPECT_NE(bad.errors().front().hint.find("mla_up_proj"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
