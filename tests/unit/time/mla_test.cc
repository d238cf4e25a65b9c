// Multi-head latent attention (estimator/time/mla.h, docs/model.md §4.12): its parameters,
// the projections' GEMMs, the attention core's query/key and value widths, the latent
// collectives of tensor parallelism and the down projections every TP rank holds whole.
// DeepSeek-V3's attention, hand-derived numbers below.
#include "estimator/time/mla.h"

#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/params.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "estimator/time/operators.h"
#include "estimator/time/parallel_comm.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

ModelSpec mla() { return test::deepseek_v3_attention("mla-test"); }

OpKey key(int tp) { return test::megatron_key(tp); }

// q down 7168 x 1536 = 11,010,048; q up 1536 x 128 x 192 = 37,748,736; kv down
// 7168 x (512 + 64) = 4,128,768; kv up 512 x 128 x (128 + 128) = 16,777,216; output
// 128 x 128 x 7168 = 117,440,512: 187,105,280. Norms: two of 7168, and the latents' 1536
// and 512.
TEST(Mla, ParameterCounts) {
  const ModelSpec m = mla();
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.attention, 187105280);
  EXPECT_EQ(c.layer_norms, 2 * 7168 + 1536 + 512);
  EXPECT_DOUBLE_EQ(tp_replicated_attention(m), 11010048.0 + 4128768.0);
  EXPECT_DOUBLE_EQ(matmul_params_per_layer(m), 187105280.0 + 3.0 * 7168 * 18432);
  EXPECT_EQ(qk_head_dim_of(m), 192);
  EXPECT_EQ(v_head_dim_of(m), 128);
}

// tp 2 with SP, 4096 tokens: the down projections on the rank's 2048, the up projections
// and the output projection on all 4096, their head widths halved: q up 128 x 192 / 2 =
// 12288, kv up 128 x 256 / 2 = 16384, output projection input 128 x 128 / 2 = 8192.
TEST(Mla, ProjectionGemms) {
  const ModelSpec m = mla();
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  auto lin = [&](double rows, double n, double k) {
    return estimate_gemm(GemmShape{.m = rows, .n = n, .k = k, .m_free = true}, Precision::bf16, gpu, eff)
        .time.v;
  };
  const double expected = lin(2048, 1536, 7168) + lin(4096, 12288, 1536) + lin(2048, 576, 7168) +
                          lin(4096, 16384, 512) + lin(4096, 7168, 8192) + lin(4096, 2 * 18432 / 2, 7168) +
                          lin(4096, 7168, 18432 / 2);
  EXPECT_NEAR(operator_costs(m, gpu, eff, key(2)).fwd_linear.v, expected, 1e-12);
  ModelSpec direct = m;  // without a query latent: one 7168 -> 12288 projection per rank
  direct.q_lora_rank = 0;
  const double without = expected - lin(2048, 1536, 7168) - lin(4096, 12288, 1536) + lin(4096, 12288, 7168);
  EXPECT_NEAR(operator_costs(direct, gpu, eff, key(2)).fwd_linear.v, without, 1e-12);
}

// Flash forward FLOPs: Q K^T over the 192-wide query/key heads and P V over the 128-wide
// values, 2 b s^2 (heads / t) (192 + 128), on the causal blocks: 33 of 64 (32 blocks of 128).
TEST(Mla, AttentionCoreWidths) {
  const ModelSpec m = mla();
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  const double flops = 2.0 * 64 * 4096.0 * 4096 * (192 + 128) * 33.0 / 64;
  EXPECT_NEAR(operator_costs(m, gpu, eff, key(2)).attn_core_flops_hw.v, flops, flops * 1e-12);
  EXPECT_EQ(mla_input_gemms(op::dims(m, key(2))).size(), 4u);
  ModelSpec plain = m;
  plain.kv_lora_rank = 0;
  EXPECT_TRUE(mla_input_gemms(op::dims(plain, key(2))).empty());
}

// With SP the attention's forward all-gather carries 1536 + 512 + 64 = 2112 elements a
// token instead of 7168, and its backward reduce-scatter the same; the MLP's pair keeps
// the hidden width.
TEST(Mla, TensorParallelCollectivesCarryTheLatents) {
  ModelSpec m = mla();
  EXPECT_DOUBLE_EQ(mla_gathered_width(m), 2112.0);
  ModelSpec plain = m;
  plain.kv_lora_rank = 0;
  const Cluster cl = test::cluster(test::dgx_h200(false), 8);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  const CollectiveModel coll(cl.node, eff);
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.tp = 8;
  cfg.sequence_parallel = true;
  cfg.seq_len = 4096;
  const ParallelComm a = parallel_comm(m, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  const ParallelComm b = parallel_comm(plain, cfg, cl.node, cl.node.gpu, eff, coll, CommParts::tp_only);
  const CommGroup g{8, 8};
  const double h = 4096.0 * 7168 * 2, latent = 4096.0 * 2112 * 2;
  EXPECT_NEAR(b.tp_layer_fwd.v - a.tp_layer_fwd.v,
              coll.time(Collective::all_gather, Bytes(h), g).v -
                  coll.time(Collective::all_gather, Bytes(latent), g).v,
              1e-15);
  EXPECT_NEAR(b.tp_layer_bwd.v - a.tp_layer_bwd.v,
              coll.time(Collective::reduce_scatter, Bytes(h), g).v -
                  coll.time(Collective::reduce_scatter, Bytes(latent), g).v,
              1e-15);
  // The rank's layer: the down projections whole, the rest of the attention and the MLP
  // split 8 ways.
  const ParamCounts c = count_params(m);
  const double rep = 11010048.0 + 4128768.0;
  EXPECT_NEAR(stage_params(m, cfg).layer, (c.attention - rep + c.mlp) / 8.0 + rep + c.layer_norms, 1e-6);
}

}  // namespace
}  // namespace dsplan
