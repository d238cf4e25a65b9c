// DeepEP token dispatch (estimator/time/moe.h deepep_time, docs/model.md §4.11): how many
// nodes and GPUs one token's experts touch, with and without group-limited routing, and
// the dispatch time that follows. Hand-derived numbers below.
#include <gtest/gtest.h>

#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/moe.h"
#include "fixtures.h"

namespace dsplan {
namespace {

// DeepSeek-V3's routing: 256 experts, top-8, 8 groups of 32 of which a token uses 4.
ModelSpec v3(bool groups) {
  ModelSpec m = test::llama_style("v3-route", 8, 7168, 128, 128, 128, 18432, 129280, 4096);
  m.experts = 256;
  m.topk = 8;
  m.moe_ffn = 2048;
  m.shared_ffn = 2048;
  m.moe_groups = groups ? 8 : 0;
  m.moe_group_topk = groups ? 4 : 0;
  return m;
}

TEST(DeepEp, DistinctUnitsWithoutGroups) {
  // 8 nodes of 32 experts: 8 (1 - (7/8)^8) = 8 x 0.656391 = 5.251129.
  EXPECT_NEAR(distinct_units(v3(false), 8), 5.251129, 1e-6);
  EXPECT_DOUBLE_EQ(distinct_units(v3(false), 1), 1.0);
}

TEST(DeepEp, DistinctUnitsWithGroups) {
  // A node per group (8 nodes): the node's group is among the 4 with 4/8, then it gets one
  // of the 8 draws over the 4 groups with 1 - (3/4)^8: 8 x 0.5 x 0.899887 = 3.599548.
  EXPECT_NEAR(distinct_units(v3(true), 8), 3.599548, 1e-6);
  // Two groups a node (4 nodes): x of them selected, hypergeometric: P(1) = 2 x 20 / 70,
  // P(2) = 15 / 70; touched 1 - (3/4)^8 and 1 - (1/2)^8:
  // 4 x (0.571429 x 0.899887 + 0.214286 x 0.996094) = 2.910679.
  EXPECT_NEAR(distinct_units(v3(true), 4), 2.910679, 1e-6);
  // A group over 8 GPUs (64 GPUs): 64 x 4/8 x (1 - (31/32)^8) = 32 x 0.224300 = 7.177604.
  EXPECT_NEAR(distinct_units(v3(true), 64), 7.177604, 1e-6);
}

// DeepSeek-V3 on 64 ranks of 8 DGX H200 nodes, 4096 tokens a rank in bf16: the network
// carries 4096 x 3.599548 x 7/8 copies of 7168 x 2 B (RDMA, the bound) against the
// all-to-all's 4096 x 8 x 56/64.
TEST(DeepEp, DispatchCrossesTheNetworkOncePerNode) {
  const SystemSpec node = test::dgx_h200(false);
  const CollectiveModel c(node, default_efficiency(node.gpu));
  const CommGroup g{64, 8};
  const double row = 7168 * 2.0, tokens = 4096;
  const Seconds lat = c.time(Collective::send_recv, Bytes(1.0), CommGroup{2, 1});
  const double rdma = tokens * 3.599548 * 7.0 / 8.0 * row / c.inter_busbw(1).v;
  const double nvl = tokens * distinct_units(v3(true), 64) * 63.0 / 64.0 * row / c.intra_busbw(8).v;
  ASSERT_GT(rdma, nvl);
  EXPECT_NEAR(deepep_time(c, v3(true), tokens, 2.0, g).v, lat.v + rdma, 1e-9);
  const double a2a = all_to_all_time(c, tokens * 8 * row, g).v;
  EXPECT_LT(deepep_time(c, v3(true), tokens, 2.0, g).v, 0.5 * a2a);
  EXPECT_LT(deepep_time(c, v3(true), tokens, 2.0, g).v, deepep_time(c, v3(false), tokens, 2.0, g).v);
}

// In the step: the layer's all-to-alls (twice each way) shrink with DeepEP.
TEST(DeepEp, StepLayerAllToAlls) {
  const Cluster cl = test::cluster(test::dgx_h200(false), 64);
  const StepTimeModel model(v3(true), cl, default_efficiency(cl.node.gpu));
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 64;
  cfg.ep = 64;
  cfg.seq_len = 4096;
  cfg.flash_attention = true;
  const double nccl = model.costs(cfg).layer.ep_comm_fwd.v;
  cfg.moe_deepep = true;
  const double deepep = model.costs(cfg).layer.ep_comm_fwd.v;
  EXPECT_GT(deepep, 0.0);
  EXPECT_LT(deepep, 0.5 * nccl);
}

}  // namespace
}  // namespace dsplan
