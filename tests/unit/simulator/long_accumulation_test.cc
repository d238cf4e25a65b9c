// Long gradient accumulation: a step of more micro-batches than the simulation window is
// scheduled over two windows (w and w/2 micro-batches) and extended along the line through
// them (simulate.cc). Each test schedules the same step both ways, every micro-batch
// (a window as large as the step) and extended from a short window, and asks for the same
// step time and breakdown: the schedule repeats once per micro-batch after the pipeline
// fill, so the line is exact up to rounding. Times in ms.
#include <gtest/gtest.h>

#include "simulator/simulate.h"
#include "step_costs_fixture.h"

namespace dsplan {
namespace {

double in(Seconds s) { return in_ms(s); }

using test::run;

// The whole step against the window of 16 micro-batches: same makespan and breakdown
// (to 1e-6 of the step), and the extended run scheduled only the window.
void expect_extension_exact(const StepCosts& c) {
  const SimulationResult full = run(c, c.micro_batches);
  const SimulationResult ext = run(c, 16);
  EXPECT_EQ(full.micro_batches_simulated, c.micro_batches);
  EXPECT_LT(ext.micro_batches_simulated, c.micro_batches);
  EXPECT_LT(ext.tasks, full.tasks);
  const double tol = 1e-6 * in(full.step);
  EXPECT_NEAR(in(ext.step), in(full.step), tol);
  const StepTimeBreakdown &f = full.breakdown, &e = ext.breakdown;
  EXPECT_NEAR(in(e.compute), in(f.compute), tol);
  EXPECT_NEAR(in(e.comm_exposed), in(f.comm_exposed), tol);
  EXPECT_NEAR(in(e.bubble), in(f.bubble), tol);
  EXPECT_NEAR(in(e.optimizer), in(f.optimizer), tol);
  EXPECT_NEAR(in(e.offload), in(f.offload), tol);
  EXPECT_NEAR(in(e.contention), in(f.contention), tol);
  EXPECT_NEAR(in(e.host_stall), in(f.host_stall), tol);
}

TEST(LongAccumulation, OverlappedBucketsExtendExactly) {
  // pp = 1, 200 micro-batches of 6 layers, one bucket per layer behind the last backward.
  StepCosts c = test::bucket_per_layer(test::plain(6, 200));
  c.overlap_compute_loss = 0.2;
  expect_extension_exact(c);
  // Hand check: 200 x 6 x 3 = 3600 of compute, 1 of optimizer; the last layer's bucket
  // (1.5) is exposed after the backward; the five before it hide behind backwards of 2,
  // each slowed by 0.2 x 1.5 = 0.3 of contention: 3600 + 5 x 0.3 + 1.5 + 1 = 3604.
  EXPECT_NEAR(in(run(c, 16).step), 3604.0, 1e-6);
}

TEST(LongAccumulation, ReductionsEveryMicroBatchExtendExactly) {
  // ZeRO-2: every micro-batch's backward reduces its buckets, and the tail follows it.
  StepCosts c = test::bucket_per_layer(test::plain(4, 150));
  c.grad_reduce_every_micro_batch = true;
  c.grad_reduce_tail = ms(0.4);
  c.overlap_compute_loss = 0.19;
  expect_extension_exact(c);
}

TEST(LongAccumulation, OneFOneBPipelineExtendsExactly) {
  // pp = 4, 1F1B, blocking sends, 203 micro-batches (not a multiple of pp):
  // (m + p - 1)(f + b) plus the sends on the fill and drain path.
  StepCosts c = test::plain(3, 203);
  c.pp = 4;
  c.p2p = ms(0.1);
  c.layer.grad_reduce = ms(0.5);
  c.optimizer = ms(1);
  expect_extension_exact(c);
}

TEST(LongAccumulation, InterleavedPipelineExtendsExactly) {
  // pp = 4, vpp = 2, 200 micro-batches (a multiple of pp, as interleaving needs).
  StepCosts c = test::plain(4, 200);
  c.pp = 4;
  c.vpp = 2;
  c.p2p = ms(0.05);
  c.p2p_blocking = false;
  c.embed_fwd = ms(0.3);
  c.head_fwd = ms(0.5);
  c.head_bwd = ms(1.0);
  expect_extension_exact(c);
}

TEST(LongAccumulation, Zero3GathersExtendExactly) {
  // ZeRO-3: prefetched gathers share the communicator with each micro-batch's reductions.
  StepCosts c = test::bucket_per_layer(test::plain(5, 130));
  c.layer.param_gather = ms(0.6);
  c.zero3_prefetch = true;
  c.gather_shares_reduce = true;
  c.grad_reduce_every_micro_batch = true;
  c.overlap_compute_loss = 0.19;
  expect_extension_exact(c);
}

TEST(LongAccumulation, NothingOverlappedStaysTheClosedFormSum) {
  // 100000 micro-batches would be 1.2 million passes; the windows keep it to 64 and 32,
  // and the step still equals the plain sum: 100000 x 2 x 3 + 1 = 600001.
  StepCosts c = test::plain(2, 100000);
  c.optimizer = ms(1);
  c.overlap_grad_reduce = false;
  auto r = simulate_step(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->micro_batches_simulated, 64);
  EXPECT_NEAR(in(r->step), 600001.0, 1e-3);
  EXPECT_NEAR(in(closed_form_sum(c)), 600001.0, 1e-3);
}

TEST(LongAccumulation, WindowCoversFourPipelineFillsInWholeGroups) {
  // Window at least 4 pp and a multiple of 2 pp: pp 1 -> 64, pp 24 -> 96, pp 40 -> 160.
  StepCosts c = test::plain(2, 1);
  EXPECT_EQ(simulation_window(c, 64), 64);
  c.pp = 24;
  EXPECT_EQ(simulation_window(c, 64), 96);
  c.pp = 40;
  EXPECT_EQ(simulation_window(c, 64), 160);
  c.pp = 3;
  EXPECT_EQ(simulation_window(c, 16), 18);
}

}  // namespace
}  // namespace dsplan
