// Hand-sized StepCosts shared by the simulator tests: pp = 1, layers of forward 1 ms and
// backward 2 ms, and the one-100-MB-bucket-per-layer reduction (1.5 ms, shorter than a
// layer's backward) with a 1 ms optimizer step that several expected schedules start from;
// and run(), which simulates a step and fails the test on a diagnostic.
#pragma once

#include <gtest/gtest.h>

#include "core/units.h"
#include "estimator/step_costs.h"
#include "simulator/simulate.h"

namespace dsplan::test {

// A simulation's result, failing the test on a diagnostic; an empty result then.
inline SimulationResult checked(const Expected<SimulationResult>& r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.errors().front().to_string());
  return r.ok() ? r.value() : SimulationResult{};
}

// simulate_step() with the default window, or with `window`.
inline SimulationResult run(const StepCosts& c) { return checked(simulate_step(c)); }
inline SimulationResult run(const StepCosts& c, int window) { return checked(simulate_step(c, window)); }

inline StepCosts plain(int layers, int micro_batches) {
  StepCosts c;
  c.micro_batches = micro_batches;
  c.layers_per_rank = layers;
  c.layer.fwd = ms(1);
  c.layer.bwd = ms(2);
  return c;
}

// One 100 MB bucket per layer, reduced in 1.5 ms; optimizer 1 ms.
inline StepCosts bucket_per_layer(StepCosts c) {
  c.layer.grad_reduce = ms(1.5);
  c.layer.grad_bytes = MB(100);
  c.bucket_bytes = MB(100);
  c.optimizer = ms(1);
  return c;
}

}  // namespace dsplan::test
