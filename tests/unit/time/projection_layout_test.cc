// The projection layout of the model code (ModelSpec::fused_qkv, fused_gate_up): Hugging
// Face's BERT and Llama run Q, K and V (and gate and up) as separate linears, GPT-2 and
// Megatron one fused linear each. Same parameters, more GEMMs, kernels and tensors.
#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "estimator/params.h"
#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

ModelSpec bert_layout() {
  ModelSpec m = test::bert_cls("bert-tiny", 2, 256, 4, 1000, 2, true);
  m.fused_qkv = false;
  return m;
}

ModelSpec llama_layout() {
  ModelSpec m = test::gpt("llama-tiny", 2, 256, 4, 128, 1000, 1);
  m.gated_mlp = true;
  m.linear_bias = false;
  m.norm = NormKind::rmsnorm;
  m.fused_qkv = m.fused_gate_up = false;
  return m;
}

// Tensors per layer, hand count:
//  - GPT-2 (fused QKV, biases, 2 LayerNorms with biases): 4 linears x 2 + 2 x 2 = 12;
//  - BERT (query, key, value, attention output, intermediate, output; biases): 6 x 2 + 4 = 16;
//  - Hugging Face Llama (q, k, v, o, gate, up, down; no biases; 2 RMSNorm weights): 7 + 2 = 9;
//  - the same Llama under Megatron (fused QKV and gate/up): 4 + 2 = 6.
TEST(ProjectionLayout, TensorsPerLayer) {
  EXPECT_EQ(layer_tensors(test::gpt("gpt", 2, 256, 4, 128, 1000, 1), false), 12);
  EXPECT_EQ(layer_tensors(bert_layout(), false), 16);
  EXPECT_EQ(layer_tensors(llama_layout(), false), 9);
  EXPECT_EQ(layer_tensors(llama_layout(), true), 6);
  EXPECT_EQ(layer_linears(llama_layout(), false).total(), 7);
  // Parameters do not depend on the layout.
  ModelSpec fused = bert_layout();
  fused.fused_qkv = true;
  EXPECT_EQ(total_params(fused), total_params(bert_layout()));
}

OpKey key(Framework f, Precision p) {
  OpKey k;
  k.framework = f;
  k.precision = p;
  k.micro_batch = 1;
  k.seq_len = 128;
  return k;
}

// Host launches (10 us each by default), BERT layer, DeepSpeed bf16 (no autocast):
// forward, 2 more GEMMs (Q, K, V instead of QKV); backward, their 2 dgrad and 2 wgrad
// GEMMs, 2 adds summing the three input gradients and 2 more bias-gradient reductions: 8
// (standard attention's gradient layout copies are 4 either way: 3 copies and the fused
// gradient's concatenation, or 3 copies and the output gradient's).
// Under DDP's fp16 autocast there is no add kernel (the input casts' backward sums), but
// each linear casts its input: forward 2 GEMMs + 2 input casts + 4 weight and bias casts =
// 8; backward 4 GEMMs + 4 input-cast backward kernels + 4 gradient casts + 2 bias
// reductions = 14. Llama's separate gate and up (no biases): forward 1 GEMM, backward
// 2 GEMMs and 1 add = 3.
TEST(ProjectionLayout, SeparateLinearsLaunchMoreKernels) {
  const GpuSpec gpu = test::h200();
  const Efficiency eff = default_efficiency(gpu);
  ASSERT_DOUBLE_EQ(eff.host_op_overhead.v, 10e-6);
  ModelSpec fused = bert_layout();
  fused.fused_qkv = true;
  for (auto [f, p, fwd, bwd] : {std::tuple{Framework::deepspeed, Precision::bf16, 2, 8},
                                std::tuple{Framework::ddp, Precision::fp16, 8, 14}}) {
    const OpCosts a = operator_costs(fused, gpu, eff, key(f, p));
    const OpCosts b = operator_costs(bert_layout(), gpu, eff, key(f, p));
    EXPECT_NEAR((b.host.fwd - a.host.fwd).v, fwd * 10e-6, 1e-12);
    EXPECT_NEAR((b.host.bwd - a.host.bwd).v, bwd * 10e-6, 1e-12);
    EXPECT_GT(b.bwd.v, a.bwd.v);
  }
  ModelSpec gate_fused = llama_layout();
  gate_fused.fused_gate_up = true;
  const OpKey k = key(Framework::deepspeed, Precision::bf16);
  const OpCosts a = operator_costs(gate_fused, gpu, eff, k);
  const OpCosts b = operator_costs(llama_layout(), gpu, eff, k);
  EXPECT_NEAR((b.host.fwd - a.host.fwd).v, 1 * 10e-6, 1e-12);
  EXPECT_NEAR((b.host.bwd - a.host.bwd).v, 3 * 10e-6, 1e-12);
  // Megatron's layers fuse whatever the model says: no difference under Megatron, nor under
  // DeepSpeed with tensor parallelism (Megatron-DeepSpeed).
  const OpKey mk = key(Framework::megatron, Precision::bf16);
  EXPECT_DOUBLE_EQ(operator_costs(llama_layout(), gpu, eff, mk).bwd.v,
                   operator_costs(gate_fused, gpu, eff, mk).bwd.v);
  OpKey tk = k;
  tk.tp = 2;
  EXPECT_DOUBLE_EQ(operator_costs(bert_layout(), gpu, eff, tk).bwd.v,
                   operator_costs(fused, gpu, eff, tk).bwd.v);
}

// Memory under torch.amp (DDP fp16, no checkpointing): each of Q, K and V casts the fp32
// norm output and saves its own 16-bit copy, 2 more than one QKV linear per layer:
// 2 layers x 2 copies x e s b h = 2 x 2 x 2 x 128 x 4 x 256 = 1,048,576 B at micro-batch 4.
// Without autocast (DeepSpeed fp16) the three linears save the same tensor: no difference.
TEST(ProjectionLayout, AutocastSavesACastPerLinear) {
  const Cluster c = test::cluster(test::dgx_a100(), 1);
  ModelSpec fused = bert_layout();
  fused.fused_qkv = true;
  TrainConfig cfg;
  cfg.framework = Framework::ddp;
  cfg.precision = Precision::fp16;
  cfg.micro_batch = 4;
  cfg.seq_len = 128;
  const double sep = MemoryModel(bert_layout(), c).estimate(cfg).activations.v;
  EXPECT_NEAR(sep - MemoryModel(fused, c).estimate(cfg).activations.v, 1048576.0, 1e-3);
  cfg.framework = Framework::deepspeed;
  EXPECT_DOUBLE_EQ(MemoryModel(bert_layout(), c).estimate(cfg).activations.v,
                   MemoryModel(fused, c).estimate(cfg).activations.v);
}

// ZeRO-2's hook runs once per parameter tensor: BERT's 16 against a fused layout's 12,
// 4 x 150 us more per layer, plus 4 more kernels (4 us each on A100) of the reduction
// buffer copy, whose bytes are the same.
TEST(ProjectionLayout, ZeroHooksRunPerTensor) {
  const Cluster c = test::cluster(test::dgx_a100(), 8);
  const Efficiency eff = default_efficiency(c.node.gpu);
  const CollectiveModel coll(c.node, eff);
  ModelSpec fused = bert_layout();
  fused.fused_qkv = true;
  TrainConfig cfg = test::base_cfg();
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 2;
  cfg.seq_len = 128;
  const ParallelComm a = parallel_comm(fused, cfg, c.node, c.node.gpu, eff, coll);
  const ParallelComm b = parallel_comm(bert_layout(), cfg, c.node, c.node.gpu, eff, coll);
  EXPECT_NEAR((b.layer_bwd_extra - a.layer_bwd_extra).v, 4 * 150e-6 + 4 * 4e-6, 1e-12);
}

// A sequence of 2047 tokens (a micro-batch of 1) is no alignment problem for the linears:
// the token count is no operand's leading dimension (GemmShape::m_free; gemm_test.cc). With
// flash attention nothing else in the layer depends on it, so the layer and the logits cost
// at most their share of the work more than at 2048 and at least 1% less, not the half
// tensor rate of a misaligned width (a whole-step slowdown of 1.5x on this A100 before).
TEST(ProjectionLayout, OddTokenCountKeepsTheTensorRate) {
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const ModelSpec m = test::gpt("gpt-1k", 2, 1024, 16, 2048, 50304, 128);
  OpKey k;
  k.micro_batch = 1;
  k.flash = true;
  k.precision = Precision::bf16;
  k.framework = Framework::megatron;
  k.seq_len = 2048;
  const OpCosts even = operator_costs(m, gpu, eff, k);
  k.seq_len = 2047;
  const OpCosts odd = operator_costs(m, gpu, eff, k);
  const double layer = (odd.fwd + odd.bwd) / (even.fwd + even.bwd);
  EXPECT_LE(layer, 1.0);
  EXPECT_GT(layer, 0.99);
  const double head = (odd.head_fwd + odd.head_bwd) / (even.head_fwd + even.head_bwd);
  EXPECT_LE(head, 1.0);
  EXPECT_GT(head, 0.99);
}

}  // namespace
}  // namespace dsplan
