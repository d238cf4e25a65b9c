// MoE layer passes and all-to-all time (moe.h; docs/model.md §4.11).
#include "estimator/time/moe.h"

#include <algorithm>
#include <cmath>

namespace dsplan {

Elementwise moe_elementwise(const op::Dims& d) {
  Elementwise w;
  if (!d.moe) return w;
  const double tokens = d.Ts, E = d.experts, k = d.topk, copies = d.routed, e = d.e;
  // Router: the e-byte logits cast to fp32 (e + 4), softmax (read 4, write 4), top-k (read
  // 4; write k values and int64 indices), and the load-balancing loss's per-expert sums and
  // product (read the fp32 probabilities twice): 6 kernels over tokens x experts.
  const double router = tokens * E * (e + 4.0 + 8.0 + 4.0 + 8.0) + tokens * k * 12.0;
  w.fwd.add(MemKernel::blended, router, 0);
  w.bwd.add(MemKernel::blended, 2.0 * router, 0);
  w.fwd.kernels += 6, w.bwd.kernels += 8;
  // Permute: gather each token's h elements once per chosen expert (read and write the
  // copies, 2e each) after sorting the indices (a few small kernels). Unpermute: scale each
  // expert output by its probability (read, write) and add the top-k copies into the token
  // (read the copies, write the token). The backward runs the mirror passes and reduces
  // each copy's dot product with its output gradient for the probability's gradient.
  const double row = d.h * e;
  const double permute = 2.0 * copies * row;
  const double sum = copies * row + tokens * row;  // a token's copies summed into it
  const double unpermute = 2.0 * copies * row + sum;
  if (!d.permute_atomic) {  // fused (Transformer Engine): every pass gathers rows
    w.fwd.add(MemKernel::stream, permute + unpermute, 2.0 * copies * d.h);
    w.bwd.add(MemKernel::stream, 2.0 * (permute + unpermute), 4.0 * copies * d.h);
  } else {
    // Unfused (Megatron-Core's default): the unpermute sums the copies with an atomic
    // scatter_add_, and the permute's row gather has an atomic index_add as its backward;
    // each adds copies x h elements into the tokens. The other passes keep their bytes.
    w.fwd.add(MemKernel::stream, permute + unpermute - sum, 2.0 * copies * d.h);
    w.fwd.add(MemKernel::scatter_add, sum, copies * d.h);
    w.bwd.add(MemKernel::stream, 2.0 * (permute + unpermute) - sum, 4.0 * copies * d.h);
    w.bwd.add(MemKernel::index_add, sum, copies * d.h);
  }
  w.fwd.kernels += 8, w.bwd.kernels += 10;
  if (d.moe_bias) {
    // gpt-oss's expert biases: the up/gate and down outputs of the etp x routed rows this
    // rank computes (g fe / etp and h wide) each get their bias's gradient, a reduction over
    // the rows as a dense linear's (operators.cc). Transformer Engine adds the biases in the
    // GEMMs' epilogue; eager model code adds them in a kernel of its own (read, write).
    const double out = op::expert_rows(d) * op::expert_out_cols(d);
    w.bwd.add(MemKernel::blended, out * e, 0);
    w.bwd.kernels += 2;
    if (!d.megatron) {
      w.fwd.add(MemKernel::stream, 2.0 * out * e, out);
      w.fwd.kernels += 2;
    }
  }
  return w;
}

double moe_all_to_all_bytes(const op::Dims& d) { return d.moe ? d.routed * d.h * d.e : 0.0; }

Seconds all_to_all_time(const CollectiveModel& c, double bytes, CommGroup g) {
  if (g.ranks <= 1 || bytes <= 0) return Seconds{};
  const int n = g.ranks, r = std::clamp(g.ranks_per_node, 1, n);
  // Inside the node each GPU sends (r - 1)/n of its buffer over its own NVLink ports; the
  // (n - r)/n bound elsewhere leave through its share of the NICs. The two proceed at once.
  const double intra = r > 1 ? bytes * (r - 1.0) / n / c.intra_busbw(r).v : 0.0;
  const double inter = n > r ? bytes * double(n - r) / n / c.inter_busbw(1).v : 0.0;
  // Latency: one grouped send/recv round (a point-to-point operation's, across nodes when
  // the group leaves one).
  const Seconds lat = c.time(Collective::send_recv, Bytes(1.0), CommGroup{2, n > r ? 1 : 2});
  return lat + Seconds(std::max(intra, inter));
}

double distinct_units(const ModelSpec& m, int units) {
  const double k = m.topk, E = m.experts, U = std::max(1, units);
  if (U <= 1.0) return 1.0;
  const int G = m.moe_groups, g = m.moe_group_topk;
  if (G <= 1 || g <= 0 || g >= G) return U * (1.0 - std::pow(1.0 - 1.0 / U, k));
  const double per_unit = E / U, per_group = E / G;
  if (per_unit < per_group) {  // a group spans s units: selected with g / G, then 1/(g s) a draw
    const double s = per_group / per_unit;
    return U * (double(g) / G) * (1.0 - std::pow(1.0 - 1.0 / (g * s), k));
  }
  // The unit holds c whole groups; x of the g selected ones with hypergeometric odds.
  const int c = std::max(1, int(std::lround(per_unit / per_group)));
  auto choose = [](int n, int r) {
    if (r < 0 || r > n) return 0.0;
    double v = 1.0;
    for (int i = 1; i <= r; ++i) v = v * (n - r + i) / i;
    return v;
  };
  double p = 0.0;
  for (int x = 1; x <= std::min(c, g); ++x)
    p += choose(c, x) * choose(G - c, g - x) / choose(G, g) * (1.0 - std::pow(1.0 - double(x) / g, k));
  return U * p;
}

Seconds deepep_time(const CollectiveModel& c, const ModelSpec& m, double tokens, double e, CommGroup g) {
  if (g.ranks <= 1 || tokens <= 0) return Seconds{};
  const int n = g.nodes(), r = std::clamp(g.ranks_per_node, 1, g.ranks);
  const double row = m.hidden * e;
  // RDMA: one copy per remote node touched (own node excluded: (n - 1)/n of them).
  const double remote_nodes = n > 1 ? distinct_units(m, n) * (n - 1.0) / n : 0.0;
  const double rdma = n > 1 ? tokens * remote_nodes * row / c.inter_busbw(1).v : 0.0;
  // NVLink: one copy per GPU touched, but for the rank itself.
  const double gpus = distinct_units(m, g.ranks) * (g.ranks - 1.0) / g.ranks;
  const double nvl = r > 1 ? tokens * gpus * row / c.intra_busbw(r).v : 0.0;
  const Seconds lat = c.time(Collective::send_recv, Bytes(1.0), CommGroup{2, n > 1 ? 1 : 2});
  return lat + Seconds(std::max(rdma, nvl));
}

OpCosts blend_layers(const OpCosts& moe, const OpCosts& dense, double share) {
  OpCosts o = moe;
  const double a = share, b = 1.0 - share;
  auto mix = [&](auto OpCosts::*f) { o.*f = moe.*f * a + dense.*f * b; };
  auto mix_host = [&](Seconds OpCosts::Host::*f) { o.host.*f = moe.host.*f * a + dense.host.*f * b; };
  for (auto f : {&OpCosts::fwd, &OpCosts::bwd, &OpCosts::recompute, &OpCosts::attn_core_fwd,
                 &OpCosts::attn_core_bwd, &OpCosts::fwd_linear, &OpCosts::bwd_linear, &OpCosts::wgrad_qkv,
                 &OpCosts::wgrad_fc1, &OpCosts::fp8_weight_cast, &OpCosts::fp8_weight_transpose})
    mix(f);
  for (auto f : {&OpCosts::attn_core_flops_hw, &OpCosts::fwd_flops_hw, &OpCosts::bwd_flops_hw,
                 &OpCosts::recompute_flops_hw})
    mix(f);
  for (auto f :
       {&OpCosts::Host::fwd, &OpCosts::Host::bwd, &OpCosts::Host::recompute, &OpCosts::Host::attn_core_fwd})
    mix_host(f);
  for (std::size_t i = 0; i < o.modules.size(); ++i) {
    o.modules[i].t = moe.modules[i].t * a + dense.modules[i].t * b;
    o.modules[i].host = moe.modules[i].host * a + dense.modules[i].host * b;
    o.modules[i].flops = moe.modules[i].flops * a + dense.modules[i].flops * b;
  }
  return o;
}

}  // namespace dsplan
