// What keeps absurd numbers out of confirm's learning: a measured step outside the physical
// range is a failed run (classify, and the confirm loop end to end), a run far from its
// prediction does not train the residual model, a model whose correction leaves [0.2, 5]
// or that was learned on another cluster is refused, and "dsplan_runs" is read strictly.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "confirm/confirm.h"
#include "confirm/residual_model.h"
#include "confirm/runs_db.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::ScratchDir;
using test::slurp;

ProcessResult exited_ok() {
  ProcessResult r;
  r.started = r.exited = true;
  r.exit_code = 0;
  return r;
}

// A step of 8 samples: throughput t gives a step of 8 / t seconds.
TEST(MeasuredStep, OutsideThePhysicalRangeIsAFailedRun) {
  for (const char* m : {R"({"throughput": 1e-300})",    // 8 / 1e-300 = 8e300 s
                        R"({"throughput": 7.9e-6})",    // 8 / 7.9e-6 = 1.01e6 s > 1e6
                        R"({"throughput": 8.1e6})"}) {  // 8 / 8.1e6 = 9.9e-7 s < 1e-6
    auto c = classify(exited_ok(), std::string(m), "", "", 8);
    EXPECT_EQ(c.outcome, Outcome::failed) << m;
    EXPECT_NE(c.reason.find("outside the physical range [1e-06, 1e+06] s"), std::string::npos) << c.reason;
  }
  EXPECT_NE(
      classify(exited_ok(), std::string(R"({"throughput": 1e-300})"), "", "", 8).reason.find("8e+300 s"),
      std::string::npos);
  // Just inside: 8 / 8.1e-6 = 9.9e5 s and 8 / 7.9e6 = 1.01e-6 s.
  EXPECT_EQ(classify(exited_ok(), std::string(R"({"throughput": 8.1e-6})"), "", "", 8).outcome, Outcome::ok);
  EXPECT_EQ(classify(exited_ok(), std::string(R"({"throughput": 7.9e6})"), "", "", 8).outcome, Outcome::ok);
  Measured m;
  m.throughput = NAN;
  EXPECT_FALSE(measurement_problem(m, 8).empty());
  m.throughput = 100;
  EXPECT_TRUE(measurement_problem(m, 8).empty());
  EXPECT_FALSE(measurement_problem(m, 0).empty());  // no samples: no step
}

// The confirm loop with a workload that reports 1e-300 samples/s: every run fails with the
// reason, none is best, the runs database records them as failed and no model is trained.
TEST(MeasuredStep, AbsurdThroughputNeverTrainsTheResidualModel) {
  ScratchDir d;
  std::ofstream(d / "w.py")
      << "import json, sys\n"
         "ds = json.load(open(sys.argv[sys.argv.index('--deepspeed_config') + 1]))\n"
         "json.dump({'throughput': 1e-300}, open(ds['autotuning']['metric_path'], 'w'))\n";
  auto launch = make_launch_spec({"python3", d / "w.py", "--deepspeed_config", "ds.json"}, {}, "");
  ASSERT_TRUE(launch.ok()) << launch.errors().front().to_string();
  ConfirmOptions o;
  o.top = 3;
  o.results_dir = d / "r";
  o.exps_dir = d / "e";
  o.timeout_s = 20;
  auto rep = run_confirm(test::tiny_plan(), *launch, o);
  ASSERT_TRUE(rep.ok()) << rep.errors().front().to_string();
  ASSERT_EQ(rep->runs.size(), 3u);
  for (const auto& r : rep->runs) {
    EXPECT_EQ(r.result.cls.outcome, Outcome::failed);
    EXPECT_NE(r.result.cls.reason.find("physical range"), std::string::npos) << r.result.cls.reason;
  }
  EXPECT_EQ(rep->best, -1);
  EXPECT_EQ(rep->training_runs, 0);
  EXPECT_FALSE(std::filesystem::exists(d / "r/residual_model.json"));
  const Json db = Json::parse(slurp(d / "r/dsplan_runs.json"));
  for (const auto& r : db["runs"]) EXPECT_EQ(r["outcome"], "failed");
}

// A throughput inside the step range but beyond what the GPUs can compute: the fixture
// predicts 200 samples/s at an MFU m, so 8e6 samples/s would be m x 40,000 of the dense
// peak. The run fails with the percentage; 1.5x the prediction stays ok.
TEST(MeasuredStep, FasterThanThePeakIsAFailedRun) {
  const Plan plan = test::tiny_plan();
  ASSERT_GT(plan.candidates.front().pred.mfu, 0);
  ASSERT_LT(plan.candidates.front().pred.mfu * 1.5, 1.0);
  for (double t : {8e6, 1.5 * plan.candidates.front().pred.samples_per_s}) {
    ScratchDir d;
    std::ofstream(d / "w.py") << "import json, sys\n"
                                 "ds = json.load(open(sys.argv[sys.argv.index('--deepspeed_config') + 1]))\n"
                                 "json.dump({'throughput': "
                              << t << "}, open(ds['autotuning']['metric_path'], 'w'))\n";
    auto launch = make_launch_spec({"python3", d / "w.py", "--deepspeed_config", "ds.json"}, {}, "");
    ASSERT_TRUE(launch.ok());
    ConfirmOptions o;
    o.top = 1;
    o.results_dir = d / "r";
    o.exps_dir = d / "e";
    o.timeout_s = 20;
    auto rep = run_confirm(plan, *launch, o);
    ASSERT_TRUE(rep.ok()) << rep.errors().front().to_string();
    ASSERT_EQ(rep->runs.size(), 1u);
    const auto& cls = rep->runs.front().result.cls;
    if (t > 1e6) {
      EXPECT_EQ(cls.outcome, Outcome::failed);
      EXPECT_NE(cls.reason.find("of the GPUs' dense peak"), std::string::npos) << cls.reason;
    } else {
      EXPECT_EQ(cls.outcome, Outcome::ok) << cls.reason;
    }
  }
}

// Four ok records of the fixture's first configuration (predicted 200 samples/s, 8
// samples a step): ratios 1.0 and 3.9 teach, 4.5 (> 4) and a 1e-300 measurement do not.
TEST(TrainingSet, LeavesOutAbsurdAndFarOffRuns) {
  ScratchDir d;
  const Plan plan = test::tiny_plan();
  const Candidate& c = plan.candidates.front();
  ASSERT_EQ(c.pred.samples_per_s, 200);
  auto loaded = RunsDb::load(d / "runs.json");  // absent: an empty database
  ASSERT_TRUE(loaded.ok());
  RunsDb db = std::move(loaded).value();
  const std::vector<std::pair<std::string, double>> runs = {
      {"ratio1", 200}, {"ratio3.9", 780}, {"ratio4.5", 900}, {"absurd", 1e-300}};
  for (const auto& [name, tput] : runs) {
    Measured m;
    m.throughput = tput;
    db.upsert({plan.cluster_key(), name, plan.model_json, c.source, Outcome::ok, "", m, 0});
  }
  std::vector<FeatureRow> rows;
  std::vector<float> targets;
  std::vector<std::string> left_out;
  db.training_set(plan.cluster_key(), rows, targets, &left_out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(targets[0], 0.0, 1e-6);            // log(200 / 200)
  EXPECT_NEAR(targets[1], std::log(3.9), 1e-6);  // log(780 / 200)
  ASSERT_EQ(left_out.size(), 2u);
  EXPECT_EQ(left_out[0].rfind("ratio4.5: ", 0), 0u) << left_out[0];
  EXPECT_NE(left_out[0].find("outside [0.25, 4]"), std::string::npos) << left_out[0];
  EXPECT_EQ(left_out[1].rfind("absurd: ", 0), 0u) << left_out[1];
}

// A model trained on zero residuals in one round (base score 0), saved to `path` with every
// leaf of its tree set to `leaf`: its prediction, and so its log factor, is `leaf`.
void write_model_with_leaf(const std::string& path, double leaf,
                           const std::string& cluster = "test-node/a100-80gb") {
  const Plan plan = test::tiny_plan();
  std::vector<FeatureRow> rows;
  for (const auto& c : plan.candidates) rows.push_back(residual_features(c.cfg, plan.model, c.pred));
  auto m = ResidualModel::train(rows, std::vector<float>(rows.size(), 0.0f), cluster, 1);
  ASSERT_TRUE(m.ok()) << m.errors().front().to_string();
  ASSERT_TRUE(m->save(path).ok());
  Json doc = Json::parse(slurp(path));
  for (auto& tree : doc["learner"]["gradient_booster"]["model"]["trees"])
    for (size_t i = 0; i < tree["left_children"].size(); ++i)
      if (tree["left_children"][i] == -1) tree["split_conditions"][i] = tree["base_weights"][i] = leaf;
  std::ofstream(path) << doc.dump();
}

// The fixture's configs as estimate writes them (the array apply_residual_model corrects).
Json plan_configs() {
  return Json::parse(slurp(std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json"))["configs"];
}

TEST(ResidualBounds, FactorOutsideTheRangeRefusesTheModel) {
  ScratchDir d;
  const ModelSpec model = test::tiny_plan().model;
  // Leaf 705: exp(705) = 1.5e306, which made samples_per_s infinite; leaf 80: 5.5e34; leaf
  // log(6) = 1.79: factor 6 > 5; leaf log(0.15): factor 0.15 < 0.2.
  for (double leaf : {705.0, 80.0, std::log(6.0), std::log(0.15)}) {
    write_model_with_leaf(d / "m.json", leaf);
    Json configs = plan_configs();
    auto applied = apply_residual_model(d / "m.json", model, configs);
    ASSERT_FALSE(applied.ok()) << leaf;
    EXPECT_NE(applied.errors().front().message.find("outside [0.2, 5]"), std::string::npos)
        << applied.errors().front().message;
    EXPECT_FALSE(configs[0].contains("residual"));  // nothing half-applied
  }
  // Leaf log(4.5): factor 4.5, inside; 200 samples/s predicted become 200 x 4.5 = 900.
  write_model_with_leaf(d / "m.json", std::log(4.5));
  Json configs = plan_configs();
  auto applied = apply_residual_model(d / "m.json", model, configs, false);
  ASSERT_TRUE(applied.ok()) << applied.errors().front().to_string();
  EXPECT_NEAR(configs[0]["residual"]["factor"].get<double>(), 4.5, 1e-4);
  EXPECT_NEAR(configs[0]["residual"]["samples_per_s"].get<double>(), 900, 0.05);
}

TEST(ResidualBounds, ModelFromAnotherClusterIsRefused) {
  ScratchDir d;
  const ModelSpec model = test::tiny_plan().model;
  write_model_with_leaf(d / "m.json", 0.1, "dgx-h100/h100-80gb");
  Json configs = plan_configs();
  auto other = apply_residual_model(d / "m.json", model, configs, true, "dgx-a100/a100-80gb");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.errors().front().json_path, "/learner/attributes/dsplan_cluster");
  EXPECT_NE(other.errors().front().message.find("learned on 'dgx-h100/h100-80gb'"), std::string::npos);
  EXPECT_NE(other.errors().front().hint.find("--hw"), std::string::npos);
  EXPECT_FALSE(configs[0].contains("residual"));
  auto same = apply_residual_model(d / "m.json", model, configs, true, "dgx-h100/h100-80gb");
  ASSERT_TRUE(same.ok()) << same.errors().front().to_string();
  EXPECT_EQ(same->cluster, "dgx-h100/h100-80gb");
  // The key of an estimate's "hardware" is the plan's cluster key.
  const Json plan = Json::parse(slurp(std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json"));
  EXPECT_EQ(cluster_key_of(plan["hardware"]), test::tiny_plan().cluster_key());
  EXPECT_EQ(cluster_key_of(Json::object()), "");
}

TEST(ResidualBounds, TrainingRunsAttributeIsAWholeNumber) {
  ScratchDir d;
  write_model_with_leaf(d / "m.json", 0.1);
  const Json good = Json::parse(slurp(d / "m.json"));
  for (const char* runs : {"-7", "99999999999999999999", "0", "3.5", " 4", ""}) {
    Json bad = good;
    bad["learner"]["attributes"]["dsplan_runs"] = runs;
    std::ofstream(d / "bad.json") << bad.dump();
    auto r = ResidualModel::load(d / "bad.json");
    ASSERT_FALSE(r.ok()) << runs;
    EXPECT_EQ(r.errors().front().json_path, "/learner/attributes/dsplan_runs") << runs;
  }
  Json twelve = good;
  twelve["learner"]["attributes"]["dsplan_runs"] = "12";
  std::ofstream(d / "ok.json") << twelve.dump();
  auto r = ResidualModel::load(d / "ok.json");
  ASSERT_TRUE(r.ok()) << r.errors().front().to_string();
  EXPECT_EQ(r->training_runs(), 12);
  // A number where XGBoost keeps strings is refused by dsplan, not by XGBoost's assertion.
  Json number = good;
  number["learner"]["attributes"]["dsplan_runs"] = 2;
  std::ofstream(d / "num.json") << number.dump();
  auto n = ResidualModel::load(d / "num.json");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.errors().front().json_path, "/learner/attributes/dsplan_runs");
}

// The base score is added to every prediction: "nan" gave every configuration a made-up
// factor of 1.64. Non-finite base scores are refused; a finite one loads.
TEST(ResidualBounds, BaseScoreMustBeFinite) {
  ScratchDir d;
  write_model_with_leaf(d / "m.json", 0.1);
  const Json good = Json::parse(slurp(d / "m.json"));
  ASSERT_TRUE(good["learner"]["learner_model_param"].contains("base_score"));
  for (const char* v : {"nan", "inf", "-inf", "x"}) {
    Json bad = good;
    bad["learner"]["learner_model_param"]["base_score"] = v;
    std::ofstream(d / "bad.json") << bad.dump();
    auto r = ResidualModel::load(d / "bad.json");
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_EQ(r.errors().front().json_path, "/learner/learner_model_param/base_score") << v;
  }
  EXPECT_TRUE(ResidualModel::load(d / "m.json").ok());
}

}  // namespace
}  // namespace dsplan
