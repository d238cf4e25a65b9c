// The closed-form step time over StepCosts (docs/model.md §4 Step time, "Closed form"):
//   per micro-batch, slowest stage:  T_mb = L (fwd + tp_fwd + bwd + recompute + tp_bwd)
//                                    + ZeRO-3 gather exposure + S
//   with blocking sends a middle stage sends 2 v times per micro-batch and an end stage
//   2 v - 1 (stage 0 sends no gradient, the last stage no activation) besides its
//   embedding or head: S = max(2 v p2p, edge + (2 v - 1) p2p) for p > 2, edge + (2 v - 1)
//   p2p for p = 2 (two end stages), edge for p = 1. DeepSpeed's pipeline engine
//   exchanges instead (StepCosts::p2p_exchange): a middle stage takes part in 4
//   transfers per micro-batch and an end stage in 2, each holding its compute stream:
//   S = max(4 p2p, edge + 2 p2p), edge + 2 p2p for p = 2; with TP its partitioned tensors
//   add 3 all-gathers a micro-batch to a middle stage, 2 to the first and 1 to the last
//   step = m T_mb + (p-1)/v T_body + min(first, last)  1F1B / interleaved pipeline
//          (+ (v-1)(p-m)/v T_body when m < p: interleaving needs p micro-batches in flight)
//          T_body = a middle stage's layer work and 2 v sends (no embedding or head)
//        + rounds x DP exposure + param all-gather + tied-embedding sync
//        + optimizer + exposed offload copies
// DP exposure per reduction round (rounds = m for ZeRO-2/3, else 1): without overlap the
// whole reduction; with overlap (DDP/FSDP, DeepSpeed overlap_comm) the part that outlasts
// one micro-batch's backward, at least the last bucket, plus the non-layer tail (which
// never holds the last layer bucket, so nothing is counted twice). Offload gradient copies
// overlap the backward only with overlap, like the reductions they follow.
// Overlap contention (estimator/overlap.h): compute beside a ZeRO-3 gather or a DP
// reduction loses overlap_compute_loss of its rate; the lost time is compute, and the
// longer window hides that much more of the reduction.
// Model FLOPs follow Megatron: 6 x matmul weights x tokens + 12 L s (a d) per token for
// attention, halved when causal (less in sliding-window layers: the keys each query
// attends to), + 6 h V for the logits; per GPU = replica / (tp pp).
#include <algorithm>
#include <array>
#include <optional>

#include "estimator/host_stall.h"
#include "estimator/overlap.h"
#include "estimator/time/step_caches.h"

namespace dsplan {

namespace {

// Reduction time of the last layer bucket, from StepCosts alone (as the simulator sees
// it): buckets of bucket_bytes fill in backward order, so the last one holds
// min(L, bucket_bytes / grad_bytes) layers' worth (one layer without byte counts).
Seconds last_bucket_reduce(const LayerCosts& l, Bytes bucket, int L) {
  if (l.grad_bytes.v <= 0 || bucket.v <= 0) return l.grad_reduce * std::min(1, L);
  return l.grad_reduce * std::min(double(L), bucket / l.grad_bytes);
}

struct Term {
  const char* name;
  double seconds;
};

// "name NN%" without allocating (fits the small-string buffer).
void put_term(std::string& s, const Term& t, double step) {
  const int pct = step > 0 ? static_cast<int>(100.0 * t.seconds / step + 0.5) : 0;
  s.assign(t.name);
  s.push_back(' ');
  if (pct >= 100) s.push_back(char('0' + pct / 100));
  if (pct >= 10) s.push_back(char('0' + (pct / 10) % 10));
  s.push_back(char('0' + pct % 10));
  s.push_back('%');
}

void fill_critical_path(std::vector<std::string>& out, std::array<Term, 8> terms, double step) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.seconds > b.seconds; });
  std::size_t n = 0;
  for (const Term& t : terms) {
    if (t.seconds <= 0 || (n > 0 && t.seconds < 0.05 * step) || n == 4) break;
    if (out.size() <= n) out.emplace_back();
    put_term(out[n++], t, step);
  }
  out.resize(n);
}

}  // namespace

void StepTimeModel::estimate_into(const TrainConfig& run, StepTimeBreakdown& out) const {
  // Context parallelism prices the rank's view (TrainConfig::cp_rank_view).
  std::optional<TrainConfig> view;
  const TrainConfig& cfg = run.cp > 1 ? view.emplace(run.cp_rank_view()) : run;
  const OpEntry& oe = op_entry(*caches_, model_, cluster_, eff_, cfg);
  const CommEntry& ce = comm_entry(*caches_, model_, cluster_, eff_, cfg);
  const StepCosts c =
      assemble_costs(oe, ce, cfg, eff_, activation_moves(model_, cluster_.node, eff_, caches_->coll, cfg));
  const OpCosts& op = oe.op;
  const int L = c.layers_per_rank, m = c.micro_batches, p = c.pp, v = c.vpp;
  const LayerCosts& l = c.layer;

  const Seconds lf = l.fwd + l.tp_comm_fwd, lb = l.bwd + l.recompute + l.tp_comm_bwd;
  const double loss = c.overlap_compute_loss;
  const GatherOverlap go_f = gather_overlap(l.param_gather, lf, L, c.zero3_prefetch, loss);
  const GatherOverlap go_b = gather_overlap(l.param_gather, lb, L, c.zero3_prefetch, loss);
  const Seconds gf = go_f.exposed, gb = go_b.exposed;
  const Seconds gather_contention = go_f.contention + go_b.contention;
  const Seconds layers = (lf + lb) * L + gather_contention;
  // An end rank's time beyond a middle rank's: its embedding or head, less the layers an
  // accounted split (TrainConfig::stage_layers) takes off it; negative when that is more.
  const double short_first = L - c.first_rank_layers(), short_last = L - c.last_rank_layers();
  const Seconds first =
      c.embed_fwd + c.embed_bwd + (p == 1 ? c.head_fwd + c.head_bwd : Seconds{}) - (lf + lb) * short_first;
  const Seconds last = c.head_fwd + c.head_bwd - (lf + lb) * short_last;
  const Seconds edge = max(first, last);
  const Seconds send = p > 1 && (c.p2p_blocking || c.p2p_exchange) ? c.p2p : Seconds{};
  const bool exchange = c.p2p_exchange && p > 1;
  // Sends per micro-batch in the steady state, and while the fill and drain cross a stage
  // (one activation and one gradient per chunk, whether sent or exchanged).
  // DeepSpeed's partitioned tensors add all-gathers: 3 per micro-batch on a middle stage,
  // 2 on the first, 1 on the last.
  const Seconds gathers = exchange ? c.p2p_gather : Seconds{};
  const Seconds fill_sends = send * (2.0 * v) + gathers * 3.0;
  const Seconds p2p = exchange ? send * 4.0 + gathers * 3.0 : fill_sends;
  const Seconds end_stage =
      exchange ? max(first + gathers * 2.0, last + gathers) + send * 2.0 : edge + p2p - send;
  const Seconds t_mb = layers + gf + gb + (p > 2 ? max(p2p, end_stage) : end_stage);

  // Compute-only part of the slowest stage (the edge terms include small TP collectives).
  const bool first_slower = first >= last;
  const Seconds layer_compute = l.fwd + l.bwd + l.recompute;
  const Seconds edge_compute = first_slower ? op.embed_fwd + op.embed_bwd +
                                                  (p == 1 ? op.head_fwd + op.head_bwd : Seconds{}) -
                                                  layer_compute * short_first
                                            : op.head_fwd + op.head_bwd - layer_compute * short_last;
  const Seconds compute_mb = layer_compute * L + gather_contention + max(Seconds{}, min(edge_compute, edge));
  const Seconds comm_mb = t_mb - compute_mb;

  // Interleaving shortens the fill only when a group of p micro-batches keeps every rank
  // busy between chunks: with m < p each of the v-1 chunk changes idles (p - m)/v more
  // (m = 1 walks all v p virtual stages: p T_mb in all, whatever v).
  const double idle_mbs = (p - 1 + (v - 1) * std::max(0, p - m)) / double(v);
  // Fill and drain cross every other stage once: their layer work and sends (body), plus
  // the end stages' embedding and head beyond a middle stage, but for the slowest stage's,
  // which it pays m times (with an even split: the lighter end's).
  const Seconds body = layers + gf + gb + fill_sends;
  const Seconds slowest_edge = p > 2 ? max(edge, Seconds{}) : edge;
  const Seconds bubble = p > 1 ? body * idle_mbs + first + last - slowest_edge : Seconds{};
  const int rounds = c.grad_reduce_every_micro_batch ? m : 1;
  const Seconds window = (l.bwd + l.recompute) * L;
  const Seconds reduce = l.grad_reduce * L;
  Seconds per_round = c.grad_reduce_tail + reduce;
  Seconds reduce_contention;  // per round
  if (c.overlap_grad_reduce) {
    const Seconds free_window = max(Seconds{}, window - l.param_gather * L);
    const Seconds last_bucket = last_bucket_reduce(l, c.bucket_bytes, L);
    const Seconds hidden = max(Seconds{}, min(reduce - last_bucket, free_window));
    reduce_contention = hidden * loss;
    per_round = c.grad_reduce_tail + max(last_bucket, reduce - free_window - reduce_contention);
  }
  const Seconds dp = per_round * rounds + c.param_allgather + c.embed_grad_sync;
  const Seconds contention = reduce_contention * rounds;
  // Copies follow their bucket's reduction: they overlap the backward only when the
  // reductions do (without overlap_comm DeepSpeed reduces and copies on the compute stream).
  const Seconds d2h_round = c.overlap_grad_reduce ? max(Seconds{}, c.offload_d2h - window)
                                                  : c.offload_d2h;
  const Seconds d2h_exposed = d2h_round * rounds;
  const Seconds offload = d2h_exposed + c.offload_h2d;

  out.compute = compute_mb * m + contention;
  out.contention = gather_contention * m + contention;
  out.bubble = bubble;
  out.comm_exposed = comm_mb * m + dp;
  out.optimizer = c.optimizer;
  out.offload = offload;
  out.step = t_mb * m + bubble + dp + contention + c.optimizer + offload;
  // The GPU waiting for the host to issue kernels counts as compute (estimator/host_stall.h).
  const HostTiming host = host_timing(c);
  out.host_stall = host.stall;
  out.host_issue = host.issue;
  out.step += out.host_stall;
  out.compute += out.host_stall;

  const double tokens = double(cfg.micro_batch) * cfg.seq_len * m;  // this rank's
  const double seq = double(cfg.seq_len) * std::max(1, cfg.cp);     // a whole sequence
  double causal = model_.causal ? 0.5 : 1.0;
  // A sliding window of w keys: a query at position i attends to min(i + 1, w) keys, so a
  // windowed layer does (w(w+1)/2 + (s - w)w) / (s(s+1)/2) of a causal layer's score work.
  if (const double w = model_.attention_window, sl = seq; model_.causal && w > 0 && w < sl) {
    const double share = double(windowed_layers_of(model_)) / std::max(1, model_.layers);
    const double windowed = (w * (w + 1) / 2 + (sl - w) * w) / (sl * (sl + 1) / 2);
    causal *= share * windowed + (1 - share);
  }
  const double logits = model_.vocab_logits ? 6.0 * model_.hidden * double(model_.vocab) : 0.0;
  // Multi-token prediction modules count as a layer, a 2h x h projection and the logits
  // each (as Megatron's num_floating_point_operations counts them).
  const double mtp = std::max(0, cfg.mtp_layers), L_all = model_.layers + mtp;
  const double per_token = 6.0 * matmul_params_per_layer_ * L_all + logits * (1.0 + mtp) +
                           mtp * 12.0 * model_.hidden * double(model_.hidden) +
                           12.0 * L_all * seq * attn_width_ * causal;
  const double shards = double(std::max(1, cfg.tp)) * std::max(1, cfg.pp);
  out.model_flops = Flops(tokens * per_token / shards);
  const double layer_hw =
      (op.fwd_flops_hw + op.bwd_flops_hw + op.recompute_flops_hw * cfg.recompute_share(L)).v;
  out.hw_flops = Flops(m * (model_.layers * layer_hw + op.head_flops_hw.v) / std::max(1, cfg.pp));

  const double tp_total = ((l.tp_comm_fwd + l.tp_comm_bwd) * (L * m)).v;
  fill_critical_path(out.critical_path,
                     {Term{"compute", out.compute.v}, Term{"tp_comm", tp_total},
                      Term{"p2p", (p2p * m).v}, Term{"bubble", bubble.v},
                      Term{"z3_gather", ((gf + gb) * m).v}, Term{"dp_sync", dp.v},
                      Term{"optimizer", c.optimizer.v}, Term{"offload", offload.v}},
                     out.step.v);
}

StepTimeBreakdown StepTimeModel::estimate(const TrainConfig& cfg) const {
  StepTimeBreakdown b;
  estimate_into(cfg, b);
  return b;
}

}  // namespace dsplan
