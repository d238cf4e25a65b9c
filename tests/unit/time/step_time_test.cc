// StepTimeModel: the closed form against its own StepCosts, FLOP conventions, monotonic
// effects of each knob, offload arithmetic and memo-table behaviour.
#include "estimator/step_time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "estimator/host_stall.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "estimator/time/optimizer.h"
#include "estimator/time/parallel_comm.h"
#include "fixtures.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::A100Comm;
using test::a100_model;
using test::base_cfg;
using test::cluster;
using test::gpt_1b;

// pp = 1, no overlap, one reduction round: the closed form is the plain sum of StepCosts.
TEST(StepTime, ClosedFormIsTheSumOfItsCostsWithoutOverlap) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 1;
  cfg.tp = 2;
  cfg.dp = 4;
  const StepCosts c = t.costs(cfg);
  ASSERT_FALSE(c.overlap_grad_reduce);
  ASSERT_FALSE(c.grad_reduce_every_micro_batch);
  const LayerCosts& l = c.layer;
  const Seconds per_mb = (l.fwd + l.tp_comm_fwd + l.bwd + l.recompute + l.tp_comm_bwd) * c.layers_per_rank +
                         c.embed_fwd + c.embed_bwd + c.head_fwd + c.head_bwd;
  const Seconds sum = per_mb * c.micro_batches + l.grad_reduce * c.layers_per_rank + c.grad_reduce_tail +
                      c.param_allgather + c.optimizer;
  const StepTimeBreakdown b = t.estimate(cfg);
  EXPECT_NEAR(b.step.v, sum.v, 1e-12);
  EXPECT_NEAR(b.step.v, (b.compute + b.comm_exposed + b.bubble + b.optimizer + b.offload).v, 1e-12);
  EXPECT_GT(l.tp_comm_fwd.v, 0);
  EXPECT_GT(c.param_allgather.v, 0);
  EXPECT_EQ(c.layers_per_rank, 24);
}

// Megatron convention: 72 B s L h^2 (1 + s/(12h) + V/(12 L h)) for one replica's batch B.
TEST(StepTime, ModelFlopsFollowMegatron) {
  ModelSpec m = gpt_1b();
  m.vocab_pad_multiple = 1;
  const StepTimeModel t = a100_model(m, 8);
  const TrainConfig cfg = base_cfg();
  const double B = 2 * 4, s = 2048, L = 24, h = 2048, V = 51200;
  const double f = 72 * B * s * L * h * h * (1 + s / (12 * h) + V / (12 * L * h));
  EXPECT_NEAR(t.estimate(cfg).model_flops.v / f, 1.0, 1e-9);
}

// An unfused activation (HF GPT-2's gelu_new) adds 16 passes over the T x f tensor and 7
// launches forward, twice that backward, and no FLOPs: per layer and micro-batch at b=2,
// s=2048 (T=4096), f=8192, bf16 that is 3 x 16 x 4096 x 8192 x 2 B = 3.2 GB more HBM
// traffic, ~2 ms at 0.8 x 2039 GB/s; x 24 layers x 4 micro-batches ~ 0.19 s per step.
TEST(StepTime, UnfusedActivationCostsMemoryTrafficOnly) {
  ModelSpec m = gpt_1b();
  const TrainConfig cfg = base_cfg();
  const StepTimeBreakdown fused = a100_model(m, 8).estimate(cfg);
  m.activation_unfused = true;
  const StepTimeBreakdown chain = a100_model(m, 8).estimate(cfg);
  EXPECT_GT(chain.step.v, fused.step.v * 1.02);
  EXPECT_NEAR(chain.model_flops.v, fused.model_flops.v, 1e-6 * fused.model_flops.v);
}

TEST(StepTime, RecomputeCostsTimeAndHardwareFlopsOnly) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  const StepTimeBreakdown none = t.estimate(cfg);
  cfg.checkpointing = Checkpointing::selective;
  const StepTimeBreakdown sel = t.estimate(cfg);
  cfg.checkpointing = Checkpointing::full;
  const StepTimeBreakdown full = t.estimate(cfg);
  EXPECT_LT(none.step.v, sel.step.v);
  EXPECT_LT(sel.step.v, full.step.v);
  EXPECT_EQ(none.model_flops.v, full.model_flops.v);
  EXPECT_LT(none.hw_flops.v, sel.hw_flops.v);
  // Full recompute redoes the forward: hardware FLOPs ~ 4/3 of fwd + bwd.
  EXPECT_NEAR(full.hw_flops.v / none.hw_flops.v, 4.0 / 3.0, 0.03);
}

TEST(StepTime, FlashAttentionIsFasterAtLongSequences) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  const StepTimeBreakdown std_attn = t.estimate(cfg);
  cfg.flash_attention = true;
  const StepTimeBreakdown flash = t.estimate(cfg);
  EXPECT_LT(flash.step.v, std_attn.step.v);
  EXPECT_LT(flash.hw_flops.v, std_attn.hw_flops.v);  // causal blocks skipped
}

TEST(StepTime, ZeroStagesChangeTheCommunicationPattern) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 2;
  const StepCosts z2 = t.costs(cfg);
  EXPECT_TRUE(z2.grad_reduce_every_micro_batch);
  EXPECT_EQ(z2.layer.param_gather.v, 0);
  cfg.zero_stage = 3;
  const StepCosts z3 = t.costs(cfg);
  EXPECT_GT(z3.layer.param_gather.v, 0);
  EXPECT_TRUE(z3.zero3_prefetch);  // overlap_comm defaults on for stage 3
  EXPECT_EQ(z3.param_allgather.v, 0);
  cfg.zero_stage = 1;
  cfg.zero.overlap_comm = 1;
  EXPECT_TRUE(t.costs(cfg).overlap_grad_reduce);
}

// 1F1B bubble = (p - 1)/v x per-micro-batch stage time; interleaving divides it by v.
TEST(StepTime, PipelineBubble) {
  const StepTimeModel t = a100_model(gpt_1b(), 32);
  TrainConfig cfg = base_cfg();
  cfg.pp = 4;
  cfg.grad_accum = 8;
  const StepTimeBreakdown b1 = t.estimate(cfg);
  cfg.vpp = 2;
  const StepTimeBreakdown b2 = t.estimate(cfg);
  EXPECT_GT(b1.bubble.v, 0);
  EXPECT_NEAR(b2.bubble.v / b1.bubble.v, 0.5, 0.05);
  cfg.vpp = 1;
  const StepCosts c = t.costs(cfg);
  EXPECT_EQ(c.layers_per_rank, 6);
  EXPECT_GT(c.p2p.v, 0);
  EXPECT_GT(c.embed_grad_sync.v, 0);  // tied embeddings across first and last stage
}

// Offloaded Adam on a DGX A100 host: 409.6 GB/s x 0.2 shared by 8 ranks = 10.24 GB/s per
// rank; 42 B/param (CPU Adam 28, DeepSpeed's unscale 8, the 16-bit copy 4 + 2). Shard =
// (24 x 50.4M + 0.105G + ...)/8 params; PCIe at 31.5 x 0.8 = 25.2 GB/s: 2 B/param up; down,
// over the 4 micro-batches' reduction rounds, three 16-bit accumulation copies and the
// boundary's fp32 gradients (DeepSpeed widens them before the copy): (3 x 2 + 4) / 4 = 2.5 B.
TEST(StepTime, OffloadArithmetic) {
  const ModelSpec m = gpt_1b();
  const StepTimeModel t = a100_model(m, 8);
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 2;
  cfg.offload = Offload::optimizer;
  const StepCosts c = t.costs(cfg);
  const double per_layer = 12.0 * 2048 * 2048 + 13.0 * 2048;  // weights + biases + 2 LayerNorms
  const double shard = (24 * per_layer + 51200.0 * 2048 + 2048.0 * 2048 + 2 * 2048) / 8;
  EXPECT_NEAR(c.optimizer.v, shard * 42 / 10.24e9, 1e-3 * c.optimizer.v);
  EXPECT_NEAR(c.offload_h2d.v, shard * 2 / 25.2e9, 1e-3 * c.offload_h2d.v);
  EXPECT_NEAR(c.offload_d2h.v, shard * 2.5 / 25.2e9, 1e-3 * c.offload_d2h.v);
  EXPECT_GT(t.estimate(cfg).offload.v, 0);
}

TEST(StepTime, SequenceParallelMovesTheSameBytes) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  cfg.tp = 8;
  cfg.dp = 1;
  const Seconds ar = t.costs(cfg).layer.tp_comm_fwd;
  cfg.sequence_parallel = true;
  const Seconds sp = t.costs(cfg).layer.tp_comm_fwd;
  EXPECT_NEAR(sp.v / ar.v, 1.0, 0.1);
  EXPECT_LT(t.costs(cfg).layer.fwd.v, t.costs(base_cfg()).layer.fwd.v);
}

TEST(StepTime, CopiesAreIndependentAndAgree) {
  const StepTimeModel a = a100_model(gpt_1b(), 8);
  const StepTimeModel b = a;  // fresh memo tables
  EXPECT_EQ(a.estimate(base_cfg()).step.v, b.estimate(base_cfg()).step.v);
  const StepTimeBreakdown r = a.estimate(base_cfg());
  ASSERT_FALSE(r.critical_path.empty());
  EXPECT_EQ(r.critical_path.front().rfind("compute", 0), 0u) << r.critical_path.front();
}

// The search calls estimate ~1e5-1e6 times through memo tables (step_caches.h). A warm
// model must give exactly what a fresh one gives for every point, in any order. The
// communication entry leaves the micro-batch and sequence out of its key without a
// pipeline (they reach it only through the pipeline's sends), so the grid crosses both
// with pp 1 and 2. (Speed is measured by `dsplan bench`, docs/benchmarks.md, not asserted
// here.)
TEST(StepTime, WarmEstimatesEqualFreshOnes) {
  const StepTimeModel warm = a100_model(gpt_1b(), 64);
  std::vector<TrainConfig> grid;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2})
      for (int zero : {0, 1, 2, 3})
        for (int mb : {1, 2, 4})
          for (int seq : {1024, 2048})
            for (int gas : {1, 4, 16})
              for (auto ck : {Checkpointing::none, Checkpointing::full}) {
                if (pp > 1 && zero > 1) continue;  // DeepSpeed pipelines take ZeRO 0-1
                TrainConfig c = base_cfg();
                c.framework = Framework::deepspeed;
                c.tp = tp, c.pp = pp, c.dp = 64 / (tp * pp), c.zero_stage = zero;
                c.micro_batch = mb, c.seq_len = seq, c.grad_accum = gas;
                c.checkpointing = ck;
                grid.push_back(c);
              }
  StepTimeBreakdown out;
  for (const TrainConfig& c : grid) warm.estimate_into(c, out);  // fill the tables
  for (auto it = grid.rbegin(); it != grid.rend(); ++it) {       // reverse order
    warm.estimate_into(*it, out);
    const StepTimeModel fresh = a100_model(gpt_1b(), 64);
    const StepTimeBreakdown f = fresh.estimate(*it);
    EXPECT_DOUBLE_EQ(out.step.v, f.step.v);
    EXPECT_DOUBLE_EQ(out.comm_exposed.v, f.comm_exposed.v);
    EXPECT_DOUBLE_EQ(out.compute.v, f.compute.v);
    EXPECT_DOUBLE_EQ(out.bubble.v, f.bubble.v);
    EXPECT_DOUBLE_EQ(out.optimizer.v, f.optimizer.v);
    EXPECT_EQ(out.critical_path, f.critical_path);
  }
}

// StepTimeModel computes a layer's operators once without checkpointing and derives each
// mode's recompute from them (set_recompute; step_caches.h). That holds only while nothing
// else in OpCosts depends on checkpointing: the derived costs must equal operator_costs
// run with the mode itself, field for field, with and without FlashAttention.
TEST(StepTime, CheckpointingModesDeriveFromOneOperatorPass) {
  const A100Comm a(8);
  for (bool flash : {false, true})
    for (auto ck :
         {Checkpointing::none, Checkpointing::selective, Checkpointing::full, Checkpointing::block}) {
      OpKey k;
      k.tp = 2, k.micro_batch = 2, k.seq_len = 2048, k.flash = flash, k.precision = Precision::bf16;
      k.framework = Framework::megatron;
      k.ckpt = ck;
      const OpCosts direct = operator_costs(a.m, a.c.node.gpu, a.eff, k);
      k.ckpt = Checkpointing::none;
      OpCosts derived = operator_costs(a.m, a.c.node.gpu, a.eff, k);
      set_recompute(derived, ck);
      EXPECT_EQ(derived.recompute.v, direct.recompute.v);
      EXPECT_EQ(derived.host.recompute.v, direct.host.recompute.v);
      EXPECT_EQ(derived.recompute_flops_hw.v, direct.recompute_flops_hw.v);
      EXPECT_EQ(derived.fwd.v, direct.fwd.v);
      EXPECT_EQ(derived.bwd.v, direct.bwd.v);
      EXPECT_EQ(derived.head_bwd.v, direct.head_bwd.v);
      EXPECT_EQ(derived.embed_bwd.v, direct.embed_bwd.v);
      // full and block rerun the whole forward, selective the attention core, none nothing
      const double expected = ck == Checkpointing::none        ? 0.0
                              : ck == Checkpointing::selective ? direct.attn_core_fwd.v
                                                               : direct.fwd.v;
      EXPECT_EQ(derived.recompute.v, expected);
    }
}

// Memory passes over a layer's gradients (parallel_comm.cc, gradient_handling). One layer
// of gpt_1b has 12 h^2 + 13 h = 50,331,648 + 26,624 = 50,358,272 parameters; DGX A100 moves
// 2,039 GB/s x 0.8 = 1.6312e12 B/s at 4 us per kernel:
//  - DDP fp16: autocast's widening of the weight gradients (6 B/param) is an operator cost
//    (OperatorCosts.AutocastCastsOncePerTensor), nothing here;
//  - DDP accumulation into fp32 .grad, 12 B/param, 12 kernels: 370.463 + 48 = 418.463 us;
//  - DDP bucket copy in and out, 16 B/param, 24 kernels: 493.951 + 96 = 589.951 us;
//  - PyTorch 1.x's zero_grad(set_to_none=False) under DDP, once per step: zero .grad
//    (write 4) and the first micro-batch's accumulation into it (12), 16 B/param in 24
//    kernels: another 589.951 us;
//  - DeepSpeed ZeRO-1 bf16 accumulation, 6 B/param in 12 kernels: 302,149,632 B / 1.6312e12
//    = 185.232 us + 48 = 233.232 us;
//  - DeepSpeed ZeRO-1 bf16 reduction: flatten, scale by 1/dp and copy back, 3 x (2 + 2) =
//    12 B/param, 12 kernels, once per step: 604,299,264 B / 1.6312e12 = 370.463 us + 48 =
//    418.463 us;
//  - DeepSpeed ZeRO-2 bf16, every micro-batch: the copy into the reduction buffer, the
//    flatten and the scale, 12 B/param, 12 kernels: 418.463 us, beside ZeRO-2's
//    per-tensor hook placeholder of 12 x 150 us = 1,800 us;
//  - FSDP1 bf16: the cat of SplitWithSizesBackward into the flat gradient (2 + 2) and the
//    pre-divide (2 + 2), 8 B/param, 2 kernels: 246.975 + 8 = 254.975 us;
//  - DeepSpeed bf16 ZeRO-0 (BF16_Optimizer) casts and adds into fp32, 18 B/param and 24
//    kernels, every micro-batch: 906,448,896 B / 1.6312e12 = 555.695 us + 96 = 651.695 us;
//    its reduction only scales the flat fp32 buffer, 8 B/param once per step:
//    402,866,176 B / 1.6312e12 = 246.975 us (the flatten and copy-back are views);
//  - Megatron fuses accumulation into the weight-gradient GEMM: nothing. Its reduction
//    scales the fp32 gradient buffer by 1/dp once per step, 8 B/param with no kernel
//    counted (one per bucket): 402,866,176 B / 1.6312e12 = 246.975 us; before 2021-08 it
//    flattened, scaled and copied back 16-bit gradients: 12 B/param, 12 kernels, 418.463 us.
TEST(GradientHandling, PassesOverTheLayerGradients) {
  const A100Comm a(8);
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::ddp;
  cfg.precision = Precision::fp16;
  ParallelComm pc = a.of(cfg);
  EXPECT_EQ(pc.layer_bwd_extra.v, 0.0);
  EXPECT_NEAR(pc.layer_grad_accumulate.v, 418.463e-6, 1e-9);
  EXPECT_NEAR(pc.layer_step_passes.v, 589.951e-6, 1e-9);
  cfg.fused_optimizer = 0;  // a 2021 Hugging Face Trainer loop on PyTorch 1.x
  EXPECT_NEAR(a.of(cfg).layer_step_passes.v, 2 * 589.951e-6, 1e-9);
  cfg.dp = 1;  // no DDP wrapper, no buckets; the zeroed gradients remain
  EXPECT_NEAR(a.of(cfg).layer_step_passes.v, 589.951e-6, 1e-9);
  cfg.fused_optimizer = -1;
  EXPECT_EQ(a.of(cfg).layer_step_passes.v, 0.0);
  cfg = base_cfg();
  cfg.framework = Framework::deepspeed;
  cfg.zero_stage = 1;
  pc = a.of(cfg);
  EXPECT_NEAR(pc.layer_grad_accumulate.v, 233.232e-6, 1e-9);
  EXPECT_NEAR(pc.layer_step_passes.v, 418.463e-6, 1e-9);
  EXPECT_EQ(pc.layer_bwd_extra.v, 0.0);
  cfg.dp = 1;  // the engine reduces (and so flattens, scales, copies) at any dp
  EXPECT_NEAR(a.of(cfg).layer_step_passes.v, 418.463e-6, 1e-9);
  cfg.dp = 8;
  cfg.zero_stage = 2;
  pc = a.of(cfg);
  EXPECT_NEAR(pc.layer_bwd_extra.v, 418.463e-6 + 1800e-6, 1e-9);
  EXPECT_EQ(pc.layer_step_passes.v, 0.0);
  cfg.zero_stage = 0;  // bf16 without ZeRO on DeepSpeed before 0.17.6: BF16_Optimizer
  cfg.deepspeed_release = 202501;
  pc = a.of(cfg);
  EXPECT_NEAR(pc.layer_bwd_extra.v, 651.695e-6, 1e-9);
  EXPECT_NEAR(pc.layer_step_passes.v, 246.975e-6, 1e-9);
  EXPECT_EQ(pc.layer_grad_accumulate.v, 0.0);
  cfg.framework = Framework::fsdp;
  cfg.zero_stage = 3;
  pc = a.of(cfg);
  EXPECT_NEAR(pc.layer_bwd_extra.v, 254.975e-6, 1e-9);
  EXPECT_EQ(pc.layer_grad_accumulate.v, 0.0);
  cfg.framework = Framework::megatron;
  cfg.zero_stage = 1;
  pc = a.of(cfg);
  EXPECT_EQ(pc.layer_bwd_extra.v + pc.layer_grad_accumulate.v, 0.0);
  EXPECT_NEAR(pc.layer_step_passes.v, 246.975e-6, 1e-9);  // scale the fp32 buffer: 8 B/param
  cfg.dp = 1;                                             // Megatron-Core skips a scale by 1
  EXPECT_EQ(a.of(cfg).layer_step_passes.v, 0.0);
  cfg.megatron_release = 202012;  // local DDP of 2020: flatten, scale, copy back, at any dp
  cfg.precision = Precision::fp16;
  EXPECT_NEAR(a.of(cfg).layer_step_passes.v, 418.463e-6, 1e-9);
  cfg.megatron_release = 202104;  // bf16 had the fp32 contiguous buffer from 2021-03: scale
  cfg.precision = Precision::bf16;
  EXPECT_NEAR(a.of(cfg).layer_step_passes.v, 246.975e-6, 1e-9);
}

// A step of m micro-batches pays m - 1 accumulations and one DDP bucket copy per layer:
// the per-micro-batch backward with m = 4 differs from m = 1 by 3/4 (accumulate - copy).
TEST(GradientHandling, AccumulationAndBucketCopiesPerStep) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::ddp;
  cfg.precision = Precision::fp16;
  cfg.grad_accum = 1;
  const StepCosts one = t.costs(cfg);
  cfg.grad_accum = 4;
  const StepCosts four = t.costs(cfg);
  EXPECT_NEAR((four.layer.bwd - one.layer.bwd).v, 0.75 * (418.463e-6 - 589.951e-6), 1e-9);
}

// Block recompute of n of the stage's L layers costs n/L of full recompute per layer (the
// step pays n full layer forwards again), and n/L of its hardware FLOPs.
TEST(StepTime, BlockRecomputeCostsItsShareOfFull) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  TrainConfig cfg = base_cfg();
  cfg.checkpointing = Checkpointing::full;
  const StepCosts full = t.costs(cfg);
  const StepTimeBreakdown full_b = t.estimate(cfg);
  cfg.checkpointing = Checkpointing::block;
  cfg.recompute_layers = 6;  // of 24
  const StepCosts block = t.costs(cfg);
  EXPECT_NEAR(block.layer.recompute.v, full.layer.recompute.v * 6.0 / 24.0, 1e-15);
  cfg.checkpointing = Checkpointing::none;
  const StepTimeBreakdown none_b = t.estimate(cfg);
  cfg.checkpointing = Checkpointing::block;
  const StepTimeBreakdown block_b = t.estimate(cfg);
  EXPECT_NEAR((block_b.hw_flops - none_b.hw_flops).v, 0.25 * (full_b.hw_flops - none_b.hw_flops).v,
              1e-6 * full_b.hw_flops.v);
  EXPECT_LT(none_b.step.v, block_b.step.v);
  EXPECT_LT(block_b.step.v, full_b.step.v);
}

// A model without dropout runs no dropout kernels. Hand count, Hugging Face-style layer
// (framework deepspeed), bf16 (e = 2), standard attention, b = 1, s = 128, h = 256,
// 4 heads: the residual tensor x = s h = 32,768 elements, the scores sc = 4 x 128^2 =
// 65,536. Forward dropout passes: the attention probabilities sc (2e + 1) = 327,680 B and
// two residual-stream dropouts 2 x (2e + 1) = 327,680 B, 655,360 B over 131,072 elements
// in 3 kernels. On H200 they are the dropout-forward class (elementwise.h): stream time
// 655,360 / (4,800e9 x 0.89) = 0.153408 us, issue time 131,072 / (2.7 x 132 x 1.98e9)
// = 0.185741 us, (0.153408^3 + 0.185741^3)^(1/3) = 0.215575 us, plus 3 x 3 us of kernel
// overhead: 9.215575 us. The backward moves twice those bytes in twice the kernels and
// streams (a mask multiply): 1,310,720 / 4.272e12 = 0.306816 us + 18 us = 18.306816 us.
TEST(OperatorCosts, DropoutPassesAreCountedOnlyWhenTheModelHasDropout) {
  const GpuSpec gpu = test::h200();
  Efficiency eff = default_efficiency(gpu);
  eff.host_op_overhead = Seconds{};
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 128;
  ModelSpec m = test::gpt("tiny", 2, 256, 4, 128, 50257, 128);
  ASSERT_TRUE(has_dropout(m));
  const OpCosts with = operator_costs(m, gpu, eff, k);
  m.dropout = false;
  const OpCosts without = operator_costs(m, gpu, eff, k);
  EXPECT_NEAR((with.fwd - without.fwd).v, 9.215575e-6, 1e-11);
  EXPECT_NEAR((with.bwd - without.bwd).v, 18.306816e-6, 1e-11);
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// Rank order tp, dp, pp (Megatron parallel_state; DeepSpeed axes pipe, data, model):
// 16 GPUs on 4-GPU Polaris nodes.
//  - tp 1, pp 2, dp 8: stage 0 = ranks 0-7 (nodes 0-1), stage 1 = ranks 8-15 (nodes 2-3).
//    A DP group is 8 consecutive ranks, 4 per node; every pipeline hop (r -> r + 8) and the
//    tied-embedding pair leave the node.
//  - tp 2, pp 4, dp 2 (one node holds ranks 0-3 = stage 0): DP group {0, 2} or {1, 3}, both
//    on one node; pipeline hops (stride 4) cross nodes.
//  - tp 1, pp 4, dp 1 on one 4-GPU node: all hops stay inside the node.
TEST(Placement, PipelineIsTheOutermostAxis) {
  const SystemSpec node = test::polaris();
  TrainConfig c;
  c.tp = 1, c.pp = 2, c.dp = 8;
  Placement p = place(c, node);
  EXPECT_EQ(p.dp.ranks, 8);
  EXPECT_EQ(p.dp.ranks_per_node, 4);
  EXPECT_EQ(p.pp_p2p.ranks_per_node, 1);
  EXPECT_EQ(p.embed.ranks_per_node, 1);
  c.tp = 2, c.pp = 4, c.dp = 2;
  p = place(c, node);
  EXPECT_EQ(p.tp.ranks_per_node, 2);
  EXPECT_EQ(p.dp.ranks_per_node, 2);
  EXPECT_EQ(p.pp_p2p.ranks_per_node, 1);
  c.tp = 1, c.pp = 4, c.dp = 1;
  p = place(c, node);
  EXPECT_EQ(p.pp_p2p.ranks_per_node, 2);
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// A 2-layer, h = 256 model at 128 tokens on an H200: every kernel is a few microseconds on
// the GPU (the largest GEMM, 128 x 1024 x 256, is 67 MFLOP = 0.1 us of math plus the 3 us
// kernel overhead), so the host issues the layer slower than the GPU runs it. Its host time
// is launches x host_op_overhead, a whole number of 10 us, and exceeds the GPU time; the GPU
// time itself does not depend on the host. The step waits for the host (host_stall).
// gpt-2.7b at micro-batch 4 (h = 2560, 8192 tokens: ~0.5 ms per QKV GEMM) is GPU-bound:
// its host time is far below its GPU time.
TEST(OperatorCosts, SmallKernelsAreLaunchBound) {
  const GpuSpec gpu = test::h200();
  Efficiency eff = default_efficiency(gpu);
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 128;
  k.precision = Precision::bf16;
  const ModelSpec tiny = test::gpt("tiny", 2, 256, 4, 128, 50257, 128);
  const OpCosts with_host = operator_costs(tiny, gpu, eff, k);
  EXPECT_GT(with_host.host.fwd.v, 1.5 * with_host.fwd.v);
  const double launches = with_host.host.fwd.v / 10e-6;
  EXPECT_NEAR(launches, std::round(launches), 1e-6);
  EXPECT_GE(launches, 15);  // 4 GEMMs + attention (2 GEMMs, 4 score kernels) + 6 elementwise
  eff.host_op_overhead = Seconds{};
  const OpCosts gpu_only = operator_costs(tiny, gpu, eff, k);
  EXPECT_DOUBLE_EQ(gpu_only.fwd.v, with_host.fwd.v);
  EXPECT_EQ(gpu_only.host.fwd.v, 0.0);

  const ModelSpec big = test::gpt("gpt-2.7b", 32, 2560, 32, 2048, 50257, 128);
  k.micro_batch = 4;
  k.seq_len = 2048;
  eff.host_op_overhead = us(10);
  const OpCosts big_costs = operator_costs(big, gpu, eff, k);
  EXPECT_LT(big_costs.host.fwd.v, 0.2 * big_costs.fwd.v);
  EXPECT_LT(big_costs.host.bwd.v, 0.2 * big_costs.bwd.v);
}

// host_stall() by hand. One micro-batch of 2 layers, no embedding or head, GPU 1 ms per
// layer forward and 2 ms per backward, optimizer 3 ms on the GPU.
//  - Host 0.5 ms per pass (optimizer 0.1): the host stays ahead after the first pass; the
//    lead H - G' peaks at the first pass, 0.5 - 1 < 0: no stall.
//  - Host 4 ms per layer pass: the leads after each pass are 4-1, 8-2, 12-4, 16-6 = 3, 6,
//    8, 10 ms; the optimizer (host 0.1, GPU 3) brings it to 7.1: the stall is 10 ms, so the
//    GPU ends at 16 ms (host done) + 3 ms (optimizer) = 9 + 10.
//  - Two micro-batches of the second: the drift is 10 ms per micro-batch, so the lead
//    peaks at 10 + 10 = 20 ms before the optimizer.
TEST(HostStall, TwoMachineFlowShopByHand) {
  StepCosts c;
  c.layers_per_rank = 2;
  c.layer.fwd = ms(1);
  c.layer.bwd = ms(2);
  c.optimizer = ms(3);
  c.host.layer_fwd = c.host.layer_bwd = ms(0.5);
  c.host.optimizer = ms(0.1);
  EXPECT_EQ(host_stall(c).v, 0.0);
  c.host.layer_fwd = c.host.layer_bwd = ms(4);
  EXPECT_NEAR(in_ms(host_stall(c)), 10.0, 1e-9);
  c.micro_batches = 2;
  EXPECT_NEAR(in_ms(host_stall(c)), 20.0, 1e-9);
  // host_issue() sums what the host issues: 2 micro-batches x 2 layers x (4 + 4) ms + the
  // optimizer's 0.1 = 32.1 ms; the embedding and head (pp 1, all zero here) add nothing.
  EXPECT_NEAR(in_ms(host_issue(c)), 32.1, 1e-9);
}

}  // namespace
}  // namespace dsplan
