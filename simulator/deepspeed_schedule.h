// DeepSpeed's pipeline engine step by step: its TrainSchedule (deepspeed/runtime/pipe/
// schedule.py, unchanged in substance from v0.3 to v0.16) as the simulator replays it.
//
// A batch of m micro-batches on p stages runs 2(m + p - 1) steps on every stage. In step
// k a stage runs at most one pass: a forward when k and its stage id have the same
// parity, a backward otherwise, of the micro-batch
//   forward:  floor(k / 2) - floor(s / 2)
//   backward: floor(k / 2) - p + 1 + floor(s / 2)
// when that id lies in [0, m); otherwise the step has no pass (the schedule states the
// two backward cases separately; both reduce to this). Before the pass the stage
// exchanges tensors with ONE neighbour, each exchange a blocking send/recv pair:
//   forward step:  receive the activation of this step's micro-batch from stage s - 1,
//                  then send it the gradient of the previous step's micro-batch;
//   backward step: send stage s + 1 the activation of the previous step's micro-batch,
//                  then receive the gradient of this step's micro-batch from it.
// Adjacent stages have opposite parities, so in every step each forward stage and the
// backward stage before it exchange in the same order, and every exchange waits for both
// stages to finish their previous step: the stages advance in lockstep pairs. Each rank's
// passes come out in the 1F1B order of pipeline_order.h (p - s - 1 warm-up forwards,
// then one forward and one backward); what differs from Megatron's schedule is the
// coupling and the four transfers a middle stage makes per micro-batch (two per step).
#pragma once

#include <vector>

#include "simulator/pipeline_order.h"

namespace dsplan::sim {

struct DsExchange {
  int peer = 0;            // the neighbouring stage
  bool send = false;       // this stage sends (else receives)
  bool activation = true;  // an activation going forward, else an activation gradient
  int micro_batch = 0;
  friend bool operator==(const DsExchange&, const DsExchange&) = default;
};

struct DsStep {
  std::vector<DsExchange> exchanges;  // in the order the stage posts them (0 to 2)
  bool has_pass = false;
  PipelineOp pass;  // chunk 0; valid when has_pass
};

// The 2(m + p - 1) steps of `stage`. Requires p >= 1, m >= 1 and 0 <= stage < p.
std::vector<DsStep> deepspeed_train_steps(int pp, int micro_batches, int stage);

}  // namespace dsplan::sim
