// Megatron-FSDP (TrainConfig::megatron_fsdp: Megatron at stage 3, Megatron-Core's
// --use-megatron-fsdp with optim_grads_params; docs/model.md §4.4 "Megatron-FSDP"): the
// search takes stage 3 under Megatron and still refuses stage 2, each layer is gathered in
// one all-gather (in FP8 with FP8 parameter gather), the gradients reduce-scatter every
// micro-batch, overlapped, and the emitted arguments name it.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/ds_config.h"
#include "estimator/search/space.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/parallel_comm.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

TEST(MegatronFsdp, StageThreeTakenStageTwoRefused) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  const Cluster c = test::cluster(test::dgx_h200(true), 8);
  SearchSpace s;
  s.run.framework = Framework::megatron;
  TrainConfig cfg;
  EXPECT_TRUE(make_config(s, m, c, 3, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg)
                  .empty());
  EXPECT_TRUE(cfg.megatron_fsdp());
  const auto why =
      make_config(s, m, c, 2, 1, 1, 1, 1, 1, 1, Checkpointing::none, true, false, Offload::none, cfg);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.front().find("optim_grads strategy is not modelled"), std::string::npos);
}

// A layer of 12 h^2 + 13 h = 201,379,840 parameters (h 4096, biases, two LayerNorms) on 8
// H200s: Megatron-FSDP gathers it in one all-gather of its bf16 bytes, 402,759,680 B (the
// layer's gathered part: all but persistent small tensors), or with FP8 parameter gather
// of its 1-byte copy; the gradients reduce-scatter once per layer every micro-batch, in
// fp32 (Megatron's main grads), overlapped with compute and prefetched.
TEST(MegatronFsdp, OneGatherPerLayerInFp8WithFp8ParameterGather) {
  const ModelSpec m = test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128);
  const SystemSpec node = test::dgx_h200(true);
  const Efficiency eff = default_efficiency(node.gpu);
  const CollectiveModel coll(node, eff);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.seq_len = 2048;
  cfg.zero_stage = 3;
  const StageParams sp = stage_params(m, cfg);
  const CommGroup dp = place(cfg, node).dp_shard;
  const ParallelComm bf = parallel_comm(m, cfg, node, node.gpu, eff, coll);
  EXPECT_NEAR(in_us(bf.layer_param_gather),
              in_us(coll.time(Collective::all_gather, Bytes(sp.layer_gathered * 2.0), dp)), 1e-6);
  EXPECT_NEAR(in_us(bf.layer_grad_reduce),
              in_us(coll.time(Collective::reduce_scatter, Bytes(sp.layer * 4.0), dp)), 1e-6);
  EXPECT_TRUE(bf.overlap);
  EXPECT_TRUE(bf.prefetch);
  EXPECT_TRUE(bf.every_micro_batch);
  EXPECT_DOUBLE_EQ(bf.param_allgather.v, 0.0);  // no post-step gather: the layers gather
  cfg.fp8 = true;
  const ParallelComm f8 = parallel_comm(m, cfg, node, node.gpu, eff, coll);
  EXPECT_NEAR(in_us(f8.layer_param_gather),
              in_us(coll.time(Collective::all_gather, Bytes(sp.layer_gathered * 1.0), dp)), 1e-6);
  EXPECT_LT(f8.layer_param_gather.v, bf.layer_param_gather.v);
}

// The plan's Megatron arguments: the distributed optimizer (Megatron-FSDP v1 runs on it),
// --use-megatron-fsdp with optim_grads_params, its checkpoint format, and the overlaps
// the price assumes.
TEST(MegatronFsdp, ArgumentsNameIt) {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.precision = Precision::bf16;
  c.zero_stage = 3;
  c.dp = 8;
  c.seq_len = 2048;
  const auto a = megatron_args(c, test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128));
  auto has = [&](const std::string& x) { return std::find(a.begin(), a.end(), x) != a.end(); };
  EXPECT_TRUE(has("--use-distributed-optimizer"));
  EXPECT_TRUE(has("--use-megatron-fsdp"));
  const auto at = std::find(a.begin(), a.end(), "--data-parallel-sharding-strategy");
  ASSERT_NE(at, a.end());
  ASSERT_NE(at + 1, a.end());
  EXPECT_EQ(*(at + 1), "optim_grads_params");
  EXPECT_TRUE(has("fsdp_dtensor"));
  EXPECT_TRUE(has("--overlap-grad-reduce"));
  EXPECT_TRUE(has("--overlap-param-gather"));
  c.zero_stage = 1;
  const auto b = megatron_args(c, test::gpt("gpt-4096", 4, 4096, 32, 2048, 50257, 128));
  EXPECT_EQ(std::find(b.begin(), b.end(), "--use-megatron-fsdp"), b.end());
}

}  // namespace
}  // namespace dsplan
