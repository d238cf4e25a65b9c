// Context parallelism: the K/V ring's step times and what they expose
// (context_parallel.h; docs/model.md §4.9).
#include "estimator/time/context_parallel.h"

#include <algorithm>

#include "estimator/time/gemm.h"

namespace dsplan {

CpRing cp_ring(const ModelSpec& m, const TrainConfig& view, const SystemSpec& node,
               const CollectiveModel& coll) {
  CpRing r;
  if (view.cp <= 1) return r;
  const int tp = std::max(1, view.tp);
  // K and V heads on this TP rank (GQA groups smaller than tp are replicated, one per rank).
  const double kv_heads = std::max(1.0, double(kv_heads_of(m)) / tp);
  const double e = element_bytes(view.precision);  // FP8 runs keep 16-bit K and V (TrainConfig::fp8)
  // MLA passes each head's whole key (qk_head_dim_of) and value (v_head_dim_of).
  const double width = is_mla(m) ? double(qk_head_dim_of(m) + v_head_dim_of(m)) : 2.0 * head_dim_of(m);
  const double kv = view.micro_batch * double(view.seq_len) * kv_heads * width * e;
  // cp neighbours are tp ranks apart: on one node while a tp x cp block fits in it.
  const int gpn = std::max(1, node.gpus_per_node);
  const CommGroup pair{2, tp * view.cp <= gpn ? 2 : 1};
  r.step_fwd = coll.time(Collective::send_recv, Bytes(kv), pair);
  r.step_bwd = coll.time(Collective::send_recv, Bytes(2.0 * kv), pair);  // K, V and dK, dV
  return r;
}

CpExposed cp_exposed(const CpRing& ring, int cp, Seconds attn_fwd, Seconds attn_bwd) {
  CpExposed x;
  if (cp <= 1) return x;
  const double steps = cp - 1.0;
  x.fwd = Seconds(steps * std::max(0.0, ring.step_fwd.v - attn_fwd.v / cp));
  x.bwd = Seconds(steps * std::max(0.0, ring.step_bwd.v - attn_bwd.v / cp));
  return x;
}

}  // namespace dsplan
