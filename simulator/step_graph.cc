// Construction of the step graph: streams, pipeline passes, sends, gradient reduction,
// offload copies and the optimizer update. See step_graph.h for the model.
#include "simulator/step_graph.h"

#include <utility>

#include "simulator/backward_tail.h"
#include "simulator/deepspeed_schedule.h"
#include "simulator/micro_batch_reduce.h"
#include "simulator/pass_costs.h"
#include "simulator/pipeline_order.h"

namespace dsplan::sim {

namespace {

struct PassIds {
  TaskId first = kNoTask;
  TaskId last = kNoTask;
  TaskId send = kNoTask;  // its blocking send on the compute stream, if any
};

Task make_task(TaskKind kind, int stream, int rank, Seconds duration) {
  Task t;
  t.kind = kind;
  t.stream = stream;
  t.rank = rank;
  t.duration = duration;
  return t;
}

class Builder {
 public:
  explicit Builder(const StepCosts& c)
      : c_(c), stages_(c.pp * c.vpp),
        fwd_(static_cast<std::size_t>(c.micro_batches) * stages_),
        bwd_(fwd_.size()), buckets_(c.pp), sync_(c.pp, kNoTask) {}

  StepGraph build() {
    sg_.offload = c_.offload_d2h.v > 0.0 || c_.offload_h2d.v > 0.0;
    add_streams();
    for (int r = 0; r < c_.pp; ++r) {
      if (c_.grad_reduce_every_micro_batch) reduce_.push_back(micro_batch_reduction(c_, r));
    }
    if (exchanges()) {
      add_deepspeed_steps();
    } else {
      for (int r = 0; r < c_.pp; ++r) {
        orders_.push_back(rank_order(c_.pp, c_.vpp, c_.micro_batches, r));
        for (const PipelineOp& op : orders_[r]) add_pass(r, op);
      }
      for (int r = 0; r < c_.pp; ++r) add_sends(r);
    }
    // After the last pass, or a DeepSpeed stage's last exchange (its reduction follows the
    // schedule's final step).
    for (int r = 0; r < c_.pp; ++r) sg_.last_compute.push_back(sg_.graph.last_on(sg_.ranks[r].compute));
    for (int r = 0; r < c_.pp; ++r) add_reductions(r);
    add_embed_sync();
    add_late_copies();
    add_update();
    return std::move(sg_);
  }

 private:
  const StepCosts& c_;
  int stages_;
  StepGraph sg_;
  std::vector<PassIds> fwd_, bwd_;  // by idx(micro_batch, stage)
  std::vector<std::vector<GradBucket>> buckets_;
  std::vector<std::vector<PipelineOp>> orders_;
  std::vector<MicroBatchReduction> reduce_;  // per rank, with grad_reduce_every_micro_batch
  std::vector<TaskId> sync_;  // per rank: what its next compute task must wait for

  std::size_t idx(int mb, int stage) const {
    return static_cast<std::size_t>(mb) * stages_ + stage;
  }
  int stage(int rank, int chunk) const { return chunk * c_.pp + rank; }

  void add_streams() {
    TaskGraph& g = sg_.graph;
    for (int r = 0; r < c_.pp; ++r) {
      RankStreams s;
      s.compute = g.add_stream(StreamKind::compute, r);
      s.dp = g.add_stream(StreamKind::dp_comm, r);
      if (c_.pp > 1) s.p2p = g.add_stream(StreamKind::p2p, r);
      if (c_.layer.param_gather.v > 0.0) s.gather = g.add_stream(StreamKind::gather, r);
      if (sg_.offload) s.host = g.add_stream(StreamKind::host, r);
      sg_.ranks.push_back(s);
    }
  }

  // The stream the rank's gradient reductions share with its ZeRO-3 gathers (one
  // communicator, StepCosts::gather_shares_reduce), or -1 when they have their own.
  int shared_reduce(const RankStreams& s) const {
    return c_.gather_shares_reduce && c_.overlap_grad_reduce ? s.gather : -1;
  }

  // The stage a pass hands its output to, or -1 (the last forward, the first backward).
  int destination(int rank, const PipelineOp& op) const {
    const int to = op.forward ? stage(rank, op.chunk) + 1 : stage(rank, op.chunk) - 1;
    return to < 0 || to >= stages_ ? -1 : to;
  }

  TaskId add_send(int rank, const PipelineOp& op, int stream) {
    Task t = make_task(TaskKind::p2p_send, stream, rank, c_.p2p);
    t.micro_batch = op.micro_batch;
    t.chunk = op.chunk;
    return sg_.graph.add_task(t);
  }

  bool exchanges() const { return c_.p2p_exchange && c_.pp > 1; }

  // DeepSpeed's pipeline engine (StepCosts::p2p_exchange): passes and exchanges added step
  // by step as its TrainSchedule runs them (deepspeed_schedule.h). The exchanges carry the
  // data: the tensor a stage sends was made by the pass before it on its stream.
  void add_deepspeed_steps() {
    std::vector<std::vector<DsStep>> steps;
    for (int r = 0; r < c_.pp; ++r) steps.push_back(deepspeed_train_steps(c_.pp, c_.micro_batches, r));
    for (std::size_t k = 0; k < steps[0].size(); ++k) {
      // A forward stage exchanges with the stage before it, in the order both post them.
      for (int r = 1; r < c_.pp; ++r) {
        for (const DsExchange& x : steps[r][k].exchanges) {
          if (x.peer == r - 1) add_exchange(r, r - 1, x.micro_batch);
        }
      }
      for (int r = 0; r < c_.pp; ++r) {
        if (steps[r][k].has_pass) add_pass(r, steps[r][k].pass);
      }
    }
  }

  // One blocking send/recv pair: a task on each rank's compute stream, each also waiting
  // for the other rank's previous task, so both start when the later rank arrives.
  void add_exchange(int a, int b, int mb) {
    TaskGraph& g = sg_.graph;
    const int sa = sg_.ranks[a].compute, sb = sg_.ranks[b].compute;
    const TaskId before_a = g.last_on(sa), before_b = g.last_on(sb);
    Task t = make_task(TaskKind::p2p_exchange, sa, a, c_.p2p);
    t.micro_batch = mb;
    g.add_dep(before_b, g.add_task(t));
    t.stream = sb;
    t.rank = b;
    g.add_dep(before_a, g.add_task(t));
  }

  // A blocking send right after the pass on the sender's compute stream (StepCosts::
  // p2p_blocking): the rank's next pass waits for it. add_sends() links it to the receiver.
  void add_blocking_send(int rank, const PipelineOp& op, PassIds& pass) {
    const int to = destination(rank, op);
    if (!c_.p2p_blocking || exchanges() || to < 0 || to % c_.pp == rank) return;
    pass.send = add_send(rank, op, sg_.ranks[rank].compute);
    sg_.graph.add_dep(pass.last, pass.send);
  }

  void add_pass(int rank, const PipelineOp& op) {
    const RankStreams& s = sg_.ranks[rank];
    const std::size_t i = idx(op.micro_batch, stage(rank, op.chunk));
    const TaskId sync = std::exchange(sync_[rank], kNoTask);
    if (!op.forward && op.micro_batch == c_.micro_batches - 1) {
      const TailTasks t = add_backward_tail(sg_.graph, c_,
                                            TailStreams{s.compute, s.gather, shared_reduce(s), s.dp},
                                            rank, op.chunk, buckets_[rank]);
      sg_.graph.add_dep(sync, t.first);
      bwd_[i] = PassIds{t.first, t.last};
      add_blocking_send(rank, op, bwd_[i]);
      return;
    }
    PassCost cost = pass_cost(c_, rank, op.chunk, op.forward);
    const bool reduces = !op.forward && op.chunk == 0 && c_.grad_reduce_every_micro_batch;
    if (reduces) {
      cost.duration += reduce_[rank].contention;
      cost.contention += reduce_[rank].contention;
    }
    Task t = make_task(op.forward ? TaskKind::forward : TaskKind::backward, s.compute, rank,
                       cost.duration);
    t.blocking_comm = cost.blocking_comm;
    t.contention = cost.contention;
    t.micro_batch = op.micro_batch;
    t.chunk = op.chunk;
    const TaskId id = sg_.graph.add_task(t);
    sg_.graph.add_dep(sync, id);
    (op.forward ? fwd_ : bwd_)[i] = PassIds{id, id};
    add_blocking_send(rank, op, (op.forward ? fwd_ : bwd_)[i]);
    // Chunk 0 runs the micro-batch's last backward pass on this rank.
    if (reduces) add_micro_batch_reduction(rank, op.micro_batch, id);
  }

  // ZeRO-2/3, a micro-batch before the last: its reductions (and offload copy) as one
  // task each, the exposed part as duration (micro_batch_reduce.h); the rank's next
  // compute task waits for them (DeepSpeed synchronises at the end of every backward).
  void add_micro_batch_reduction(int rank, int mb, TaskId backward) {
    const MicroBatchReduction& m = reduce_[rank];
    const RankStreams& s = sg_.ranks[rank];
    TaskGraph& g = sg_.graph;
    Task t = make_task(TaskKind::grad_reduce, s.dp, rank, m.reduce_exposed);
    t.overlapped = m.reduce_hidden;
    t.micro_batch = mb;
    const TaskId reduce = g.add_task(t);
    g.add_dep(backward, reduce);
    sync_[rank] = reduce;
    if (!sg_.offload) return;
    Task copy = make_task(TaskKind::offload_d2h, s.host, rank, m.copy_exposed);
    copy.overlapped = m.copy_hidden;
    copy.micro_batch = mb;
    sync_[rank] = g.add_task(copy);
    g.add_dep(reduce, sync_[rank]);
  }

  // Output of pass `op` on `rank` to the pass that consumes it, through a send when the
  // consumer is on another rank.
  void add_sends(int rank) {
    TaskGraph& g = sg_.graph;
    for (const PipelineOp& op : orders_[rank]) {
      const int s = stage(rank, op.chunk);
      const int mb = op.micro_batch;
      if (op.forward) g.add_dep(fwd_[idx(mb, s)].last, bwd_[idx(mb, s)].first);
      const int to = destination(rank, op);
      if (to < 0) continue;
      const PassIds& pass = (op.forward ? fwd_ : bwd_)[idx(mb, s)];
      const TaskId from = pass.last;
      const TaskId dest = (op.forward ? fwd_ : bwd_)[idx(mb, to)].first;
      if (to % c_.pp == rank) {
        g.add_dep(from, dest);
        continue;
      }
      if (pass.send != kNoTask) {  // blocking: the send is on the compute stream already
        g.add_dep(pass.send, dest);
        continue;
      }
      const TaskId send = add_send(rank, op, sg_.ranks[rank].p2p);
      g.add_dep(from, send);
      g.add_dep(send, dest);
    }
  }

  void add_reductions(int rank) {
    TaskGraph& g = sg_.graph;
    const RankStreams& s = sg_.ranks[rank];
    const TaskId last_compute = sg_.last_compute[rank];
    const bool overlap = c_.overlap_grad_reduce;
    int index = 0;
    for (const GradBucket& b : buckets_[rank]) {
      TaskId reduce = b.reduce;  // already on the gather stream (gather_shares_reduce)
      if (reduce == kNoTask) {
        Task t = make_task(TaskKind::grad_reduce, s.dp, rank, c_.layer.grad_reduce * b.layers);
        t.bucket = index;
        reduce = g.add_task(t);
        g.add_dep(overlap ? b.ready : last_compute, reduce);
      }
      ++index;
      if (!sg_.offload || !overlap) continue;
      Task copy = make_task(TaskKind::offload_d2h, s.host, rank,
                            c_.offload_d2h * (b.layers / c_.layers_per_rank));
      copy.bucket = index - 1;
      g.add_dep(reduce, g.add_task(copy));
    }
    // The non-layer gradients reduce on the same communicator as the buckets: after them
    // (FSDP hybrid: the reduce-scatter there, then the replica all-reduce on dp_comm).
    const int shared = shared_reduce(s);
    const Seconds replica = shared >= 0 ? c_.grad_reduce_tail_replica : Seconds{};
    const TaskId tail = g.add_task(make_task(TaskKind::grad_reduce_tail, shared >= 0 ? shared : s.dp,
                                             rank, c_.grad_reduce_tail - replica));
    g.add_dep(last_compute, tail);
    if (replica.v > 0.0)
      g.add_dep(tail, g.add_task(make_task(TaskKind::grad_reduce_tail, s.dp, rank, replica)));
  }

  // Without overlap the gradients go to the host in one copy once every reduction of
  // the rank (the tied-embedding sync included) is done.
  void add_late_copies() {
    if (!sg_.offload || c_.overlap_grad_reduce) return;
    TaskGraph& g = sg_.graph;
    for (int r = 0; r < c_.pp; ++r) {
      const RankStreams& s = sg_.ranks[r];
      g.add_dep(g.last_on(s.dp),
                g.add_task(make_task(TaskKind::offload_d2h, s.host, r, c_.offload_d2h)));
    }
  }

  void add_embed_sync() {
    if (c_.embed_grad_sync.v <= 0.0) return;
    TaskGraph& g = sg_.graph;
    const TaskId sync = g.add_task(make_task(TaskKind::embed_grad_sync, sg_.ranks[0].dp, 0,
                                             c_.embed_grad_sync));
    g.add_dep(sg_.last_compute[0], sync);
    g.add_dep(sg_.last_compute[c_.pp - 1], sync);
  }

  void add_update() {
    TaskGraph& g = sg_.graph;
    const TaskId barrier = g.add_task(make_task(TaskKind::barrier, -1, 0, Seconds{}));
    for (const RankStreams& s : sg_.ranks) {
      g.add_dep(g.last_on(s.dp), barrier);
      if (s.gather >= 0) g.add_dep(g.last_on(s.gather), barrier);  // shared-stream reductions
      if (s.host >= 0) g.add_dep(g.last_on(s.host), barrier);
    }
    for (int r = 0; r < c_.pp; ++r) {
      const RankStreams& s = sg_.ranks[r];
      TaskId before_gather;
      if (sg_.offload) {
        const TaskId adam =
            g.add_task(make_task(TaskKind::optimizer_cpu, s.host, r, c_.optimizer));
        g.add_dep(barrier, adam);
        before_gather = g.add_task(make_task(TaskKind::offload_h2d, s.host, r, c_.offload_h2d));
      } else {
        before_gather = g.add_task(make_task(TaskKind::optimizer_gpu, s.compute, r, c_.optimizer));
        g.add_dep(barrier, before_gather);
      }
      const TaskId gather =
          g.add_task(make_task(TaskKind::param_allgather, s.dp, r, c_.param_allgather));
      g.add_dep(before_gather, gather);
    }
  }
};

}  // namespace

StepGraph build_step_graph(const StepCosts& costs) { return Builder(costs).build(); }

}  // namespace dsplan::sim
