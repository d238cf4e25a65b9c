// ZeRO-2/3 gradient reduction after every micro-batch (grad_reduce_every_micro_batch):
// the no-overlap sum, overlap with each micro-batch's backward, the device sync before
// the next micro-batch, offload copies per micro-batch, and the analytic overlap of the
// non-last micro-batches matching the per-layer tail of the last one. Times in ms; every
// expected value is derived by hand in the comment above it.
#include "simulator/micro_batch_reduce.h"

#include <gtest/gtest.h>

#include "simulator/simulate.h"
#include "step_costs_fixture.h"

namespace dsplan {
namespace {

constexpr double kTol = 1e-9;  // ms

double in(Seconds s) { return in_ms(s); }

// pp = 1, L layers with forward 1 ms and backward 2 ms, reductions every micro-batch.
StepCosts zero2(int layers, int micro_batches) {
  StepCosts c = test::plain(layers, micro_batches);
  c.grad_reduce_every_micro_batch = true;
  return c;
}

// m = 3, L = 4, one 100 MB bucket per layer, reduce 1.5 < backward 2, tail 0.4, optimizer 1.
StepCosts bucketed_zero2() {
  StepCosts c = test::bucket_per_layer(zero2(4, 3));
  c.grad_reduce_tail = ms(0.4);
  return c;
}

using test::run;

TEST(MicroBatchReduce, WithoutOverlapEveryMicroBatchPaysTheWholeReduction) {
  // m = 3, L = 4, reduce 0.5 per layer, tail 0.4, optimizer 3, overlap off. Per
  // micro-batch 4 x 3 = 12 of compute, then 4 x 0.5 + 0.4 = 2.4 of reduction before the
  // next one starts: 3 x 14.4 + 3 = 46.2 (once per step it would be 36 + 2.4 + 3 = 41.4).
  StepCosts c = zero2(4, 3);
  c.layer.grad_reduce = ms(0.5);
  c.grad_reduce_tail = ms(0.4);
  c.optimizer = ms(3);
  c.overlap_grad_reduce = false;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 46.2, kTol);
  EXPECT_NEAR(in(closed_form_sum(c)), 46.2, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 7.2, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 36.0, kTol);
  c.grad_reduce_every_micro_batch = false;
  EXPECT_NEAR(in(run(c).step), 41.4, kTol);
  EXPECT_NEAR(in(closed_form_sum(c)), 41.4, kTol);
}

TEST(MicroBatchReduce, Zero3GathersQueueWithTheReductions) {
  // A non-last micro-batch of ZeRO-3 with prefetched gathers g = 1 on the reductions'
  // communicator (gather_shares_reduce). L = 4, b = 2, one bucket per layer reduced in 2.5.
  // The pass is 4 x 2 + 1 (the first gather) = 9, laid as 2.25 per layer; buckets fill at
  // 2.25, 4.5, 6.75, 9. Alone the reductions run [2.25, 4.75], [4.75, 7.25], [7.25, 9.75],
  // [9.75, 12.25]: 3.25 after the pass. Shared, the gathers queue at each layer's start
  // (the first and the prefetch of layer 1 at 0, layers 2 and 3 at 2.25 and 4.5): g [0, 1],
  // g [1, 2], r [2.25, 4.75], g [4.75, 5.75], r [5.75, 8.25], g [8.25, 9.25],
  // r [9.25, 11.75], r [11.75, 14.25]: 5.25 after the pass.
  StepCosts c = test::bucket_per_layer(zero2(4, 2));
  c.layer.grad_reduce = ms(2.5);
  c.layer.param_gather = ms(1);
  c.zero3_prefetch = true;
  EXPECT_NEAR(in(sim::micro_batch_reduction(c, 0).reduce_exposed), 3.25, kTol);
  c.gather_shares_reduce = true;
  EXPECT_NEAR(in(sim::micro_batch_reduction(c, 0).reduce_exposed), 5.25, kTol);
  // FSDP hybrid, 1 of the 2.5 on the replica group after each reduce-scatter (1.5), the
  // gathers on the shard group as before: g [0, 1], g [1, 2], rs [2.25, 3.75] ar
  // [3.75, 4.75]; g [3.75, 4.75], rs [4.75, 6.25] ar [6.25, 7.25]; g [6.25, 7.25], rs
  // [7.25, 8.75] ar [8.75, 9.75]; rs [9, 10.5] ar [10.5, 11.5]: 2.5 after the pass.
  c.layer.grad_reduce_replica = ms(1);
  EXPECT_NEAR(in(sim::micro_batch_reduction(c, 0).reduce_exposed), 2.5, kTol);
}

TEST(MicroBatchReduce, OverlapHidesAllButTheLastBucketOfEachMicroBatch) {
  // m = 3, L = 4, one bucket per layer, reduce 1.5 < backward 2, tail 0.4, optimizer 1.
  // In each backward the layers end at 2, 4, 6, 8 and the buckets reduce in [2, 3.5],
  // [4, 5.5], [6, 7.5], [8, 9.5]: 1.5 + 0.4 = 1.9 is exposed per micro-batch, and the
  // next forward waits for it. 3 x (4 + 8 + 1.9) + 1 = 42.7.
  const StepCosts c = bucketed_zero2();
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 42.7, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 3 * 1.9, kTol);
  // dp_comm busy 3 x (4 x 1.5 + 0.4) = 19.2, hidden parts included.
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(r.streams[1].stream, "rank0/dp_comm");
  EXPECT_NEAR(in(r.streams[1].busy), 19.2, kTol);
  // The analytic part: 1.9 exposed, 6 - 1.5 = 4.5 hidden.
  const sim::MicroBatchReduction m = sim::micro_batch_reduction(c, 0);
  EXPECT_NEAR(in(m.reduce_exposed), 1.9, kTol);
  EXPECT_NEAR(in(m.reduce_hidden), 4.5, kTol);
}

TEST(MicroBatchReduce, ContentionSlowsEachBackwardByLossTimesTheHiddenReduction) {
  // As above with overlap_compute_loss 0.2 (estimator/overlap.h). Earlier micro-batches
  // (analytic): 4.5 hidden, so the backward loses 0.2 x 4.5 = 0.9; the last bucket still
  // reduces after the backward (1.5 + tail 0.4 = 1.9 exposed): 4 + 8 + 0.9 + 1.9 = 14.8.
  // The last micro-batch (per-layer tail, scheduled): layer 1 [0, 2] alone, layers 2-4
  // each beside the previous bucket's 1.5 take 2 + 0.3 and end 4.3, 6.6, 8.9; the last
  // bucket [8.9, 10.4], tail 0.4: 4 + 8.9 + 1.9 = 14.8 too. 3 x 14.8 + 1 = 45.4.
  StepCosts c = bucketed_zero2();
  c.overlap_compute_loss = 0.2;
  const sim::MicroBatchReduction m = sim::micro_batch_reduction(c, 0);
  EXPECT_NEAR(in(m.contention), 0.9, kTol);
  EXPECT_NEAR(in(m.reduce_exposed), 1.9, kTol);
  EXPECT_NEAR(in(m.reduce_hidden), 4.5, kTol);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 45.4, kTol);
  EXPECT_NEAR(in(r.breakdown.contention), 2 * 0.9 + 3 * 0.3, kTol);  // analytic + the tail
}

TEST(MicroBatchReduce, ReductionSlowerThanBackwardPilesUpPerMicroBatch) {
  // reduce 3 > backward 2 per layer, m = 2: buckets queue from t = 2 of the backward and
  // end at 2 + 4 x 3 = 14, 6 after the backward's end at 8. 2 x (4 + 8 + 6) = 36.
  StepCosts c = zero2(4, 2);
  c.layer.grad_reduce = ms(3);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 36.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 12.0, kTol);
}

TEST(MicroBatchReduce, OffloadCopiesEveryMicroBatch) {
  // m = 2, L = 4, reduce 0.5, D2H 12 (3 per layer bucket), CPU Adam 3, H2D 2. Per
  // micro-batch the backward ends at 8 (from its start at 4); reductions [2, 2.5],
  // [4, 4.5], [6, 6.5], [8, 8.5]; copies [2.5, 5.5], [5.5, 8.5], [8.5, 11.5],
  // [11.5, 14.5]: the first micro-batch's reduction task holds 0.5, its copy task
  // 14.5 - 8.5 = 6 (6 of the 12 ran under the backward), and the second micro-batch
  // starts at 4 + 8 + 0.5 + 6 = 18.5. It repeats that: its last copy ends at
  // 18.5 + 4 + 14.5 = 37; Adam [37, 40], H2D [40, 42].
  StepCosts c = zero2(4, 2);
  c.layer.grad_reduce = ms(0.5);
  c.offload_d2h = ms(12);
  c.offload_h2d = ms(2);
  c.optimizer = ms(3);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 42.0, kTol);
  const sim::MicroBatchReduction m = sim::micro_batch_reduction(c, 0);
  EXPECT_NEAR(in(m.reduce_exposed), 0.5, kTol);
  EXPECT_NEAR(in(m.copy_exposed), 6.0, kTol);
  EXPECT_NEAR(in(m.copy_hidden), 6.0, kTol);
  // Nothing overlapped: 2 x (12 + 2 + 12) + 3 + 2 = 57.
  EXPECT_NEAR(in(closed_form_sum(c)), 57.0, kTol);
  c.overlap_grad_reduce = false;
  EXPECT_NEAR(in(run(c).step), 57.0, kTol);
}

// With vpp = 1 the analytic overlap of an earlier micro-batch equals what the per-layer
// tail schedules for the last one, so every micro-batch takes the same time:
// step(m) - optimizer = m x (step(1) - optimizer).
TEST(MicroBatchReduce, AnalyticOverlapMatchesThePerLayerTail) {
  StepCosts c = zero2(6, 1);
  c.layer.grad_reduce = ms(1.7);    // slower than half a layer's backward
  c.layer.grad_bytes = MB(100);
  c.bucket_bytes = MB(40);          // buckets close mid-layer
  c.layer.tp_comm_bwd = ms(0.3);
  c.layer.recompute = ms(0.5);
  c.head_bwd = ms(0.8);
  c.embed_bwd = ms(0.6);
  c.grad_reduce_tail = ms(0.2);
  c.optimizer = ms(1);
  for (bool overlap : {true, false}) {
    c.overlap_grad_reduce = overlap;
    c.micro_batches = 1;
    const double one = in(run(c).step) - 1.0;
    c.micro_batches = 5;
    EXPECT_NEAR(in(run(c).step) - 1.0, 5 * one, 1e-6) << "overlap " << overlap;
  }
}

TEST(MicroBatchReduce, PipelineWithReductionsEveryMicroBatchStaysSmallAndBounded) {
  // gpt-175b-like: pp = 16, vpp = 2, gas = 64, 6 layers per rank; one reduction task per
  // rank and micro-batch adds 16 x 63 = 1008 tasks.
  StepCosts c;
  c.pp = 16;
  c.vpp = 2;
  c.micro_batches = 64;
  c.layers_per_rank = 6;
  c.layer.fwd = ms(1.0 / 6);
  c.layer.bwd = ms(2.0 / 6);
  c.p2p = ms(0.2);
  c.p2p_blocking = false;  // sends on their own stream, so the reductions are what differs
  c.layer.grad_reduce = ms(0.1);
  c.layer.grad_bytes = MB(800);
  c.bucket_bytes = MB(1000);
  c.grad_reduce_tail = ms(0.05);
  const SimulationResult once = run(c);
  c.grad_reduce_every_micro_batch = true;
  const SimulationResult every = run(c);
  EXPECT_LT(every.tasks, 10000u);
  EXPECT_EQ(every.tasks - once.tasks, 16u * 63u);
  EXPECT_GT(in(every.step), in(once.step));
  EXPECT_LE(in(every.step), in(closed_form_sum(c)));
}

}  // namespace
}  // namespace dsplan
