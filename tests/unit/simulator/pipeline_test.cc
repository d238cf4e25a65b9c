// simulate_step() with pipeline parallelism: the 1F1B bubble (p - 1)(f + b), the
// interleaved bubble (p - 1)(f + b)/v (Narayanan et al. 2021, §2.2), point-to-point
// sends, the tied-embedding sync, acyclicity over many shapes and the graph size of a
// GPT-175B-like configuration. Times in milliseconds, derivations in comments.
#include <gtest/gtest.h>

#include "simulator/pass_costs.h"
#include "simulator/simulate.h"
#include "step_costs_fixture.h"

namespace dsplan {
namespace {

constexpr double kTol = 1e-9;  // ms

double in(Seconds s) { return in_ms(s); }

// Per rank and micro-batch: forward f = 1, backward b = 2, split over the rank's layers.
StepCosts pipeline(int pp, int vpp, int micro_batches, int layers_per_rank) {
  StepCosts c;
  c.pp = pp;
  c.vpp = vpp;
  c.micro_batches = micro_batches;
  c.layers_per_rank = layers_per_rank;
  c.layer.fwd = ms(1.0 / layers_per_rank);
  c.layer.bwd = ms(2.0 / layers_per_rank);
  return c;
}

using test::run;

TEST(Pipeline, OneFOneBBubbleIsPMinusOnePasses) {
  // (b) p = 4, m = 8, f + b = 3, free sends: step = (m + p - 1)(f + b) = 11 x 3 = 33;
  // the first rank computes m(f + b) = 24 and idles (p - 1)(f + b) = 9.
  const SimulationResult r = run(pipeline(4, 1, 8, 2));
  EXPECT_NEAR(in(r.step), 33.0, kTol);
  EXPECT_EQ(r.critical_rank, 0);
  EXPECT_NEAR(in(r.breakdown.compute), 24.0, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 9.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 0.0, kTol);
}

TEST(Pipeline, OneFOneBBubbleDoesNotGrowWithMicroBatches) {
  // p = 3: bubble (3 - 1) x 3 = 6 for every m >= p.
  for (int m : {3, 5, 16}) {
    const SimulationResult r = run(pipeline(3, 1, m, 1));
    EXPECT_NEAR(in(r.step), (m + 2) * 3.0, kTol) << "m=" << m;
    EXPECT_NEAR(in(r.breakdown.bubble), 6.0, kTol) << "m=" << m;
  }
}

TEST(Pipeline, SendsDelayTheSchedule) {
  // p = 2, m = 2, send t = 0.5 on the sender's p2p stream (overlapped sends,
  // StepCosts::p2p_blocking = false, as Megatron-Core's --overlap-p2p-communication).
  // rank 0: F0 [0,1], F1 [1,2]; send F0 [1,1.5], send F1 [2,2.5].
  // rank 1: F0 [1.5,2.5], B0 [2.5,4.5], F1 [4.5,5.5], B1 [5.5,7.5];
  //         send B0 [4.5,5], send B1 [7.5,8].
  // rank 0: B0 [5,7], B1 [8,10]: step 10 = (m + p - 1)(f + b) + 2(p - 1)t.
  // Rank 0 waits [2,5): 0.5 on send B0, 2.5 on rank 1's compute; and [7,8): 0.5 on
  // send B1, 0.5 on rank 1: bubble 3, exposed communication 1, compute 6.
  StepCosts c = pipeline(2, 1, 2, 1);
  c.p2p = ms(0.5);
  c.p2p_blocking = false;
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 10.0, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 6.0, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 3.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 1.0, kTol);
}

TEST(Pipeline, BlockingSendsHoldTheSender) {
  // The same p = 2, m = 2, t = 0.5, but each send holds its sender's compute stream
  // (Megatron's batched send/recv, DeepSpeed's pipeline instructions):
  // rank 0: F0 [0,1], send [1,1.5], F1 [1.5,2.5], send [2.5,3];
  // rank 1: F0 [1.5,2.5], B0 [2.5,4.5], send B0 [4.5,5], F1 [5,6], B1 [6,8], send [8,8.5];
  // rank 0: B0 [5,7], B1 [8.5,10.5]. Step 10.5, half a send later than with overlapped
  // sends: rank 1's F1 now waits behind its own send of B0.
  StepCosts c = pipeline(2, 1, 2, 1);
  c.p2p = ms(0.5);
  ASSERT_TRUE(c.p2p_blocking);  // the default
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 10.5, kTol);
  const StepTimeBreakdown& b = r.breakdown;
  EXPECT_NEAR(in(b.compute + b.comm_exposed + b.bubble + b.optimizer + b.offload), in(r.step), kTol);
  EXPECT_GT(in(b.comm_exposed), 0.0);
}

TEST(Pipeline, InterleavingDividesTheBubbleByV) {
  // (c) p = 4, m = 8, v = 2 chunks of one layer each: per chunk f/2 = 0.5, b/2 = 1.
  // step = m(f + b) + (p - 1)(f + b)/v = 24 + 4.5 = 28.5.
  SimulationResult r = run(pipeline(4, 2, 8, 2));
  EXPECT_NEAR(in(r.step), 28.5, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 4.5, kTol);
  EXPECT_NEAR(in(r.breakdown.compute), 24.0, kTol);
  // v = 4 (p = 4, m = 8): 24 + 9/4 = 26.25.
  r = run(pipeline(4, 4, 8, 4));
  EXPECT_NEAR(in(r.step), 26.25, kTol);
  EXPECT_NEAR(in(r.breakdown.bubble), 2.25, kTol);
}

// An uneven split with interleaving (StepCosts::middle_chunk_layers): the first rank's first
// chunk and the last rank's last hold what their rank lacks; every other chunk the middle
// count. DeepSeek-V3's Bridge layout, pp 8 x vpp 4 with 1 layer first and 0 last: middle
// chunks of 2, rank 0 [1, 2, 2, 2], rank 7 [2, 2, 2, 0], the others [2, 2, 2, 2].
TEST(Pipeline, UnevenEndsSitInTheEndChunks) {
  StepCosts c = pipeline(8, 4, 8, 8);  // pp 8, vpp 4, 8 micro-batches, 8 layers a rank
  c.first_layers = 7, c.last_layers = 6, c.middle_chunk_layers = 2;
  EXPECT_EQ(sim::chunk_layers(c, 0, 0), 1);
  EXPECT_EQ(sim::chunk_layers(c, 0, 1), 2);
  EXPECT_EQ(sim::chunk_layers(c, 7, 2), 2);
  EXPECT_EQ(sim::chunk_layers(c, 7, 3), 0);
  EXPECT_EQ(sim::chunk_layers(c, 3, 3), 2);
  // Without the middle count (the even split) a rank's layers spread over its chunks, the
  // earlier chunks taking a remainder: 6 layers over 4 chunks -> [2, 2, 1, 1].
  c.middle_chunk_layers = 0;
  EXPECT_EQ(sim::chunk_layers(c, 7, 2), 1);
  EXPECT_EQ(sim::chunk_layers(c, 7, 3), 1);
}

TEST(Pipeline, EmbeddingAndHeadLoadTheEndStages) {
  // p = 2, m = 1, embed fwd/bwd 1/1 on rank 0, head fwd/bwd 1/2 on rank 1, free sends:
  // rank 0 F [0,2], rank 1 F [2,4], B [4,8], rank 0 B [8,11].
  StepCosts c = pipeline(2, 1, 1, 1);
  c.embed_fwd = ms(1);
  c.embed_bwd = ms(1);
  c.head_fwd = ms(1);
  c.head_bwd = ms(2);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 11.0, kTol);
  std::vector<std::string> names;
  for (const CriticalPathStep& s : r.critical_path) names.push_back(s.task);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "rank0/forward mb0 chunk0", "rank1/forward mb0 chunk0",
                       "rank1/head_backward mb0 chunk0", "rank1/backward mb0 chunk0 layer0",
                       "rank0/backward mb0 chunk0 layer0", "rank0/embed_backward mb0 chunk0"}));
}

TEST(Pipeline, TiedEmbeddingSyncWaitsForBothEndStages) {
  // 1F1B p = 2, m = 2 ends at (2 + 1) x 3 = 9 on rank 0; sync 1 then optimizer 1: 11.
  StepCosts c = pipeline(2, 1, 2, 1);
  c.embed_grad_sync = ms(1);
  c.optimizer = ms(1);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in(r.step), 11.0, kTol);
  EXPECT_NEAR(in(r.breakdown.comm_exposed), 1.0, kTol);
  EXPECT_NEAR(in(r.breakdown.optimizer), 1.0, kTol);
}

TEST(Pipeline, EveryShapeSchedulesAndTheBreakdownAddsUp) {
  // Includes m not a multiple of p with interleaving (e.g. p = 4, v = 3, m = 5), where
  // the unpadded order would deadlock.
  for (int p = 1; p <= 8; ++p) {
    for (int v = 1; v <= 4; ++v) {
      for (int m = 1; m <= 17; ++m) {
        StepCosts c = pipeline(p, v, m, 2 * v);
        c.p2p = ms(0.1);
        c.layer.grad_reduce = ms(0.2);
        c.optimizer = ms(0.5);
        auto r = simulate_step(c);
        ASSERT_TRUE(r.ok()) << "p=" << p << " v=" << v << " m=" << m;
        const StepTimeBreakdown& b = r->breakdown;
        EXPECT_NEAR(in(b.compute + b.comm_exposed + b.bubble + b.optimizer + b.offload),
                    in(r->step), 1e-9);
        // Never faster than one rank's work; never slower than no overlap at all.
        EXPECT_GE(in(r->step), m * 3.0 + 0.5 - 1e-9);
        EXPECT_LE(in(r->step), in(closed_form_sum(c)) + (2 * m * p * v) * 0.1 + 1e-9);
      }
    }
  }
}

TEST(Pipeline, DeepInterleavingSchedules) {
  // The default Megatron search runs V up to 16 (estimator/search/space.cc): every such V on
  // 2-16 stages, with whole groups of p micro-batches (what the search keeps) and a short
  // last group (m = 3p + 1, padded), schedules without a cycle, its breakdown adds up, and
  // it is bounded as above.
  for (int p : {2, 4, 8, 16}) {
    for (int v : {5, 6, 8, 10, 12, 16}) {
      for (int m : {p, 2 * p, 3 * p, 3 * p + 1}) {
        StepCosts c = pipeline(p, v, m, v);
        c.p2p = ms(0.1);
        c.optimizer = ms(0.5);
        auto r = simulate_step(c);
        ASSERT_TRUE(r.ok()) << "p=" << p << " v=" << v << " m=" << m;
        const StepTimeBreakdown& b = r->breakdown;
        EXPECT_NEAR(in(b.compute + b.comm_exposed + b.bubble + b.optimizer + b.offload), in(r->step), 1e-9);
        EXPECT_GE(in(r->step), m * 3.0 + 0.5 - 1e-9);
        EXPECT_LE(in(r->step), in(closed_form_sum(c)) + (2 * m * p * v) * 0.1 + 1e-9);
      }
    }
  }
}

TEST(Pipeline, Gpt175bLikeGraphStaysSmall) {
  // pp = 16, gas = 64, vpp = 2, 6 layers per rank: per rank 64 x 2 chunks x 2 passes
  // = 256 compute passes (the last backward of each chunk per layer) and about as many
  // sends; per-layer tasks for every micro-batch would be 64 x 6 x 2 x 16 = 12288
  // compute tasks alone.
  StepCosts c = pipeline(16, 2, 64, 6);
  c.p2p = ms(0.2);
  c.p2p_blocking = false;  // the bound below is for overlapped sends
  c.layer.grad_reduce = ms(3);
  c.layer.grad_bytes = MB(800);
  c.bucket_bytes = MB(1000);
  const SimulationResult r = run(c);
  EXPECT_LT(r.tasks, 10000u);
  // 1F1B interleaved bound: m(f + b) + (p - 1)(f + b)/v = 192 + 22.5 = 214.5, plus
  // sends on the fill/drain path and the exposed tail of the gradient reduction.
  EXPECT_GT(in(r.step), 214.5);
  EXPECT_LT(in(r.step), 214.5 * 1.1);
}

}  // namespace
}  // namespace dsplan
