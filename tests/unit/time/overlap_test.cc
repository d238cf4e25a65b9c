// Overlap contention (estimator/overlap.h, docs/model.md §4.6): the window formula, the
// ZeRO-3 gather split, and the closed form's use of them for a DDP all-reduce and for
// Megatron's asynchronous TP backward. Hand-derived numbers show their arithmetic.
#include "estimator/overlap.h"

#include <gtest/gtest.h>

#include "estimator/time/operators.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

using test::base_cfg;
using test::cluster;
using test::gpt_1b;

constexpr double kTol = 1e-12;

TEST(Overlap, WindowIsTheCollectiveOrTheSlowedCompute) {
  // compute 2, collective 1.5, loss 0.2: 2 + 0.2 x 1.5 = 2.3 > 1.5.
  EXPECT_NEAR(contended_window(ms(2), ms(1.5), 0.2).v, 2.3e-3, kTol);
  // compute 2, collective 3: the compute needs 2 / 0.8 = 2.5 < 3, so the window is 3.
  EXPECT_NEAR(contended_window(ms(2), ms(3), 0.2).v, 3e-3, kTol);
  // compute 2, collective 2.4: 2 + 0.2 x 2.4 = 2.48 > 2.4 (2 / 0.8 = 2.5 > 2.4).
  EXPECT_NEAR(contended_window(ms(2), ms(2.4), 0.2).v, 2.48e-3, kTol);
  // loss 0 is perfect overlap: max(2, 1.5).
  EXPECT_NEAR(contended_window(ms(2), ms(1.5), 0.0).v, 2e-3, kTol);
}

TEST(Overlap, GathersSplitIntoExposureAndContention) {
  // g = 0.5, layer 1, 4 layers, prefetch: exposed 4 x 1 + 0.5 - 4 = 0.5 (the first gather);
  // 3 windows of max(0.5, 1 + 0.1) = 1.1: contention 3 x 0.1 = 0.3.
  GatherOverlap g = gather_overlap(ms(0.5), ms(1), 4, true, 0.2);
  EXPECT_NEAR(g.exposed.v, 0.5e-3, kTol);
  EXPECT_NEAR(g.contention.v, 0.3e-3, kTol);
  // g = 3 > layer 1: exposed 4 x 3 + 1 - 4 = 9; each window max(3, 1.6) = 3, no contention.
  g = gather_overlap(ms(3), ms(1), 4, true, 0.2);
  EXPECT_NEAR(g.exposed.v, 9e-3, kTol);
  EXPECT_NEAR(g.contention.v, 0.0, kTol);
  // Without prefetch nothing runs beside the compute: 4 x 0.5 exposed.
  g = gather_overlap(ms(0.5), ms(1), 4, false, 0.2);
  EXPECT_NEAR(g.exposed.v, 2e-3, kTol);
  EXPECT_NEAR(g.contention.v, 0.0, kTol);
}

StepTimeModel model_with_loss(const ModelSpec& m, int gpus, double loss) {
  const Cluster c = cluster(test::dgx_a100(), gpus);
  Efficiency e = default_efficiency(c.node.gpu);
  e.overlap_compute_loss = loss;
  return StepTimeModel(m, c, e);
}

TEST(Overlap, ClosedFormChargesTheHiddenReductionToCompute) {
  // torch DDP on 16 GPUs (2 nodes), one reduction round overlapped with the last
  // backward. With loss f the compute grows by f x hidden, hidden = min(reduce - last
  // bucket, backward window); the exposed part shrinks by as much, but not below the
  // last bucket. Expected values come from the model's own StepCosts.
  TrainConfig cfg = base_cfg();
  cfg.framework = Framework::ddp;
  cfg.dp = 16;
  const double f = 0.19;
  const StepTimeModel with = model_with_loss(gpt_1b(), 16, f);
  const StepTimeModel without = model_with_loss(gpt_1b(), 16, 0.0);
  const StepCosts c = with.costs(cfg);
  ASSERT_TRUE(c.overlap_grad_reduce);
  ASSERT_FALSE(c.grad_reduce_every_micro_batch);
  const int L = c.layers_per_rank;
  const Seconds window = (c.layer.bwd + c.layer.recompute) * L;
  const Seconds reduce = c.layer.grad_reduce * L;
  const Seconds last = c.layer.grad_reduce * std::min(double(L), c.bucket_bytes / c.layer.grad_bytes);
  const Seconds hidden = min(reduce - last, window);
  ASSERT_GT(hidden.v, 0.0);
  const StepTimeBreakdown a = with.estimate(cfg), b = without.estimate(cfg);
  EXPECT_NEAR((a.compute - b.compute).v, f * hidden.v, 1e-9);
  EXPECT_NEAR(a.contention.v, f * hidden.v, 1e-12);
  EXPECT_EQ(b.contention.v, 0.0);
  const Seconds exposed_before = max(last, reduce - window);
  const Seconds exposed_after = max(last, reduce - window - hidden * f);
  EXPECT_NEAR((a.step - b.step).v, (f * hidden + exposed_after - exposed_before).v, 1e-9);
  EXPECT_GT(a.step.v, b.step.v);
}

TEST(Overlap, AsyncTensorParallelBackwardLosesBesideItsAllReduce) {
  // Megatron tp 2: the input-gradient all-reduce c runs beside each of two weight-gradient
  // GEMMs w (QKV, FC1). Perfect overlap shows max(0, c - w) of each; with loss f the
  // window is max(c, w + f c), so each shows max(c, w + f c) - w instead.
  TrainConfig cfg = base_cfg();
  cfg.tp = 2;
  cfg.dp = 4;
  ASSERT_TRUE(cfg.megatron_async_tp());
  const double f = 0.19;
  const StepTimeModel with = model_with_loss(gpt_1b(), 8, f);
  const StepTimeModel without = model_with_loss(gpt_1b(), 8, 0.0);
  const test::A100Comm comm(8);
  const Seconds c = comm.of(cfg).tp_bwd_input_grad;
  OpKey k;
  k.tp = 2;
  k.micro_batch = cfg.micro_batch;
  k.seq_len = cfg.seq_len;
  k.precision = cfg.precision;
  k.framework = cfg.framework;
  const OpCosts op = operator_costs(comm.m, comm.c.node.gpu, comm.eff, k);
  ASSERT_GT(c.v, 0.0);
  auto grow = [&](Seconds w) { return max(c, w + c * f) - w - max(Seconds{}, c - w); };
  const Seconds expected = grow(op.wgrad_qkv) + grow(op.wgrad_fc1);
  const Seconds got = with.costs(cfg).layer.tp_comm_bwd - without.costs(cfg).layer.tp_comm_bwd;
  EXPECT_GT(got.v, 0.0);
  EXPECT_NEAR(got.v, expected.v, 1e-12);
}

}  // namespace
}  // namespace dsplan
