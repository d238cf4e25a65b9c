// Megatron's CPU activation offloading (TrainConfig::cpu_offload_layers; docs/model.md §4.5
// "Activation offloading"): the first N layers' saved activations go to host memory after
// their forward and come back before their backward, over the host link, beside the next
// layer's compute. Memory keeps the other layers and one in transit; the host holds the N;
// time pays what a copy outlasts a layer's pass. Megatron only, pp 1, no recompute.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/ds_config.h"
#include "estimator/memory.h"
#include "estimator/search/space.h"
#include "estimator/step_time.h"
#include "estimator/time/efficiency_defaults.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

TrainConfig megatron_run(int offload) {
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.zero_stage = 1;
  cfg.seq_len = 2048;
  cfg.micro_batch = 2;
  cfg.flash_attention = true;
  cfg.cpu_offload_layers = offload;
  return cfg;
}

// 8 layers, 6 offloaded: the GPU keeps 8 - 6 + 1 = 3 layers' saved activations instead of
// 8, so 5 x the layer's bytes fewer; the host holds 6 x them for each of the node's 8 GPUs.
TEST(ActivationOffload, MemoryMovesTheLayersToTheHost) {
  const ModelSpec m = test::gpt("gpt-4096", 8, 4096, 32, 2048, 50257, 128);
  const MemoryModel mm(m, test::cluster(test::dgx_h200(true), 8));
  const double layer = layer_saved_activation_bytes(m, megatron_run(0));
  ASSERT_GT(layer, 0.0);
  const MemoryBreakdown kept = mm.estimate(megatron_run(0)), off = mm.estimate(megatron_run(6));
  EXPECT_NEAR(kept.activations.v - off.activations.v, 5.0 * layer, 1.0);
  EXPECT_NEAR(off.host.v - kept.host.v, 6.0 * layer * 8, 1.0);
}

// The copy of a layer's activations over the H200's PCIe Gen5 host link (63 GB/s x 0.84)
// against its forward and backward: each pass of the rank's 8 layers carries 6/8 of what
// the copy outlasts it by.
TEST(ActivationOffload, ExposedCopyIsWhatOutlastsThePass) {
  const ModelSpec m = test::gpt("gpt-4096", 8, 4096, 32, 2048, 50257, 128);
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  const Efficiency eff = default_efficiency(c.node.gpu);
  const StepTimeModel tm(m, c, eff);
  const StepCosts base = tm.costs(megatron_run(0)), off = tm.costs(megatron_run(6));
  const double copy = layer_saved_activation_bytes(m, megatron_run(6)) / (63e9 * eff.pcie_fraction);
  const double fwd = (base.layer.fwd + base.layer.tp_comm_fwd).v,
               bwd = (base.layer.bwd + base.layer.tp_comm_bwd).v;
  EXPECT_GT(copy, fwd);  // a slow link: the forward waits
  EXPECT_NEAR((off.layer.fwd - base.layer.fwd).v, 0.75 * std::max(0.0, copy - fwd), 1e-9);
  EXPECT_NEAR((off.layer.bwd - base.layer.bwd).v, 0.75 * std::max(0.0, copy - bwd), 1e-9);
  EXPECT_GT(tm.estimate(megatron_run(6)).step.v, tm.estimate(megatron_run(0)).step.v);
}

// Megatron-Core's rules: Megatron only, no pipeline parallelism, no recompute, fewer
// layers than the model has.
TEST(ActivationOffload, MegatronRulesAreReasons) {
  const ModelSpec m = test::gpt("gpt-4096", 8, 4096, 32, 2048, 50257, 128);
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  SearchSpace s;
  s.run = megatron_run(4);
  TrainConfig cfg;
  auto why = [&](int pp, Checkpointing ck) {
    const auto w = make_config(s, m, c, 1, 1, pp, 1, 1, 1, 1, ck, true, false, Offload::none, cfg);
    std::string all;
    for (const auto& x : w) all += x + "; ";
    return all;
  };
  EXPECT_EQ(why(1, Checkpointing::none), "");
  EXPECT_NE(why(2, Checkpointing::none).find("no pipeline parallelism"), std::string::npos);
  EXPECT_NE(why(1, Checkpointing::full).find("excludes recompute"), std::string::npos);
  s.run.cpu_offload_layers = 8;
  EXPECT_NE(why(1, Checkpointing::none).find("fewer layers than the model's 8"), std::string::npos);
  s.run.cpu_offload_layers = 4;
  s.run.framework = Framework::deepspeed;
  EXPECT_NE(why(1, Checkpointing::none).find("is Megatron's"), std::string::npos);
}

TEST(ActivationOffload, MegatronArgumentNamesTheLayers) {
  const auto a = megatron_args(megatron_run(20), test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128));
  const auto at = std::find(a.begin(), a.end(), "--cpu-offloading-num-layers");
  ASSERT_NE(at, a.end());
  ASSERT_NE(at + 1, a.end());
  EXPECT_EQ(*(at + 1), "20");
  const auto none = megatron_args(megatron_run(0), test::gpt("gpt-4096", 32, 4096, 32, 2048, 50257, 128));
  EXPECT_EQ(std::find(none.begin(), none.end(), "--cpu-offloading-num-layers"), none.end());
}

}  // namespace
}  // namespace dsplan
