// Task graph construction and the names of tasks and streams. See task_graph.h.
#include "simulator/task_graph.h"

#include <boost/graph/exception.hpp>  // boost::not_a_dag

namespace dsplan::sim {

Category category_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::forward:
    case TaskKind::backward:
    case TaskKind::backward_layer:
    case TaskKind::head_backward:
    case TaskKind::embed_backward:
      return Category::compute;
    case TaskKind::param_gather:
    case TaskKind::p2p_send:
    case TaskKind::p2p_exchange:
    case TaskKind::grad_reduce:
    case TaskKind::grad_reduce_tail:
    case TaskKind::embed_grad_sync:
    case TaskKind::param_allgather:
      return Category::comm;
    case TaskKind::offload_d2h:
    case TaskKind::offload_h2d:
      return Category::offload;
    case TaskKind::optimizer_gpu:
    case TaskKind::optimizer_cpu:
      return Category::optimizer;
    case TaskKind::barrier:
      return Category::none;
  }
  return Category::none;
}

int TaskGraph::add_stream(StreamKind kind, int rank) {
  streams_.push_back(Stream{kind, rank});
  last_on_stream_.push_back(kNoTask);
  return static_cast<int>(streams_.size()) - 1;
}

TaskId TaskGraph::add_task(const Task& task) {
  order_.clear();
  const TaskId id = boost::add_vertex(task, *graph_);
  if (task.stream >= 0) {
    add_dep(last_on_stream_[task.stream], id);
    last_on_stream_[task.stream] = id;
  }
  return id;
}

void TaskGraph::add_dep(TaskId before, TaskId after) {
  if (before == kNoTask || after == kNoTask || before == after) return;
  if (before > after) forward_edges_ = false;
  order_.clear();
  boost::add_edge(before, after, *graph_);
}

const std::vector<TaskId>& TaskGraph::topological_order() const {
  const std::size_t n = size();
  if (order_.size() == n) return order_;
  order_.clear();
  order_.reserve(n);
  // Kahn's algorithm: a task is ready once all its predecessors are placed. order_ doubles
  // as the queue (tasks [next, end) are placed but their successors not yet released).
  std::vector<std::size_t> waiting(n);
  for (TaskId v = 0; v < n; ++v) {
    waiting[v] = boost::in_degree(v, *graph_);
    if (waiting[v] == 0) order_.push_back(v);
  }
  for (std::size_t next = 0; next < order_.size(); ++next) {
    for (auto [e, end] = boost::out_edges(order_[next], *graph_); e != end; ++e) {
      const TaskId w = boost::target(*e, *graph_);
      if (--waiting[w] == 0) order_.push_back(w);
    }
  }
  if (order_.size() != n) {
    order_.clear();
    throw boost::not_a_dag();
  }
  return order_;
}

namespace {

const char* stream_kind_name(StreamKind kind) {
  switch (kind) {
    case StreamKind::compute: return "compute";
    case StreamKind::dp_comm: return "dp_comm";
    case StreamKind::gather: return "gather";
    case StreamKind::p2p: return "p2p";
    case StreamKind::host: return "host";
  }
  return "?";
}

}  // namespace

const char* kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::forward: return "forward";
    case TaskKind::backward: return "backward";
    case TaskKind::backward_layer: return "backward";
    case TaskKind::head_backward: return "head_backward";
    case TaskKind::embed_backward: return "embed_backward";
    case TaskKind::param_gather: return "param_gather";
    case TaskKind::p2p_send: return "p2p_send";
    case TaskKind::p2p_exchange:
      return "p2p_exchange";
    case TaskKind::grad_reduce: return "grad_reduce";
    case TaskKind::grad_reduce_tail: return "grad_reduce_tail";
    case TaskKind::embed_grad_sync: return "embed_grad_sync";
    case TaskKind::offload_d2h: return "offload_d2h";
    case TaskKind::barrier: return "barrier";
    case TaskKind::optimizer_gpu: return "optimizer";
    case TaskKind::optimizer_cpu: return "cpu_optimizer";
    case TaskKind::offload_h2d: return "offload_h2d";
    case TaskKind::param_allgather: return "param_allgather";
  }
  return "?";
}

std::string stream_name(const Stream& stream) {
  return "rank" + std::to_string(stream.rank) + "/" + stream_kind_name(stream.kind);
}

std::string task_name(const Task& task) {
  if (task.kind == TaskKind::barrier) return "barrier";
  std::string name = "rank" + std::to_string(task.rank) + "/" + kind_name(task.kind);
  if (task.micro_batch >= 0) name += " mb" + std::to_string(task.micro_batch);
  if (task.chunk >= 0) name += " chunk" + std::to_string(task.chunk);
  if (task.layer >= 0) name += " layer" + std::to_string(task.layer);
  if (task.bucket >= 0) name += " bucket" + std::to_string(task.bucket);
  return name;
}

}  // namespace dsplan::sim
