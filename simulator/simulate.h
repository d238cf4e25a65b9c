// The step simulator's entry point: schedules one training step, built as a task graph
// from the per-operator costs in StepCosts (see step_graph.h, scheduler.h), and reports
// the step time, its breakdown, the critical path and per-stream utilisation. Pure: no
// I/O, no clocks, no globals. The model is documented in docs/model.md §5 Step simulator.
//
// Reading of StepCosts (its header states the contract): grad_reduce_tail is the
// reduction of gradients OUTSIDE the per-layer buckets (embeddings, final norm); the
// simulator derives the exposure of the last layer bucket itself from the schedule and
// always exposes grad_reduce_tail after the rank's backward. With
// grad_reduce_every_micro_batch the reductions, tail and offload_d2h follow every
// micro-batch's backward (micro_batch_reduce.h). With pp = 1 and overlap_grad_reduce off
// the step therefore equals the plain sum of the StepCosts terms (closed_form_sum()).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/units.h"
#include "estimator/step_costs.h"
#include "estimator/step_time.h"

namespace dsplan {

struct CriticalPathStep {
  std::string task;  // e.g. "rank0/backward mb63 chunk0 layer5"
  Seconds start;
  Seconds duration;
};

struct StreamUtilisation {
  std::string stream;  // e.g. "rank3/dp_comm"
  Seconds busy;
  double utilisation = 0.0;  // busy / step
};

struct SimulationResult {
  Seconds step;                  // makespan of the step graph
  StepTimeBreakdown breakdown;   // seen from critical_rank; flops left zero
  int critical_rank = 0;         // pipeline rank whose compute drains last
  std::vector<CriticalPathStep> critical_path;  // in time order, zero-length steps left out
  std::vector<StreamUtilisation> streams;       // streams that ran at least one task
  std::size_t tasks = 0;         // size of the graph
  // Micro-batches in the scheduled graph: all of the step's, or, for a long accumulation,
  // the larger of the two windows the step was extended from (simulate.cc); the critical
  // path and task count are then the window's.
  int micro_batches_simulated = 0;
};

// Everything that makes StepCosts unusable: counts below 1, fewer layers than virtual
// chunks, negative or non-finite durations and sizes, a graph too large to simulate.
Diagnostics validate_step_costs(const StepCosts& costs);

Expected<SimulationResult> simulate_step(const StepCosts& costs);

// The same with another window: steps of more than simulation_window(costs, window)
// micro-batches are scheduled over that many and half as many, and extended linearly.
// simulate_step(costs) uses 64; a window at least costs.micro_batches schedules every one.
Expected<SimulationResult> simulate_step(const StepCosts& costs, int window);
int simulation_window(const StepCosts& costs, int window);

// The step time with nothing overlapped and no pipeline: every term of StepCosts summed
// (micro-batches x passes, every layer's gather and reduction, tail, sync, optimizer,
// parameter all-gather, both offload copies, every pipeline send; the reductions, tail and
// gradient copy once per micro-batch with grad_reduce_every_micro_batch), plus the GPU's
// wait for the host (estimator/host_stall.h), which both tiers add alike. simulate_step()
// equals it when pp == 1, vpp == 1, overlap_grad_reduce is off and ZeRO-3 prefetch is off.
Seconds closed_form_sum(const StepCosts& costs);

}  // namespace dsplan
