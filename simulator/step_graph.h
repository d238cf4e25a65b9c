// Builds the task graph of one training step from StepCosts.
//
// Streams per pipeline rank: compute, dp_comm, p2p (pp > 1), gather (ZeRO-3) and host
// (offload). Every rank runs its rank_order() (pipeline_order.h) on its compute stream:
// whole-chunk forward and backward tasks per micro-batch, except the last micro-batch's
// backward of each chunk, which is built per layer (backward_tail.h). Stage s = c*pp + r
// (chunk c of rank r) sends its activation to stage s+1 and its activation gradient to
// stage s-1 through a p2p_send task on the sender's p2p stream when the two stages live
// on different ranks; the receiver's pass depends on the send. With p2p_blocking the send
// sits on the sender's compute stream instead. With p2p_exchange (DeepSpeed's pipeline
// engine) the passes are added in the order of its TrainSchedule's steps
// (deepspeed_schedule.h), each step's blocking send/recv pairs first: one p2p_exchange
// task on each of the two ranks' compute streams, each also waiting for the other rank's
// previous task, so the pair starts when the later rank arrives and both ranks wait it out.
//
// With grad_reduce_every_micro_batch (ZeRO-2/3), after each earlier micro-batch's last
// backward pass on a rank: one grad_reduce task on dp_comm (and with offload one
// offload_d2h on host) holding what outlasts that backward (micro_batch_reduce.h); the
// rank's next compute task waits for them.
// After the compute, per rank: the last micro-batch's gradient buckets are reduced on
// dp_comm (as each fills with overlap_grad_reduce, otherwise after the rank's last
// backward), then grad_reduce_tail (gradients outside the layers; always after the
// backward), then on rank 0 the tied-embedding sync with the last stage. With offload each bucket is copied
// to the host after its reduction (all at once after the reductions without overlap).
// A barrier joins every rank's reductions and copies: the optimizer step needs the
// global gradient norm. Then per rank the optimizer (GPU: compute stream; offload: CPU
// Adam on the host stream followed by the parameter copy back) and the ZeRO-1/2
// parameter all-gather on dp_comm.
#pragma once

#include <vector>

#include "estimator/step_costs.h"
#include "simulator/task_graph.h"

namespace dsplan::sim {

struct RankStreams {
  int compute = -1;
  int dp = -1;
  int p2p = -1;     // -1 when pp == 1
  int gather = -1;  // -1 without ZeRO-3 gathers
  int host = -1;    // -1 without offload
};

struct StepGraph {
  TaskGraph graph;
  std::vector<RankStreams> ranks;
  std::vector<TaskId> last_compute;  // per rank: its last forward/backward task
  bool offload = false;
};

// `costs` must satisfy validate_step_costs() (simulate.h).
StepGraph build_step_graph(const StepCosts& costs);

}  // namespace dsplan::sim
