// The backward of the LAST micro-batch of one model chunk, built per layer so that data-
// parallel gradient reduction can overlap the backward of the layers still to come
// (DeepSpeed overlap_comm, Megatron overlap_grad_reduce). Earlier micro-batches only
// accumulate gradients and stay whole-chunk tasks.
//
// Bucketing: gradients become ready layer by layer in backward order (last layer first),
// at a uniform rate within a layer. A bucket of bucket_bytes is issued as soon as it is
// full, so a layer larger than a bucket is split into pieces at bucket boundaries; the
// partly filled bucket left at the end of a chunk is flushed there. Buckets never span
// chunks. Without byte counts (grad_bytes or bucket_bytes zero) every layer is its own
// bucket. At most kMaxBucketsPerChunk buckets are formed per chunk (smaller buckets are
// merged), which bounds the task count. A bucket's reduction time is grad_reduce times
// the layers' worth of gradients it holds.
//
// ZeRO-3: before each layer's piece, a param_gather task on the gather stream. With
// prefetch the gather of a layer may start once the layer before the previous one has
// finished (it overlaps the previous layer's compute); without, once the previous layer
// has finished. See pass_costs.h for the closed form this reproduces. When gathers and
// reductions share a communicator (TailStreams::reduce), each bucket's reduction goes on
// the gather stream after the next layer's gather, which is the order FSDP and DeepSpeed
// issue them in (the prefetch at a layer's start, the reduce-scatter at its end).
#pragma once

#include <vector>

#include "estimator/step_costs.h"
#include "simulator/task_graph.h"

namespace dsplan::sim {

inline constexpr int kMaxBucketsPerChunk = 64;

struct TailPiece {
  int layer = 0;            // position in backward order (0 = the chunk's last layer)
  double fraction = 1.0;    // share of that layer's backward in this piece
  bool closes_bucket = false;
  double bucket_layers = 0; // when it closes a bucket: the bucket size in layers
};

// Pieces of a backward over `layers` layers, in execution order.
std::vector<TailPiece> plan_tail_pieces(int layers, Bytes layer_bytes, Bytes bucket_bytes);

struct GradBucket {
  TaskId ready = kNoTask;   // the piece whose completion fills the bucket
  double layers = 0;        // gradients held, in layers
  TaskId reduce = kNoTask;  // its reduction, when the tail added it (TailStreams::reduce)
};

struct TailTasks {
  TaskId first = kNoTask;   // first compute task of the pass (takes the incoming deps)
  TaskId last = kNoTask;    // last compute task of the pass (feeds the outgoing send)
};

struct TailStreams {
  int compute = -1;
  int gather = -1;          // -1 when there are no ZeRO-3 gathers
  // StepCosts::gather_shares_reduce: the stream the tail puts each bucket's reduction on
  // (the gather stream), in the order the framework issues them: a layer's prefetched
  // gather, then the reduction of the buckets the layer before it filled. -1: the caller
  // adds the reductions on its own stream.
  int reduce = -1;
  // With `reduce`, FSDP hybrid's replica all-reduce of each bucket (layer.grad_reduce_
  // replica) runs here after the bucket's reduce-scatter, on its own communicator.
  int replica = -1;
};

// Adds the last micro-batch's backward of `chunk` on `rank` to the graph (after whatever
// the compute stream already holds) and appends the buckets it fills to `buckets`.
TailTasks add_backward_tail(TaskGraph& graph, const StepCosts& costs, TailStreams streams,
                            int rank, int chunk, std::vector<GradBucket>& buckets);

}  // namespace dsplan::sim
