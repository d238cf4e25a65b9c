// The loss kernel (TrainConfig::cross_entropy): a fused cross-entropy that reads the
// 16-bit logits once and overwrites them with their gradient, against the eager loss that
// upcasts them to fp32 and makes separate max, sum-exp and gradient passes.
#include <gtest/gtest.h>

#include "estimator/memory.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::a100_model;
using test::base_cfg;
using test::gpt_1b;

// gpt_1b, micro-batch 2 x seq 2048 = 4096 tokens, vocabulary 51200 (a multiple of 128:
// unpadded): N = 2.097e8 logits, bf16 (e = 2).
//  - torch's eager cross-entropy (DeepSpeed here, in fp32): forward, the upcast (read e,
//    write 4), log_softmax's max, sum-exp and output passes over rows too long for shared
//    memory (read 4, read 4, read 4 + write 4) and nll_loss: 22 B per logit in 3 kernels;
//    backward, nll_loss_backward's zero-filled gradient (write 4) and its scatter,
//    log_softmax's backward (read 4 for the row sums, read 4 + 4, write 4) and the cast
//    down (read 4, write e): 26 B in 4 kernels.
//  - Megatron's vocab-parallel cross-entropy, one pass per step over the fp32 logits:
//    upcast (2 + 4), max (4), subtract (8), exp (8), sum (4), divide (8) = 38 B in 6 kernels;
//    backward, scale the saved softmax (8) and cast back (4 + 2) = 14 B in 2 kernels.
//  - fused: one read, 2 B in 1 kernel; backward reads and writes the 16-bit logits in
//    place, 4 B in 1 kernel.
//  - Megatron-Core's jit-fused variant (CrossEntropy::jit_fused): upcast
//    + max (2 + 4), subtract + exp + sum (8), divide (8) = 22 B in 3 kernels; backward,
//    scale and cast back in one kernel, 4 + 2 = 6 B.
// So fused saves 20 B x N and 2 kernels (torch), 36 B x N and 5 kernels (Megatron eager) or
// 20 B x N and 2 kernels (Megatron jit-fused) forward, and 22 B x N and 3 kernels (torch),
// 10 B x N and a kernel (Megatron eager) or 2 B x N (jit-fused) backward. The logits GEMMs
// are the same.
TEST(LossKernel, FusedCrossEntropyMovesFewerBytes) {
  const StepTimeModel t = a100_model(gpt_1b(), 8);
  const Cluster c = test::cluster(test::dgx_a100(), 8);
  const Efficiency eff = default_efficiency(c.node.gpu);
  const double n = 4096.0 * 51200.0, bw = c.node.gpu.hbm_bw.v * eff.hbm_fraction, k = eff.kernel_overhead.v;
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::deepspeed;
  const StepCosts eager = t.costs(cfg);
  cfg.cross_entropy = CrossEntropy::fused;
  const StepCosts fused = t.costs(cfg);
  EXPECT_NEAR(eager.head_fwd.v - fused.head_fwd.v, 20.0 * n / bw + 2 * k, 1e-9);
  EXPECT_NEAR(eager.head_bwd.v - fused.head_bwd.v, 22.0 * n / bw + 3 * k, 1e-9);
  EXPECT_GT(20.0 * n / bw, 2.5e-3);  // 4.2 GB at ~1.6 TB/s: 2.6 ms per micro-batch
  EXPECT_EQ(fused.layer.fwd.v, eager.layer.fwd.v);
  cfg = base_cfg();  // Megatron
  const StepCosts mg_eager = t.costs(cfg);
  cfg.cross_entropy = CrossEntropy::fused;
  const StepCosts mg_fused = t.costs(cfg);
  EXPECT_NEAR(mg_eager.head_fwd.v - mg_fused.head_fwd.v, 36.0 * n / bw + 5 * k, 1e-9);
  EXPECT_NEAR(mg_eager.head_bwd.v - mg_fused.head_bwd.v, 10.0 * n / bw + k, 1e-9);
  cfg.cross_entropy = CrossEntropy::jit_fused;
  const StepCosts mg_jit = t.costs(cfg);
  EXPECT_NEAR(mg_jit.head_fwd.v - mg_fused.head_fwd.v, 20.0 * n / bw + 2 * k, 1e-9);
  EXPECT_NEAR(mg_jit.head_bwd.v - mg_fused.head_bwd.v, 2.0 * n / bw, 1e-9);
  cfg.framework = Framework::deepspeed;  // a Megatron-only setting: torch's loss is unchanged
  EXPECT_DOUBLE_EQ(t.costs(cfg).head_fwd.v, eager.head_fwd.v);
}

// Memory: the loss peak of the last stage is N logits x bytes per logit (docs/model.md §3):
// 12 B eager under DDP's autocast (three fp32 logits-sized tensors, 2.52 GB) and 2 B fused
// (0.42 GB). The activations peak at the larger of the loss and one layer's backward
// transient, so the saving is 12N - max(2N, transient): at most 10N = 2.1 GB. Here the
// layer's transient (about 1.1 GB) becomes the peak, so more than 1 GB is saved.
TEST(LossKernel, FusedCrossEntropyShrinksTheLossPeak) {
  const Cluster c = test::cluster(test::dgx_a100(), 8);
  MemoryModel mm(gpt_1b(), c, MemoryOptions{});
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::ddp;
  cfg.micro_batch = 2;
  const double eager = mm.estimate(cfg).activations.v;
  cfg.cross_entropy = CrossEntropy::fused;
  const double fused = mm.estimate(cfg).activations.v;
  const double n = 4096.0 * 51200.0;
  EXPECT_GT(eager - fused, 1e9);
  EXPECT_LE(eager - fused, 10.0 * n + 1.0);
}

}  // namespace
}  // namespace dsplan
