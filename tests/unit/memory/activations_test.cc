// Per-layer activation bytes against Korthikanti et al. 2022 (arXiv 2205.05198, Table 2)
// and Megatron's theoretical_memory_usage (peers.md sec. 3) where they model the same thing.
#include "estimator/memory/activations.h"

#include <gtest/gtest.h>

namespace dsplan {
namespace {

// GPT-3 175B shape from the paper: s = 2048, h = 12288, a = 96, b = 1.
LayerShape gpt3(double t = 1) {
  LayerShape x;
  x.b = 1; x.s = 2048; x.h = 12288; x.heads = 96; x.q = 12288; x.kv = 12288;
  x.f = 4 * 12288; x.t = t;
  return x;
}

double sbh(const LayerShape& x) { return x.s * x.b * x.h; }

TEST(Activations, KorthikantiNoParallelism) {
  const LayerShape x = gpt3();
  // sbh (34 + 5 a s / h) with 5 a s / h = 5 * 96 * 2048 / 12288 = 80.
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (34 + 80));
}

TEST(Activations, KorthikantiTensorAndSequenceParallel) {
  const LayerShape x = gpt3(8);
  // TP only: sbh (10 + 24/t + 5as/(ht)) = sbh (10 + 3 + 10).
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (10 + 3 + 10));
  LayerShape sp = x;
  sp.sp = true;  // TP + SP: sbh/t (34 + 5as/h) = sbh (34 + 80) / 8.
  EXPECT_DOUBLE_EQ(layer_activation(sp).total(), sbh(x) * (34 + 80) / 8);
  sp.selective = true;  // + selective recompute: 34 sbh / t.
  EXPECT_DOUBLE_EQ(layer_activation(sp).total(), sbh(x) * 34 / 8);
}

TEST(Activations, MegatronSelectiveFormulaForOtherFfnWidths) {
  // Megatron: sbh (18 + 4 ffn/h) / t with SP + selective; ffn = 2.5h -> 28 sbh / t.
  LayerShape x = gpt3(4);
  x.f = 2.5 * x.h;
  x.sp = true;
  x.selective = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * 28 / 4);
}

TEST(Activations, FlashAttentionDropsQuadraticTermsAddsLogsumexp) {
  LayerShape x = gpt3();
  x.flash = true;
  // 34 sbh + 4 b a s bytes of fp32 logsumexp.
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * 34 + 4 * 96 * 2048);
}

TEST(Activations, GqaGatedNoDropoutFp32) {
  // Llama-2-70B-like: h 8192, 64 heads, 8 KV heads, f 28672, SwiGLU (fused: 3 f-tensors),
  // no dropout, flash. Replicated 4 x 2 sbh = 8; Q + O = 2 x 2 = 4; K + V = 2 x 2 x 1/8
  // = 0.5; MLP 3 x 2 x 3.5 = 21 -> 33.5 sbh + 4 b a s.
  LayerShape x;
  x.b = 1; x.s = 4096; x.h = 8192; x.heads = 64; x.q = 8192; x.kv = 1024; x.f = 28672;
  x.mlp_tensors = 3; x.dropout = false; x.flash = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * 33.5 + 4 * 64 * 4096);
  // fp32 doubles every activation; dropout masks stay one byte: GPT-3 shape in fp32 is
  // sbh (4 x 4 + 2 + 4 x 4 ... ) = (16 + 2) + 48 + (4 + 1 + 4) a s / h = 66 + 9 x 16.
  LayerShape f = gpt3();
  f.e = 4;
  EXPECT_DOUBLE_EQ(layer_activation(f).total(), sbh(f) * (18 + 48 + 9 * 16));
}

// Eager PyTorch attention on the same Llama-2-70B-like shape: the rotation's inputs (the
// pre-rotation Q and K, 2 x (1 + 1/8) = 2.25 sbh) and K, V repeated to all 64 heads before
// SDPA (2 x 2 x (1 - 1/8) = 3.5 sbh): 33.5 + 2.25 + 3.5 = 39.25 sbh. Megatron (TE's fused
// rotary, native GQA) keeps neither.
TEST(Activations, EagerRotaryAndRepeatedKvAreKept) {
  LayerShape x;
  x.b = 1; x.s = 4096; x.h = 8192; x.heads = 64; x.q = 8192; x.kv = 1024; x.f = 28672;
  x.mlp_tensors = 3; x.dropout = false; x.flash = true;
  x.eager_rotary = true;
  x.repeat_kv = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * 39.25 + 4 * 64 * 4096);
  x.kv = x.q;  // no grouping: nothing to repeat, the rotation keeps 2 x 2 sbh
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (4 * 2 + 2 * 2 + 2 * 2 + 21 + 4) + 4 * 64 * 4096);
}

// One norm feeding both parallel branches (Falcon-7B) saves one norm input and one shared
// norm output instead of two each: the Llama-like shape above loses 2 x 2 sbh, 33.5 -> 29.5.
TEST(Activations, OneSharedNormSavesOneInputAndOneOutput) {
  LayerShape x;
  x.b = 1; x.s = 4096; x.h = 8192; x.heads = 64; x.q = 8192; x.kv = 1024; x.f = 28672;
  x.mlp_tensors = 3; x.dropout = false; x.flash = true;
  x.norms = 1;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * 29.5 + 4 * 64 * 4096);
}

// Sandwich norms (Gemma 2): 4 norm inputs, but only the two pre-norm outputs feed linears;
// the post-norm outputs go into residual adds. Korthikanti's 34 sbh + 80 sbh counts
// 2 x 2 (norm inputs) + 2 x 2 (linear inputs): two more norm inputs add 2 x 2 sbh.
// Query and key norms save their inputs, 2 sb (q + kv) = 4 sbh with q = kv = h.
TEST(Activations, SandwichNormsAndQkNorms) {
  LayerShape x = gpt3();
  x.norms = 4;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (34 + 80 + 4));
  x.qk_norm = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (34 + 80 + 4 + 4));
  // Soft-capped scores keep the tanh output, 2 a s^2 b more: 5as/h becomes 7as/h, 80 -> 112.
  x.attn_softcap = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), sbh(x) * (34 + 112 + 4 + 4));
  x.flash = true;  // none of it under FlashAttention
  EXPECT_DOUBLE_EQ(layer_activation(x).quadratic, 0.0);
}

// Under torch.amp the pre-norms read the fp32 stream (4 sbh each) but the post-norms read
// the 16-bit sublayer outputs (2 sbh each). With torch.nn.RMSNorm's fallback chain
// (norm16_eager) a 16-bit-input norm keeps its fp32 upcast and fp32 normalised product,
// 8 B an element: post-norms 2 x 8 sbh, query/key norms 8 sb (q + kv) = 16 sbh (q = kv = h).
// The census of the reference workload under PyTorch 2.11 (scripts/aten_census.py) lists
// exactly these two fp32 tensors per query/key norm.
TEST(Activations, SixteenBitInputNormsUnderAmp) {
  LayerShape x = gpt3();
  x.amp_softmax = x.fp32_residual = true;
  x.norms = 4;
  x.qk_norm = true;
  // replicated: pre-norm inputs 2 x 4 + post-norm inputs 2 x 2 + linear inputs 2 x 2 +
  // masks 2 = 18 sbh; the query/key norm inputs 2 x 2 sbh join the sharded terms.
  const LayerActivation fused = layer_activation(x);
  EXPECT_DOUBLE_EQ(fused.replicated, 18 * sbh(x));
  x.norm16_eager = true;
  const LayerActivation eager = layer_activation(x);
  EXPECT_DOUBLE_EQ(eager.replicated - fused.replicated, 2 * (8 - 2) * sbh(x));
  EXPECT_DOUBLE_EQ(eager.sharded - fused.sharded, (8 - 2) * 2 * sbh(x));
}

TEST(Activations, FullCheckpointKeepsTwoSbhPerLayer) {
  LayerShape x = gpt3(8);
  EXPECT_DOUBLE_EQ(layer_checkpoint_bytes(x), 2 * sbh(x));
  x.sp = true;  // with SP the stored input is split over t
  EXPECT_DOUBLE_EQ(layer_checkpoint_bytes(x), 2 * sbh(x) / 8);
}

TEST(Activations, AmpSoftmaxIsSavedInFp32) {
  LayerShape x = gpt3();
  x.amp_softmax = true;
  // quadratic: fp32 softmax 4 + mask 1 + fp16 cast 2 = 7 per a s^2 b (vs 5 fused fp16).
  EXPECT_DOUBLE_EQ(layer_activation(x).quadratic, 7.0 * 96 * 2048 * 2048);
}

TEST(Activations, AmpResidualStreamIsFp32) {
  LayerShape x = gpt3();
  x.amp_softmax = true;
  x.fp32_residual = true;
  // Replicated rows: 2 fp32 LayerNorm inputs 2 x 4 + QKV and FC1 input casts 2 x 2 +
  // 2 one-byte masks = 14 sbh (vs 10 with a 16-bit stream).
  EXPECT_DOUBLE_EQ(layer_activation(x).replicated, 14 * sbh(x));
  // The checkpointed layer input is the fp32 stream: 4 sbh, not 2.
  EXPECT_DOUBLE_EQ(layer_checkpoint_bytes(x), 4 * sbh(x));
}

TEST(Activations, LossBytesPerLogit) {
  LayerShape x = gpt3();  // e = 2
  // Megatron in place: 16-bit logits 2 + fp32 copy 4; fp32 run: the logits alone.
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(x, true), 6);
  // torch cross_entropy on upcast fp32 logits, also for a 16-bit model: 3 tensors x 4 B.
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(x, false), 12);
  x.fp32_residual = true;  // torch.amp: loss in fp32, 3 x 4 B
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(x, false), 12);
  LayerShape f = gpt3();
  f.e = 4;
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(f, true), 4);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(f, false), 12);
  // A fused cross-entropy with an in-place backward keeps the logits alone, in their own
  // dtype, whatever the framework: 2 B in 16 bits, 4 B in fp32.
  x.fused_loss = true;
  f.fused_loss = true;
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(x, false), 2);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(x, true), 2);
  EXPECT_DOUBLE_EQ(loss_bytes_per_logit(f, false), 4);
}

}  // namespace
}  // namespace dsplan
