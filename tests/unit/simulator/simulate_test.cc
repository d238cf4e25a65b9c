// simulate_step() without a pipeline (pp = 1): the closed-form sum when nothing overlaps,
// bucketed gradient reduction during the last backward, ZeRO-3 gathers with and without
// prefetch, ZeRO-Offload, critical path, utilisation and input validation. All times are
// in milliseconds; every expected value is derived by hand in the comment above it.
#include "simulator/simulate.h"

#include <gtest/gtest.h>

#include <numeric>

#include "step_costs_fixture.h"

namespace dsplan {
namespace {

using test::plain;

constexpr double kTol = 1e-9;  // ms

double in(Seconds s) { return in_ms(s); }

// L = 4, m = 1, one 100 MB bucket per layer reduced in 1.5 (< backward 2), optimizer 1.
StepCosts one_bucket_per_layer() { return test::bucket_per_layer(plain(4, 1)); }

using test::run;

double parts_sum(const StepTimeBreakdown& b) {
  return in(b.compute + b.comm_exposed + b.bubble + b.optimizer + b.offload);
}

TEST(Simulate, NoPipelineNoOverlapIsTheSumOfPasses) {
  // (a) m = 3, L = 4, reduce 0.5 per layer, optimizer 3, overlap off:
  // step = m L (f + b) + L r + opt = 3*4*3 + 4*0.5 + 3 = 36 + 2 + 3 = 41.
  StepCosts c = plain(4, 3);
  c.layer.grad_reduce = ms(0.5);
  c.optimizer = ms(3);
  c.overlap_grad_reduce = false;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 41.0, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 36.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 2.0, kTol);
  EXPECT_NEAR(in(r.breakdown.optimizer), 3.0, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 0.0, kTol);
  EXPECT_NEAR(in(r.breakdown.step), 41.0, kTol);
  EXPECT_EQ(in(r.breakdown.contention), 0.0);  // nothing overlaps: exactly none, never -0
}

// Every StepCosts term non-zero (p2p is unused with pp = 1).
StepCosts every_term() {
  StepCosts c = plain(3, 2);
  c.layer.recompute = ms(0.5);
  c.layer.tp_comm_fwd = ms(0.25);
  c.layer.tp_comm_bwd = ms(0.25);
  c.layer.param_gather = ms(0.125);
  c.layer.grad_reduce = ms(0.5);
  c.layer.grad_bytes = MB(100);
  c.bucket_bytes = MB(250);
  c.embed_fwd = ms(0.1);
  c.embed_bwd = ms(0.2);
  c.head_fwd = ms(0.3);
  c.head_bwd = ms(0.6);
  c.p2p = ms(7);
  c.embed_grad_sync = ms(0.05);
  c.grad_reduce_tail = ms(0.4);
  c.param_allgather = ms(0.7);
  c.optimizer = ms(1.5);
  c.offload_d2h = ms(0.9);
  c.offload_h2d = ms(0.8);
  c.overlap_grad_reduce = false;
  c.zero3_prefetch = false;
  return c;
}

TEST(Simulate, ClosedFormAgreesWhenNothingOverlaps) {
  // Per layer and micro-batch: f 1 + b 2 + recompute 0.5 + TP 0.25 + 0.25 + 2 gathers
  // 0.125 = 4.25; x 3 layers = 12.75; + embed 0.1 + 0.2 + head 0.3 + 0.6 = 13.95;
  // x 2 micro-batches = 27.9. Then reductions 3 x 0.5 = 1.5, tail 0.4, embedding sync
  // 0.05, optimizer 1.5, all-gather 0.7, copies 0.9 + 0.8: 27.9 + 5.85 = 33.75.
  const StepCosts c = every_term();
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 33.75, kTol);
  EXPECT_NEAR(in(closed_form_sum(c)), 33.75, kTol);
  // compute: 2 x (3 x (1 + 2 + 0.5) + 1.2) = 23.4; communication: TP 2 x 3 x 0.5 = 3,
  // gathers 2 x 3 x 0.25 = 1.5, reductions 1.5 + 0.4 + 0.05, all-gather 0.7 = 7.15;
  // optimizer 1.5; offload 0.9 + 0.8 = 1.7.
  EXPECT_NEAR(in(r.breakdown.compute), 23.4, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 7.15, kTol);
  EXPECT_NEAR(in(r.breakdown.optimizer), 1.5, kTol);
  EXPECT_NEAR(in(r.breakdown.offload), 1.7, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 0.0, kTol);
}

TEST(Simulate, ClosedFormAgreesWithoutOffloadOrGathers) {
  StepCosts c = every_term();
  c.offload_d2h = c.offload_h2d = Seconds{};
  c.layer.param_gather = Seconds{};
  c.micro_batches = 5;
  EXPECT_NEAR(in(run(c).step), in(closed_form_sum(c)), kTol);
}

TEST(Simulate, OverlapExposesOnlyTheLastBucket) {
  // (d) m = 1, L = 4, one 100 MB bucket per layer, reduce 1.5 < backward 2.
  // Forward ends at 4; layer backwards end at 6, 8, 10, 12; reductions run
  // [6, 7.5], [8, 9.5], [10, 11.5], [12, 13.5]; optimizer 1: step 14.5.
  StepCosts c = one_bucket_per_layer();
  SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 14.5, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 1.5, kTol);
  EXPECT_NEAR(parts_sum(r.breakdown), 14.5, kTol);
  // Same costs without overlap: 12 + 4 x 1.5 + 1 = 19.
  c.overlap_grad_reduce = false;
  EXPECT_NEAR(in(run(c).step), 19.0, kTol);
}

TEST(Simulate, BucketsSpanningLayersWaitUntilFull) {
  // 200 MB buckets: full after layers 2 and 4 (t = 8, 12), each reduces 2 x 1.5 = 3:
  // [8, 11], [12, 15]; optimizer 1: step 16, exposed 3.
  StepCosts c = plain(4, 1);
  c.layer.grad_reduce = ms(1.5);
  c.layer.grad_bytes = MB(100);
  c.bucket_bytes = MB(200);
  c.optimizer = ms(1);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 16.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 3.0, kTol);
}

TEST(Simulate, BucketsSmallerThanALayerIssueMidLayer) {
  // 50 MB buckets: each layer's backward is split in two 1 ms halves, a bucket of
  // 0.75 ms issued after each: the last runs [12, 12.75]; + optimizer 1 = 13.75.
  StepCosts c = plain(4, 1);
  c.layer.grad_reduce = ms(1.5);
  c.layer.grad_bytes = MB(100);
  c.bucket_bytes = MB(50);
  c.optimizer = ms(1);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 13.75, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 0.75, kTol);
}

TEST(Simulate, ReductionSlowerThanBackwardExposesTheExcess) {
  // reduce 3 > backward 2, one bucket per layer: reductions back to back from t = 6
  // end at 6 + 4 x 3 = 18; + optimizer 1 = 19. Exposed 18 - 12 = L(r - b) + b = 6.
  StepCosts c = plain(4, 1);
  c.layer.grad_reduce = ms(3);
  c.optimizer = ms(1);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 19.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 6.0, kTol);
}

TEST(Simulate, Zero3PrefetchHidesGathersShorterThanCompute) {
  // (e) g = 0.5 < f = 1 < b = 2, L = 4, m = 2. With prefetch each pass exposes only its
  // first gather: forward 4 x 1 + 0.5 = 4.5, backward 4 x 2 + 0.5 = 8.5;
  // step = 2 x (4.5 + 8.5) = 26, exposed 4 x 0.5 = 2.
  StepCosts c = plain(4, 2);
  c.layer.param_gather = ms(0.5);
  c.zero3_prefetch = true;
  SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 26.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 2.0, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 24.0, kTol);
  // Without prefetch every gather blocks: 2 x 4 x (1 + 2 + 2 x 0.5) = 32.
  c.zero3_prefetch = false;
  r = run(c);
  EXPECT_NEAR(in(r.step), 32.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 8.0, kTol);
}

TEST(Simulate, Zero3PrefetchExposesGathersLongerThanCompute) {
  // g = 3 > b = 2 > f = 1, L = 4, m = 1: gathers run back to back, the last layer's
  // compute follows the last gather. Forward 4 x 3 + 1 = 13, backward (per-layer tail,
  // explicit gather tasks) 4 x 3 + 2 = 14: step 27; exposed 27 - 12 = 15.
  StepCosts c = plain(4, 1);
  c.layer.param_gather = ms(3);
  c.zero3_prefetch = true;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 27.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 15.0, kTol);
  EXPECT_NEAR(parts_sum(r.breakdown), 27.0, kTol);
}

TEST(Simulate, Zero3GathersAndReductionsShareOneCommunicator) {
  // ZeRO-3 / FSDP gather and reduce-scatter on one NCCL communicator, one collective at a
  // time. L = 4, m = 1, f = 1, b = 2, gather g = 1 with prefetch, reduce 1.5 per layer
  // bucket, optimizer 1. Forward 4 x 1 + 1 = 5. Backward tail, issue order on the shared
  // stream g0 g1 r0 g2 r1 g3 r2 r3: g0 [5, 6], layer 0 [6, 8]; g1 [6, 7]; r0 [8, 9.5];
  // layer 1 [8, 10]; g2 (issued at layer 1's start) waits for r0: [9.5, 10.5]; r1
  // [10.5, 12]; layer 2 waits for g2: [10.5, 12.5]; g3 [12, 13]; r2 [13, 14.5]; layer 3
  // [13, 15]; r3 [15, 16.5]; optimizer [16.5, 17.5].
  StepCosts c = test::bucket_per_layer(plain(4, 1));
  c.layer.param_gather = ms(1);
  c.zero3_prefetch = true;
  c.gather_shares_reduce = true;
  SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 17.5, kTol);
  EXPECT_NEAR(parts_sum(r.breakdown), 17.5, kTol);
  // The non-layer gradients (tail 1) reduce on the same communicator, after r3:
  // [16.5, 17.5], optimizer [17.5, 18.5] (not beside r3 from 15, which would end at 17.5).
  c.grad_reduce_tail = ms(1);
  EXPECT_NEAR(in(run(c).step), 18.5, kTol);
  c.grad_reduce_tail = Seconds{};
  // FSDP hybrid: 1 of each bucket's 1.5 is the all-reduce across the replicas, which runs
  // after the bucket's reduce-scatter (0.5) on the replica group's own communicator. Shared
  // stream: g0 [5, 6], g1 [6, 7], rs0 [8, 8.5], g2 [8.5, 9.5], rs1 [10, 10.5], g3
  // [10.5, 11.5], rs2 [12, 12.5], rs3 [14, 14.5]; replica stream: ar0 [8.5, 9.5], ar1
  // [10.5, 11.5], ar2 [12.5, 13.5], ar3 [14.5, 15.5]. Layers [6, 8], [8, 10], [10, 12],
  // [12, 14] (g2 and g3 are ready in time); optimizer [15.5, 16.5].
  c.layer.grad_reduce_replica = ms(1);
  EXPECT_NEAR(in(run(c).step), 16.5, kTol);
  c.layer.grad_reduce_replica = Seconds{};
  // On separate streams the gathers would run beside the reductions: layers end at 8, 10,
  // 12, 14, the last reduction [14, 15.5], step 16.5. The closed form, which gives the
  // reductions only the backward window the gathers leave free, says 17:
  // 4 x (1 + 2) + 1 + 1 + max(1.5, 6 - (8 - 4)) + 1.
  c.gather_shares_reduce = false;
  r = run(c);
  EXPECT_NEAR(in(r.step), 16.5, kTol);
}

// Overlap contention (estimator/overlap.h, loss 0.2): compute beside a collective on the
// same rank runs at 0.8 of its rate.
TEST(Simulate, ContentionSlowsTheBackwardBesideReductions) {
  // As OverlapExposesOnlyTheLastBucket (reduce 1.5 per layer bucket, backward 2). Layer 1's
  // backward [4, 6] runs alone. Layer 2 starts at 6 beside reduction 1 [6, 7.5]: 1.5 x 0.8
  // = 1.2 of its 2 done by 7.5, the other 0.8 alone: ends 8.3 (= 2 + 0.2 x 1.5). Layers 3
  // and 4 likewise end 10.6 and 12.9; the last reduction [12.9, 14.4], optimizer 1: 15.4.
  // The closed form's max(M, C + 0.2 M) over the backward gives the same: 4 + 8 + 0.2 x
  // (6 - 1.5) + 1.5 + 1 = 15.4.
  StepCosts c = one_bucket_per_layer();
  c.overlap_compute_loss = 0.2;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 15.4, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 12.9, kTol);
  EXPECT_NEAR(in(r.breakdown.contention), 3 * 0.3, kTol);  // layers 2-4, 0.3 each
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 1.5, kTol);
  EXPECT_NEAR(parts_sum(r.breakdown), 15.4, kTol);
  // Without overlap nothing runs beside the compute: 12 + 4 x 1.5 + 1 = 19, as before.
  c.overlap_grad_reduce = false;
  EXPECT_NEAR(in(run(c).step), 19.0, kTol);
}

TEST(Simulate, ContentionSlowsComputeBesideShortPrefetchedGathers) {
  // As Zero3PrefetchHidesGathersShorterThanCompute (g = 0.5, f = 1, b = 2, L = 4, m = 2)
  // with loss 0.2. In each pass gathers 2-4 run beside layers 1-3 (3 windows) and each
  // window takes max(0.5, c + 0.2 x 0.5) = c + 0.1: forward 4 + 0.5 + 0.3 = 4.8, backward
  // 8 + 0.5 + 0.3 = 8.8. The last backward (explicit gather tasks): gather 1 [0, 0.5],
  // layer 1 beside gather 2 [0.5, 1]: 0.4 done by 1, ends 2.6; gather 3 waits for layer 1,
  // layer 2 [2.6, 4.7], layer 3 [4.7, 6.8], layer 4 alone [6.8, 8.8]: 8.8 as well.
  // Step 2 x (4.8 + 8.8) = 27.2 (26 without contention); 4 passes x 0.3 of contention.
  StepCosts c = plain(4, 2);
  c.layer.param_gather = ms(0.5);
  c.zero3_prefetch = true;
  c.overlap_compute_loss = 0.2;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 27.2, kTol);
  EXPECT_NEAR(in(r.breakdown.contention), 4 * 0.3, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 2.0, kTol);
}

TEST(Simulate, ContentionIsHiddenWhenTheCollectiveIsLonger) {
  // As Zero3PrefetchExposesGathersLongerThanCompute (g = 3 > b = 2 > f = 1): each layer
  // finishes under the next gather even at 0.8 of its rate (2 / 0.8 = 2.5 < 3), so the
  // step stays 27.
  StepCosts c = plain(4, 1);
  c.layer.param_gather = ms(3);
  c.zero3_prefetch = true;
  c.overlap_compute_loss = 0.2;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 27.0, kTol);
  // The compute did slow (layers 1-3 take 2.5 beside their gathers), only not the step.
  EXPECT_NEAR(in(r.breakdown.contention), 3 * 0.5, kTol);
}

TEST(Simulate, OffloadCopiesGradientsDuringBackward) {
  // ZeRO-Offload (Ren et al. 2021, §4, no delayed update). L = 4, m = 1, reduce 0.5 and
  // D2H 1 per layer bucket (4 total), CPU Adam 3, H2D 2. Backward layers end at
  // 6, 8, 10, 12; the last reduction [12, 12.5] and copy [12.5, 13.5]; Adam [13.5, 16.5];
  // H2D [16.5, 18.5]. Breakdown: compute 12, comm 0.5, offload 1 + 2, optimizer 3.
  StepCosts c = plain(4, 1);
  c.layer.grad_reduce = ms(0.5);
  c.offload_d2h = ms(4);
  c.offload_h2d = ms(2);
  c.optimizer = ms(3);
  SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 18.5, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 12.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 0.5, kTol);
  EXPECT_NEAR(in(r.breakdown.offload), 3.0, kTol);
  EXPECT_NEAR(in(r.breakdown.optimizer), 3.0, kTol);
  // D2H of 3 per bucket (> backward 2): copies [6.5, 9.5], [9.5, 12.5], [12.5, 15.5],
  // [15.5, 18.5], then Adam and H2D: 18.5 + 3 + 2 = 23.5. After the backward ends at
  // 12 the chain of copies explains the wait ([12, 18.5], the last reduction runs
  // under the second copy): offload 6.5 + 2 = 8.5, no exposed communication.
  c.offload_d2h = ms(12);
  r = run(c);
  EXPECT_NEAR(in(r.step), 23.5, kTol);
  EXPECT_NEAR(in(r.breakdown.offload), 8.5, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 0.0, kTol);
}

TEST(Simulate, CriticalPathNamesTasksInTimeOrder) {
  // (f) L = 2, m = 1, one bucket per layer, reduce 1 < backward 2, optimizer 1:
  // forward [0, 2], layer 1 backward [2, 4], layer 0 backward [4, 6], reduction of the
  // second bucket [6, 7], optimizer [7, 8].
  StepCosts c = plain(2, 1);
  c.layer.grad_reduce = ms(1);
  c.optimizer = ms(1);
  const SimulationResult r = run(c);
  std::vector<std::string> names;
  for (const CriticalPathStep& s : r.critical_path) names.push_back(s.task);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "rank0/forward mb0 chunk0", "rank0/backward mb0 chunk0 layer1",
                       "rank0/backward mb0 chunk0 layer0", "rank0/grad_reduce bucket1",
                       "rank0/optimizer"}));
  ASSERT_EQ(r.critical_path.size(), 5u);
  EXPECT_NEAR(in(r.critical_path[0].duration), 2.0, kTol);
  EXPECT_NEAR(in(r.critical_path[3].start), 6.0, kTol);
  // Summary, largest first: backward 4, forward 2, then reduction and optimizer 1 each.
  ASSERT_EQ(r.breakdown.critical_path.size(), 4u);
  EXPECT_EQ(r.breakdown.critical_path[0], "backward: 2 tasks, 4.000 ms");
  EXPECT_EQ(r.breakdown.critical_path[1], "forward: 1 task, 2.000 ms");
}

TEST(Simulate, StreamUtilisation) {
  // Case (a): compute busy 36 + optimizer 3 = 39 of 41; dp_comm 2 of 41.
  StepCosts c = plain(4, 3);
  c.layer.grad_reduce = ms(0.5);
  c.optimizer = ms(3);
  c.overlap_grad_reduce = false;
  const SimulationResult r = run(c);
  ASSERT_EQ(r.streams.size(), 2u);
  EXPECT_EQ(r.streams[0].stream, "rank0/compute");
  EXPECT_NEAR(r.streams[0].utilisation, 39.0 / 41.0, 1e-12);
  EXPECT_EQ(r.streams[1].stream, "rank0/dp_comm");
  EXPECT_NEAR(r.streams[1].utilisation, 2.0 / 41.0, 1e-12);
}

TEST(Simulate, InvalidCostsAreAllReported) {
  StepCosts c = plain(1, 0);
  c.pp = 0;
  c.vpp = 2;
  c.layer.fwd = ms(-1);
  const auto r = simulate_step(c);
  ASSERT_FALSE(r.ok());
  std::vector<std::string> paths;
  for (const Diagnostic& d : r.errors()) paths.push_back(d.json_path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/pp", "/micro_batches", "/layers_per_rank",
                                             "/layer/fwd"}));
  EXPECT_EQ(r.errors()[2].message, "layers_per_rank must be at least 2");
}

TEST(Simulate, OversizedGraphsAreRefused) {
  // Long accumulation is scheduled over a window (long_accumulation_test.cc): 200,000
  // micro-batches on 8 stages build 2 x 8 x 64 passes, not 3.2 million.
  StepCosts c = plain(8, 200000);
  c.pp = 8;
  c.layers_per_rank = 8;
  EXPECT_TRUE(simulate_step(c).ok());
  // The window itself grows with the pipeline (4 pp micro-batches): pp 1024 x vpp 64 needs
  // 2 x 1024 x 64 x 4096 = 5.4e8 passes, past the 2e6 the graph may hold.
  c.pp = 1024;
  c.vpp = 64;
  c.layers_per_rank = 64;
  const auto r = simulate_step(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors()[0].message.find("too many to simulate"), std::string::npos);
}

}  // namespace
}  // namespace dsplan
