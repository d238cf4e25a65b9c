// Per-layer backward of the last micro-batch, bucket planning and ZeRO-3 gathers.
// See backward_tail.h for the model and its assumptions.
#include "simulator/backward_tail.h"

#include <algorithm>

#include "simulator/pass_costs.h"

namespace dsplan::sim {

namespace {

constexpr double kEps = 1e-9;

// Bucket size in layers' worth of gradients.
double bucket_size_in_layers(int layers, Bytes layer_bytes, Bytes bucket_bytes) {
  if (layer_bytes.v <= 0.0 || bucket_bytes.v <= 0.0) return 1.0;
  const double q = bucket_bytes / layer_bytes;
  return std::max(q, static_cast<double>(layers) / kMaxBucketsPerChunk);
}

}  // namespace

std::vector<TailPiece> plan_tail_pieces(int layers, Bytes layer_bytes, Bytes bucket_bytes) {
  const double q = bucket_size_in_layers(layers, layer_bytes, bucket_bytes);
  std::vector<TailPiece> pieces;
  double room = q;  // space left in the open bucket, in layers
  for (int k = 0; k < layers; ++k) {
    double left = 1.0;  // share of layer k not yet assigned to a piece
    while (left > kEps) {
      const double take = std::min(left, room);
      TailPiece piece{k, take, false, 0.0};
      left -= take;
      room -= take;
      if (room <= kEps * q) {
        piece.closes_bucket = true;
        piece.bucket_layers = q;
        room = q;
      }
      pieces.push_back(piece);
    }
  }
  if (!pieces.empty() && !pieces.back().closes_bucket) {
    pieces.back().closes_bucket = true;
    pieces.back().bucket_layers = q - room;
  }
  return pieces;
}

namespace {

Task tail_task(TaskKind kind, int stream, int rank, int mb, int chunk, int layer) {
  Task t;
  t.kind = kind;
  t.stream = stream;
  t.rank = rank;
  t.micro_batch = mb;
  t.chunk = chunk;
  t.layer = layer;
  return t;
}

// Context shared by the steps of one tail.
struct TailBuilder {
  TaskGraph& g;
  const StepCosts& c;
  TailStreams s;
  int rank, chunk, mb, layers;
  TailTasks out;
  std::vector<TaskId> before;  // before[k]: compute task preceding layer k
  std::size_t pending = 0;     // first bucket whose reduction is not in the graph yet

  void add_compute(Task t) {
    const TaskId id = g.add_task(t);
    if (out.first == kNoTask) out.first = id;
    out.last = id;
  }

  TaskId add_gather(int k) {
    Task t = tail_task(TaskKind::param_gather, s.gather, rank, mb, chunk, layers - 1 - k);
    t.duration = c.layer.param_gather;
    t.blocking_comm = Seconds{};
    const TaskId id = g.add_task(t);
    const TaskId gate = c.zero3_prefetch ? before[k > 0 ? k - 1 : 0] : before[k];
    g.add_dep(gate, id);
    return id;
  }

  // Reductions of the buckets closed since the last gather, on the shared stream.
  void flush(std::vector<GradBucket>& buckets) {
    for (; pending < buckets.size(); ++pending) {
      GradBucket& b = buckets[pending];
      Task t = tail_task(TaskKind::grad_reduce, s.reduce, rank, mb, chunk, -1);
      t.duration = (c.layer.grad_reduce - c.layer.grad_reduce_replica) * b.layers;
      t.bucket = static_cast<int>(pending);
      b.reduce = g.add_task(t);
      g.add_dep(b.ready, b.reduce);
      if (c.layer.grad_reduce_replica.v <= 0.0 || s.replica < 0) continue;
      Task r = tail_task(TaskKind::grad_reduce, s.replica, rank, mb, chunk, -1);
      r.duration = c.layer.grad_reduce_replica * b.layers;
      r.bucket = t.bucket;
      const TaskId shard = b.reduce;
      b.reduce = g.add_task(r);
      g.add_dep(shard, b.reduce);
    }
  }

  void add_layer(int k, const std::vector<TailPiece>& pieces, std::size_t& p,
                 std::vector<GradBucket>& buckets) {
    before.push_back(g.last_on(s.compute));
    const TaskId gather = s.gather >= 0 ? add_gather(k) : kNoTask;
    if (s.reduce >= 0) flush(buckets);
    const Seconds full = layer_time(c, false), tp = layer_tp_comm(c, false);
    bool first_piece = true;
    for (; p < pieces.size() && pieces[p].layer == k; ++p) {
      Task t = tail_task(TaskKind::backward_layer, s.compute, rank, mb, chunk, layers - 1 - k);
      t.duration = full * pieces[p].fraction;
      t.blocking_comm = tp * pieces[p].fraction;
      add_compute(t);
      if (first_piece) g.add_dep(gather, out.last);
      first_piece = false;
      if (pieces[p].closes_bucket) buckets.push_back({out.last, pieces[p].bucket_layers});
    }
  }
};

}  // namespace

TailTasks add_backward_tail(TaskGraph& g, const StepCosts& c, TailStreams streams, int rank,
                            int chunk, std::vector<GradBucket>& buckets) {
  const int mb = c.micro_batches - 1;
  TailBuilder b{g, c, streams, rank, chunk, mb, chunk_layers(c, rank, chunk), {}, {}, buckets.size()};
  if (rank == c.pp - 1 && chunk == c.vpp - 1) {
    Task t = tail_task(TaskKind::head_backward, streams.compute, rank, mb, chunk, -1);
    t.duration = c.head_bwd;
    b.add_compute(t);
  }
  if (const Seconds gathers = c.p2p_gather * p2p_gathers(c, rank, false); gathers.v > 0.0) {
    // DeepSpeed's engine gathers its partitioned output and the received gradient first.
    Task t = tail_task(TaskKind::backward_layer, streams.compute, rank, mb, chunk, -1);
    t.duration = gathers;
    t.blocking_comm = t.duration;
    b.add_compute(t);
  }
  const auto pieces = plan_tail_pieces(b.layers, c.layer.grad_bytes, c.bucket_bytes);
  std::size_t p = 0;
  for (int k = 0; k < b.layers; ++k) b.add_layer(k, pieces, p, buckets);
  if (streams.reduce >= 0) b.flush(buckets);
  if (rank == 0 && chunk == 0) {
    Task t = tail_task(TaskKind::embed_backward, streams.compute, rank, mb, chunk, -1);
    t.duration = c.embed_bwd;
    b.add_compute(t);
  }
  return b.out;
}

}  // namespace dsplan::sim
