// Analytic overlap of one non-last micro-batch's gradient reduction with its backward.
// See micro_batch_reduce.h for the model and its assumptions.
#include "simulator/micro_batch_reduce.h"

#include <algorithm>

#include "simulator/backward_tail.h"
#include "simulator/pass_costs.h"

namespace dsplan::sim {

namespace {

// First-in-first-out reduction (and copy) queues fed by buckets as they fill.
struct Queues {
  double dp_free = 0.0;    // when dp_comm finishes its last queued reduction
  double replica_free = 0.0;  // FSDP hybrid: when the replica all-reduces finish
  double host_free = 0.0;  // when the host stream finishes its last queued copy
  double last_done = 0.0;  // when the last bucket would finish reduced on its own

  // A ZeRO-3 gather issued at `issue` on the same communicator (gather_shares_reduce).
  void gather(double issue, double duration) { dp_free = std::max(issue, dp_free) + duration; }

  // `replica`: the part of `reduce` that runs after it on FSDP hybrid's replica group
  // (only when gathers share the reductions' communicator; otherwise 0).
  void bucket(double ready, double reduce, double replica, double copy) {
    dp_free = std::max(ready, dp_free) + reduce - replica;
    double done = dp_free;
    if (replica > 0.0) done = replica_free = std::max(done, replica_free) + replica;
    last_done = ready + reduce;
    if (copy > 0.0) host_free = std::max(done, host_free) + copy;
  }
  double end() const { return std::max(dp_free, replica_free); }
};

// Lays the backward pass of `chunk` from time t on; returns its end.
double lay_pass(const StepCosts& c, int rank, int chunk, double t, Queues& q) {
  const double pass = pass_cost(c, rank, chunk, false).duration.v;
  const double head = rank == c.pp - 1 && chunk == c.vpp - 1 ? c.head_bwd.v : 0.0;
  const double embed = rank == 0 && chunk == 0 ? c.embed_bwd.v : 0.0;
  const int n = chunk_layers(c, rank, chunk);
  const double per_layer = n > 0 ? (pass - head - embed) / n : 0.0;  // a chunk may hold no layer
  const double copy_per_layer = c.offload_d2h.v / c.layers_per_rank;
  const double replica = c.gather_shares_reduce ? c.layer.grad_reduce_replica.v : 0.0;
  double at = t + head;
  int layer = -1;
  for (const TailPiece& p : plan_tail_pieces(n, c.layer.grad_bytes, c.bucket_bytes)) {
    if (c.gather_shares_reduce && p.layer != layer) {
      // The chunk's first gather at its start, then each layer's prefetch of the next at
      // the layer's start, queue with the reductions (backward_tail.h).
      layer = p.layer;
      if (layer == 0) q.gather(at, c.layer.param_gather.v);
      if (layer + 1 < n) q.gather(at, c.layer.param_gather.v);
    }
    at += per_layer * p.fraction;
    if (!p.closes_bucket) continue;
    q.bucket(at, c.layer.grad_reduce.v * p.bucket_layers, replica * p.bucket_layers,
             copy_per_layer * p.bucket_layers);
  }
  return t + pass;
}

}  // namespace

MicroBatchReduction micro_batch_reduction(const StepCosts& c, int rank) {
  const Seconds reduce = c.layer.grad_reduce * c.layers_per_rank;
  MicroBatchReduction out;
  if (!c.overlap_grad_reduce) {
    out.reduce_exposed = reduce + c.grad_reduce_tail;
    out.copy_exposed = c.offload_d2h;
    return out;
  }
  Queues q;
  double end = 0.0;
  for (int chunk = c.vpp - 1; chunk >= 0; --chunk) end = lay_pass(c, rank, chunk, end, q);
  Seconds late(std::max(0.0, q.end() - end));
  out.contention = max(Seconds{}, reduce - late) * c.overlap_compute_loss;
  late = min(late, max(late - out.contention, Seconds(std::max(0.0, q.last_done - end))));
  out.reduce_exposed = late + c.grad_reduce_tail;
  out.reduce_hidden = max(Seconds{}, reduce - late);
  const double task_end = end + out.reduce_exposed.v;
  out.copy_exposed = Seconds(std::max(0.0, q.host_free - task_end));
  out.copy_hidden = max(Seconds{}, c.offload_d2h - out.copy_exposed);
  return out;
}

}  // namespace dsplan::sim
