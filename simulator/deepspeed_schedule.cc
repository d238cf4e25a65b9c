// DeepSpeed's TrainSchedule, step by step. See deepspeed_schedule.h.
#include "simulator/deepspeed_schedule.h"

namespace dsplan::sim {

std::vector<DsStep> deepspeed_train_steps(int pp, int m, int stage) {
  const int steps = 2 * (m + pp - 1);
  auto valid = [m](int mb) { return mb >= 0 && mb < m; };
  std::vector<DsStep> out(static_cast<std::size_t>(steps));
  int prev = -1;  // the previous step's micro-batch id (valid or not)
  for (int k = 0; k < steps; ++k) {
    const bool forward = (k % 2) == (stage % 2);
    const int mb = forward ? k / 2 - stage / 2 : k / 2 - pp + 1 + stage / 2;
    DsStep& step = out[static_cast<std::size_t>(k)];
    if (forward && stage > 0) {
      if (valid(mb)) step.exchanges.push_back({stage - 1, false, true, mb});
      if (valid(prev)) step.exchanges.push_back({stage - 1, true, false, prev});
    } else if (!forward && stage + 1 < pp) {
      if (valid(prev)) step.exchanges.push_back({stage + 1, true, true, prev});
      if (valid(mb)) step.exchanges.push_back({stage + 1, false, false, mb});
    }
    if (valid(mb)) {
      step.has_pass = true;
      step.pass = PipelineOp{forward, mb, 0};
    }
    prev = mb;
  }
  return out;
}

}  // namespace dsplan::sim
