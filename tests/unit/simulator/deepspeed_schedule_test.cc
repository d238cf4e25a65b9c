// DeepSpeed's TrainSchedule (simulator/deepspeed_schedule.h) and the step it makes in the
// simulator (StepCosts::p2p_exchange): the passes come out in 1F1B order, every exchange
// meets its partner's, a middle stage exchanges four times per micro-batch, and a hand-
// scheduled two-stage step. Times in milliseconds, derivations in comments.
#include "simulator/deepspeed_schedule.h"

#include <gtest/gtest.h>

#include "estimator/step_costs.h"
#include "simulator/simulate.h"
#include "step_costs_fixture.h"

namespace dsplan::sim {
namespace {

constexpr double kTol = 1e-9;  // ms

// DeepSpeed's engine on p stages, one layer each: forward f, backward b, transfer t (ms).
StepCosts exchanging(int pp, int micro_batches, double f, double b, double t) {
  StepCosts c;
  c.pp = pp;
  c.micro_batches = micro_batches;
  c.layers_per_rank = 1;
  c.layer.fwd = ms(f);
  c.layer.bwd = ms(b);
  c.p2p = ms(t);
  c.p2p_exchange = true;
  return c;
}

using test::run;

TEST(DeepSpeedSchedule, PassesRunInOneFOneBOrder) {
  for (int p = 1; p <= 6; ++p)
    for (int m = 1; m <= 9; ++m)
      for (int s = 0; s < p; ++s) {
        const std::vector<DsStep> steps = deepspeed_train_steps(p, m, s);
        ASSERT_EQ(steps.size(), static_cast<std::size_t>(2 * (m + p - 1)));
        std::vector<PipelineOp> passes;
        for (const DsStep& k : steps)
          if (k.has_pass) passes.push_back(k.pass);
        EXPECT_EQ(passes, rank_order(p, 1, m, s)) << "p=" << p << " m=" << m << " s=" << s;
      }
}

TEST(DeepSpeedSchedule, EveryExchangeMeetsItsPartner) {
  // In each step a stage's i-th exchange with a neighbour is the neighbour's i-th exchange
  // with it: the same tensor and micro-batch, one side sending. And the tensor exists: an
  // activation is sent after the forward that made it, a gradient after its backward.
  for (int p = 2; p <= 6; ++p)
    for (int m = 1; m <= 9; ++m) {
      std::vector<std::vector<DsStep>> all;
      for (int s = 0; s < p; ++s) all.push_back(deepspeed_train_steps(p, m, s));
      for (std::size_t k = 0; k < all[0].size(); ++k)
        for (int s = 0; s < p; ++s) {
          const auto& mine = all[s][k].exchanges;
          for (std::size_t i = 0; i < mine.size(); ++i) {
            const DsExchange& x = mine[i];
            const auto& theirs = all[x.peer][k].exchanges;
            ASSERT_LT(i, theirs.size()) << "p=" << p << " m=" << m << " k=" << k << " s=" << s;
            const DsExchange& y = theirs[i];
            EXPECT_EQ(y.peer, s);
            EXPECT_NE(y.send, x.send);
            EXPECT_EQ(y.activation, x.activation);
            EXPECT_EQ(y.micro_batch, x.micro_batch);
            if (!x.send) continue;
            bool made = false;  // the sender ran the pass in an earlier step
            for (std::size_t j = 0; j < k; ++j) {
              const DsStep& e = all[s][j];
              made |= e.has_pass && e.pass.forward == x.activation && e.pass.micro_batch == x.micro_batch;
            }
            EXPECT_TRUE(made) << "p=" << p << " m=" << m << " k=" << k << " s=" << s;
          }
        }
    }
}

TEST(DeepSpeedSchedule, MiddleStagesExchangeFourTimesPerMicroBatch) {
  // Each micro-batch crosses every boundary once each way: an end stage has one boundary
  // (2 m exchanges), a middle stage two (4 m).
  const int p = 5, m = 7;
  for (int s = 0; s < p; ++s) {
    std::size_t n = 0;
    for (const DsStep& k : deepspeed_train_steps(p, m, s)) n += k.exchanges.size();
    EXPECT_EQ(n, static_cast<std::size_t>(s == 0 || s == p - 1 ? 2 * m : 4 * m)) << "s=" << s;
  }
}

TEST(DeepSpeedSchedule, TwoStagesByHand) {
  // p = 2, m = 2, forward 1, backward 2, each transfer 0.5, steps k = 0..5:
  //  k0: stage 0 F0 [0,1].
  //  k1: stage 0 sends act 0, stage 1 receives it: [1,1.5] on both; stage 1 F0 [1.5,2.5].
  //  k2: stage 0 F1 [1.5,2.5]; stage 1 B0 [2.5,4.5].
  //  k3: act 1 [4.5,5] (stage 1 arrives last), grad 0 [5,5.5]; stage 0 B0 [5.5,7.5],
  //      stage 1 F1 [5.5,6.5].
  //  k4: stage 1 B1 [6.5,8.5].
  //  k5: grad 1 [8.5,9]; stage 0 B1 [9,11].
  // Step 11, against 10.5 with one blocking send after each pass (Pipeline.
  // BlockingSendsHoldTheSender): the exchanges wait for the partner as well. Stage 0
  // computes 6, exchanges 2 (four transfers) and waits 3 for stage 1's passes.
  const SimulationResult r = run(exchanging(2, 2, 1, 2, 0.5));
  EXPECT_NEAR(in_ms(r.step), 11.0, kTol);
  EXPECT_EQ(r.critical_rank, 0);
  EXPECT_NEAR(in_ms(r.breakdown.compute), 6.0, kTol);
  EXPECT_NEAR(in_ms(r.breakdown.comm_exposed), 2.0, kTol);
  EXPECT_NEAR(in_ms(r.breakdown.bubble), 3.0, kTol);
}

TEST(DeepSpeedSchedule, PartitionedTensorsAreGatheredBeforeUse) {
  // The same two stages with TP: each transfer is a 1/tp slice, and a stage all-gathers
  // (0.25) the input its forward receives (stage 1), and in its backward its own output
  // and the gradient it received (stage 0); stage 0's forward and the last stage's
  // backward gather nothing.
  //  k0: stage 0 F0 [0,1].           k1: act 0 [1,1.5]; stage 1 F0 + gather [1.5,2.75].
  //  k2: stage 0 F1 [1.5,2.5]; stage 1 B0 [2.75,4.75].
  //  k3: act 1 [4.75,5.25], grad 0 [5.25,5.75]; stage 0 B0 + 2 gathers [5.75,8.25],
  //      stage 1 F1 + gather [5.75,7].
  //  k4: stage 1 B1 [7,9].           k5: grad 1 [9,9.5]; stage 0 B1 + 2 gathers [9.5,12].
  // Stage 0: compute 6, exposed communication 3 (four transfers, four gathers), waiting
  // on stage 1 3 (2.25 before k3, 0.75 before k5).
  StepCosts c = exchanging(2, 2, 1, 2, 0.5);
  c.p2p_gather = ms(0.25);
  const SimulationResult r = run(c);
  EXPECT_NEAR(in_ms(r.step), 12.0, kTol);
  EXPECT_NEAR(in_ms(r.breakdown.compute), 6.0, kTol);
  EXPECT_NEAR(in_ms(r.breakdown.comm_exposed), 3.0, kTol);
  EXPECT_NEAR(in_ms(r.breakdown.bubble), 3.0, kTol);
  // Serially: 2 stages x 2 micro-batches x 3 of compute, 4 transfers (0.5) and 6 gathers
  // (3 per micro-batch, 0.25): 12 + 2 + 1.5 = 15.5, which bounds the schedule.
  EXPECT_NEAR(in_ms(closed_form_sum(c)), 15.5, kTol);
}

TEST(DeepSpeedSchedule, LongRunsPayFourTransfersPerMicroBatch) {
  // p = 4, m = 64, forward 10, backward 20, transfer 1. A middle stage's steady state is
  // one forward, one backward and four transfers: 34 per micro-batch, and the fill and
  // drain cross the three other stages with their passes and two transfers each:
  // 64 x 34 + 3 x 32 = 2272. The simulator, whose lockstep pairs add a little waiting at
  // the ends, stays within 1% of that; one blocking send after each pass would give
  // 64 x 32 + 3 x 32 = 2144.
  StepCosts c = exchanging(4, 64, 10, 20, 1);
  EXPECT_NEAR(in_ms(run(c).step), 2272.0, 0.01 * 2272.0);
  c.p2p_exchange = false;
  EXPECT_LT(in_ms(run(c).step), 2200.0);
}

TEST(DeepSpeedSchedule, InterleavingIsRefused) {
  StepCosts c = exchanging(2, 4, 1, 2, 0.5);
  c.vpp = 2;
  c.layers_per_rank = 2;
  const auto r = simulate_step(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().json_path, "/p2p_exchange");
}

}  // namespace
}  // namespace dsplan::sim
