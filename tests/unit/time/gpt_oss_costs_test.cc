// gpt-oss's block options in the step-time model (docs/model.md §4.11, "gpt-oss"): the
// experts' bias gradients, the clamped SwiGLU's eager chain, the attention sinks' score
// passes in standard attention, and the rule that only Transformer Engine's cuDNN attention
// trains sinks. Hand-derived numbers beside each.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "estimator/search/space.h"
#include "estimator/time/elementwise.h"
#include "estimator/time/moe.h"
#include "estimator/time/op_dims.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// A gpt-oss-20b-shaped MoE decoder: h 2880, 64 heads of 64, 8 KV heads, 32 experts of a
// 2880-wide SwiGLU MLP, top-4.
ModelSpec oss() {
  ModelSpec m = test::llama_style("oss-test", 4, 2880, 64, 8, 64, 2880, 201088, 4096);
  m.experts = 32;
  m.topk = 4;
  m.moe_ffn = 2880;
  return m;
}

// Megatron, one 4096-token sequence, ep 8: routed = 4096 x 4 = 16,384 token copies a rank
// receives. With moe_bias each of them has an up/gate output of 2 x 2880 and a down output
// of 2880 whose bias gradients reduce over the rows: 16,384 x 8,640 = 141,557,760 elements
// of 2 bytes = 283,115,520 bytes more backward, in two kernels. Transformer Engine adds the
// biases in the GEMM epilogue: the forward is unchanged. Eager code (Dims with megatron off)
// adds them in a kernel each, reading and writing every element: 566,231,040 bytes.
TEST(GptOssCosts, ExpertBiasGradientsReduceTheRoutedRows) {
  ModelSpec m = oss();
  const OpKey k = test::megatron_key(1, 8);
  const Elementwise plain = moe_elementwise(op::dims(m, k));
  m.moe_bias = true;
  op::Dims d = op::dims(m, k);
  ASSERT_TRUE(d.moe_bias);
  const Elementwise biased = moe_elementwise(d);
  EXPECT_DOUBLE_EQ(biased.bwd.total_bytes() - plain.bwd.total_bytes(), 283'115'520.0);
  EXPECT_EQ(biased.bwd.kernels - plain.bwd.kernels, 2);
  EXPECT_DOUBLE_EQ(biased.fwd.total_bytes(), plain.fwd.total_bytes());
  d.megatron = false;
  EXPECT_DOUBLE_EQ(moe_elementwise(d).fwd.total_bytes() - plain.fwd.total_bytes(), 566'231'040.0);
}

// The clamped SwiGLU over n intermediate elements (e = 2): eager, 16e = 32 bytes an element
// in 7 kernels forward and 24e = 48 in 8 backward, against the plain eager SwiGLU's 10 and
// 18 in 2 and 4; Megatron-Core's fused clamped kernel moves what its fused SwiGLU does,
// 3e = 6 and 12, in 1 and 2.
TEST(GptOssCosts, ClampedSwigluIsSevenEagerKernelsOrOneFused) {
  ModelSpec m = oss();
  m.experts = m.topk = m.moe_ffn = 0;  // a dense layer: the activation alone
  m.activation_clamp = true;
  OpKey k = test::megatron_key(1);
  k.framework = Framework::fsdp;
  const double n = 1000.0;
  op::Dims d = op::dims(m, k);
  ASSERT_TRUE(d.act_clamp);
  Elementwise w = activation_elementwise(d, n);
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 32.0 * n);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 48.0 * n);
  EXPECT_EQ(w.fwd.kernels, 7);
  EXPECT_EQ(w.bwd.kernels, 8);
  d.act_clamp = false;
  w = activation_elementwise(d, n);
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 10.0 * n);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 18.0 * n);
  k.framework = Framework::megatron;
  d = op::dims(m, k);
  w = activation_elementwise(d, n);
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 6.0 * n);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 12.0 * n);
  EXPECT_EQ(w.fwd.kernels, 1);
}

// Standard attention with sinks: the sink column concatenated, the row maximum subtracted
// and the scores sliced back out, three passes of 2e = 4 bytes a score forward and 8
// backward (DeepSpeed fp16, no autocast), 3 kernels and 6. The flash kernels compute the
// sink inside: no pass.
TEST(GptOssCosts, SinksAddThreeScorePassesToStandardAttention) {
  ModelSpec m = oss();
  m.experts = m.topk = m.moe_ffn = 0;
  OpKey k = test::megatron_key(1);
  k.framework = Framework::deepspeed;
  k.precision = Precision::fp16;
  k.flash = false;
  const double sc = 64.0 * 4096 * 4096;  // b 1 x 64 heads x s^2
  const Elementwise plain = score_elementwise(op::dims(m, k));
  m.attention_sinks = true;
  const Elementwise sinks = score_elementwise(op::dims(m, k));
  EXPECT_DOUBLE_EQ(sinks.fwd.total_bytes() - plain.fwd.total_bytes(), 12.0 * sc);
  EXPECT_DOUBLE_EQ(sinks.bwd.total_bytes() - plain.bwd.total_bytes(), 24.0 * sc);
  EXPECT_EQ(sinks.fwd.kernels - plain.fwd.kernels, 3);
  EXPECT_EQ(sinks.bwd.kernels - plain.bwd.kernels, 6);
}

// Only Transformer Engine's cuDNN attention (Megatron-Core, --attention auto or cudnn) trains
// sinks: a flash point of any other kernel or framework is no configuration, with the reason;
// standard attention stays open to every framework.
TEST(GptOssCosts, FlashWithSinksNeedsTransformerEngine) {
  ModelSpec m = test::llama_style("sinks", 4, 2048, 32, 8, 64, 8192, 32000, 4096);
  m.attention_sinks = true;
  const Cluster h200 = test::cluster(test::dgx_h200(true), 8);
  auto why = [&](Framework fw, AttentionKernel a, bool flash) {
    SearchSpace s;
    s.run.framework = fw;
    s.run.attention = a;
    s.run.seq_len = 4096;
    TrainConfig cfg;
    const auto w =
        make_config(s, m, h200, 1, 1, 1, 1, 1, 1, 1, Checkpointing::none, flash, false, Offload::none, cfg);
    return std::any_of(w.begin(), w.end(),
                       [](const std::string& r) { return r.find("attention sinks") != std::string::npos; });
  };
  EXPECT_FALSE(why(Framework::megatron, AttentionKernel::auto_, true));
  EXPECT_FALSE(why(Framework::megatron, AttentionKernel::cudnn, true));
  EXPECT_TRUE(why(Framework::megatron, AttentionKernel::fa3, true));
  EXPECT_TRUE(why(Framework::megatron, AttentionKernel::fa2, true));
  EXPECT_TRUE(why(Framework::deepspeed, AttentionKernel::auto_, true));
  EXPECT_FALSE(why(Framework::deepspeed, AttentionKernel::auto_, false));
  // The default space leaves the flash points out where they could never run.
  SearchSpace s;
  s.run.framework = Framework::fsdp;
  s.run.seq_len = 4096;
  EXPECT_EQ(with_defaults(s, m, h200).flash, std::vector<bool>{false});
  s.run.framework = Framework::megatron;
  EXPECT_EQ(with_defaults(s, m, h200).flash, (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace dsplan
