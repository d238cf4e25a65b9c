// One training step as a directed acyclic graph of tasks (Boost.Graph adjacency_list).
// A task is a piece of work with a duration that occupies one stream: a per-rank queue
// that runs one task at a time in the order tasks were added to it, like a CUDA stream
// or a host thread. Adding a task to a stream therefore also adds an edge from the
// previous task on that stream, so every stream is an in-order queue and any
// topological order of the graph yields the same schedule. Data dependencies between
// streams (an activation sent to the next stage, a bucket reduced after the backward
// that filled it) are explicit edges. Tasks carry structured labels, not strings, so
// that building a graph of thousands of tasks stays cheap; names are rendered only for
// the tasks a caller asks about (the critical path).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "core/units.h"

namespace dsplan::sim {

enum class StreamKind {
  compute,  // GPU kernels; blocking TP collectives are folded into compute tasks
  dp_comm,  // data-parallel gradient reduction and parameter all-gather (ZeRO-1/2)
  gather,   // ZeRO-3 parameter all-gather (prefetch); with gather_shares_reduce also the
            // gradient reductions that share its communicator
  p2p,      // pipeline sends to the neighbouring stage
  host,     // offload: PCIe copies and the CPU optimizer
};

enum class TaskKind {
  forward,           // forward of one model chunk for one micro-batch
  backward,          // backward of one model chunk for one micro-batch
  backward_layer,    // part of one layer's backward in the last micro-batch (the tail)
  head_backward,     // last stage: loss, logits and final norm backward (tail)
  embed_backward,    // first stage: embedding backward (tail)
  param_gather,      // ZeRO-3 all-gather of one layer's parameters (tail)
  p2p_send,          // activation or activation-gradient send to the neighbouring stage
  p2p_exchange,      // one side of a blocking send/recv pair (DeepSpeed's pipeline engine)
  grad_reduce,       // DP reduction of one gradient bucket
  grad_reduce_tail,  // DP reduction of gradients outside the layers (embeddings, norms)
  embed_grad_sync,   // tied-embedding all-reduce between first and last stage
  offload_d2h,       // gradients copied to host memory (ZeRO-Offload)
  barrier,           // zero-length join: every rank's gradients are final
  optimizer_gpu,     // optimizer step on the GPU
  optimizer_cpu,     // CPU Adam (ZeRO-Offload)
  offload_h2d,       // updated parameters copied back to the device
  param_allgather,   // ZeRO-1/2 all-gather of updated parameters
};

// What a task's time counts as when it delays the critical rank.
enum class Category { compute, comm, offload, optimizer, none };

Category category_of(TaskKind kind);

struct Stream {
  StreamKind kind = StreamKind::compute;
  int rank = 0;
};

struct Task {
  TaskKind kind = TaskKind::forward;
  int stream = -1;         // index into TaskGraph::streams(); -1 for a barrier
  Seconds duration;        // time the task occupies its stream
  Seconds blocking_comm;   // part of duration spent in blocking collectives (TP, ZeRO-3)
  Seconds overlapped;      // work of this task already done, off the schedule, under
                           // earlier tasks (micro_batch_reduce.h); counts as stream busy
  Seconds contention;      // part of duration lost beside collectives computed analytically
                           // (pass_costs.h gathers, micro_batch_reduce.h reductions)
  int rank = 0;
  int micro_batch = -1;    // -1 when not per micro-batch
  int chunk = -1;          // model chunk (virtual stage index on this rank)
  int layer = -1;          // layer index within the chunk, for tail tasks
  int bucket = -1;         // gradient bucket index within the rank
};

using TaskId = std::size_t;
inline constexpr TaskId kNoTask = static_cast<TaskId>(-1);

class TaskGraph {
 public:
  // vecS edge list: edges are never removed, and a vector avoids one allocation per edge.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Task,
                                      boost::no_property, boost::no_property, boost::vecS>;

  // The Boost graph lives on the heap: adjacency_list has no move constructor, and a
  // step graph is returned by value.
  TaskGraph() : graph_(std::make_unique<Graph>()) {}

  int add_stream(StreamKind kind, int rank);
  // Appends a task to its stream (after the stream's previous task) and returns its id.
  TaskId add_task(const Task& task);
  // `after` may not start before `before` has finished. kNoTask on either side is ignored.
  void add_dep(TaskId before, TaskId after);

  const Task& task(TaskId id) const { return (*graph_)[id]; }
  // Changes how long a task occupies its stream (the contention pass, contention.h).
  void set_duration(TaskId id, Seconds duration) { (*graph_)[id].duration = duration; }
  std::size_t size() const { return boost::num_vertices(*graph_); }
  const Graph& graph() const { return *graph_; }
  const std::vector<Stream>& streams() const { return streams_; }
  // True while every dependency runs from an earlier-added task to a later one (how the
  // step graphs are built): then the ids in order are a topological order and the graph
  // has no cycle, so the scheduler needs no sort.
  bool ids_are_topological() const { return forward_edges_; }
  // A topological order of the tasks (Kahn's algorithm over the in-degrees: the tasks
  // without predecessors by id, then each task as its last predecessor is placed),
  // computed once and kept until a task or dependency is added: the contention pass
  // reschedules the same graph with new durations several times. Throws boost::not_a_dag
  // on a cycle.
  const std::vector<TaskId>& topological_order() const;
  // The last task added to a stream, or kNoTask.
  TaskId last_on(int stream) const { return last_on_stream_[stream]; }

 private:
  std::unique_ptr<Graph> graph_;
  std::vector<Stream> streams_;
  std::vector<TaskId> last_on_stream_;
  bool forward_edges_ = true;  // every dependency so far runs from a lower id to a higher
  mutable std::vector<TaskId> order_;  // topological_order(), empty until asked or after a change
};

const char* kind_name(TaskKind kind);          // "backward", "grad_reduce"
std::string stream_name(const Stream& stream);  // "rank0/compute"
std::string task_name(const Task& task);        // "rank0/backward mb3 chunk1"

}  // namespace dsplan::sim
