// Mixture-of-experts pricing (docs/model.md §4.11): the routed experts' grouped GEMMs and how
// expert parallelism shapes them, the all-to-all time, the TP collectives an MoE layer keeps,
// the experts' model states over the expert data-parallel ranks, and the search's rules.
// Hand-derived numbers below.
#include "estimator/time/moe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "estimator/memory.h"
#include "estimator/params.h"
#include "estimator/search/space.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "estimator/time/op_dims.h"
#include "estimator/time/operators.h"
#include "estimator/time/parallel_comm.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// A Mixtral-8x7B-shaped decoder: 32 layers, h 4096, 32 heads of 128, 8 KV heads, 8 experts
// of a 14336-wide SwiGLU MLP, top-2, no biases, RMSNorm, rotary, vocabulary 32000 untied.
ModelSpec mixtral() {
  ModelSpec m = test::llama_style("mixtral-test", 32, 4096, 32, 8, 128, 14336, 32000, 32768);
  m.experts = 8;
  m.topk = 2;
  m.moe_ffn = 14336;
  return m;
}

OpKey key(int tp, int ep) { return test::megatron_key(tp, ep); }

// Parameters: attention 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 41,943,040; router
// 4096 x 8 = 32,768; experts 8 x 3 x 4096 x 14336 = 1,409,286,144; norms 2 x 4096. A token
// runs 2 of the 8 experts: 3 x 4096 x 14336 x 2 = 352,321,536 of them.
TEST(Moe, ParameterCountsSplitTheExperts) {
  const ModelSpec m = mixtral();
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.attention, 41943040);
  EXPECT_EQ(c.router, 32768);
  EXPECT_EQ(c.experts, 1409286144);
  EXPECT_EQ(c.mlp, 0);
  EXPECT_EQ(c.per_layer(), 41943040 + 32768 + 1409286144 + 8192);
  // matmul weights a token runs in a layer: attention + router + two experts.
  EXPECT_DOUBLE_EQ(matmul_params_per_layer(m), 41943040.0 + 32768.0 + 352321536.0);
  EXPECT_EQ(total_params(m) - active_params(m), std::int64_t{32} * 6 * 3 * 4096 * 14336);
}

// The layer's linear GEMMs, priced one by one. T = 4096 tokens, routed copies 4096 x 2 =
// 8192. ep 1: 8 local experts of 1 x 8192 / 8 = 1024 tokens each (batch 8); ep 8: one local
// expert of 8 x 8192 / 8 = 8192 tokens. Either way the experts' FLOPs are the same.
TEST(Moe, ExpertGemmsTakeTheirTokensFromExpertParallelism) {
  const ModelSpec m = mixtral();
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  auto lin = [&](double rows, double n, double k, double batch) {
    return estimate_gemm(GemmShape{.m = rows, .n = n, .k = k, .batch = batch, .m_free = true},
                         Precision::bf16, gpu, eff)
        .time.v;
  };
  for (int ep : {1, 8}) {
    const double per_expert = ep * 8192.0 / 8, local = 8.0 / ep;
    const double expected = lin(4096, 4096 + 2 * 1024, 4096, 1) + lin(4096, 4096, 4096, 1) +
                            lin(4096, 8, 4096, 1) + lin(per_expert, 2 * 14336, 4096, local) +
                            lin(per_expert, 4096, 14336, local);
    const OpCosts o = operator_costs(m, gpu, eff, key(1, ep));
    EXPECT_NEAR(o.fwd_linear.v, expected, 1e-12) << "ep " << ep;
  }
  const OpCosts a = operator_costs(m, gpu, eff, key(1, 1)), b = operator_costs(m, gpu, eff, key(1, 8));
  EXPECT_DOUBLE_EQ(a.fwd_flops_hw.v, b.fwd_flops_hw.v);
  EXPECT_DOUBLE_EQ(a.bwd_flops_hw.v, b.bwd_flops_hw.v);
}

// The unfused permutation (--moe-permute-fusion off): the copies' sum into the tokens (a
// scatter_add_ forward) and the backward of the row gather (an index_add) become atomic row
// additions, each over the layer's 4096 x 2 = 8192 copies of 4096 elements (33,554,432) and
// 100,663,296 bytes (copies 8192 x 8192 B read, tokens 4096 x 8192 B written), which stream
// in t_s = 100,663,296 / (4.8e12 x 0.89) = 23.56 us. On an H200:
//   forward, scatter_add_ at 1.0 element per SM clock: t_i = 33,554,432 / (1.0 x 132 x
//   1.98e9) = 128.38 us, the pass cbrt(t_s^3 + t_i^3) = 128.65 us, 105.08 us more;
//   backward, index_add at 0.48: t_i = 267.47 us, the pass 267.53 us, 243.96 us more.
// The A100 has no measured atomic rate: the same passes are priced as streams there.
TEST(Moe, UnfusedPermutationAddsRowsWithAtomics) {
  const ModelSpec m = mixtral();
  for (const bool hopper : {true, false}) {
    const GpuSpec gpu = hopper ? test::h200() : test::a100();
    const Efficiency eff = default_efficiency(gpu);
    OpKey atomic = key(1, 1);
    atomic.permute_atomic = true;
    const OpCosts fused = operator_costs(m, gpu, eff, key(1, 1)),
                  unfused = operator_costs(m, gpu, eff, atomic);
    EXPECT_NEAR((unfused.fwd - fused.fwd).v, hopper ? 105.08e-6 : 0.0, 0.02e-6) << gpu.name;
    EXPECT_NEAR((unfused.bwd - fused.bwd).v, hopper ? 243.96e-6 : 0.0, 0.02e-6) << gpu.name;
  }
}

// FP8 expert GEMMs run on rows padded to the quantization's alignment (Megatron-Core's
// Fp8Padding): 384 experts (Kimi K2's count) of this Mixtral shape, top-8, at ep 64: each
// rank routes 4096 x 8 = 32,768 copies and each expert receives 64 x 32,768 / 384 =
// 5,461.33 of them on average, run as 5,472 (16 x 342) in FP8 and 5,472 (32 x 171) in
// MXFP8; bf16 keeps the average (its token dimension needs no alignment).
TEST(Moe, Fp8ExpertRowsArePaddedToTheQuantizationAlignment) {
  ModelSpec m = mixtral();
  m.experts = 384;
  m.topk = 8;
  auto expert_rows = [&](bool fp8, Fp8Recipe r) {
    OpKey k = key(1, 64);
    k.fp8 = fp8;
    k.fp8_recipe = r;
    for (const op::LinearShape& g : op::layer_gemm_shapes(op::dims(m, k)))
      if (g.role == op::kMoe && g.batch == 6) return g.m;
    return -1.0;
  };
  EXPECT_NEAR(expert_rows(false, Fp8Recipe::delayed), 64.0 * 32768 / 384, 1e-9);
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::tensorwise), 5472.0);
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::mxfp8), 5472.0);
  m.topk = 1;  // 64 x 4096 / 384 = 682.67: 688 (16 x 43) in FP8, 704 (32 x 22) in MXFP8,
               // 768 (128 x 6) in NVFP4 (Megatron-Core's get_fp4_align_size)
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::delayed), 688.0);
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::mxfp8), 704.0);
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::nvfp4), 768.0);
  m.topk = 3;  // 64 x 12,288 / 384 = 2,048 exactly: no padding
  EXPECT_DOUBLE_EQ(expert_rows(true, Fp8Recipe::mxfp8), 2048.0);
}

// Each rank sends its 4096 x 2 token copies of 4096 bf16 elements: 67,108,864 B. On a DGX
// H200 (450 GB/s per GPU x 20.6/25 usable = 370.8 GB/s):
//   ep 8 in one node: 7/8 of it over NVLink, 58,720,256 B / 370.8e9 = 158.36 us, plus one
//   point-to-point latency inside the node;
//   ep 16 over two nodes: 8/16 of it leaves through the GPU's share of eight 400 Gb/s NICs at
//   0.9 efficiency (45 GB/s): 33,554,432 B / 45e9 = 745.65 us, which outlasts the 7/16 over
//   NVLink (79.18 us); the latency is a cross-node one.
TEST(Moe, AllToAllOverNvlinkAndAcrossNodes) {
  const SystemSpec node = test::dgx_h200(false);
  const CollectiveModel c(node, default_efficiency(node.gpu));
  const double bytes = 4096.0 * 2 * 4096 * 2;
  op::Dims d = op::dims(mixtral(), key(1, 8));
  EXPECT_DOUBLE_EQ(moe_all_to_all_bytes(d), bytes);
  const double lat_in = c.time(Collective::send_recv, Bytes(1.0), CommGroup{2, 2}).v;
  const double lat_out = c.time(Collective::send_recv, Bytes(1.0), CommGroup{2, 1}).v;
  EXPECT_NEAR(in_us(all_to_all_time(c, bytes, CommGroup{8, 8})), lat_in * 1e6 + 158.36, 0.01);
  EXPECT_NEAR(in_us(all_to_all_time(c, bytes, CommGroup{16, 8})), lat_out * 1e6 + 745.65, 0.01);
  EXPECT_DOUBLE_EQ(all_to_all_time(c, bytes, CommGroup{1, 1}).v, 0.0);
}

// An MoE layer without shared experts keeps only the attention's TP collectives (the experts
// take each rank's sequence-parallel slice whole), and its all-to-alls (twice each way) sit
// beside them. With tp 2 the copies a rank sends halve: 2048 x 2 x 4096 x 2 B.
TEST(Moe, TpCollectivesAndAllToAllsOfALayer) {
  const ModelSpec moe = mixtral();
  ModelSpec dense = moe;
  dense.experts = dense.topk = dense.moe_ffn = 0;
  const Cluster cl = test::cluster(test::dgx_h200(false), 16);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  const CollectiveModel coll(cl.node, eff);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.tp = 2;
  cfg.dp = 8;
  cfg.ep = 8;
  cfg.sequence_parallel = true;
  cfg.seq_len = 4096;
  const ParallelComm pm = parallel_comm(moe, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  cfg.ep = 1;
  const ParallelComm pd = parallel_comm(dense, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  EXPECT_NEAR(pm.tp_layer_fwd.v * 2.0, pd.tp_layer_fwd.v, 1e-15);
  EXPECT_NEAR(pm.tp_layer_bwd.v * 2.0, pd.tp_layer_bwd.v, 1e-15);
  EXPECT_FALSE(pm.tp_mlp);
  EXPECT_TRUE(pd.tp_mlp);
  EXPECT_DOUBLE_EQ(pd.ep_layer_fwd.v, 0.0);
  const double a2a = all_to_all_time(coll, 2048.0 * 2 * 4096 * 2, CommGroup{8, 8}).v;
  EXPECT_NEAR(pm.ep_layer_fwd.v, 2.0 * a2a, 1e-15);
  EXPECT_NEAR(pm.ep_layer_bwd.v, 2.0 * a2a, 1e-15);
}

// Expert TP 2 at ep 4 (8 GPUs, tp 1): each rank's experts are 8/4 = 2, split in width two ways;
// the two etp ranks gather each other's received copies, so each expert GEMM sees
// 2 x 4 x 8192 / 8 = 8192 tokens of width 14336 / 2 (FC1: 2 x 7168 with the gate). The pair
// of etp collectives moves the gathered 2 x 67,108,864 B, forward and again backward.
TEST(Moe, ExpertTensorParallelismSplitsWidthsAndGathersTokens) {
  const ModelSpec m = mixtral();
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  OpKey k = key(1, 4);
  k.etp = 2;
  auto lin = [&](double rows, double n, double kk, double batch) {
    return estimate_gemm(GemmShape{.m = rows, .n = n, .k = kk, .batch = batch, .m_free = true},
                         Precision::bf16, gpu, eff)
        .time.v;
  };
  const double expected = lin(4096, 4096 + 2 * 1024, 4096, 1) + lin(4096, 4096, 4096, 1) +
                          lin(4096, 8, 4096, 1) + lin(8192, 14336, 4096, 2) + lin(8192, 4096, 7168, 2);
  EXPECT_NEAR(operator_costs(m, gpu, eff, k).fwd_linear.v, expected, 1e-12);

  const Cluster cl = test::cluster(test::dgx_h200(false), 8);
  const CollectiveModel coll(cl.node, eff);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.ep = 4;
  cfg.etp = 2;
  cfg.seq_len = 4096;
  const ParallelComm pc = parallel_comm(m, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  const double bytes = 4096.0 * 2 * 4096 * 2;
  const double a2a = all_to_all_time(coll, bytes, CommGroup{4, 4}).v;
  const double pair = coll.time(Collective::all_gather, Bytes(2 * bytes), CommGroup{2, 2}).v +
                      coll.time(Collective::reduce_scatter, Bytes(2 * bytes), CommGroup{2, 2}).v;
  EXPECT_NEAR(pc.ep_layer_fwd.v, 2 * a2a + pair, 1e-15);
  EXPECT_NEAR(pc.ep_layer_bwd.v, pc.ep_layer_fwd.v, 1e-15);
  std::vector<std::string> why;
  set_expert_parallel(m, 8, cfg, why);  // ep 8 x etp 2 = 16 does not divide the 8 ranks
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0].find("ep x etp = 16"), std::string::npos) << why[0];
}

// Megatron's distributed optimizer shards the experts' fp32 states over the tp x dp / ep ranks
// that hold the same experts. On 16 GPUs (tp 1, dp 16) a rank holds 1/ep of the experts and
// shards their states 16/ep ways: 1/16 of them whatever ep is. Its 16-bit weights and
// gradients shrink with ep: by 32 layers x 1,409,286,144 x (1 - 1/8) x 2 B each at ep 8.
TEST(Moe, ExpertStatesShardOverTheExpertDataParallelRanks) {
  const ModelSpec m = mixtral();
  const Cluster cl = test::cluster(test::dgx_h200(false), 16);
  const MemoryModel mm(m, cl);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.zero_stage = 1;
  cfg.dp = 16;
  cfg.seq_len = 4096;
  cfg.flash_attention = true;
  const MemoryBreakdown one = mm.estimate(cfg);
  cfg.ep = 8;
  const MemoryBreakdown eight = mm.estimate(cfg);
  const double shed = 32.0 * 1409286144.0 * (1.0 - 1.0 / 8.0) * 2.0;
  EXPECT_NEAR(one.params.v - eight.params.v, shed, 1.0);
  EXPECT_NEAR(one.optimizer.v, eight.optimizer.v, 1.0);
  EXPECT_GT(one.grads.v, eight.grads.v);
}

// The search's rules: each reason is given, and a valid MoE point has none.
TEST(Moe, ExpertParallelRules) {
  const ModelSpec m = mixtral();
  auto reasons = [&](ModelSpec model, Framework fw, int tp, int dp, int ep, bool sp) {
    TrainConfig cfg;
    cfg.framework = fw;
    cfg.tp = tp;
    cfg.dp = dp;
    cfg.sequence_parallel = sp;
    std::vector<std::string> why;
    set_expert_parallel(model, ep, cfg, why);
    return why;
  };
  EXPECT_TRUE(reasons(m, Framework::megatron, 1, 16, 8, false).empty());
  EXPECT_TRUE(reasons(m, Framework::megatron, 2, 8, 8, true).empty());
  ModelSpec dense = m;
  dense.experts = 0;
  EXPECT_EQ(reasons(dense, Framework::megatron, 1, 16, 2, false).size(), 1u);
  EXPECT_TRUE(reasons(dense, Framework::deepspeed, 1, 16, 1, false).empty());
  EXPECT_EQ(reasons(m, Framework::deepspeed, 1, 16, 8, false).size(), 1u);  // Megatron only
  EXPECT_EQ(reasons(m, Framework::megatron, 1, 12, 3, false).size(), 1u);   // 3 does not divide 8 experts
  EXPECT_EQ(reasons(m, Framework::megatron, 1, 4, 8, false).size(), 1u);    // 8 does not divide tp x dp = 4
  EXPECT_EQ(reasons(m, Framework::megatron, 2, 8, 8, false).size(), 1u);    // tp 2 without SP
}

}  // namespace
}  // namespace dsplan
