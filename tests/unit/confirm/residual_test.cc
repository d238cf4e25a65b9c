// The XGBoost residual model: on recorded runs with a systematic bias (ZeRO-3 and small
// micro-batches slower than predicted, full recompute faster) the corrected ranking of
// held-out configurations agrees better with the measured one; save/load round trips;
// apply_residual_model annotates and re-sorts an estimate's configs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "confirm/residual_model.h"
#include "fixtures.h"
#include "test_util.h"

namespace dsplan {
namespace {

struct Synthetic {
  TrainConfig cfg;
  Prediction pred;
  double measured = 0;
};

ModelSpec model() { return test::gpt("gpt-1b", 24, 2048, 16, 2048, 50257, 1); }

// 4 stages x 4 micro-batches x 2 recompute x 2 TP = 64 configurations.
std::vector<Synthetic> synthetic_runs() {
  std::vector<Synthetic> out;
  int i = 0;
  for (int stage = 0; stage <= 3; ++stage)
    for (int mbs : {1, 2, 4, 8})
      for (bool full : {false, true})
        for (int tp : {1, 2}) {
          Synthetic s;
          s.cfg.zero_stage = stage;
          s.cfg.micro_batch = mbs;
          s.cfg.tp = tp;
          s.cfg.dp = 8 / tp;
          s.cfg.seq_len = 2048;
          s.cfg.checkpointing = full ? Checkpointing::full : Checkpointing::none;
          double p = 100.0 * mbs / (mbs + 0.5) * (full ? 0.75 : 1.0) * (tp == 2 ? 0.9 : 1.0) * (1 - 0.02 * stage);
          s.pred.samples_per_s = p;
          s.pred.step_s = mbs * s.cfg.dp / p;
          s.pred.compute_s = 0.8 * s.pred.step_s;
          s.pred.comm_exposed_s = 0.1 * s.pred.step_s;
          s.pred.optimizer_s = 0.1 * s.pred.step_s;
          s.pred.allocated_gib = 10 + 3.0 * mbs / (full ? 4 : 1);
          s.pred.activations_gib = 3.0 * mbs / (full ? 4 : 1);
          // The systematic bias the estimator missed, plus +-2% deterministic noise.
          double bias = (stage == 3 ? 0.6 : 1.0) * (full ? 1.15 : 1.0) * (mbs == 1 ? 0.8 : 1.0);
          s.measured = p * bias * (1 + 0.02 * std::sin(1.7 * i++));
          out.push_back(s);
        }
  return out;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t k = 0; k < idx.size(); ++k) r[idx[k]] = static_cast<double>(k);
  return r;
}

// Spearman rank correlation (no ties in these data).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size()), d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

TEST(ResidualModel, LearnsASystematicBiasAndImprovesTheRanking) {
  auto runs = synthetic_runs();
  std::vector<FeatureRow> train_x, test_x;
  std::vector<float> train_y;
  std::vector<const Synthetic*> held_out;
  for (size_t i = 0; i < runs.size(); ++i) {
    FeatureRow f = residual_features(runs[i].cfg, model(), runs[i].pred);
    if (i % 2 == 0) {
      train_x.push_back(f);
      train_y.push_back(static_cast<float>(std::log(runs[i].measured / runs[i].pred.samples_per_s)));
    } else {
      test_x.push_back(f);
      held_out.push_back(&runs[i]);
    }
  }
  auto m = ResidualModel::train(train_x, train_y, "test/a100");
  ASSERT_TRUE(m.ok()) << m.errors().front().to_string();
  auto logs = m->predict(test_x);
  ASSERT_TRUE(logs.ok());
  std::vector<double> predicted, corrected, measured;
  for (size_t k = 0; k < held_out.size(); ++k) {
    predicted.push_back(held_out[k]->pred.samples_per_s);
    corrected.push_back(held_out[k]->pred.samples_per_s * std::exp((*logs)[k]));
    measured.push_back(held_out[k]->measured);
  }
  const double before = spearman(predicted, measured), after = spearman(corrected, measured);
  EXPECT_GT(after, before + 0.1) << "before " << before << " after " << after;
  EXPECT_GT(after, 0.9);
}

TEST(ResidualModel, SaveLoadRoundTripAndApply) {
  test::ScratchDir d;
  auto runs = synthetic_runs();
  std::vector<FeatureRow> x;
  std::vector<float> y;
  for (const auto& r : runs) {
    x.push_back(residual_features(r.cfg, model(), r.pred));
    y.push_back(static_cast<float>(std::log(r.measured / r.pred.samples_per_s)));
  }
  auto m = ResidualModel::train(x, y, "test/a100");
  ASSERT_TRUE(m.ok());
  const std::string path = d / "residual.json";
  ASSERT_TRUE(m->save(path).ok());
  EXPECT_FALSE(m->save(d / "residual.bin").ok());  // the JSON format is chosen by the name
  auto back = ResidualModel::load(path);
  ASSERT_TRUE(back.ok()) << back.errors().front().to_string();
  EXPECT_EQ(back->training_runs(), 64);
  EXPECT_EQ(back->cluster(), "test/a100");
  auto a = m->predict(x), b = back->predict(x);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ((*a)[i], (*b)[i]);

  // An estimate's configs (a ZeRO-3 config predicted best, a ZeRO-1 one second).
  auto cfg_json = [](int stage, double sps) {
    return Json{{"zero_stage", stage}, {"tp", 1}, {"pp", 1}, {"dp", 8}, {"micro_batch", 4}, {"grad_accum", 1},
                {"seq_len", 2048}, {"checkpointing", "none"}, {"fits", true},
                {"memory", {{"allocated_gib", 22.0}}},
                {"time", {{"step_s", 32 / sps}, {"compute_s", 0.8 * 32 / sps}}},
                {"throughput", {{"samples_per_s", sps}, {"mfu", 0.4}}}};
  };
  Json configs = Json::array({cfg_json(3, 95), cfg_json(1, 90)});
  auto applied = apply_residual_model(path, model(), configs);
  ASSERT_TRUE(applied.ok()) << applied.errors().front().to_string();
  EXPECT_EQ(applied->configs, 2);
  EXPECT_EQ(applied->training_runs, 64);
  EXPECT_EQ(configs[0]["zero_stage"], 1);  // ZeRO-3 measured ~0.6x: it drops to second
  EXPECT_LT(configs[1]["residual"]["factor"].get<double>(), 0.8);
  EXPECT_NEAR(configs[1]["residual"]["samples_per_s"].get<double>(),
              95 * configs[1]["residual"]["factor"].get<double>(), 1e-9);
}

TEST(ResidualModel, BadInputsAreDiagnostics) {
  test::ScratchDir d;
  std::ofstream(d / "junk.json") << "{\"not\": \"a model\"}";
  EXPECT_FALSE(ResidualModel::load(d / "junk.json").ok());
  EXPECT_FALSE(ResidualModel::load(d / "missing.json").ok());
  EXPECT_FALSE(ResidualModel::train({}, {}, "x").ok());
  auto wrong = ResidualModel::train({{1.0f, 2.0f}}, {0.1f}, "x");
  EXPECT_FALSE(wrong.ok());
}

// XGBoost's loader trusts a tree's indices: a damaged file used to crash dsplan (SIGSEGV,
// "double free"; found by fuzzing). Each damage below is refused with a diagnostic at its
// JSON pointer before XGBoost reads the file, and the undamaged file still loads.
TEST(ResidualModel, DamagedFileIsRefusedBeforeXgboostReadsIt) {
  test::ScratchDir d;
  std::vector<FeatureRow> x;
  std::vector<float> y;
  for (const auto& r : synthetic_runs()) {
    x.push_back(residual_features(r.cfg, model(), r.pred));
    y.push_back(static_cast<float>(std::log(r.measured / r.pred.samples_per_s)));
  }
  auto m = ResidualModel::train(x, y, "test/a100");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->save(d / "good.json").ok());
  ASSERT_TRUE(ResidualModel::load(d / "good.json").ok());
  const Json good = Json::parse(test::slurp(d / "good.json"));
  const std::string gbm = "/learner/gradient_booster/model";
  const std::vector<std::pair<std::string, Json>> damage = {
      {gbm + "/tree_info", Json::array()},           {gbm + "/tree_info/0", -1},
      {gbm + "/trees/0/split_indices/0", -1},        {gbm + "/trees/0/split_indices/0", 99999999},
      {gbm + "/trees/0/split_type", Json::array()},  {gbm + "/trees/0/left_children/0", 0},
      {gbm + "/gbtree_model_param", Json::object()}, {"/learner/learner_model_param/num_feature", "3"},
  };
  for (const auto& [pointer, value] : damage) {
    Json bad = good;
    bad[Json::json_pointer(pointer)] = value;
    std::ofstream(d / "bad.json") << bad.dump();
    auto r = ResidualModel::load(d / "bad.json");
    ASSERT_FALSE(r.ok()) << pointer;
    // The diagnostic points at the damaged part, the object holding it, or a key inside it.
    const std::string& at = r.errors().front().json_path;
    EXPECT_TRUE(pointer.rfind(at, 0) == 0 || at.rfind(pointer, 0) == 0) << pointer << " vs " << at;
  }
}

// A plan's block-recompute configuration carries its depth; without it the plan is refused.
TEST(PlanFile, BlockRecomputeNeedsItsDepth) {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  Json j = Json::parse(test::slurp(file));
  j["configs"][0]["checkpointing"] = "block";
  auto missing = parse_plan(j, file);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.errors().front().to_string().find("recompute_layers"), std::string::npos);
  j["configs"][0]["recompute_layers"] = 3;
  auto ok = parse_plan(j, file);
  ASSERT_TRUE(ok.ok()) << ok.errors().front().to_string();
  EXPECT_EQ(ok->candidates.front().cfg.checkpointing, Checkpointing::block);
  EXPECT_EQ(ok->candidates.front().cfg.recompute_layers, 3);
}

// "grad_reduce_in_fp32" is one key with two meanings: Megatron's fp32 gradient buffer
// (estimate writes false when off) and FSDP's fp32 reduce_dtype (written true when on).
TEST(PlanFile, GradReduceKeyFollowsTheFramework) {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  Json j = Json::parse(test::slurp(file));
  j["configs"][0]["framework"] = "fsdp";
  j["configs"][0]["grad_reduce_in_fp32"] = true;
  auto fsdp = parse_plan(j, file);
  ASSERT_TRUE(fsdp.ok()) << fsdp.errors().front().to_string();
  EXPECT_TRUE(fsdp->candidates.front().cfg.fsdp_reduce_fp32);
  EXPECT_TRUE(fsdp->candidates.front().cfg.megatron_fp32_grads);  // untouched
  j["configs"][0]["framework"] = "megatron";
  j["configs"][0]["grad_reduce_in_fp32"] = false;
  auto meg = parse_plan(j, file);
  ASSERT_TRUE(meg.ok()) << meg.errors().front().to_string();
  EXPECT_FALSE(meg->candidates.front().cfg.megatron_fp32_grads);
  EXPECT_FALSE(meg->candidates.front().cfg.fsdp_reduce_fp32);
}

// estimate writes "fsdp_version": 2 for FSDP2 plans only; confirm reads it back (1 when
// absent) and rejects any other value.
TEST(PlanFile, FsdpVersionIsReadBack) {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  Json j = Json::parse(test::slurp(file));
  j["configs"][0]["framework"] = "fsdp";
  auto absent = parse_plan(j, file);
  ASSERT_TRUE(absent.ok()) << absent.errors().front().to_string();
  EXPECT_EQ(absent->candidates.front().cfg.fsdp_version, 1);
  j["configs"][0]["fsdp_version"] = 2;
  auto two = parse_plan(j, file);
  ASSERT_TRUE(two.ok()) << two.errors().front().to_string();
  EXPECT_EQ(two->candidates.front().cfg.fsdp_version, 2);
  j["configs"][0]["fsdp_version"] = 3;
  auto bad = parse_plan(j, file);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors().front().to_string().find("fsdp_version"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
