// MemoryModel::estimate end to end: totals add up, each knob moves memory the way the
// mechanism says, pipeline stages and logits are accounted, and estimate() is fast.
#include "estimator/memory.h"

#include <gtest/gtest.h>


#include "estimator/memory/activations.h"
#include "estimator/memory/overhead.h"
#include "estimator/params.h"
#include "fixtures.h"

namespace dsplan {
namespace {

ModelSpec llama8b() {
  ModelSpec m;
  m.name = "llama3-8b";
  m.layers = 32; m.hidden = 4096; m.heads = 32; m.kv_heads = 8; m.head_dim = 128;
  m.ffn_hidden = 14336; m.gated_mlp = true; m.activation = Activation::silu;
  m.vocab = 128256; m.tied_embeddings = false; m.position = PositionKind::rotary;
  m.max_positions = 8192; m.norm = NormKind::rmsnorm; m.linear_bias = false;
  return m;
}

Cluster a100x8(int gpus = 8) {
  Cluster c;
  c.node.gpu.arch = GpuArch::ampere;
  c.node.gpu.memory = GiB(80);
  c.node.gpus_per_node = 8;
  c.num_gpus = gpus;
  return c;
}

double gib(Bytes b) { return in_GiB(b); }

// HF GPT-2's gelu_new keeps three more f-wide tensors (tanh output, 1 + tanh, 0.5x) in
// 16 bits: +3 x 2 B. Under torch.amp its pow runs in fp32, so it keeps an fp32 upcast of
// x in place of x, and tanh and 1 + tanh in fp32: 4 + 4 + 4 + 2 + 2 (FC2 input) = 16 B
// against the plain MLP's 4 B, +12 B. GPT-2 (12 layers, f 3072), micro-batch 8, seq 1024:
//   DeepSpeed bf16: 12 x 6 B x 8192 x 3072 = 1,811,939,328 B;  DDP autocast: twice that.
// GPT-2 small's shape, and bf16 micro-batches of 8 x 1024 tokens with flash attention.
ModelSpec gpt2_small() {
  ModelSpec m;
  m.name = "gpt2";
  m.layers = 12; m.hidden = 768; m.heads = 12; m.ffn_hidden = 3072; m.vocab = 50257;
  m.max_positions = 1024;
  return m;
}

TrainConfig bf16_mbs8(Framework f) {
  TrainConfig cfg;
  cfg.framework = f;
  cfg.seq_len = 1024; cfg.micro_batch = 8; cfg.flash_attention = true;
  cfg.precision = Precision::bf16;
  return cfg;
}

TEST(MemoryModel, GeluNewUnderAutocastKeepsFp32Tensors) {
  const ModelSpec m = gpt2_small();
  TrainConfig cfg = bf16_mbs8(Framework::deepspeed);
  auto extra = [&](Framework f) {
    cfg.framework = f;
    ModelSpec fused = m, unfused = m;
    unfused.activation_unfused = true;
    return MemoryModel(unfused, a100x8(1)).estimate(cfg).activations.v -
           MemoryModel(fused, a100x8(1)).estimate(cfg).activations.v;
  };
  EXPECT_NEAR(extra(Framework::deepspeed), 1'811'939'328.0, 1.0);
  EXPECT_NEAR(extra(Framework::ddp), 3'623'878'656.0, 1.0);
}

// Under torch.amp the linears save their 16-bit weight casts for backward (2 B/param); a
// recomputed layer saves none (autocast's cache dies with the forward, and the recompute
// re-casts one layer at a time). GPT-2's 12 layers of 7,087,872 parameters (12h^2 + 13h,
// h = 768) under full recomputation: 11 layers' casts go, 2 x 11 x 7,087,872 =
// 155,933,184 bytes fewer params.
TEST(MemoryModel, RecomputedLayersKeepNoAutocastCasts) {
  TrainConfig cfg = bf16_mbs8(Framework::ddp);
  const MemoryModel mm(gpt2_small(), a100x8(1));
  const double plain = mm.estimate(cfg).params.v;
  cfg.checkpointing = Checkpointing::full;
  EXPECT_NEAR(plain - mm.estimate(cfg).params.v, 155'933'184.0, 1.0);
  cfg.precision = Precision::fp32;  // no autocast, no casts either way
  const double fp32_full = mm.estimate(cfg).params.v;
  cfg.checkpointing = Checkpointing::none;
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).params.v, fp32_full);
}

TEST(MemoryModel, BreakdownSumsToTotals) {
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig cfg;
  cfg.dp = 8; cfg.zero_stage = 2; cfg.seq_len = 4096; cfg.flash_attention = true;
  const MemoryBreakdown r = mm.estimate(cfg);
  const Bytes sum5 = r.params + r.grads + r.optimizer + r.activations + r.buffers;
  EXPECT_NEAR(sum5.v, r.allocated.v, 1.0);
  EXPECT_NEAR((r.allocated + r.overhead).v, r.device.v, 1.0);
  EXPECT_NEAR(r.reserved.v, r.allocated.v * (1 + MemoryOptions{}.fragmentation), 1.0);
  EXPECT_GT(r.device, r.reserved);
  // bf16 ZeRO-2, N = 8: params 2P exactly.
  EXPECT_NEAR(r.params.v, 2.0 * total_params(llama8b()), 1e3);
}

TEST(MemoryModel, KnobsMoveMemoryTheRightWay) {
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig base;
  base.dp = 8; base.zero_stage = 1; base.seq_len = 4096; base.micro_batch = 2;
  const double m0 = gib(mm.estimate(base).device);
  TrainConfig c = base;
  c.micro_batch = 4;
  EXPECT_GT(gib(mm.estimate(c).device), m0);
  c = base; c.flash_attention = true;
  EXPECT_LT(gib(mm.estimate(c).activations), gib(mm.estimate(base).activations));
  c = base; c.checkpointing = Checkpointing::selective;
  const double sel = gib(mm.estimate(c).activations);
  c.checkpointing = Checkpointing::full;
  const double full = gib(mm.estimate(c).activations);
  EXPECT_LT(sel, gib(mm.estimate(base).activations));
  EXPECT_LT(full, sel);
  c = base; c.zero_stage = 3;
  EXPECT_LT(gib(mm.estimate(c).params), gib(mm.estimate(base).params));
  const double host_z3 = gib(mm.estimate(c).host);  // zero.Init: 1.5 x 8 x 4 x largest
  c.offload = Offload::all;
  const MemoryBreakdown off = mm.estimate(c);
  EXPECT_LT(gib(off.optimizer), 1e-9);
  EXPECT_GT(gib(off.host), host_z3);
  // ZeRO-1 builds the fp32 model on every rank's CPU first: 1.5 x 8 x 4 B x 8.03e9.
  EXPECT_NEAR(gib(mm.estimate(base).host), 1.5 * 8 * 4 * total_params(llama8b()) / kGiB, 1e-6);
}

TEST(MemoryModel, Llama3LogitsDominateAtLargeVocab) {
  // b s V x 12 bytes (three fp32 logits-sized tensors at the loss's backward peak):
  // 1 x 8192 x 128256 x 12 = 1.26e10 B = 11.7 GiB of the activations.
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig cfg;
  cfg.dp = 8; cfg.zero_stage = 3; cfg.seq_len = 8192; cfg.flash_attention = true;
  cfg.checkpointing = Checkpointing::full;
  const double act = mm.estimate(cfg).activations.v;
  EXPECT_GT(act, 8192.0 * 128256 * 12);
  ModelSpec head = llama8b();
  head.vocab_logits = false;
  const double act_nohead = MemoryModel(head, a100x8()).estimate(cfg).activations.v;
  // The loss phase and the recompute of one layer do not overlap: the logits replace the
  // smaller of the two phases, so the difference is positive and below the logits.
  EXPECT_GT(act - act_nohead, 0.5 * 8192.0 * 128256 * 12);
  EXPECT_LE(act - act_nohead, 8192.0 * 128256 * 12);
}

TEST(MemoryModel, MegatronFp16KeepsSixteenBitGradsUntilTheStep) {
  // Small activations (full recompute, short sequence, no logits) so that the step phase,
  // states + 2 B/param of 16-bit grads beside the fp32 main grads, is the peak: then
  // buffers = 2P - activations, i.e. the params bytes (2P) minus the activations.
  ModelSpec m = llama8b();
  m.vocab_logits = false;
  MemoryModel mm(m, a100x8());
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.precision = Precision::fp16;
  cfg.tp = 8; cfg.dp = 1; cfg.seq_len = 512; cfg.flash_attention = true;
  cfg.checkpointing = Checkpointing::full;
  const MemoryBreakdown fp16 = mm.estimate(cfg);
  ASSERT_GT(fp16.params.v, fp16.activations.v);
  EXPECT_NEAR(fp16.buffers.v, fp16.params.v - fp16.activations.v, 1.0);
  cfg.precision = Precision::bf16;  // bf16 accumulates in the fp32 main_grad buffer only
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).buffers.v, 0.0);
}

// DeepSpeed without ZeRO: FP16_Optimizer flattens the gradients into one fp32 .grad per group
// for its step (fused_optimizer.py: `p.grad.to(fp32)`, then _flatten_dense_tensors), 4 B/param
// beside the 2 B/param model weights: buffers = 4P - activations = 2 x params - activations.
// bf16 runs the same wrapper from DeepSpeed 0.17.6 (release 0: today's); before it
// BF16_Optimizer, whose fp32 gradients are model-state grads, not a step buffer (one rank: no
// flat reduce bucket either, so 0).
TEST(MemoryModel, DeepSpeedFp16OptimizerFlattensFp32GradsForTheStep) {
  ModelSpec m = gpt2_small();
  m.vocab_logits = false;
  MemoryModel mm(m, a100x8(1));
  TrainConfig cfg;
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 0;
  cfg.dp = 1;
  cfg.seq_len = 512;
  cfg.flash_attention = true;
  cfg.checkpointing = Checkpointing::full;
  for (Precision p : {Precision::fp16, Precision::bf16}) {
    cfg.precision = p;
    const MemoryBreakdown b = mm.estimate(cfg);
    ASSERT_GT(b.params.v, b.activations.v);
    EXPECT_NEAR(b.buffers.v, 2 * b.params.v - b.activations.v, 1.0) << static_cast<int>(p);
  }
  cfg.deepspeed_release = 202501;  // bf16 before 0.17.6: BF16_Optimizer
  ASSERT_TRUE(cfg.deepspeed_bf16_optimizer());
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).buffers.v, 0.0);
}

// Megatron bf16 keeps an fp32 main_grad buffer (4 B/param) unless the 16-bit buffer of
// Megatron-Core's grad_reduce_in_fp32=False is configured (TrainConfig::megatron_fp32_grads):
// then 2 B/param, half. fp16 is unaffected.
TEST(MemoryModel, MegatronSixteenBitGradientBufferHalvesGrads) {
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.precision = Precision::bf16;
  cfg.tp = 8; cfg.dp = 1; cfg.seq_len = 512; cfg.flash_attention = true;
  const MemoryBreakdown fp32_grads = mm.estimate(cfg);
  cfg.megatron_fp32_grads = false;
  const MemoryBreakdown bf16_grads = mm.estimate(cfg);
  EXPECT_NEAR(bf16_grads.grads.v, fp32_grads.grads.v / 2, 1.0);
  EXPECT_DOUBLE_EQ(bf16_grads.params.v, fp32_grads.params.v);
  cfg.precision = Precision::fp16;
  const double fp16_off = mm.estimate(cfg).grads.v;
  cfg.megatron_fp32_grads = true;
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).grads.v, fp16_off);
}

// FSDP hybrid sharding on two 8-GPU nodes shards the model states over a node's 8 ranks, not
// all 16: twice the sharded parameters, gradients and optimizer states per GPU.
TEST(MemoryModel, FsdpHybridShardsOverANode) {
  MemoryModel mm(llama8b(), a100x8(16));
  TrainConfig cfg;
  cfg.framework = Framework::fsdp;
  cfg.precision = Precision::bf16;
  cfg.zero_stage = 3;
  cfg.dp = 16; cfg.seq_len = 2048; cfg.flash_attention = true;
  const MemoryBreakdown full = mm.estimate(cfg);
  cfg.fsdp_hybrid = true;
  const MemoryBreakdown hybrid = mm.estimate(cfg);
  EXPECT_NEAR(hybrid.optimizer.v, 2 * full.optimizer.v, 1.0);
  EXPECT_NEAR(hybrid.grads.v, 2 * full.grads.v, 1.0);
}

TEST(MemoryModel, PipelineStageZeroHoldsInFlightMicrobatches) {
  ModelSpec m = llama8b();
  m.vocab_logits = false;  // so that stage 0, not the logits stage, is the most loaded
  MemoryModel mm(m, a100x8());
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.tp = 2; cfg.pp = 4; cfg.dp = 1; cfg.seq_len = 4096; cfg.flash_attention = true;
  cfg.sequence_parallel = true; cfg.grad_accum = 1;
  const double one = mm.estimate(cfg).activations.v;
  cfg.grad_accum = 16;  // stage 0 now holds p = 4 micro-batches
  const double four = mm.estimate(cfg).activations.v;
  EXPECT_GT(four, 2.5 * one);
  cfg.vpp = 2;  // x (1 + (p-1)/(p v)) = 1 + 3/8
  const double inter = mm.estimate(cfg).activations.v;
  EXPECT_GT(inter, four * 1.2);
  EXPECT_LT(inter, four * 1.375 + 1);
}

TEST(MemoryModel, TensorParallelShardsLayersButNotNorms) {
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 1;
  const double p1 = mm.estimate(cfg).params.v;
  cfg.tp = 8;
  const double p8 = mm.estimate(cfg).params.v;
  EXPECT_GT(p8, p1 / 8);      // norms replicated
  EXPECT_LT(p8, p1 / 8 * 1.01);
}

TEST(MemoryModel, OverheadIsContextNcclAndFragmentation) {
  EXPECT_NEAR(MemoryOptions{}.cuda_context.v, GiB(0.5).v, 1);  // CUDA >= 11.7 lazy loading
  // The context is a software-stack input: an eager-loading stack's 1343 MB moves
  // `device` (and `overhead`) by exactly the difference, 1343e6 - 0.5 x 2^30 bytes, and
  // leaves `reserved` alone.
  TrainConfig cfg;
  cfg.dp = 8;
  cfg.zero_stage = 1;
  const MemoryBreakdown lazy = MemoryModel(llama8b(), a100x8()).estimate(cfg);
  const MemoryBreakdown eager = MemoryModel(llama8b(), a100x8(), MemoryOptions{MB(1343)}).estimate(cfg);
  EXPECT_NEAR((eager.device - lazy.device).v, 1343e6 - 0.5 * 1073741824.0, 1);
  EXPECT_NEAR(eager.reserved.v, lazy.reserved.v, 1);
  // Fragmentation 0.2 instead of 0.1: reserved = allocated x 1.2.
  const MemoryBreakdown frag = MemoryModel(llama8b(), a100x8(), MemoryOptions{GiB(0.5), 0.2}).estimate(cfg);
  EXPECT_NEAR(frag.reserved.v, frag.allocated.v * 1.2, 1);
  TrainConfig single;
  EXPECT_EQ(nccl_buffer_bytes(GpuArch::ampere, single), 0.0);
  TrainConfig dp;
  dp.dp = 8;
  // 16 channels x 2 peers x 9.2 MiB = 294.4 MiB for one communicator.
  EXPECT_NEAR(nccl_buffer_bytes(GpuArch::ampere, dp), MiB(294.4).v, 1);
}

// Block recompute keeps n of a stage's L layers as 2 sbh checkpoints and the other L - n
// whole. A GPT layer (h 256, 4 heads, s 128, b 1, bf16, dropout, standard attention) keeps
// 34 sbh + 5 a s^2 b = 34 x 32,768 + 5 x 4 x 16,384 = 1,114,112 + 327,680 = 1,441,792 B;
// its checkpoint is 2 sbh = 65,536 B. With L = 8 and n = 2, block holds 6 x (1,441,792 -
// 65,536) = 8,257,536 B more than full recompute (no logits: the loss phase is left out, and
// both pay one live recomputed layer in the backward).
TEST(MemoryModel, BlockRecomputeKeepsTheOtherLayersWhole) {
  ModelSpec m = test::gpt("tiny", 8, 256, 4, 128, 1000, 1);
  m.vocab_logits = false;
  MemoryModel mm(m, a100x8(1));
  TrainConfig cfg;
  cfg.seq_len = 128;
  cfg.checkpointing = Checkpointing::full;
  const double full = mm.estimate(cfg).activations.v;
  cfg.checkpointing = Checkpointing::block;
  cfg.recompute_layers = 2;
  const double block2 = mm.estimate(cfg).activations.v;
  EXPECT_DOUBLE_EQ(block2 - full, 8257536.0);
  cfg.recompute_layers = 8;  // every layer: the same as full
  EXPECT_DOUBLE_EQ(mm.estimate(cfg).activations.v, full);
  cfg.checkpointing = Checkpointing::none;
  EXPECT_GT(mm.estimate(cfg).activations.v + 1441792.0, block2);
}

// The model is called ~1e6 times per search: repeated calls with the same point give the
// same answer whatever came between. (Speed: `dsplan bench`, docs/benchmarks.md.)
TEST(MemoryModel, RepeatedEstimatesAgree) {
  MemoryModel mm(llama8b(), a100x8());
  TrainConfig cfg;
  cfg.dp = 8; cfg.zero_stage = 3; cfg.flash_attention = true;
  std::vector<double> first;
  for (int mb = 1; mb <= 8; ++mb) cfg.micro_batch = mb, first.push_back(mm.estimate(cfg).device.v);
  for (int mb = 8; mb >= 1; --mb) {
    cfg.micro_batch = mb;
    EXPECT_DOUBLE_EQ(mm.estimate(cfg).device.v, first[mb - 1]) << "mbs " << mb;
  }
  EXPECT_LT(first.front(), first.back());
}

}  // namespace
}  // namespace dsplan
