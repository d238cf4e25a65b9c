// FSDP's communication as the step-time model prices it, each from PyTorch's own code:
// hybrid sharding (HSDP) within a node, the fp32 reduction torchtitan and Composer
// configure, FSDP2's copy-out of each all-gather and copy-in of each reduce-scatter, and
// one communicator for ZeRO-3's gathers and reductions (docs/model.md §4.4). Split from
// framework_costs_test.cc, whose other frameworks' tests stay there.
#include <gtest/gtest.h>

#include "estimator/time/operators.h"
#include "estimator/time/optimizer.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::a100_model;
using test::A100Comm;
using test::base_cfg;
using test::gpt_1b;

// FULL_SHARD (zero stage 3) over 16 ranks, bf16, the base configuration otherwise.
TrainConfig fsdp_full_shard_16() {
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::fsdp;
  cfg.zero_stage = 3;
  cfg.dp = 16;
  return cfg;
}

// FSDP hybrid sharding (HYBRID_SHARD / HSDP) on two 8-GPU nodes: parameters are gathered and
// gradients reduce-scattered among a node's 8 ranks over NVLink, then each rank's 1/8
// gradient shard is all-reduced with its replica on the other node (2 ranks, one per
// node). Full sharding runs the same collectives over all 16 ranks, across the NICs.
TEST(StepTime, FsdpHybridShardsWithinANode) {
  const A100Comm a(16);
  TrainConfig cfg = fsdp_full_shard_16();
  const ParallelComm full = a.of(cfg);
  cfg.fsdp_hybrid = true;
  ASSERT_EQ(cfg.shard_degree(8), 8);
  const ParallelComm hybrid = a.of(cfg);
  const StageParams sp = stage_params(a.m, cfg);
  const double g = grad_element_bytes(cfg);  // 2: bf16 gradients
  const double e = 2.0;
  const CommGroup node{8, 8}, replicas{2, 1};
  const Seconds rs = a.coll.time(Collective::reduce_scatter, Bytes(sp.layer * g), node);
  const Seconds ar = a.coll.time(Collective::all_reduce, Bytes(sp.layer * g / 8), replicas);
  EXPECT_NEAR(hybrid.layer_grad_reduce.v, (rs + ar).v, 1e-12);
  const double n = std::ceil(sp.layer_gathered / cfg.zero.prefetch_bucket_elems);
  EXPECT_NEAR(hybrid.layer_param_gather.v,
              (a.coll.time(Collective::all_gather, Bytes(sp.layer_gathered * e / n), node) * n).v, 1e-12);
  EXPECT_LT(hybrid.layer_param_gather.v, full.layer_param_gather.v);  // NVLink, not the NICs
  // Inside one node hybrid and full sharding are the same thing.
  const A100Comm one(8);
  cfg.dp = 8;
  EXPECT_EQ(cfg.shard_degree(8), 8);
  EXPECT_DOUBLE_EQ(one.of(cfg).layer_grad_reduce.v, [&] {
    TrainConfig f = cfg;
    f.fsdp_hybrid = false;
    return one.of(f).layer_grad_reduce.v;
  }());
}

// FSDP with reduce_dtype float32 (torchtitan, Composer's DEFAULT): gradients reduce in 4
// bytes, not 2, and each layer's 16-bit gradient is first cast into the fp32
// reduce-scatter input (read 2, write 4) before the pre-divide runs on it (read 4, write
// 4): 14 B per parameter instead of the 16-bit path's 4 (divide in place, read 2 write
// 2), and one more kernel. gpt_1b, FULL_SHARD over 16 A100s (2 nodes, 8 per node).
TEST(StepTime, FsdpFp32ReduceDoublesTheBytesAndCastsFirst) {
  const A100Comm a(16);
  TrainConfig cfg = fsdp_full_shard_16();
  ASSERT_EQ(grad_element_bytes(cfg), 2.0);
  const ParallelComm bf16 = a.of(cfg);
  cfg.fsdp_reduce_fp32 = true;
  ASSERT_EQ(grad_element_bytes(cfg), 4.0);
  const ParallelComm fp32 = a.of(cfg);
  const StageParams sp = stage_params(a.m, cfg);
  const CommGroup all{16, 8};
  EXPECT_NEAR(fp32.layer_grad_reduce.v, a.coll.time(Collective::reduce_scatter, Bytes(sp.layer * 4.0), all).v,
              1e-12);
  EXPECT_NEAR(bf16.layer_grad_reduce.v, a.coll.time(Collective::reduce_scatter, Bytes(sp.layer * 2.0), all).v,
              1e-12);
  const double bw = a.c.node.gpu.hbm_bw.v * a.eff.hbm_fraction;
  EXPECT_NEAR((fp32.layer_bwd_extra - bf16.layer_bwd_extra).v,
              sp.layer * (14.0 - 4.0) / bw + a.eff.kernel_overhead.v, 1e-12);
  // The parameter all-gather stays bf16.
  EXPECT_DOUBLE_EQ(fp32.layer_param_gather.v, bf16.layer_param_gather.v);
  // The step-time model keys its tables on the setting.
  const StepTimeModel t = a100_model(a.m, 16);
  const Seconds with_fp32 = t.costs(cfg).layer.grad_reduce;
  cfg.fsdp_reduce_fp32 = false;
  EXPECT_LT(t.costs(cfg).layer.grad_reduce.v, 0.6 * with_fp32.v);
}

// FSDP2 (fully_shard) keeps per-parameter tensors: each all-gather is copied out into the
// unsharded parameters (read 2, write 2 B per gathered bf16 parameter, one kernel), in
// forward and, at stage 3 (reshard after forward), again in backward; each reduce-scatter
// input is a chunk_cat copy (read 2, write 2 B per parameter with a bf16 reduce, one
// kernel). FSDP1 instead concatenates the gradients of its parameter views into the flat
// gradient (SplitWithSizesBackward: the same 2 + 2 B and one kernel), so with a bf16
// reduce the backward differs by the copy-out only. With an fp32 reduce FSDP1 casts into
// the fp32 input as well, so FSDP2's backward is the copy-out minus that cat.
// gpt_1b, FULL_SHARD over 16 A100s.
TEST(StepTime, Fsdp2CopiesOutEachGatherAndCopiesInEachReduce) {
  const A100Comm a(16);
  TrainConfig cfg = fsdp_full_shard_16();
  const ParallelComm v1 = a.of(cfg);
  cfg.fsdp_version = 2;
  const ParallelComm v2 = a.of(cfg);
  const StageParams sp = stage_params(a.m, cfg);
  const double bw = a.c.node.gpu.hbm_bw.v * a.eff.hbm_fraction;
  const double k = a.eff.kernel_overhead.v;
  const double copy_out = sp.layer_gathered * 4.0 / bw + k;
  EXPECT_EQ(v1.layer_fwd_extra.v, 0.0);
  EXPECT_NEAR(v2.layer_fwd_extra.v, copy_out, 1e-12);
  const double cat = sp.layer * 4.0 / bw + k;  // chunk_cat in FSDP2, the split's cat in FSDP1
  EXPECT_NEAR((v2.layer_bwd_extra - v1.layer_bwd_extra).v, copy_out, 1e-12);
  // The collectives themselves do not change.
  EXPECT_DOUBLE_EQ(v2.layer_param_gather.v, v1.layer_param_gather.v);
  EXPECT_DOUBLE_EQ(v2.layer_grad_reduce.v, v1.layer_grad_reduce.v);
  // fp32 reduce: both copy into the fp32 input; FSDP1 still runs its cat.
  cfg.fsdp_reduce_fp32 = true;
  const ParallelComm v2_fp32 = a.of(cfg);
  cfg.fsdp_version = 1;
  EXPECT_NEAR((v2_fp32.layer_bwd_extra - a.of(cfg).layer_bwd_extra).v, copy_out - cat, 1e-12);
  // SHARD_GRAD_OP (stage 2) keeps the parameters from forward to backward: one copy-out.
  cfg.fsdp_reduce_fp32 = false;
  cfg.zero_stage = 2;
  const ParallelComm z2_v1 = a.of(cfg);
  cfg.fsdp_version = 2;
  const ParallelComm z2_v2 = a.of(cfg);
  EXPECT_NEAR(z2_v2.layer_fwd_extra.v, copy_out, 1e-12);
  EXPECT_NEAR((z2_v2.layer_bwd_extra - z2_v1.layer_bwd_extra).v, 0.0, 1e-12);  // cat for cat
  // The step-time model keys its tables on the version and puts the copy on the layer.
  const StepTimeModel t = a100_model(a.m, 16);
  cfg.zero_stage = 3;
  const Seconds fwd2 = t.costs(cfg).layer.fwd;
  cfg.fsdp_version = 1;
  EXPECT_NEAR((fwd2 - t.costs(cfg).layer.fwd).v, copy_out, 1e-12);
}

// ZeRO-3 / FSDP gather and reduce on one communicator (StepCosts::gather_shares_reduce);
// ZeRO-1 gathers nothing per layer. Hybrid sharding shares it too, and names the part of
// each reduction that then all-reduces across the replicas on their own group.
TEST(StepTime, Zero3GathersShareTheReductionsCommunicator) {
  const StepTimeModel t = a100_model(gpt_1b(), 16);
  TrainConfig cfg = fsdp_full_shard_16();
  EXPECT_TRUE(t.costs(cfg).gather_shares_reduce);
  cfg.framework = Framework::deepspeed;
  cfg.zero.overlap_comm = -1;  // DeepSpeed's stage-3 default overlaps
  EXPECT_TRUE(t.costs(cfg).gather_shares_reduce);
  cfg.zero_stage = 1;
  EXPECT_FALSE(t.costs(cfg).gather_shares_reduce);
  cfg = fsdp_full_shard_16();
  EXPECT_EQ(t.costs(cfg).layer.grad_reduce_replica.v, 0.0);
  EXPECT_EQ(t.costs(cfg).grad_reduce_tail_replica.v, 0.0);
  cfg.fsdp_hybrid = true;
  const StepCosts hybrid = t.costs(cfg);
  EXPECT_TRUE(hybrid.gather_shares_reduce);
  EXPECT_GT(hybrid.layer.grad_reduce_replica.v, 0.0);
  EXPECT_LT(hybrid.layer.grad_reduce_replica.v, hybrid.layer.grad_reduce.v);
  EXPECT_GT(hybrid.grad_reduce_tail_replica.v, 0.0);
  EXPECT_LT(hybrid.grad_reduce_tail_replica.v, hybrid.grad_reduce_tail.v);
}

}  // namespace
}  // namespace dsplan
