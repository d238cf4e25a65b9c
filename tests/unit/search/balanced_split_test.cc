// Megatron's explicit uneven pipeline split as the search derives it where neither the even
// nor an accounted split fits (TrainConfig::set_balanced_split), and as a user pins it
// (--pp-first-layers, --pp-last-layers: pp_problem's reasons). Hand-derived splits below.
#include <gtest/gtest.h>

#include "estimator/search/space.h"
#include "fixtures.h"

namespace dsplan {
namespace {

TrainConfig megatron(int pp, int vpp, int release = 0) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.megatron_release = release;
  c.pp = pp;
  c.vpp = vpp;
  return c;
}

// DeepSeek-V3's 61 layers divide no pipeline degree, nor 62 or 63 beyond 2 (61 is prime;
// 62 = 2 x 31, 63 = 3^2 x 7). On 16 stages: ceil(61 / 16) = 4 on each of the 14 middle
// ones, 61 - 56 = 5 for the ends, 3 first and 2 last, NVIDIA's v25.05 layout. On 8: 8 each
// on 6, 61 - 48 = 13 left, 7 and 6, its v25.05.04 layout. On 4: 16 each on 2, 61 - 32 = 29
// left, 15 and 14.
TEST(BalancedSplit, DeepSeekV3LayoutsOfNvidiasRecipes) {
  for (const auto& [pp, first, last] : {std::tuple{16, 3, 2}, {8, 7, 6}, {4, 15, 14}}) {
    TrainConfig c = megatron(pp, 1);
    ASSERT_TRUE(c.set_pipeline_split(61)) << pp;
    EXPECT_FALSE(c.pp_account_embedding || c.pp_account_loss);
    EXPECT_EQ(c.pp_first_layers, first) << pp;
    EXPECT_EQ(c.pp_last_layers, last) << pp;
  }
  TrainConfig c = megatron(8, 1);
  c.set_pipeline_split(61);
  const TrainConfig::StageLayers s = c.stage_layers(61);
  EXPECT_EQ(s.first, 7);
  EXPECT_EQ(s.middle, 8);
  EXPECT_EQ(s.last, 6);
}

// An MTP module weighs as a layer of the last stage: 61 + 1 = 62 units on 16 stages, 4 on
// each of the 14 middle ones, 6 for the ends: 3 first, 3 - 1 = 2 last (as without it); with
// 3 modules, 64 units split evenly: 4 first and 4 - 3 = 1 last, 4 + 56 + 1 = 61.
TEST(BalancedSplit, MtpModulesWeighOnTheLastStage) {
  TrainConfig one = megatron(16, 1);
  one.mtp_layers = 1;
  ASSERT_TRUE(one.set_pipeline_split(61));
  EXPECT_EQ(one.pp_first_layers, 3);
  EXPECT_EQ(one.pp_last_layers, 2);
  TrainConfig three = megatron(16, 1);
  three.mtp_layers = 3;
  ASSERT_TRUE(three.set_pipeline_split(61));
  EXPECT_EQ(three.pp_first_layers, 4);
  EXPECT_EQ(three.pp_last_layers, 1);
}

// The even and accounted splits come first: 62 = 2 x 31 units with the loss counted.
// No split: 32 stages of 61 layers (2 each on 30 leaves 1 for both ends), interleaving
// (which the search leaves to a pinned split: 8 x 2 chunks would split as 16 stages do),
// DeepSpeed (Megatron's flags) and a Megatron of 2024, which has no explicit split.
TEST(BalancedSplit, OnlyWhereNothingElseFits) {
  TrainConfig two = megatron(2, 1);
  ASSERT_TRUE(two.set_pipeline_split(61));
  EXPECT_TRUE(two.pp_account_loss);
  EXPECT_FALSE(two.explicit_split());
  TrainConfig even = megatron(8, 1);
  ASSERT_TRUE(even.set_pipeline_split(64));
  EXPECT_FALSE(even.explicit_split());
  EXPECT_FALSE(megatron(32, 1).set_pipeline_split(61));
  EXPECT_FALSE(megatron(16, 2).set_pipeline_split(61));
  EXPECT_FALSE(megatron(8, 2).set_pipeline_split(61));
  EXPECT_FALSE(megatron(16, 1, 202406).set_pipeline_split(61));
  TrainConfig ds = megatron(16, 1);
  ds.framework = Framework::deepspeed;
  ASSERT_TRUE(ds.set_pipeline_split(61));  // DeepSpeed's partitioner: ceil(61 / 16) = 4 a stage
  EXPECT_FALSE(ds.explicit_split());
}

// A 61-layer Megatron model on 128 GPUs: the default pipeline degrees are those dividing the
// GPUs with a layer or more a stage, each with its split (32: no end keeps a layer); a
// pinned 3 | .. | 2 split takes 4 (56 middle layers over 2 stages) and 16 (over 14) only,
// and says why the others fail.
TEST(BalancedSplit, SearchedDegreesAndPinnedSplitReasons) {
  const ModelSpec m = test::llama_style("odd61", 61, 1024, 8, 8, 128, 4096, 32000, 4096);
  const Cluster c = test::cluster(test::dgx_a100(), 128);
  SearchSpace s;
  s.run.framework = Framework::megatron;
  EXPECT_EQ(with_defaults(s, m, c).pp, (std::vector<int>{1, 2, 4, 8, 16}));
  s.run.pp_first_layers = 3;
  s.run.pp_last_layers = 2;
  EXPECT_EQ(with_defaults(s, m, c).pp, (std::vector<int>{4, 16}));
  EXPECT_NE(pp_problem(1, m, c, Framework::megatron, 0, 3, 2).find("has no pipeline for the pinned split"),
            std::string::npos);
  // 61 - 5 = 56 layers over 8 - 2 = 6 stages: 9.33 each.
  EXPECT_NE(pp_problem(8, m, c, Framework::megatron, 0, 3, 2).find("the 56 layers between"),
            std::string::npos)
      << pp_problem(8, m, c, Framework::megatron, 0, 3, 2);
  EXPECT_EQ(pp_problem(16, m, c, Framework::megatron, 0, 3, 2), "");
}

}  // namespace
}  // namespace dsplan
