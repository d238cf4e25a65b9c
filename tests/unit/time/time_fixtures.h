// Shared fixtures of the step-time unit tests: a 1.3B GPT, a Megatron bf16 base
// configuration and DGX A100 models/communication setups with the default efficiencies.
#pragma once

#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/parallel_comm.h"
#include "fixtures.h"

namespace dsplan::test {

inline ModelSpec gpt_1b() { return gpt("gpt-1.3b", 24, 2048, 32, 2048, 51200, 128); }

inline TrainConfig base_cfg() {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.precision = Precision::bf16;
  c.micro_batch = 2;
  c.grad_accum = 4;
  c.seq_len = 2048;
  c.dp = 8;
  return c;
}

inline StepTimeModel a100_model(const ModelSpec& m, int gpus) {
  const Cluster c = cluster(dgx_a100(), gpus);
  return StepTimeModel(m, c, default_efficiency(c.node.gpu));
}

// gpt_1b on DGX A100 nodes with the default efficiencies, for parallel_comm() checks.
struct A100Comm {
  ModelSpec m = gpt_1b();
  Cluster c;
  Efficiency eff;
  CollectiveModel coll;
  explicit A100Comm(int gpus)
      : c(cluster(dgx_a100(), gpus)), eff(default_efficiency(c.node.gpu)), coll(c.node, eff) {}
  ParallelComm of(const TrainConfig& cfg) const { return parallel_comm(m, cfg, c.node, c.node.gpu, eff, coll); }
};

}  // namespace dsplan::test
